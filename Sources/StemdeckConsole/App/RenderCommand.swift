import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckText
import StemdeckMixerView
import StemdeckRemote
import StemdeckLive

/// `stemdeck render` and `stemdeck analyze SESSION`: the session played offline through
/// `OfflineRenderer`, its summary printed (docs/render.md). `analyze FILE…` is AnalyzeFiles.swift.
func runRender(_ a: Arguments) -> Int32 {
  installOfflineSignalHandlers()
  let sessionPath = Console.absolutePath(a.session!)
  let session: Session
  do { session = try SessionFile.load(path: sessionPath) } catch {
    printError("error: \(error.naming(a.session!, for: sessionPath))")
    return 1
  }
  let bar = RenderProgress(enabled: isatty(2) != 0 && !a.quiet)
  do {
    let progress: (Double) -> Void = { bar.update($0) }
    let warning: (OfflineRenderer.MutedStem) -> Void = { muted in
      bar.clear()
      printError("warning: \(muted.message)")
    }
    let cancelled = { interruptRequests.load(ordering: .relaxed) != 0 }
    let summary: OfflineRenderer.Summary
    if a.mode == .analyze {
      summary = try OfflineRenderer.analyze(
        session: session, sessionPath: sessionPath, duration: a.duration, from: a.from, sampleRate: a.sampleRate,
        inputs: a.inputs, progress: progress, pass: bar.begin, warning: warning, cancelled: cancelled)
      bar.clear()
      if a.json, let loudness = summary.loudness {
        var object = AnalyzeJSON.figures(loudness)
        object["session"] = a.session!
        object["seconds"] = QueryJSON.number(summary.seconds, 3)
        object["from"] = QueryJSON.number(summary.start, 3)
        object["sampleRate"] = summary.sampleRate
        object["channels"] = 2
        object["underruns"] = summary.underruns
        writeOut(ControlServer.encode(object))
        return summary.mutedStems.isEmpty ? 0 : renderMutedStatus
      }
      writeOut(
        "analyzed \(a.session!): \(NumberFormat.time(summary.seconds)) at \(summary.sampleRate) Hz, stereo"
          + (summary.start > 0 ? ", from \(NumberFormat.time(summary.start))" : ""))
    } else {
      summary = try OfflineRenderer.render(
        session: session, sessionPath: sessionPath, outputPath: a.output!, duration: a.duration,
        from: a.from, sampleRate: a.sampleRate, dither: a.dither,
        // Without --true-peak, the default ceiling (-1 dBTP): a normalised delivery never clips.
        normalize: a.normalize.map {
          OfflineRenderer.Normalize(target: $0, truePeakCeiling: a.truePeak ?? OfflineRenderer.Normalize.defaultCeiling)
        },
        stemsFolder: a.stems, format: a.format, inputs: a.inputs,
        progress: progress, pass: bar.begin, warning: warning, cancelled: cancelled, clickPath: a.click)
      bar.clear()
      writeOut(
        "rendered \(a.output!): \(NumberFormat.time(summary.seconds)) at \(summary.sampleRate) Hz, stereo"
          + (summary.start > 0 ? ", from \(NumberFormat.time(summary.start))" : ""))
      if let click = a.click { writeOut("click: \(click), sample-aligned with the master") }
      if let folder = a.stems {
        for line in stemFilesLines(session, folder: folder, inputs: a.inputs, replaced: summary.replacedStemFiles) { writeOut(line) }
      }
    }
    if let n = summary.normalization {
      writeOut(
        normalizedHeadline(n, reached: summary.loudness)
          + (n.asked.truePeakCeiling.map { ", true peak at most \(Loudness.db($0, "dBTP"))" } ?? "")
          + (a.truePeak == nil && n.asked.truePeakCeiling != nil ? " (the default ceiling)" : "")
          + ": the mix measured \(Loudness.lufs(n.measured.integrated)), true peak \(Loudness.db(n.measured.truePeakDecibels, "dBTP")); gain \(n.gain >= 0 ? "+" : "")\(NumberFormat.fixed(n.gain, 2)) dB"
      )
      if let l = n.limiter {
        let share = summary.seconds > 0 ? l.seconds / summary.seconds * 100 : 0
        writeOut(
          "true-peak limiter: up to \(NumberFormat.fixed(l.maxReduction, 1)) dB of gain reduction, more than 0.1 dB for "
            + "\(NumberFormat.fixed(l.seconds, 2)) s (\(NumberFormat.fixed(share, 1)) % of the render); \(l.passes) measuring pass\(l.passes == 1 ? "" : "es")"
        )
      }
    }
    if let loudness = summary.loudness {
      for line in loudness.lines { writeOut(line) }
      if let n = summary.normalization, n.limiter != nil, n.asked.target - loudness.integrated > 0.1 {
        writeOut(
          "the true-peak ceiling holds the output \(NumberFormat.fixed(n.asked.target - loudness.integrated, 1)) LU under the target (a lower target or a higher ceiling reaches it)"
        )
      }
      if let n = summary.normalization, let ceiling = n.asked.truePeakCeiling, loudness.truePeakDecibels > ceiling + 0.005 {
        printError(
          "warning: the output's true peak (\(NumberFormat.fixed(loudness.truePeakDecibels, 2)) dBTP) is over the --true-peak ceiling (\(NumberFormat.fixed(ceiling, 2)) dBTP)"
        )
      }
    }
    writeOut(summary.levelsLine)
    if summary.underruns > 0 {
      printError(
        "warning: the render has \(summary.underruns) underrun\(summary.underruns == 1 ? "" : "s") (a stem's audio did not arrive in time; those frames are silent)"
      )
    }
    // The file is complete, but not the mix asked for: a stem had to be muted (see the warnings).
    return summary.mutedStems.isEmpty ? 0 : renderMutedStatus
  } catch {
    bar.clear()
    printError("error: \(error.naming(sessionPath, as: a.session!).consoleWords)")
    return interruptRequests.load(ordering: .relaxed) != 0 ? 130 : 1
  }
}

/// What `render --stems` wrote: a file a strip that feeds the master (a stem in a bus is in its
/// bus's file), each said with its kind; a live input without `--input` is said to be silent,
/// and a fed aux return (in the master, in no stem file) is noted, so the sum is never silently
/// short of the master.
func stemFilesLines(_ session: Session, folder: String, inputs: [RenderInput], replaced: [String] = []) -> [String] {
  let strips = OfflineRenderer.stemFileStrips(session)
  let fed = Set(inputs.map(\.name))
  let names = strips.map { strip in
    switch strip.kind {
    case "bus": return "\(strip.name) (bus)"
    case "input": return "\(strip.name) (input" + (fed.contains(strip.name) ? ")" : ", silent: no --input \(strip.name)=FILE)")
    default: return strip.name
    }
  }
  var lines = ["stems: \(strips.count) file\(strips.count == 1 ? "" : "s") in \(folder): \(names.joined(separator: ", "))"]
  for send in session.sends where fed.contains(send.name + "_return") {
    lines.append(
      "note: aux send '\(send.name)''s return (--input \(send.name)_return=…) is in the master but in no stem file: the stem files sum to the master without it"
    )
  }
  if !replaced.isEmpty {
    let files = replaced.count == 1 ? "1 file that was" : "\(replaced.count) files that were"
    lines.append("note: replaced \(files) in \(folder): \(replaced.map { printableText($0) }.joined(separator: ", "))")
  }
  return lines
}

/// The first words of a normalised render's line: "normalized to -14.0 LUFS" when the output
/// reached the target (within 0.1 LU), else what it reached and why ("normalized to -1.7 LUFS,
/// not the 0.0 LUFS asked (the true-peak ceiling holds it down)"), so the line never claims a
/// level the file does not have.
func normalizedHeadline(_ n: OfflineRenderer.Normalization, reached loudness: Loudness?) -> String {
  guard let got = loudness?.integrated, got.isFinite, abs(n.asked.target - got) > 0.1 else {
    return "normalized to \(Loudness.lufs(n.asked.target))"
  }
  let why = n.limiter != nil && got < n.asked.target ? " (the true-peak ceiling holds it down)" : ""
  return "normalized to \(Loudness.lufs(got)), not the \(Loudness.lufs(n.asked.target)) asked\(why)"
}

/// `render`'s exit status when the file was written but a stem was muted (NaN or infinite
/// samples in its file); 1 is a render that failed, 0 a clean one.
public let renderMutedStatus: Int32 = 3
