import StemdeckEngine
import StemdeckSession
import StemdeckText

/// What the full-screen mixer view and the `stems`/`meters` text read beyond a stem's status
/// (StemdeckConsole/MixerView; docs/architecture.md, "The console").

/// One insert as the mixer view shows it: its plugin's name (the URI's last part for a plugin
/// that is not installed) and whether it is bypassed.
public struct InsertChip: Sendable, Equatable {
  public let name: String
  public let bypassed: Bool
}

extension Mixer.Effects {
  /// The sound effects' meter: their sum before the master gain, wherever they play (into the
  /// master, or on their own ports with `sfx out ports`). The renderer publishes it like the
  /// stems' and the master's meters.
  public func meter() -> MeterReading {
    MeterReading(cells: mixer.renderState.pointee.status.pointee.effectsMeters, channels: 2)
  }

  /// Effects loaded or loading.
  public var count: Int { mixer.lock.locked { mixer.effectsState.byName.count + mixer.effectsState.loading.count } }
}

extension Mixer.Stems {
  /// Sets the volume an offline stem (its file could not be opened) keeps in the session: it
  /// plays nothing now, and has this level when the file is back and the session is opened
  /// again. The mixer view's fader on an offline strip; `vol` still refuses (it would be
  /// silently inaudible there).
  public func setOfflineVolume(_ name: String, _ volume: Double) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      guard let index = mixer.table.offline.firstIndex(where: { $0.settings.name == name }) else {
        throw MixerError("no offline stem named '\(name)'")
      }
      try MixerError.check(volume, .volume, "volume")
      guard mixer.table.offline[index].settings.volume != volume else { return }
      mixer.table.offline[index].settings.volume = volume
      mixer.isDirty = true
    }
  }
}

extension Mixer.Inserts {
  /// Every strip's inserts by strip name ("master" for the master's), in order: for the mixer
  /// view, 30 times a second, so one lock and no parameter values (`inserts(of:)` has those).
  public func chips() -> [String: [InsertChip]] {
    mixer.lock.locked {
      let racks = mixer.insertRacks.racks
      guard !racks.isEmpty else { return [:] }
      func chips(_ key: InsertKey) -> [InsertChip]? {
        racks[key].flatMap { list in
          list.isEmpty
            ? nil
            : list.map { InsertChip(name: $0.info?.name ?? String($0.uri.split(separator: "/").last ?? ""), bypassed: $0.bypass) }
        }
      }
      var out: [String: [InsertChip]] = [:]
      for stem in mixer.table.stems { if let c = chips(.stem(stem.slot)) { out[stem.settings.name] = c } }
      for bus in mixer.busTable.buses { if let c = chips(.bus(bus.index)) { out[bus.settings.name] = c } }
      for input in mixer.liveInputs.inputs { if let c = chips(.input(Int32(input.index))) { out[input.settings.name] = c } }
      if let c = chips(.master) { out["master"] = c }
      return out
    }
  }

  /// Bypasses every insert of strip `name` (`out`), or puts every one in again, in one chain the
  /// renderer takes at once: a desk's insert switch (the mixer view's `x`). All or nothing.
  public func setOut(_ name: String, _ out: Bool) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let key = InsertKey(try mixer.insertStrip(name).target)
      let rack = mixer.insertRacks.racks[key] ?? []
      guard !rack.isEmpty else { throw MixerError("'\(printableText(name))' has no inserts") }
      let before = rack.map(\.bypass)
      guard before.contains(!out) else { return }
      for instance in rack { instance.bypass = out }
      do throws(MixerError) { try mixer.sendRack(rack, try mixer.insertStrip(name).target) } catch {
        for (instance, bypass) in zip(rack, before) { instance.bypass = bypass }
        throw error
      }
      mixer.isDirty = true
    }
  }
}
