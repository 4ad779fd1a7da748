import CLilv
import Foundation
import StemdeckEngine
import StemdeckSession
import StemdeckText
import Synchronization

// One insert as the control thread owns it: the plugin's instance (two linked ones for a mono
// plugin on a stereo strip), its port memory and the features it was given. Instantiated,
// activated, deactivated and freed here, never on the realtime thread; the renderer gets an
// `InsertStage` (Inserts.swift) holding the instances' `run` and handles. docs/architecture.md,
// *Plugin inserts*.

/// A plugin instantiated for one strip (or a placeholder for a plugin that is not installed).
final class InsertInstance: @unchecked Sendable {
  let uri: String
  /// The catalog's description; nil for a placeholder.
  let info: PluginInfo?
  var bypass: Bool
  /// Every control value by symbol: the plugin's input controls (placeholders keep what the
  /// session said, in its order, to write it back unchanged).
  var values: [(symbol: String, value: Double)]
  /// A placeholder's plugin state as the session held it (written back unchanged).
  var savedState: [InsertStateValue]?
  /// The file each file parameter was last set to here, by parameter URI (Mixer+InsertFiles.swift).
  var files: [String: String] = [:]
  /// lilv instances (`LilvInstance*`): one, or two linked.
  private var instances: [UnsafeMutablePointer<LilvInstance>] = []
  /// Control port memory: `portCount` floats per instance (inputs are the first instance's,
  /// shared by both; outputs each their own).
  private let controls: UnsafeMutablePointer<Float>
  private let portCount: Int
  /// Audio buffers (two channels' room each, planar, `maxBlockFrames` apart).
  private let audioIn: UnsafeMutablePointer<Float>
  private let audioOut: UnsafeMutablePointer<Float>
  private let maxBlockFrames: Int
  private var features: PluginFeatures?
  /// Each instance's atom sequence buffers and worker rings (InsertAtoms.swift): empty for a
  /// plugin with neither atom ports nor a worker, and for a placeholder.
  private(set) var plumbing: [UnsafeMutablePointer<InsertPlumbing>] = []
  /// The live mixer's worker thread serving the plumbing (nil: `work` runs synchronously).
  private var worker: PluginWorker?
  private(set) var freed = false
  /// The plugin's latency output port index (`lv2:reportsLatency`), if it has one, and the
  /// cell the renderer publishes its value in (frames; −1 until it has run).
  private var latencyPortIndex: Int?
  private let latencyCell: UnsafeMutablePointer<Atomic<Int32>> = {
    let cell = UnsafeMutablePointer<Atomic<Int32>>.allocate(capacity: 1)
    cell.initialize(to: Atomic(-1))
    return cell
  }()

  /// The latency the latency plan last read from it (Mixer+InsertLatency.swift).
  var plannedLatency: Int?

  /// The latency the plugin last reported, in frames; nil when it reports none or has not run.
  var latency: Int? {
    guard latencyPortIndex != nil else { return nil }
    let v = latencyCell.pointee.load(ordering: .relaxed)
    return v >= 0 ? Int(v) : nil
  }

  /// A placeholder: passes audio through and keeps what the session said.
  init(
    placeholder uri: String, bypass: Bool, values: [(symbol: String, value: Double)], state: [InsertStateValue]? = nil,
    maxBlockFrames: Int
  ) {
    self.uri = uri
    self.savedState = state
    self.info = nil
    self.bypass = bypass
    self.values = values
    self.portCount = 0
    self.maxBlockFrames = maxBlockFrames
    controls = .allocate(capacity: 1)
    audioIn = .allocate(capacity: 2 * maxBlockFrames)
    audioOut = .allocate(capacity: 2 * maxBlockFrames)
  }

  /// Instantiates `info` for a strip of `channels` (1 or 2) at `sampleRate`, connects every
  /// port, sets `values` (defaults for the rest) and activates it. Control thread.
  init(
    _ info: PluginInfo, channels: Int, sampleRate: Double, maxBlockFrames: Int, bypass: Bool,
    values: [(symbol: String, value: Double)], host: PluginHost, worker: PluginWorker? = nil
  ) throws(MixerError) {
    // The first time in this process, in a child process: a crash there is an error here.
    try PluginProbe.check(info, sampleRate: sampleRate, maxBlockFrames: maxBlockFrames)
    uri = info.uri
    self.info = info
    self.bypass = bypass
    self.maxBlockFrames = maxBlockFrames
    let linked = info.audioInputs == 1 && channels == 2
    var merged: [(symbol: String, value: Double)] = []
    for c in info.controls {
      let given = values.first(where: { $0.symbol == c.symbol })?.value
      merged.append((c.symbol, given.map { min(max($0, c.minimum), c.maximum) } ?? c.defaultValue))
    }
    self.values = merged
    audioIn = .allocate(capacity: 2 * maxBlockFrames)
    audioIn.initialize(repeating: 0, count: 2 * maxBlockFrames)
    audioOut = .allocate(capacity: 2 * maxBlockFrames)
    audioOut.initialize(repeating: 0, count: 2 * maxBlockFrames)
    let count = linked ? 2 : 1
    let plumbing =
      info.atomInputs + info.atomOutputs > 0 || info.hasWorker
      ? (0..<count).map { _ in
        InsertPlumbing.make(
          inputs: info.atomInputs, outputs: info.atomOutputs, atomCapacity: Self.atomCapacity,
          sequenceType: host.urids.map(LV2URI.atom + "Sequence"), chunkType: host.urids.map(LV2URI.atom + "Chunk"),
          synchronous: worker == nil)
      } : []
    let built = host.lock.withLock {
      () -> (Int, [UnsafeMutablePointer<LilvInstance>], PluginFeatures, UnsafeMutablePointer<Float>, Int?)? in
      guard let plugin = host.lilvPlugin(uri: info.uri) else { return nil }
      let ports = Int(lilv_plugin_get_num_ports(plugin))
      let latencyIndex = lilv_plugin_has_latency(plugin) ? Int(lilv_plugin_get_latency_port_index(plugin)) : nil
      let memory = UnsafeMutablePointer<Float>.allocate(capacity: max(1, ports * 2))
      memory.initialize(repeating: 0, count: max(1, ports * 2))
      let features = PluginFeatures(
        host: host, sampleRate: sampleRate, maxBlockFrames: maxBlockFrames,
        plumbing: plumbing.isEmpty ? Array(repeating: nil, count: count) : plumbing)
      var made: [UnsafeMutablePointer<LilvInstance>] = []
      for k in 0..<count {
        guard let instance = features.withFeatures(instance: k, { lilv_plugin_instantiate(plugin, sampleRate, $0) }) else { break }
        made.append(instance)
      }
      return (ports, made, features, memory, latencyIndex)
    }
    guard let (ports, made, features, memory, latencyIndex) = built, made.count == count else {
      audioIn.deallocate()
      audioOut.deallocate()
      if let built {
        for i in built.1 { lilv_instance_free(i) }
        built.3.deallocate()
        built.2.free()
      }
      for p in plumbing { InsertPlumbing.free(p) }
      throw MixerError("the LV2 plugin '\(info.name)' <\(info.uri)> failed to instantiate at \(NumberFormat.plain(sampleRate)) Hz")
    }
    portCount = ports
    self.plumbing = plumbing
    controls = memory
    latencyPortIndex = latencyIndex
    instances = made
    self.features = features
    for c in info.controls { controls[c.index] = Float(merged.first(where: { $0.symbol == c.symbol })!.value) }
    host.lock.withLock { connect(host.lilvPlugin(uri: info.uri)!, world: host.world(), stereoPlugin: info.audioInputs == 2) }
    attachWorker(worker)
    for i in instances { lilv_instance_activate(i) }
    primeLatency()
  }

  /// Bytes of each atom sequence buffer: room for a few dozen messages a block.
  static let atomCapacity = 8192

  /// Gives each instance's plumbing its handle and the plugin's worker interface (LV2 worker
  /// extension data), and hands the plumbing to `worker`'s thread (nil: synchronous).
  private func attachWorker(_ worker: PluginWorker?) {
    for (k, p) in plumbing.enumerated() {
      let instance = instances[k]
      p.pointee.handle = instance.pointee.lv2_handle
      if let raw = lilv_instance_get_extension_data(instance, LV2URI.workerInterface) {
        let iface = raw.assumingMemoryBound(to: LV2_Worker_Interface.self).pointee
        p.pointee.work = iface.work.map { unsafeBitCast($0, to: InsertWorkFunction.self) }
        p.pointee.workResponse = iface.work_response.map { unsafeBitCast($0, to: InsertWorkResponseFunction.self) }
        p.pointee.endRun = iface.end_run.map { unsafeBitCast($0, to: InsertEndRunFunction.self) }
      }
      if let worker, p.pointee.work != nil { worker.add(p) }
    }
    if plumbing.contains(where: { $0.pointee.work != nil }) { self.worker = worker }
  }

  /// Runs every instance on zero frames, twice, before the renderer has it (the LV2 core lets
  /// a host call `run` with no samples to have the output controls updated): the plugin sees
  /// its controls once and reports the latency they give (x42's nodelay, for one, applies a new
  /// delay on the run after it reads it). The renderer then starts from a known latency, so
  /// strips are compensated from the first frame, live and offline alike.
  private func primeLatency() {
    for _ in 0..<2 { runOnce(frames: 0) }
    if let index = latencyPortIndex {
      let v = controls[index]
      latencyCell.pointee.store(v.isFinite && v >= 0 && v < 1e9 ? Int32(v) : -1, ordering: .relaxed)
    }
  }

  /// Connects every port of every instance: audio to the planes (a linked pair's second
  /// instance to the right plane), controls to their memory, optional others to nothing.
  private func connect(_ plugin: OpaquePointer, world: OpaquePointer, stereoPlugin: Bool) {
    let audio = lilv_new_uri(world, LV2URI.core + "AudioPort")
    let control = lilv_new_uri(world, LV2URI.core + "ControlPort")
    let input = lilv_new_uri(world, LV2URI.core + "InputPort")
    let atom = lilv_new_uri(world, LV2URI.atom + "AtomPort")
    defer { lilv_node_free(audio); lilv_node_free(control); lilv_node_free(input); lilv_node_free(atom) }
    for (k, instance) in instances.enumerated() {
      var audioIns = 0, audioOuts = 0, atomIns = 0, atomOuts = 0
      for p in 0..<portCount {
        guard let port = lilv_plugin_get_port_by_index(plugin, UInt32(p)) else { continue }
        let isInput = lilv_port_is_a(plugin, port, input)
        let target: UnsafeMutableRawPointer?
        if lilv_port_is_a(plugin, port, audio) {
          let channel = stereoPlugin ? (isInput ? audioIns : audioOuts) : k
          if isInput { audioIns += 1 } else { audioOuts += 1 }
          target = UnsafeMutableRawPointer((isInput ? audioIn : audioOut) + min(channel, 1) * maxBlockFrames)
        } else if lilv_port_is_a(plugin, port, control) {
          target = UnsafeMutableRawPointer(controls + (isInput ? p : k * portCount + p))
        } else if lilv_port_is_a(plugin, port, atom), k < plumbing.count {
          target = isInput ? plumbing[k].pointee.input(atomIns) : plumbing[k].pointee.output(atomOuts)
          if isInput { atomIns += 1 } else { atomOuts += 1 }
        } else {
          target = nil  // connectionOptional (others were refused)
        }
        lilv_instance_connect_port(instance, UInt32(p), target)
      }
    }
  }

  /// Runs every instance once on `frames` frames of silence (the probe's child, PluginProbe.swift).
  func runSilence(frames: Int) {
    audioIn.update(repeating: 0, count: 2 * maxBlockFrames)
    runOnce(frames: min(frames, maxBlockFrames))
  }

  /// Runs every instance once as the renderer does (atom ports emptied and worker responses
  /// delivered around `run`), here on the control thread before the renderer has it.
  private func runOnce(frames: Int) {
    guard let run = instances.first?.pointee.lv2_descriptor.pointee.run else { return }
    for (k, i) in instances.enumerated() {
      if k < plumbing.count { plumbing[k].pointee.prepare() }
      run(i.pointee.lv2_handle, UInt32(frames))
      if k < plumbing.count { plumbing[k].pointee.finish() }
    }
  }

  /// What the renderer runs.
  func stage() -> InsertStage {
    let run = instances.first?.pointee.lv2_descriptor.pointee.run
    return InsertStage(
      run: run, first: instances.first?.pointee.lv2_handle, second: instances.count > 1 ? instances[1].pointee.lv2_handle : nil,
      inputs: audioIn, outputs: audioOut, maxBlockFrames: maxBlockFrames, bypassed: bypass,
      latencyPort: latencyPortIndex.map { UnsafePointer(controls + $0) }, latencyFrames: UnsafePointer(latencyCell),
      plumbing: plumbing.first, plumbing2: plumbing.count > 1 ? plumbing[1] : nil)
  }

  /// The first lilv instance (nil: a placeholder), for lilv's state calls (PluginPresets.swift).
  var lilvInstance: UnsafeMutablePointer<LilvInstance>? { instances.first }

  /// Every lilv instance (one, or a linked pair; none for a placeholder), for a preset's state.
  var lilvInstances: [UnsafeMutablePointer<LilvInstance>] { instances }

  /// Every instance's plugin handle, for the state interface (PluginState.swift).
  var instancesForState: [UnsafeMutableRawPointer?] { instances.map { $0.pointee.lv2_handle } }

  /// The control port memory of `symbol` (nil: not a control of this plugin).
  func port(_ symbol: String) -> UnsafeMutablePointer<Float>? {
    guard !instances.isEmpty, let c = info?.controls.first(where: { $0.symbol == symbol }) else { return nil }
    return controls + c.index
  }

  /// Deactivates and frees the instances and the memory (control thread, once no chain in the
  /// renderer holds it).
  func free() {
    guard !freed else { return }
    freed = true
    // No `work` of these instances runs from here on (the worker thread lets go of them first).
    for p in plumbing { worker?.remove(p) }
    for i in instances {
      lilv_instance_deactivate(i)
      lilv_instance_free(i)
    }
    instances = []
    controls.deallocate()
    latencyCell.deinitialize(count: 1)
    latencyCell.deallocate()
    audioIn.deallocate()
    audioOut.deallocate()
    features?.free()
    features = nil
    for p in plumbing { InsertPlumbing.free(p) }
    plumbing = []
  }
}
