import Foundation

// The mixer's components (issue 34): each is a view of the one mixer, behind its one lock;
// its methods live in the Mixer+<component>.swift file named in its comment, and the state
// stays in the mixer. docs/architecture.md, *Control*, *Mixer and its parts*.
extension Mixer {
  /// The buses (subgroups): their settings, members and routing (Mixer+Buses.swift).
  public struct Buses: Sendable {
    let mixer: Mixer
  }
  public var buses: Buses { Buses(mixer: self) }

  /// The aux sends and their returns; a strip's send levels live here (Mixer+Sends.swift).
  public struct Sends: Sendable {
    let mixer: Mixer
  }
  public var sends: Sends { Sends(mixer: self) }

  /// The live input strips (Mixer+Inputs.swift).
  public struct Inputs: Sendable {
    let mixer: Mixer
  }
  public var inputs: Inputs { Inputs(mixer: self) }

  /// Recording takes from the record ports or a live input (Mixer+Recording.swift).
  public struct Recorder: Sendable {
    let mixer: Mixer
  }
  public var recorder: Recorder { Recorder(mixer: self) }

  /// The sound effects: load, fire, stop, unload (Mixer+Effects.swift).
  public struct Effects: Sendable {
    let mixer: Mixer
  }
  public var effects: Effects { Effects(mixer: self) }

  /// Every strip's LV2 plugin inserts (Mixer+Inserts.swift, PluginPresets.swift).
  public struct Inserts: Sendable {
    let mixer: Mixer
  }
  public var inserts: Inserts { Inserts(mixer: self) }

  /// The MIDI map, learn and feedback (Mixer+Midi.swift).
  public struct Midi: Sendable {
    let mixer: Mixer
  }
  public var midi: Midi { Midi(mixer: self) }

  /// The session's scenes and recall-safe strips (Mixer+Scenes.swift).
  public struct Scenes: Sendable {
    let mixer: Mixer
  }
  public var scenes: Scenes { Scenes(mixer: self) }

  /// The song's marks and jumps to them (Mixer+Marks.swift).
  public struct Marks: Sendable {
    let mixer: Mixer
  }
  public var marks: Marks { Marks(mixer: self) }

  /// The click and count-in (Mixer+Click.swift).
  public struct Click: Sendable {
    let mixer: Mixer
  }
  public var click: Click { Click(mixer: self) }

  /// The cue (PFL/AFL) bus (Mixer+Cue.swift).
  public struct Cues: Sendable {
    let mixer: Mixer
  }
  public var cues: Cues { Cues(mixer: self) }

  /// The master's live loudness meter (Mixer+Loudness.swift).
  public struct MasterLoudness: Sendable {
    let mixer: Mixer
  }
  public var loudness: MasterLoudness { MasterLoudness(mixer: self) }

  /// Play, pause, stop, seek and where the song is (Mixer+Transport.swift).
  public struct Transport: Sendable {
    let mixer: Mixer
  }
  public var transport: Transport { Transport(mixer: self) }

  /// The stem table: add, remove, and each stem's playback settings (Mixer+Stems.swift).
  public struct Stems: Sendable {
    let mixer: Mixer
  }
  public var stems: Stems { Stems(mixer: self) }

  /// Undo's snapshots of the session and reverting to one (Mixer+Undo.swift).
  public struct History: Sendable {
    let mixer: Mixer
  }
  public var history: History { History(mixer: self) }

  /// The master strip: volume, EQ, meter (Mixer+Stems.swift, Mixer+EQ.swift).
  public struct Master: Sendable {
    let mixer: Mixer
  }
  public var master: Master { Master(mixer: self) }

  /// Changing to the next song's session while playing (Mixer+Session.swift).
  public struct Songs: Sendable {
    let mixer: Mixer
  }
  public var songs: Songs { Songs(mixer: self) }

  /// The link to the renderer: waiting for commands to apply, command counts, filling the rings offline (Mixer.swift, Mixer+Events.swift).
  public struct Engine: Sendable {
    let mixer: Mixer
  }
  public var engine: Engine { Engine(mixer: self) }

  /// Every strip's controls by name, whatever its kind: volume, pan, mute, solo, EQ, direct out, glides (Mixer+Strips.swift, Mixer+Musical.swift).
  public struct Strips: Sendable {
    let mixer: Mixer
  }
  public var strips: Strips { Strips(mixer: self) }
}
