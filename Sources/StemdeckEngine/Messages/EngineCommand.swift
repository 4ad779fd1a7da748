/// A fixed-size command from the control thread to the realtime renderer, sent through the
/// command ring. Trivial (`BitwiseCopyable`): pushing one copies a few words, nothing else.
///
/// Stems are addressed by slot (an index into the renderer's voice table, chosen by the control
/// thread). A voice arrives fully built (`addVoice`); `removeVoice` fades it out and hands it back
/// through the return ring for the control thread to free.
public enum EngineCommand: BitwiseCopyable, @unchecked Sendable {
  /// Installs a prepared voice in `slot`.
  case addVoice(slot: Int32, voice: UnsafeMutablePointer<StemVoice>)
  /// Installs a prepared voice of song change number `song` (counting from 1) in `slot`: it
  /// streams but stays silent and off the transport until `songs.change` switches to it.
  case addPendingVoice(slot: Int32, voice: UnsafeMutablePointer<StemVoice>, song: Int)
  /// Switches to song `song`'s pending voices once they are primed (SongChange.swift): the
  /// transport continues from `frame` with seek epoch `epoch`; `fadeFrames` 0 is gapless,
  /// otherwise the old song's voices fade out and the new ones in over that many frames (equal
  /// power). Pending voices of an earlier song that never started are handed back.
  case changeSong(frame: Int, epoch: Int, fadeFrames: Int, song: Int)
  /// Performs a song change still waiting for its voices at once (the control thread is about
  /// to change the new song's stems or load another session).
  case completeSongChange
  /// Fades the voice out and returns it through the return ring.
  case removeVoice(slot: Int32)
  /// Rebuilds a stem in place (a new converter, mode or stretcher): the voice in `slot` fades out
  /// as for `removeVoice` and `voice` takes the slot once it has (at once when nothing plays).
  /// Commands for the slot reach `voice` from now on. A replacement that was still waiting is
  /// handed back unheard. The slot never becomes free, so a session using most of the slots can
  /// still rebuild all its stems.
  case replaceVoice(slot: Int32, voice: UnsafeMutablePointer<StemVoice>)
  /// New target gains (left, right), already combining volume, pan, mute and solo.
  case setGains(slot: Int32, left: Float, right: Float)
  /// A strip's volume, pan and width (nil: unchanged) and audibility (mute, and solo along the
  /// bus graph); the renderer computes the gains. Setting a level ends that parameter's glide.
  /// A live input's gains always ramp; a stem's and a bus's jump while stopped. The master's
  /// fader is `setMasterGain` (it is not addressed here).
  case setStripLevels(StripTarget, StripLevelChange)
  /// zita's converter for a ratio the stem in `slot` is about to hold (`fast` quality), made by
  /// the control thread and sent just before the `setRate` or rate glide that reaches it; the voice
  /// takes it into use once its rate holds there (HeldConverter.swift). Never grouped, nor held
  /// for a frame: it changes nothing heard by itself. One it replaces, or one for an empty slot,
  /// comes back in `EngineEvent.converterRetired`.
  case offerConverter(slot: Int32, ZitaResampler)
  /// A stem's varispeed rate (the ratio follows from the file and engine rates). Cancels a rate glide.
  case setRate(slot: Int32, rate: Double)
  /// A stretch-mode stem's Rubber Band pitch scale (pitch shift × file/engine rate).
  case setPitchScale(slot: Int32, scale: Double)
  /// Stops a stem's glides where they are.
  case cancelGlides(slot: Int32)
  /// The commands up to `endGroup` apply together when the transport reaches `frame`
  /// (Int.min: at the next pass).
  case beginGroup(frame: Int)
  case endGroup
  /// Ends the group being received by dropping its commands: none of them is applied (a group
  /// that failed half-way; its stems' glides in flight run on untouched).
  case abortGroup
  /// Master volume (linear).
  case setMasterGain(Float)
  /// Sets one band of `target`'s channel EQ: frequency in Hz, gain in dB, the mid band's Q; for
  /// `.highPass`, frequency 0 is off and `q` is its sections (1 or 2).
  /// The EQ glides there while the transport plays (DSP/ChannelEQ.swift).
  case setEQ(StripTarget, band: EQBandID, frequency: Double, gain: Double, q: Double)
  /// Turns `target`'s channel EQ on or off, keeping its settings.
  case setEQEnabled(StripTarget, on: Bool)
  /// Starts the transport. `fadeIn` ramps the output up over a few milliseconds.
  case play(fadeIn: Bool)
  /// Fades out and stops the transport where it is.
  case pause
  /// Moves the transport to `frame`; every voice waits for its stream to reach `epoch`.
  case seek(frame: Int, epoch: Int)
  /// Where the voice in `slot` starts sounding after the next seek (for stems with a start
  /// offset); without it a voice joins at the seek position itself.
  case setJoinFrameAfterSeek(slot: Int32, frame: Int)
  /// Meter point for stems: true = pre-fader (the source), false = post-fader.
  case setMeterPoint(preFader: Bool)
  /// Makes a sound effect available in effect slot `slot`.
  case loadEffect(slot: Int32, sample: EffectSample)
  /// Stops and forgets effect `slot`; answered with `EngineEvent.effectUnloaded`.
  case unloadEffect(slot: Int32)
  /// Plays effect `slot` now (at the start of the next period) with these gains.
  case fireEffect(slot: Int32, left: Float, right: Float)
  /// Fades out every playing instance of effect `slot` (negative: all effects).
  case stopEffect(slot: Int32)
  /// Starts writing the input ports into `take`'s ring.
  case startRecording(UnsafeMutablePointer<RecordTake>)
  /// Pauses (true) or resumes (false) the current take.
  case pauseRecording(Bool)
  /// Stops the current take; answered with `EngineEvent.recordingStopped`.
  case stopRecording
  /// Stores MIDI binding `index` of the renderer's mapping table, then makes `count` bindings
  /// live (Midi.swift). `index` −1 only sets the count.
  case setMidiBinding(index: Int32, binding: MidiBinding, count: Int32)
  /// Turns per-stem metering on or off (an offline render has no one to read stem meters).
  case setStemMetering(Bool)
  /// Installs the buses' routing plan (Buses.swift), built on the control thread; the plan it
  /// replaces comes back in `EngineEvent.busPlanRetired`. Never grouped.
  case setBusPlan(UnsafeMutablePointer<BusPlan>)
  /// Puts bus index `bus` back to unity, centre and a flat EQ with no memory (taken into use again).
  case resetBus(bus: Int32)
  /// Moves a strip's volume or pan (a stem's rate too) to `target` over `frames` frames: a
  /// stem's through its voice (which publishes its progress), a bus's or live input's through its
  /// `StripLevels`, whatever the transport does for an input (the master does not
  /// glide here: its fader is `setMasterGain`).
  case stripGlide(StripTarget, parameter: GlideParameter, target: Double, frames: Int, exponential: Bool)
  /// Routes the stem in `slot` to bus `bus` (−1: the master).
  case setStemBus(slot: Int32, bus: Int32)
  /// Starts live input strip `index` (InputStrips.swift) with these levels (its ports come after it).
  case addInput(index: Int32, channels: Int32, StripLevelChange)
  /// Fades live input `index` out; its strip is free once silent (`InputBank.live`).
  case removeInput(index: Int32)
  /// Routes live input `index` to bus `bus` (−1: the master); it crossfades (10 ms) unless
  /// `crossfade` is false (an input just added: it has no signal yet).
  case setInputBus(index: Int32, bus: Int32, crossfade: Bool)
  /// Starts aux send `index` (Sends.swift) with its return at `returnGain`; all levels silent.
  case addSend(index: Int32, returnGain: Float)
  /// Stops aux send `index`; its return fades out.
  case removeSend(index: Int32)
  /// A stem's, bus's or live input's level into send `index`, pre- or post-fader (ramped while
  /// playing; `.master` is not a send source and is ignored).
  case setSendLevel(StripTarget, index: Int32, gain: Float, preFader: Bool)
  /// The volume of send `index`'s return (ramped).
  case setReturnGain(index: Int32, gain: Float)
  /// Installs `target`'s chain of plugin inserts (nil: none; Inserts.swift), built on the
  /// control thread; the chain it replaces comes back in `EngineEvent.insertChainRetired`.
  case setInserts(StripTarget, UnsafeMutablePointer<InsertChain>?)
  /// Stores `value` in a plugin's control port (memory the control thread allocated and frees
  /// only after every chain using the plugin is retired).
  case setInsertControl(port: UnsafeMutablePointer<Float>, value: Float)
  /// The click's and the count-in's settings (Click.swift).
  case setClick(ClickParameters)
  /// Plays the click from these samples (nil: the synthesized bursts); the ones replaced come
  /// back in `EngineEvent.clickSamplesRetired` (Click.swift).
  case setClickSamples(UnsafeMutablePointer<ClickSamples>?)
  /// A quantised jump (Jump.swift): when the playing transport reaches `atFrame`, it goes on from
  /// `toFrame` on that very frame, with no fade and no hold: every voice moves to seek epoch
  /// `epoch`, whose stream the disk starts after the old stream's cut (`StemShared.requestedCut`).
  /// Replaces a jump still waiting; a seek or a song change cancels it.
  case jump(atFrame: Int, toFrame: Int, epoch: Int)
  /// Puts a stem, bus or live input on the cue bus, before or after its fader, or takes it off
  /// (Cue.swift; the master is ignored).
  case setCue(StripTarget, tap: CueTap)
}

/// What a glide moves (a strip's level: `StripLevels`; a stem's rate). The raw value is the
/// strip control's session key (StripParameter.swift), which is how the control thread finds the
/// parameter of a row of the table.
public enum GlideParameter: String, BitwiseCopyable, Sendable, CaseIterable {
  case volume, pan, rate, width
}

/// Something the realtime renderer reports to the control thread through the event ring.
public enum EngineEvent: BitwiseCopyable, Sendable, Equatable {
  /// The stem in `slot` played all of its loops.
  case stemFinished(slot: Int32)
  /// The stem in `slot` ran out of streamed audio (the disk was late); it plays silence.
  case underrun(slot: Int32)
  /// A seek or start waited too long for the disk and went on without some stems.
  case primeTimeout
  /// A stem's audio contained NaN or infinity; the stem was muted.
  case badSamples(slot: Int32)
  /// The renderer no longer touches the take: the control thread may finish and free it.
  case recordingStopped
  /// The renderer no longer uses effect `slot`'s memory: the control thread may free it.
  case effectUnloaded(slot: Int32)
  /// The renderer let go of a bus plan (an `UnsafeMutablePointer<BusPlan>`'s address): the
  /// control thread frees it (`BusPlan.free`).
  case busPlanRetired(address: Int)
  /// The renderer let go of an insert chain (an `UnsafeMutablePointer<InsertChain>`'s address):
  /// the control thread frees it and any instance no chain holds any more.
  case insertChainRetired(address: Int)
  /// Insert `index` of `target`'s chain put out NaN or infinity: the renderer bypasses it.
  case insertFaulted(StripTarget, index: Int32)
  /// Click samples the renderer let go of (`setClickSamples`), to be freed (`ClickSamples.free`).
  case clickSamplesRetired(address: Int)
  /// A zita converter the renderer let go of (its `stemdeck_zita *`), to be freed
  /// (`ZitaResampler.free(address:)`).
  case converterRetired(address: Int)
}

/// Which strip a command addresses (whose channel EQ `EngineCommand.setEQ` and `setEQEnabled`
/// change, whose level `setSendLevel` sets): every strip kind has its own case, so that no number
/// ranges need keeping apart.
public enum StripTarget: Equatable, Sendable, BitwiseCopyable {
  /// The stem voice in this slot.
  case stem(slot: Int32)
  /// The master bus.
  case master
  /// The bus strip with this index (`BusBank`).
  case bus(Int32)
  /// The live input strip with this index (`InputBank`).
  case input(Int32)
}
