import StemdeckControl

/// A front end the control loop serves beside the console's own input: the control socket, OSC
/// and the session manager (docs/architecture.md, *The console*). Each step of the loop
/// (`Console.idle`) services the engine, then every attached front end in order; its sockets
/// wake the loop's waits; live events reach those that push them.
public protocol FrontEnd: AnyObject {
  /// Runs what arrived (requests, messages) and sends what is due. Control thread.
  func service(_ console: Console)
  /// What the loop should watch, and when it should wake, for this front end.
  func interest(_ i: inout ControlLoop.Interest)
  /// A live event of a service step, for those that push events to subscribers.
  func push(_ event: LiveEvent)
  /// Closes its sockets (at the end of the run).
  func close()
}

extension FrontEnd {
  public func push(_ event: LiveEvent) {}
}

extension Console {
  /// Serves `frontEnd` from the next step of the loop on: after the engine and the front ends
  /// attached before it; its sockets join the loop's waits; it sees every live event.
  public func attach(_ frontEnd: any FrontEnd) {
    frontEnds.append(frontEnd)
    eventObservers.append { frontEnd.push($0) }
    loop?.sources.append { frontEnd.interest(&$0) }
  }

  /// One step of the live loop: the engine's events, the autosave and the show (`serviceOnce`),
  /// then every front end.
  package func serviceFrontEnds() {
    for frontEnd in frontEnds { frontEnd.service(self) }
  }
}
