import CSampleRate
import Foundation
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
import StemdeckText
import Synchronization

/// Status, meters and the renderer's events as the control side reads them.
extension Mixer {

  /// Clears peak hold and clip counts of every strip, return and the master, and restarts the master's
  /// loudness integration (integrated loudness, range, true peak) when it is measured.
  public func resetMeters() {
    lock.locked {
      resetLoudnessLocked()
      renderState.pointee.status.pointee.masterMeters.pointee.requestReset()
      renderState.pointee.status.pointee.effectsMeters.pointee.requestReset()
      for stem in table.stems { stem.shared.pointer.pointee.meters.pointee.requestReset() }
      for bus in busTable.buses { renderState.pointee.buses.meters[Int(bus.index)].requestReset() }
      for input in liveInputs.inputs { (renderState.pointee.inputs.meters + input.index).pointee.requestReset() }
      for aux in sendTable.sends { (renderState.pointee.sends.returnMeters + aux.index).pointee.requestReset() }
    }
  }

  // MARK: - Events

  /// Drains the renderer's events and returned voices, frees what the renderer let go, and
  /// returns what happened, in order. Call it every few tens of milliseconds.
  public func pump() -> [MixerEvent] {
    lock.locked {
      var out: [MixerEvent] = []
      while let event = rings.events.pop() {
        switch event {
        case .stemFinished(let slot):
          if let stem = table.stems.first(where: { $0.slot == slot }) {
            out.append(.stemFinished(stem.settings.name))
          }
        case .underrun(let slot):
          if let stem = table.stems.first(where: { $0.slot == slot }) { out.append(.underrun(stem.settings.name)) }
        case .primeTimeout:
          out.append(.primeTimeout)
        case .badSamples(let slot):
          if let stem = table.stems.first(where: { $0.slot == slot }) { out.append(.badSamples(stem.settings.name)) }
        case .effectUnloaded(let slot):
          effectReleased(slot: slot)
        case .recordingStopped:
          out += finishTake()
        case .busPlanRetired(let address):
          if let plan = UnsafeMutablePointer<BusPlan>(bitPattern: address) { BusPlan.free(plan) }
        case .insertChainRetired(let address):
          insertChainRetired(address: address)
        case .clickSamplesRetired(let address):
          if let samples = UnsafeMutablePointer<ClickSamples>(bitPattern: address) { ClickSamples.free(samples) }
        case .converterRetired(let address):
          ZitaResampler.free(address: address)
          heldConverters.freed += 1
        case .insertFaulted(let target, let index):
          if let event = insertFaulted(target, index: index) { out.append(event) }
        }
      }
      collectRetired()
      compensateLatency()
      drainLoudnessLocked()
      out += finishEffectLoads()
      out += pumpMidi()
      // The end of the song: every stem that can finish has, and none loops forever. The
      // transport stops there (as a player does); `play` then starts again from the top.
      // Not while a seek is on its way to the renderer: the stems' `finished` flags are the old
      // position's until it is applied (`play` at the end rewinds that way).
      let seekPending = renderState.pointee.status.pointee.appliedEpoch.load(ordering: .relaxed) != transportTracking.epoch
      if !transportTracking.endReported && !seekPending && !table.stems.isEmpty && !table.stems.contains(where: { $0.settings.loops < 0 })
        && allFiniteStemsFinishedLocked()
      {
        transportTracking.endReported = true
        transportTracking.songEnds += 1
        out.append(.allFinished)
        if transport.state == .playing { try? send(.pause) }
      }
      for stem in table.stems where !stem.badSamplesReported && stem.shared.pointer.pointee.badSamples.load(ordering: .relaxed) {
        stem.badSamplesReported = true
        var settings = stem.settings
        settings.mute = true
        stem.settings = settings
        try? pushLevels(.stem(stem))
        isDirty = true
        out.append(.badSamples(stem.settings.name))
      }
      if let r = takes.recorder, !r.failureReported, let reason = r.failureIfAny {
        r.failureReported = true
        let kept = NumberFormat.time(Double(r.framesWritten) / sampleRate)
        out.append(.recordingFailed(r.name, "\(reason) — the take keeps its first \(kept), a valid file; 'record stop' adds it as a stem"))
      }
      for stem in table.stems where !stem.failureReported {
        if let message = stem.stream?.failure {
          stem.failureReported = true
          out.append(.readFailed(stem.settings.name, message))
        }
      }
      return out
    }
  }

  /// Frees the voices the renderer handed back and the stems they belonged to, returning their
  /// slots to the free list.
  func collectRetired() {
    while let voice = rings.retired.pop() {
      let shared = voice.pointee.shared
      countHeldConverters(of: voice)
      voice.deinitialize(count: 1)
      voice.deallocate()
      if let index = table.retiring.firstIndex(where: { $0.shared.pointer == shared }) {
        let stem = table.retiring.remove(at: index)
        table.detaching.append(stem)
      }
    }
    // A retired stem's shared state is freed once no disk worker holds its stream; a worker
    // stuck in a stalled read of it only delays that (never the REPL: this does not wait).
    // (The freed slots are collected first: `table` is being changed by removeAll.)
    var freed: [Int32] = []
    table.detaching.removeAll { stem in
      if let stream = stem.stream, !disk.tryRemove(stream) { return false }
      stem.stream = nil
      stem.freeShared()
      if !stem.slotHandedOver { freed.append(stem.slot) }
      return true
    }
    table.freeSlots += freed
  }

  /// Makes sure `count` slots are free if the renderer can hand enough back: collects what it
  /// has returned and, while it runs and still holds stems on their way out, waits for them
  /// (bounded, 2 s). Song changes in a row (`next` 200 times while playing) used to run out of
  /// slots because the songs they superseded had not been collected yet.
  func reclaimSlots(_ count: Int) {
    collectRetired()
    guard table.freeSlots.count < count, streaming == .thread else { return }
    let deadline = Date().addingTimeInterval(2)
    while table.freeSlots.count < count && !(table.retiring.isEmpty && table.detaching.isEmpty) && Date() < deadline {
      usleep(1000)
      collectRetired()
    }
  }

  func allFiniteStemsFinishedLocked() -> Bool {
    // Until the renderer has applied the latest seek (e.g. 'play' after the end rewinds to 0),
    // the stems' finished flags describe the old position: not finished yet.
    guard renderState.pointee.status.pointee.appliedEpoch.load(ordering: .relaxed) == transportTracking.epoch else { return false }
    let finite = table.stems.filter { $0.settings.loops >= 0 }
    return !finite.isEmpty && finite.allSatisfy { $0.shared.pointer.pointee.finished.load(ordering: .acquiring) }
  }

}

extension Mixer.Stems {
  public func statuses() -> [StemStatus] {
    mixer.lock.locked { mixer.table.stems.map { $0.status(engineRate: mixer.sampleRate, preFader: mixer.options.meterPoint == .pre) } }
  }

  /// Each stem's name and meter, in console order, as `stems.statuses` reads them but without
  /// copying every stem's settings: what a meter push needs 30 times a second (the web mixer).
  public func meters() -> [(name: String, meter: MeterReading)] {
    mixer.lock.locked {
      let preFader = mixer.options.meterPoint == .pre
      return mixer.table.stems.map {
        ($0.settings.name, MeterReading(cells: $0.shared.pointer.pointee.meters, channels: preFader ? $0.channels : 2))
      }
    }
  }

  public func status(_ name: String) throws(MixerError) -> StemStatus {
    try mixer.lock.locked { () throws(MixerError) -> StemStatus in
      try mixer.find(name).status(engineRate: mixer.sampleRate, preFader: mixer.options.meterPoint == .pre)
    }
  }
}

extension Mixer.Master {
  public func meter() -> MeterReading {
    MeterReading(cells: mixer.renderState.pointee.status.pointee.masterMeters, channels: 2)
  }
}

extension Mixer.Engine {
  /// True when a stem's disk reader has found NaN or infinite samples, or has failed (a read
  /// error, a file that ends before its header says), and `pump` has not reported it yet (nor
  /// muted the stem). Cheap: two atomic loads per stem. The offline renderer asks it every block.
  public var hasUnreportedFaults: Bool {
    mixer.lock.locked {
      mixer.table.stems.contains {
        let shared = $0.shared.pointer
        return !$0.badSamplesReported && shared.pointee.badSamples.load(ordering: .relaxed)
          || !$0.failureReported && shared.pointee.readFailed.load(ordering: .acquiring)
      }
    }
  }

  /// True once every removed stem has been handed back and freed.
  public var hasPendingRemovals: Bool { mixer.lock.locked { !mixer.table.retiring.isEmpty } }
}
