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
    for (name, slot) in mixer.stems.directOutSlots() { plan.directOuts[name, default: []].insert(slot) }
    plan.effectPorts = mixer.options.effectsOutput == .ports
    plan.clickPorts = mixer.click.portsWanted
    plan.cuePorts = mixer.cues.portsWanted
    plan.midiIn = mixer.midi.portWanted
    plan.midiOut = mixer.midi.feedback
    plan.liveInputs = mixer.inputs.ports()
    plan.sends = mixer.sends.ports()
    plan.sendNames = Dictionary(uniqueKeysWithValues: mixer.sends.all.map { ($0.index, $0.name) })
    plan.processingLatency = mixer.inserts.latency
    plan.currentStems = Set(mixer.stems.names)
    return plan
  }

  public var transport: HostTransport {
    HostTransport(
      sync: mixer.options.transportSync, tempo: mixer.tempo, playing: mixer.transport.state != .paused,
      seconds: mixer.transport.position)
  }

  public func follow(_ request: TransportRequest) {
    switch request {
    case .seek(let seconds): try? mixer.transport.seek(toSeconds: seconds)
    case .play: try? mixer.transport.play()
    case .pause: try? mixer.transport.pause()
    case .resume: if mixer.transport.state == .paused { try? mixer.transport.play() }
    }
  }
}
