import Foundation
import StemdeckAudioFile
import StemdeckControl
import StemdeckSession
import StemdeckText
import StemdeckMixerView
import StemdeckRemote
import StemdeckLive

/// Audio-file extensions `analyze` takes as audio even when libsndfile cannot open the file (its
/// error is then the answer, not the session reader's).
private let audioExtensions: Set<String> = [
  "wav", "wave", "bwf", "rf64", "w64", "flac", "aif", "aiff", "aifc", "caf", "ogg", "oga", "opus", "mp3", "au", "snd"
]

/// Whether `analyze` was given audio files rather than a session: several arguments, an audio
/// extension, or (any other name but .json) a file libsndfile opens.
func analyzesAudioFiles(_ a: Arguments) -> Bool {
  guard let first = a.session else { return false }
  if !a.files.isEmpty { return true }
  let ext = (first as NSString).pathExtension.lowercased()
  if ext == "json" { return false }
  if audioExtensions.contains(ext) { return true }
  return (try? SoundFile(readingFrom: Console.absolutePath(first))) != nil
}

/// The figures of `analyze --json`, for a session and a file alike: levels in dB with two
/// decimals, null for silence (`QueryJSON.db`).
enum AnalyzeJSON {
  static func figures(_ l: Loudness) -> [String: Any] {
    [
      "integrated": QueryJSON.db(l.integrated), "range": QueryJSON.number(l.range, 2),
      "truePeak": QueryJSON.db(l.truePeakDecibels), "samplePeak": QueryJSON.db(l.samplePeakDecibels)
    ]
  }

  static func file(_ r: FileAnalysis, shown: String) -> [String: Any] {
    var o = figures(r.loudness)
    o["file"] = shown
    o["seconds"] = QueryJSON.number(r.seconds, 3)
    o["sampleRate"] = r.info.sampleRate
    o["channels"] = r.info.channelCount
    o["format"] = r.info.formatName
    if let bits = r.info.integerBits { o["bits"] = bits }
    o["fullScaleSamples"] = r.fullScaleSamples
    o["nonFiniteSamples"] = r.nonFiniteSamples
    if let declared = r.truncated { o["declaredFrames"] = declared }
    o["frames"] = r.frames
    return o
  }
}

/// `stemdeck analyze FILE…`: each file measured (FileAnalysis); one file as lines, several as a
/// table, `--json` one object a line. A file that cannot be measured is an error naming it; the
/// others are still measured. Exit status 0 when every file was measured, 1 when one was not,
/// 2 for options that are a session's, 130 when interrupted.
func runAnalyzeFiles(_ a: Arguments) -> Int32 {
  let files = [a.session!] + a.files
  for (flag, given) in [
    ("--from", a.from != nil), ("--duration", a.duration != nil), ("--input", !a.inputs.isEmpty),
    ("--sample-rate", a.sampleRate != Arguments().sampleRate)
  ] where given {
    printError("error: \(flag) is for analyzing a session; an audio file is measured whole, at its own rate")
    return 2
  }
  if let session = files.first(where: { ($0 as NSString).pathExtension.lowercased() == "json" }), files.count > 1 {
    printError("error: analyze takes one session or audio files, not both ('\(printableText(session))' is a session)")
    return 2
  }
  installOfflineSignalHandlers()
  let bar = RenderProgress(enabled: isatty(2) != 0 && !a.quiet)
  let cancelled = { interruptRequests.load(ordering: .relaxed) != 0 }
  var results: [(shown: String, FileAnalysis)] = []
  var failed = false
  for (index, shown) in files.enumerated() {
    let progress: (Double) -> Void = { bar.update((Double(index) + $0) / Double(files.count)) }
    do {
      let r = try FileAnalysis.measure(path: Console.absolutePath(shown), progress: progress, cancelled: cancelled)
      bar.clear()
      results.append((shown, r))
      if let declared = r.truncated {
        printError(
          "warning: \(printableText(shown)): the file ends at frame \(r.frames) of the \(declared) its header declares (truncated?); the figures are of what could be read"
        )
      }
      if r.nonFiniteSamples > 0 {
        printError("warning: \(printableText(shown)): \(r.nonFiniteSamples) samples are NaN or infinite; measured as silence")
      }
      if a.json { writeOut(ControlServer.encode(AnalyzeJSON.file(r, shown: shown))) }
    } catch {
      bar.clear()
      failed = true
      let message = error.naming(Console.absolutePath(shown), as: shown).consoleWords
      if a.json { writeOut(ControlServer.encode(["file": shown, "error": message])) }
      printError("error: \(message)")
      if cancelled() { return 130 }
    }
  }
  if !a.json {
    if files.count == 1, let only = results.first {
      for line in describe(only.1, shown: only.shown) { writeOut(line) }
    } else if !results.isEmpty {
      for line in table(results) { writeOut(line) }
    }
  }
  return failed ? 1 : 0
}

/// One file's figures as lines (the loudness lines as `analyze SESSION` prints them).
func describe(_ r: FileAnalysis, shown: String) -> [String] {
  var lines = [
    "analyzed \(shown): \(NumberFormat.time(r.seconds)) at \(r.info.sampleRate) Hz, \(channelText(r.info.channelCount)), \(formatText(r.info))"
  ]
  lines += r.loudness.lines
  lines.append("samples at full scale \(r.fullScaleSamples)" + (r.fullScaleSamples > 0 ? " (clipped?)" : ""))
  return lines
}

/// Several files: one row each, the file name last so that long names keep the columns.
func table(_ results: [(shown: String, FileAnalysis)]) -> [String] {
  let head = ["integrated", "range", "true peak", "sample peak", "full scale", "length", "rate", "ch"]
  var rows = [head + ["file"]]
  for (shown, r) in results {
    let l = r.loudness
    rows.append([
      Loudness.lufs(l.integrated), NumberFormat.fixed(l.range, 1) + " LU", Loudness.db(l.truePeakDecibels, "dBTP"),
      Loudness.db(l.samplePeakDecibels, "dBFS"), String(r.fullScaleSamples), NumberFormat.time(r.seconds),
      String(r.info.sampleRate), String(r.info.channelCount), shown
    ])
  }
  var widths = [Int](repeating: 0, count: head.count)
  for row in rows { for c in 0..<head.count { widths[c] = max(widths[c], row[c].count) } }
  return rows.map { row in
    (0..<head.count).map { c in String(repeating: " ", count: widths[c] - row[c].count) + row[c] }.joined(separator: "  ")
      + "  " + row[head.count]
  }
}

private func channelText(_ n: Int) -> String { n == 1 ? "mono" : n == 2 ? "stereo" : "\(n) channels" }

private func formatText(_ info: SoundFileInfo) -> String {
  info.integerBits.map { "\(info.formatName) \($0)-bit" } ?? info.formatName
}
