import CJack
import StemdeckEngine

// The monitor outputs: the click's `stemdeck:click_L`/`click_R` (StemdeckEngine's
// Renderer/Click.swift) and the cue bus's `stemdeck:cue_L`/`cue_R` (Renderer/Cue.swift), each
// registered while the mixer wants it (`mixer.click.portsWanted`: the click clicks or counts in and
// is not routed into the master; `mixer.cues.portsWanted`: a stem is cued), published to the
// process callback like the sfx ports. docs/architecture.md, *Click and count-in*, *Cue bus*.

/// One pair of monitor outputs: its port names and where the process callback finds it.
struct MonitorPair: Sendable {
  let left: String, right: String
  let pretty: String
  /// Stores the ports' bit patterns (0, 0: none) in the process context.
  let publish: @Sendable (UnsafeMutablePointer<ProcessContext>, Int, Int) -> Void

  static let click = MonitorPair(left: "click_L", right: "click_R", pretty: "stemdeck click") { context, l, r in
    context.pointee.clickPortRight.store(r, ordering: .releasing)
    context.pointee.clickPortLeft.store(l, ordering: .releasing)
  }
  static let cue = MonitorPair(left: "cue_L", right: "cue_R", pretty: "stemdeck cue") { context, l, r in
    context.pointee.cuePortRight.store(r, ordering: .releasing)
    context.pointee.cuePortLeft.store(l, ordering: .releasing)
  }
}

extension JackDriver {
  func syncClickPorts() { syncMonitor(.click, wanted: plan.clickPorts, ports: \.clickPorts) }
  func syncCuePorts() { syncMonitor(.cue, wanted: plan.cuePorts, ports: \.cuePorts) }

  /// Whether either pair differs from what the mixer wants (and a refusal has not been told).
  var monitorsOutOfStep: Bool {
    outOfStep(.click, wanted: plan.clickPorts, registered: clickPorts != nil)
      || outOfStep(.cue, wanted: plan.cuePorts, registered: cuePorts != nil)
  }

  func syncMonitors() {
    syncClickPorts()
    syncCuePorts()
  }

  private func outOfStep(_ pair: MonitorPair, wanted: Bool, registered: Bool) -> Bool {
    if wanted && !registered && refusedPorts[pair.pretty]?[[pair.left, pair.right]] != nil { return false }
    return wanted != registered
  }

  /// Registers or unregisters `pair` to match `wanted`; a port going away is unregistered only
  /// after the process callback has let go of it. A refused pair is told once (`refuse`).
  private func syncMonitor(
    _ pair: MonitorPair, wanted: Bool, ports: ReferenceWritableKeyPath<JackDriver, (left: OpaquePointer, right: OpaquePointer)?>
  ) {
    guard let client, let context else { return }
    if wanted, self[keyPath: ports] == nil {
      let l: OpaquePointer, r: OpaquePointer
      do throws(JackError) {
        l = try client.registerAudioPort(pair.left, isOutput: true, prettyName: pair.pretty + " left")
        do throws(JackError) {
          r = try client.registerAudioPort(pair.right, isOutput: true, prettyName: pair.pretty + " right")
        } catch {
          client.unregister(l)
          throw error
        }
      } catch {
        refuse([pair.left, pair.right], kind: pair.pretty, error)
        return
      }
      self[keyPath: ports] = (l, r)
      pair.publish(context, Int(bitPattern: UnsafeRawPointer(l)), Int(bitPattern: UnsafeRawPointer(r)))
    } else if !wanted, let registered = self[keyPath: ports] {
      pair.publish(context, 0, 0)
      waitForTheProcessCallbackToLetGo()
      client.unregister(registered.left)
      client.unregister(registered.right)
      self[keyPath: ports] = nil
      portsReleased()
    }
  }
}

/// Hands the click's and the cue's port buffers for this period to the renderer (nil where none).
///
/// - Realtime: safe; `portBuffer` carries its RT-WAIVER. Proven by `@_noLocks`.
@_noLocks
func fetchMonitorOutputs(
  _ context: UnsafeMutablePointer<ProcessContext>, _ state: UnsafeMutablePointer<RenderState>, _ nframes: jack_nframes_t
) {
  let click = monitorBuffers(
    context.pointee.clickPortLeft.load(ordering: .acquiring), context.pointee.clickPortRight.load(ordering: .acquiring), nframes)
  state.pointee.click.outputLeft = click.left
  state.pointee.click.outputRight = click.right
  let cue = monitorBuffers(
    context.pointee.cuePortLeft.load(ordering: .acquiring), context.pointee.cuePortRight.load(ordering: .acquiring), nframes)
  state.pointee.cue.outputLeft = cue.left
  state.pointee.cue.outputRight = cue.right
}

/// The buffers of a published pair (both or neither).
@_noLocks @inline(__always)
func monitorBuffers(
  _ left: Int, _ right: Int, _ nframes: jack_nframes_t
) -> (left: UnsafeMutablePointer<Float>?, right: UnsafeMutablePointer<Float>?) {
  guard let pl = OpaquePointer(bitPattern: left), let pr = OpaquePointer(bitPattern: right),
    let l = portBuffer(pl, nframes)?.assumingMemoryBound(to: Float.self),
    let r = portBuffer(pr, nframes)?.assumingMemoryBound(to: Float.self)
  else { return (nil, nil) }
  return (l, r)
}
