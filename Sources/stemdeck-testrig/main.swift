// stemdeck-testrig: a stand-in for a sound card's outside world, for overdub tests and for
// checking a setup by hand. It opens two JACK clients:
//
//   NAME-speaker:in   an input that declares a playback latency of P frames (a loudspeaker: what
//                     reaches it is heard P frames later);
//   NAME-mic:out      an output that declares a capture latency of C frames (a microphone: what
//                     it delivers was played C frames earlier), and plays a click (one sample at
//                     1.0) for each --click-at frame F, at the JACK transport frame F + P + C:
//                     a player clapping exactly in time with what the transport played at F.
//
// Two clients, not one: a client with both ports would close a cycle through the client being
// tested (its out → speaker, mic → its in), and JACK would run one side a period late.
//
// Usage: stemdeck-testrig --server NAME [--name rig] [--playback-latency P] [--capture-latency C]
//                         [--click-at F]…
// It runs until stdin closes or it gets SIGTERM/SIGINT; it prints "ready" once both clients run.
//
// The speaker also times changes (the benchmark's command-to-port latency), driven on stdin:
//   arm    the next period's first sample at speaker:in becomes the reference; answers "armed"
//   now    answers "now T": JACK's current frame time (jack_frame_time)
//   wait   answers "change T S N" once a sample departs from the reference by more than 1e-4:
//          T its frame time, S the frame time its period started at, N the period; or "timeout"
import CJack
import Foundation
import Synchronization

/// What the callbacks read: plain memory, fixed before the clients are activated, and the
/// change watch's atomics.
struct RigContext: ~Copyable {
  /// The microphone client, for the transport query.
  var client: OpaquePointer?
  /// The speaker client, for the frame time of its periods.
  var speakerClient: OpaquePointer?
  /// The change watch: 0 idle, 1 armed (the next period takes the reference), 2 watching,
  /// 3 seen (then `changeAt` / `changePeriodStart` hold its frame times).
  let watch = Atomic<Int>(0)
  let changeAt = Atomic<Int>(-1)
  let changePeriodStart = Atomic<Int>(-1)
  /// Process thread only: the reference sample while watching.
  var reference: Float = 0
  var micOut: OpaquePointer?
  var speakerIn: OpaquePointer?
  var playbackLatency = 0
  var captureLatency = 0
  var clicks: UnsafeMutablePointer<Int>
  var clickCount = 0
}

/// The microphone's process callback: a click wherever the transport is at a click frame plus
/// the round trip. Allocates nothing and takes no lock.
@_noLocks
func micProcess(_ nframes: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
  guard let arg else { return 0 }
  let rig = arg.assumingMemoryBound(to: RigContext.self)
  guard let port = rig.pointee.micOut else { return 0 }
  // RT-WAIVER: jack_port_get_buffer returns this period's buffer; no allocation, lock or syscall.
  guard let raw = _unsafePerformance({ jack_port_get_buffer(port, nframes) }) else { return 0 }
  let out = raw.assumingMemoryBound(to: Float.self)
  let n = Int(nframes)
  out.update(repeating: 0, count: n)
  var position = jack_position_t()
  // RT-WAIVER: jack_transport_query is documented realtime-safe.
  let state = _unsafePerformance { jack_transport_query(rig.pointee.client, &position) }
  guard state == JackTransportRolling else { return 0 }
  let start = Int(position.frame)
  let shift = rig.pointee.playbackLatency &+ rig.pointee.captureLatency
  for k in 0..<rig.pointee.clickCount {
    let at = rig.pointee.clicks[k] &+ shift &- start
    if at >= 0 && at < n { out[at] = 1 }
  }
  return 0
}

/// The speaker plays nothing (a process callback is still needed: jackd2 only asks clients that
/// have one for their latency); when armed it watches its input for the first changed sample.
@_noLocks
func speakerProcess(_ nframes: jack_nframes_t, _ arg: UnsafeMutableRawPointer?) -> Int32 {
  guard let arg else { return 0 }
  let rig = arg.assumingMemoryBound(to: RigContext.self)
  let phase = rig.pointee.watch.load(ordering: .acquiring)
  guard phase == 1 || phase == 2, let port = rig.pointee.speakerIn, let client = rig.pointee.speakerClient else { return 0 }
  // RT-WAIVER: jack_port_get_buffer returns this period's buffer; no allocation, lock or syscall.
  guard let raw = _unsafePerformance({ jack_port_get_buffer(port, nframes) }) else { return 0 }
  let input = raw.assumingMemoryBound(to: Float.self)
  // RT-WAIVER: jack_last_frame_time reads the frame time this period started at; no lock, no syscall.
  let periodStart = Int(_unsafePerformance { jack_last_frame_time(client) })
  if phase == 1 {
    rig.pointee.reference = input[0]
    rig.pointee.watch.store(2, ordering: .releasing)
    return 0
  }
  let reference = rig.pointee.reference
  for i in 0..<Int(nframes) where abs(input[i] - reference) > 1e-4 {
    rig.pointee.changeAt.store(periodStart &+ i, ordering: .relaxed)
    rig.pointee.changePeriodStart.store(periodStart, ordering: .relaxed)
    rig.pointee.watch.store(3, ordering: .releasing)
    break
  }
  return 0
}

/// The latency callbacks: each client declares its port's latency for its own direction.
func speakerLatency(_ mode: jack_latency_callback_mode_t, _ arg: UnsafeMutableRawPointer?) {
  guard mode == JackPlaybackLatency, let rig = arg?.assumingMemoryBound(to: RigContext.self) else { return }
  declareLatency(of: rig.pointee.speakerIn, frames: rig.pointee.playbackLatency, mode)
}

func micLatency(_ mode: jack_latency_callback_mode_t, _ arg: UnsafeMutableRawPointer?) {
  guard mode == JackCaptureLatency, let rig = arg?.assumingMemoryBound(to: RigContext.self) else { return }
  declareLatency(of: rig.pointee.micOut, frames: rig.pointee.captureLatency, mode)
}

/// Sets `port`'s latency range in `mode`'s direction to exactly `frames`.
func declareLatency(of port: OpaquePointer?, frames: Int, _ mode: jack_latency_callback_mode_t) {
  guard let port else { return }
  var range = jack_latency_range_t(min: UInt32(frames), max: UInt32(frames))
  jack_port_set_latency_range(port, mode, &range)
}

/// Writes `text` to a file descriptor with write(2); a closed pipe or terminal ends the rig
/// quietly (FileHandle.write would trap on EPIPE/EIO).
func writeAll(_ fd: Int32, _ text: String) {
  var bytes = Array(text.utf8)[...]
  while !bytes.isEmpty {
    let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    if n < 0 && errno == EINTR { continue }
    if n <= 0 { exit(3) }
    bytes = bytes.dropFirst(n)
  }
}

func fail(_ message: String) -> Never {
  writeAll(STDERR_FILENO, "stemdeck-testrig: \(message)\n")
  exit(2)
}

var server: String?
var name = "rig"
var playback = 0
var capture = 0
var clickFrames: [Int] = []
var args = Array(CommandLine.arguments.dropFirst())
while !args.isEmpty {
  let flag = args.removeFirst()
  guard let value = args.first else { fail("\(flag) needs a value") }
  args.removeFirst()
  switch flag {
  case "--server": server = value
  case "--name": name = value
  case "--playback-latency": playback = Int(value) ?? -1
  case "--capture-latency": capture = Int(value) ?? -1
  case "--click-at": clickFrames.append(Int(value) ?? -1)
  default: fail("unknown option \(flag)")
  }
}
guard let server else { fail("--server NAME is required") }
guard playback >= 0, capture >= 0, clickFrames.allSatisfy({ $0 >= 0 }) else {
  fail("latencies and click frames are whole numbers of frames, 0 or more")
}
setenv("JACK_DEFAULT_SERVER", server, 1)
setenv("JACK_NO_START_SERVER", "1", 1)

let context = UnsafeMutablePointer<RigContext>.allocate(capacity: 1)
let clicks = UnsafeMutablePointer<Int>.allocate(capacity: max(1, clickFrames.count))
for (i, f) in clickFrames.enumerated() { clicks[i] = f }
context.initialize(to: RigContext(playbackLatency: playback, captureLatency: capture, clicks: clicks, clickCount: clickFrames.count))
func answer(_ line: String) { writeAll(STDOUT_FILENO, line + "\n") }

func open(_ clientName: String) -> OpaquePointer {
  var status = jack_status_t(0)
  guard let c = stemdeck_client_open(clientName, 1, &status) else {
    fail("cannot open JACK client '\(clientName)' on server '\(server)' (status \(status.rawValue))")
  }
  return c
}
let speaker = open("\(name)-speaker")
let mic = open("\(name)-mic")
let terminal = UInt(JackPortIsTerminal.rawValue)
context.pointee.speakerIn = jack_port_register(speaker, "in", JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsInput.rawValue) | terminal, 0)
context.pointee.micOut = jack_port_register(mic, "out", JACK_DEFAULT_AUDIO_TYPE, UInt(JackPortIsOutput.rawValue) | terminal, 0)
guard context.pointee.speakerIn != nil, context.pointee.micOut != nil else { fail("cannot register the rig's ports") }
context.pointee.client = mic
context.pointee.speakerClient = speaker
jack_set_latency_callback(speaker, speakerLatency, UnsafeMutableRawPointer(context))
jack_set_latency_callback(mic, micLatency, UnsafeMutableRawPointer(context))
jack_set_process_callback(mic, micProcess, UnsafeMutableRawPointer(context))
jack_set_process_callback(speaker, speakerProcess, UnsafeMutableRawPointer(context))
guard jack_activate(speaker) == 0, jack_activate(mic) == 0 else { fail("cannot activate the rig's clients") }
jack_recompute_total_latencies(speaker)
jack_recompute_total_latencies(mic)
writeAll(
  STDOUT_FILENO,
  "ready: \(name)-speaker:in (playback latency \(playback)), \(name)-mic:out (capture latency \(capture)), \(clickFrames.count) click(s)\n")

signal(SIGTERM) { _ in exit(0) }
signal(SIGINT) { _ in exit(0) }
/// Polls `condition` every 0.2 ms for up to `seconds`.
func waitFor(_ seconds: Double, _ condition: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while !condition() && Date() < deadline { usleep(200) }
  return condition()
}
while let line = readLine() {  // until stdin closes
  switch line.trimmingCharacters(in: .whitespaces) {
  case "arm":
    context.pointee.watch.store(1, ordering: .releasing)
    answer(waitFor(2) { context.pointee.watch.load(ordering: .acquiring) == 2 } ? "armed" : "timeout")
  case "now":
    answer("now \(jack_frame_time(speaker))")
  case "wait":
    if waitFor(3, { context.pointee.watch.load(ordering: .acquiring) == 3 }) {
      answer(
        "change \(context.pointee.changeAt.load(ordering: .relaxed)) \(context.pointee.changePeriodStart.load(ordering: .relaxed)) \(jack_get_buffer_size(speaker))"
      )
    } else {
      answer("timeout")
    }
    context.pointee.watch.store(0, ordering: .releasing)
  default:
    answer("error: unknown request (arm, now, wait)")
  }
}
jack_client_close(mic)
jack_client_close(speaker)
