import Foundation
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
import StemdeckText

/// The take in progress, as `status` and `record` report it.
public struct RecordingStatus: Sendable {
  public var name: String
  public var path: String
  public var seconds: Double
  public var dropped: Int
  public var paused: Bool
  public var stopping: Bool
  /// The live input recorded (`record from mic`), or nil: the input ports in_L/in_R.
  public var input: String? = nil
}

/// The take being recorded, as the control side tracks it.
struct TakeState {
  var recorder: TakeRecorder?
  var paused = false
  /// `record stop` asked; the writer is finishing the file.
  var stopping = false
  /// The take becomes a muted stem when it stops.
  var muted = false
  /// The live input recorded, or nil (the input ports).
  var input: String?
}

extension Mixer {

  /// Called by `pump` when the renderer has let go of the take.
  func finishTake() -> [MixerEvent] {
    guard let r = takes.recorder else { return [] }
    r.finish()
    takes.recorder = nil
    takes.stopping = false
    var events: [MixerEvent] = []
    if let failure = r.failure, !r.failureReported { events.append(.recordingFailed(r.name, failure)) }
    guard r.framesWritten > 0 else {
      AtomicFile.removeRegularFile(r.path)
      events.append(.recordingFailed(r.name, "nothing was captured (are the input ports connected?); no file kept"))
      return events
    }
    var settings = StemSettings(name: r.name, file: r.path)
    settings.mute = takes.muted
    // The take goes where it was played on the transport. What came before transport 0 (armed
    // before `play`, or the latency itself) is skipped with a region from there to the end, so
    // the rest still lines up sample for sample.
    let aligned = r.alignedStartFrame ?? 0
    let fileRate = Double(r.sampleRate)
    if aligned >= 0 {
      settings.startOffset = Double(aligned) / sampleRate
    } else if -aligned < r.framesWritten {
      settings.loopStart = Double(-aligned) / fileRate
      settings.loopEnd = Double(r.framesWritten) / fileRate
    } else {
      events.append(.recordingFailed(r.name, "the whole take was captured before transport 0; it is kept at 0:00"))
    }
    do { try stems.add(path: r.path, settings: settings) } catch {
      events.append(.recordingFailed(r.name, "the take was saved to \(r.path) but could not be added as a stem: \(error)"))
      return events
    }
    events.append(.takeRecorded(r.name, r.path, Double(r.framesWritten) / sampleRate, r.framesDropped))
    return events
  }

  func allStemNamesLocked() -> [String] { table.stems.map(\.settings.name) + table.offline.map(\.settings.name) }
}

extension Mixer.Recorder {
  /// Starts recording the input ports (or live input `input`'s strip: after its EQ, before its
  /// fader and pan; Renderer/Recording.swift) into a new file. When the take stops it becomes a
  /// stem (muted if `muted`), placed on the transport where it was recorded minus `latencyFrames`.
  public func start(
    path: String, name: String, format: OutputFormat, latencyFrames: Int, muted: Bool, input: String? = nil
  ) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      if mixer.takes.recorder != nil {
        throw MixerError("already recording '\(mixer.takes.recorder!.name)' (\(action: .stopRecording) first)")
      }
      var strip = -1
      if let input {
        guard let live = mixer.liveInputs.find(input) else { throw mixer.unknownInput(input) }
        strip = live.index
      }
      if let problem = NameRules.stemProblem(name) { throw MixerError(ControlText(problem)) }  // a take becomes a stem
      if mixer.allStemNamesLocked().contains(name) { throw MixerError("a stem named '\(name)' already exists; choose another take name") }
      if mixer.liveInputs.find(name) != nil {
        throw MixerError("'\(name)' is a live input's name (stems and inputs share names); choose another take name")
      }
      // lstat: a symbolic link counts, even one pointing nowhere (the writer would refuse it too).
      var existing = stat()
      if lstat(RawFileName.cPath(path), &existing) == 0 {
        let what = existing.st_mode & S_IFMT == S_IFLNK ? "a symbolic link" : "a file"
        throw MixerError("\(path) already exists (\(what)); stemdeck never writes a take over anything (choose another name)")
      }
      let r: TakeRecorder
      do throws(SoundFileError) {
        r = try TakeRecorder(path: path, name: name, format: format, sampleRate: mixer.sampleRate, latencyFrames: latencyFrames)
      } catch { throw MixerError("cannot record to \(path): \(error.reason)") }
      r.takePointer.pointee.inputStrip = strip
      do throws(MixerError) { try mixer.send(.startRecording(r.takePointer)) } catch {
        r.finish()
        AtomicFile.removeRegularFile(path)  // only the file made here, never what replaced it
        throw error
      }
      mixer.takes.recorder = r
      mixer.takes.paused = false
      mixer.takes.stopping = false
      mixer.takes.muted = muted
      mixer.takes.input = input
    }
  }

  public func pause(_ paused: Bool) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      guard let r = mixer.takes.recorder, !mixer.takes.stopping else { throw MixerError("not recording (\(action: .startRecording))") }
      if paused == mixer.takes.paused { throw MixerError("take '\(r.name)' is already \(paused ? "paused" : "recording")") }
      try mixer.send(.pauseRecording(paused))
      mixer.takes.paused = paused
    }
  }

  /// Stops the take; the file is finished and the stem added when the renderer lets go
  /// (reported by `pump` as `takeRecorded`).
  public func stop() throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      guard mixer.takes.recorder != nil, !mixer.takes.stopping else { throw MixerError("not recording (\(action: .startRecording))") }
      try mixer.send(.stopRecording)
      mixer.takes.stopping = true
    }
  }

  /// The round-trip latency (JACK playback latency of the master plus capture latency of the
  /// inputs) the take in progress is shifted by; the JACK side sets it at start and again at stop.
  public func setLatency(_ frames: Int) {
    mixer.lock.locked { mixer.takes.recorder?.latencyFrames = max(0, frames) }
  }

  public var status: RecordingStatus? {
    mixer.lock.locked {
      mixer.takes.recorder.map {
        RecordingStatus(
          name: $0.name, path: $0.path, seconds: Double($0.framesWritten) / mixer.sampleRate,
          dropped: $0.framesDropped, paused: mixer.takes.paused, stopping: mixer.takes.stopping, input: mixer.takes.input)
      }
    }
  }

  /// Input meters (the recording inputs).
  public func meter() -> MeterReading {
    MeterReading(cells: mixer.renderState.pointee.status.pointee.inputMeters, channels: 2)
  }
}
