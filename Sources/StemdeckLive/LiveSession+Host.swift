import StemdeckControl
import StemdeckEngine
import StemdeckJack
import StemdeckSession

// The live session is the JACK driver's host: the driver asks it for the render state to run,
// the ports the mixer wants and the transport, and hands back what JACK's transport asks
// (StemdeckJack's JackHost.swift). docs/architecture.md, *JACK*.

extension LiveSession: JackHost {
  public var renderState: UnsafeMutablePointer<RenderState> { mixer.renderState }
  public var engineSampleRate: Double { mixer.sampleRate }

  public var portPlan: PortPlan {
    var plan = PortPlan()
    for (name, slot) in mixer.directOutSlots() { plan.directOuts[name, default: []].insert(slot) }
    plan.effectPorts = mixer.options.effectsOutput == .ports
    plan.clickPorts = mixer.clickPortsWanted
    plan.cuePorts = mixer.cuePortsWanted
    plan.midiIn = mixer.midiPortWanted
    plan.midiOut = mixer.midiFeedback
    plan.liveInputs = mixer.liveInputPorts()
    plan.sends = mixer.sendPorts()
    plan.sendNames = Dictionary(uniqueKeysWithValues: mixer.auxSends.map { ($0.index, $0.name) })
    plan.processingLatency = mixer.insertLatency
    plan.currentStems = Set(mixer.stemNames)
    return plan
  }

  public var transport: HostTransport {
    HostTransport(
      sync: mixer.options.transportSync, tempo: mixer.tempo, playing: mixer.transportState != .paused,
      seconds: mixer.position)
  }

  public func follow(_ request: TransportRequest) {
    switch request {
    case .seek(let seconds): try? mixer.seek(toSeconds: seconds)
    case .play: try? mixer.play()
    case .pause: try? mixer.pause()
    case .resume: if mixer.transportState == .paused { try? mixer.play() }
    }
  }
}
