import StemdeckEngine
import StemdeckSession
import StemdeckText

/// What the full-screen mixer view and the `stems`/`meters` text read beyond a stem's status
/// (StemdeckConsole/MixerView; docs/architecture.md, "The console").
extension Mixer {
  /// The sound effects' meter: their sum before the master gain, wherever they play (into the
  /// master, or on their own ports with `sfx out ports`). The renderer publishes it like the
  /// stems' and the master's meters.
  public func effectsMeter() -> MeterReading {
    MeterReading(cells: renderState.pointee.status.pointee.effectsMeters, channels: 2)
  }

  /// Effects loaded or loading.
  public var effectCount: Int { lock.locked { effects.byName.count + effects.loading.count } }

  /// Sets the volume an offline stem (its file could not be opened) keeps in the session: it
  /// plays nothing now, and has this level when the file is back and the session is opened
  /// again. The mixer view's fader on an offline strip; `vol` still refuses (it would be
  /// silently inaudible there).
  public func setOfflineVolume(_ name: String, _ volume: Double) throws(MixerError) {
    try lock.locked { () throws(MixerError) in
      guard let index = table.offline.firstIndex(where: { $0.settings.name == name }) else {
        throw MixerError("no offline stem named '\(name)'")
      }
      try MixerError.check(volume, .volume, "volume")
      guard table.offline[index].settings.volume != volume else { return }
      table.offline[index].settings.volume = volume
      isDirty = true
    }
  }
}
