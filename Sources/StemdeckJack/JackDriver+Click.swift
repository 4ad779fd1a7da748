import CJack
import StemdeckEngine

// The click's own ports, `stemdeck:click_L`/`click_R` (StemdeckEngine's Renderer/Click.swift):
// registered while the session's click wants them (`Mixer.clickPortsWanted`: it clicks or counts
// in, and is not routed into the master), published to the process callback like the sfx ports.
// docs/architecture.md, *Click and count-in*.

extension JackDriver {
  /// Registers or unregisters the click's ports to match what the mixer wants; a port going
  /// away is unregistered only after the process callback has let go of it.
  func syncClickPorts() {
    guard let client, let context else { return }
    let wanted = mixer.clickPortsWanted
    if wanted, clickPorts == nil {
      let l: OpaquePointer, r: OpaquePointer
      do throws(JackError) {
        l = try client.registerAudioPort("click_L", isOutput: true, prettyName: "stemdeck click left")
        do throws(JackError) {
          r = try client.registerAudioPort("click_R", isOutput: true, prettyName: "stemdeck click right")
        } catch {
          client.unregister(l)
          throw error
        }
      } catch {
        refuse(["click_L", "click_R"], kind: "click", error)
        return
      }
      clickPorts = (l, r)
      context.pointee.clickPortRight.store(Int(bitPattern: UnsafeRawPointer(r)), ordering: .releasing)
      context.pointee.clickPortLeft.store(Int(bitPattern: UnsafeRawPointer(l)), ordering: .releasing)
    } else if !wanted, let ports = clickPorts {
      context.pointee.clickPortLeft.store(0, ordering: .releasing)
      context.pointee.clickPortRight.store(0, ordering: .releasing)
      waitForTheProcessCallbackToLetGo()
      client.unregister(ports.left)
      client.unregister(ports.right)
      clickPorts = nil
      portsReleased()
    }
  }

  /// Whether the click's ports differ from what the mixer wants (and a refusal has not been told).
  var clickPortsOutOfStep: Bool {
    let wanted = mixer.clickPortsWanted
    if wanted && clickPorts == nil && refusedPorts["click"]?[["click_L", "click_R"]] != nil { return false }
    return wanted != (clickPorts != nil)
  }
}

/// Hands the click's port buffers for this period to the renderer (nil when it has none).
///
/// - Realtime: safe; `portBuffer` carries its RT-WAIVER. Proven by `@_noLocks`.
@_noLocks
func fetchClickOutputs(
  _ context: UnsafeMutablePointer<ProcessContext>, _ state: UnsafeMutablePointer<RenderState>, _ nframes: jack_nframes_t
) {
  state.pointee.click.outputLeft = nil
  state.pointee.click.outputRight = nil
  guard let pl = OpaquePointer(bitPattern: context.pointee.clickPortLeft.load(ordering: .acquiring)),
    let pr = OpaquePointer(bitPattern: context.pointee.clickPortRight.load(ordering: .acquiring)),
    let l = portBuffer(pl, nframes)?.assumingMemoryBound(to: Float.self),
    let r = portBuffer(pr, nframes)?.assumingMemoryBound(to: Float.self)
  else { return }
  state.pointee.click.outputLeft = l
  state.pointee.click.outputRight = r
}
