import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
#if canImport(Glibc)
import Glibc
#endif
import StemdeckText

// `render --click FILE`: the click alone (its count-in too), frame for frame beside the master,
// written through a temporary file put in place with the master. The renderer writes the click
// into the buffers given as its own outputs (StemdeckEngine's Renderer/Click.swift), as the JACK
// driver gives it `click_L`/`click_R`. docs/architecture.md, *Click and count-in*.

extension OfflineRenderer {
  /// The click file being written: its buffers for the renderer, and the frames waiting for the
  /// master (a limiter delays the master by its latency; the click waits in `pending` as long).
  final class ClickFile {
    let path: String
    let writer: SoundFileWriter
    let temporary: String
    let left: UnsafeMutablePointer<Float>
    let right: UnsafeMutablePointer<Float>
    /// Interleaved click frames rendered but not yet written.
    var pending: [Float] = []
    var renamed = false

    /// Creates the temporary file beside `path` (format from its extension).
    init(path: String, sampleRate: Int, blockFrames: Int) throws(MixerError) {
      let format: OutputFormat
      do throws(SoundFileError) { format = try OutputFormat.resolve(path: path, format: nil) } catch {
        throw MixerError("\(option: .click) \(printableText(path)): \(error.reason)")
      }
      let folder = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
      let name = path.split(separator: "/").last.map(String.init) ?? path
      let candidate = (folder.isEmpty ? "" : folder) + "/" + AtomicFile.temporaryName(for: name)
      do {
        writer = try SoundFileWriter(path: candidate, format: format, sampleRate: sampleRate, channelCount: 2, exclusive: true)
      } catch {
        throw MixerError("\(option: .click) \(printableText(path)): cannot create a temporary file beside it: \(error.reason)")
      }
      self.path = path
      temporary = candidate
      left = .allocate(capacity: blockFrames)
      right = .allocate(capacity: blockFrames)
    }

    deinit {
      left.deallocate()
      right.deallocate()
      if !renamed { unlink(RawFileName.cPath(temporary)) }
    }

    /// Gives the renderer the click's buffers for the next block.
    func attach(to state: UnsafeMutablePointer<RenderState>) {
      state.pointee.click.outputLeft = left
      state.pointee.click.outputRight = right
    }

    /// Takes a block of `n` frames, of which the renderer wrote the first `fresh` (the rest is the
    /// limiter's tail: silence), and writes the `out` frames that go beside the master's.
    func take(fresh: Int, of n: Int, writing out: Int) throws(MixerError) {
      for i in 0..<n {
        pending.append(i < fresh ? left[i] : 0)
        pending.append(i < fresh ? right[i] : 0)
      }
      guard out > 0 else { return }
      try pending.withUnsafeBufferPointer { (frames) throws(MixerError) in
        do throws(SoundFileError) { try writer.write(frames.baseAddress!, frameCount: out) } catch {
          throw MixerError("\(option: .click) \(printableText(path)): \(error.reason)")
        }
      }
      pending.removeFirst(2 * out)
    }

    /// Completes the file (still under its temporary name).
    func finish() throws(MixerError) {
      do throws(SoundFileError) { try writer.finish() } catch {
        throw MixerError("\(option: .click) \(printableText(path)): \(error.reason)")
      }
    }

    /// Renames it over `path`.
    func putInPlace() throws(MixerError) {
      if rename(RawFileName.cPath(temporary), RawFileName.cPath(path)) != 0 {
        throw MixerError("\(option: .click) \(printableText(path)): cannot put the file in place: \(String(cString: strerror(errno)))")
      }
      renamed = true
    }
  }
}

extension OfflineRenderer {
  /// The rules `--output` follows (OfflineRenderer+StemFiles.swift `checkOutput`), and not the
  /// render's own output.
  static func checkClickPath(
    _ path: String, outputPath: String, session: Session, sessionPath: String, inputs: [RenderInput]
  ) throws(MixerError) {
    try checkOutput(path, session: session, sessionPath: sessionPath, inputs: inputs, choice: "\(option: .click)")
    var a = stat(), b = stat()
    let same =
      path == outputPath
      || (stat(RawFileName.cPath(path), &a) == 0 && stat(RawFileName.cPath(outputPath), &b) == 0 && a.st_dev == b.st_dev
        && a.st_ino == b.st_ino)
    if same {
      throw MixerError("\(option: .click) \(printableText(path)): is the render's output too; give the click its own file")
    }
  }
}
