import CJack
import StemdeckText
import Synchronization

// stemdeck's own processing latency on its JACK ports: the plugin inserts' latency at the
// master's output after compensation (mixer.inserts.latency, StemdeckControl's
// Mixer+InsertLatency.swift), added by the latency callback (`stemdeckLatency`) to every
// output's capture latency and every input's playback latency, as a JACK client with lookahead
// must. docs/architecture.md, *Plugin inserts*, *Latency*.

extension JackClient {
  /// Asks the server to recompute every port's latency (it calls the latency callbacks again).
  /// The corresponding C function is `jack_recompute_total_latencies`.
  func recomputeLatencies() -> Bool {
    request { jack_recompute_total_latencies($0) } == 0
  }
}

extension JackDriver {
  /// Publishes the mixer's insert latency for the latency callback when it changed, and has
  /// JACK recompute the graph's latencies (control thread, from `poll`; under the lock).
  func syncProcessingLatency() {
    guard let context, let client else { return }
    let frames = plan.processingLatency
    guard context.pointee.processingLatency.load(ordering: .relaxed) != frames else { return }
    context.pointee.processingLatency.store(frames, ordering: .releasing)
    if !client.recomputeLatencies() { context.pointee.processingLatency.store(-1, ordering: .relaxed) }  // try again
  }

  /// The latency stemdeck adds between its inputs and outputs, as its ports report it (frames).
  public var processingLatency: Int {
    lock.locked { max(0, context?.pointee.processingLatency.load(ordering: .acquiring) ?? 0) }
  }
}
