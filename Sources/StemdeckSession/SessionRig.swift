// The rig and the song (issue 35, *a rig layer*; docs/session-format.md, *Rig and song*). A
// session file holds both; in a setlist the rig outlives the songs: the master (its level, EQ and
// connections), the live inputs, the buses, the aux sends and their returns, the MIDI mappings and
// the connections of all of them are the rig's, and the next song is played through the rig that
// is live when it opens. The stems, their mix, the effects, the tempo and the click (its count-in
// too), the marks, the song's options (how it is left: `songchange`), its scenes and its recording settings
// are the song's.

extension Session {
  /// This song played through `rig` (the live session when the song opens): the rig's parts, and
  /// the song's own parts of those kinds that the rig has nothing of that name for (an old
  /// setlist whose songs each carry their rig keeps working: each song adds what it brings).
  public func playedThrough(rig: Session) -> Session {
    var song = self
    song.masterVolume = rig.masterVolume
    song.masterEQ = rig.masterEQ
    song.inputs = rig.inputs + inputs.filter { own in !rig.inputs.contains { $0.name == own.name } }
    song.buses = rig.buses + buses.filter { own in !rig.buses.contains { $0.name == own.name } }
    song.sends = rig.sends + sends.filter { own in !rig.sends.contains { $0.name == own.name } }
    var mappings = rig.midi.mappings
    for own in midi.mappings
    where !mappings.contains(where: { $0.source == own.source && $0.number == own.number && $0.channel == own.channel }) {
      mappings.append(own)
    }
    song.midi = MidiSettings(mappings: mappings, feedback: rig.midi.feedback || midi.feedback)
    // Every connection of the rig but those of the songs' stems (the old song's direct outs).
    let stemPorts = Set((rig.stems + stems).flatMap { PortOwner.directOutPorts($0.name) })
    song.connections = connections.merging(rig.connections.filter { !stemPorts.contains($0.key) }) { _, rig in rig }
    return song
  }

  /// The song's part alone (what `next` must not lose, and what a change of makes the song
  /// unsaved): its stems and their mix, effects, tempo, options, scenes, recording settings and
  /// resampler quality. The rig's parts and the transport's position are left at their defaults.
  public var songLayer: Session {
    var song = Session()
    song.quality = quality
    song.options = options
    song.recording = recording
    song.tempo = tempo
    song.click = click
    song.marks = marks
    song.stems = stems
    song.effects = effects
    song.scenes = scenes
    song.recallSafe = recallSafe
    return song
  }
}
