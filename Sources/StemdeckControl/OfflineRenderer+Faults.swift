import StemdeckAudioFile
import StemdeckSession
import StemdeckText

// What an offline render does with audio it cannot trust (OfflineRenderer.run calls these): a
// stem whose file holds NaN or infinite samples is muted and said (exit status 3, as live); a
// stem whose file cannot be read to the end its header declares, and a mix that is not finite,
// end the render with an error, nothing written. docs/render.md, *Render*.
extension OfflineRenderer {
  /// Handles what `pump` reported: each stem whose file holds NaN or infinite samples is muted
  /// (the mixer did that) and returned, said through `warning`; a stem whose file failed to read
  /// (a read error; a file that ends before its header's frame count: truncated or corrupt)
  /// throws, naming the stem, its file and what is wrong, as live mode reports it.
  static func streamFaults(
    _ events: [MixerEvent], plan: Plan, at frame: Int, warning: ((MutedStem) -> Void)?
  ) throws(MixerError) -> [MutedStem] {
    var muted: [MutedStem] = []
    for event in events {
      switch event {
      case .badSamples(let name):
        let file = plan.session.stems.first { $0.name == name }?.file ?? name
        let stem = MutedStem(name: name, file: file, at: Double(frame) / Double(plan.sampleRate))
        muted.append(stem)
        warning?(stem)
      case .readFailed(let name, let message):
        let file = plan.session.stems.first { $0.name == name }?.file ?? name
        // The disk reader's message starts with the file's resolved path; the session's is shown.
        let resolved = SessionFile.resolve(file: file, sessionPath: plan.sessionPath) + ": "
        let reason = message.hasPrefix(resolved) ? String(message.dropFirst(resolved.count)) : message
        throw MixerError(
          file: plan.sessionPath, "stem '\(printableText(name))' (\(printableText(file))) cannot be read: \(terminalSafe(reason))")
      default: continue
      }
    }
    return muted
  }

  /// The error of a mix that is not finite: NaN or infinity in the master from `frame` (output
  /// frames from the render's start), where the stems' levels (or an `--input` file's) add up
  /// beyond 32-bit float's range. No mixer can make a file of it; nothing is written.
  static func nonFiniteMix(_ plan: Plan, at frame: Int) -> MixerError {
    MixerError(
      file: plan.sessionPath,
      "the mix is not finite from \(NumberFormat.time(Double(frame) / Double(plan.sampleRate))) of the render: its master holds infinite or NaN samples (its stems' samples, far beyond full scale, add up past the largest 32-bit float); lower their levels or fix their files, nothing was written"
    )
  }

  /// The first frame of `count` interleaved stereo samples that is not finite, or nil.
  static func firstNonFiniteFrame(_ interleaved: UnsafeMutablePointer<Float>, count: Int) -> Int? {
    (0..<count).first { !interleaved[$0].isFinite }.map { $0 / 2 }
  }

  /// How many of `count` samples lie over full scale (|x| > 1).
  static func overFullScale(_ samples: UnsafeMutablePointer<Float>, count: Int) -> Int {
    var n = 0
    for i in 0..<count where abs(samples[i]) > 1 { n += 1 }
    return n
  }
}
