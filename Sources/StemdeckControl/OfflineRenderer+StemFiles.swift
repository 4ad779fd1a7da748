import CStream
import Foundation
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
import StemdeckText
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// `render --stems`: which strips get a file, the checks on their paths and the output's, and the
// stem files' writer thread (OfflineRenderer.swift renders; docs/architecture.md, *Offline render*).
extension OfflineRenderer {
  /// Which of `stemSlots`' taps `run` has the mix write straight into the stem writer's chunk,
  /// interleaved: the stems' (a bus's or an input's slot is `maxVoices` or past it), when the
  /// chunk is offered (`interleaved`) and nothing comes between the mix and the file (no limiter,
  /// a gain of 1).
  static func tapsInChunk(_ stemSlots: [Int32], maxVoices: Int, interleaved: Bool, limited: Bool, gain: Float) -> [Bool] {
    stemSlots.map { interleaved && !limited && gain == 1 && Int($0) < maxVoices }
  }

  /// Points the renderer's direct outputs of each tapped strip (`stemSlots`) at where its next
  /// block goes: its part of the stem writer's chunk (`chunk`, interleaved) when `inChunk`, else
  /// its left and right planes in `planar` (`blockFrames` each). Before every block.
  static func attachTaps(
    _ stemSlots: [Int32], to state: UnsafeMutablePointer<RenderState>, inChunk: [Bool],
    chunk: ((Int) -> UnsafeMutablePointer<Float>)?, planar: UnsafeMutablePointer<Float>, blockFrames: Int
  ) {
    for (i, slot) in stemSlots.enumerated() {
      if inChunk[i], let chunk {
        let frames = chunk(i)
        state.pointee.directOutputs[2 * Int(slot)] = frames
        state.pointee.directOutputs[2 * Int(slot) + 1] = frames + 1
        continue
      }
      state.pointee.directOutputs[2 * Int(slot)] = planar + 2 * i * blockFrames
      state.pointee.directOutputs[2 * Int(slot) + 1] = planar + (2 * i + 1) * blockFrames
    }
  }

  /// The stem files' paths (`FOLDER/NAME.EXT`, the output's extension), each checked as an output
  /// is; the folder is made when missing (its parent must exist).
  /// What `--stems` writes a file for: every strip that feeds the master, in the session's order:
  /// the stems routed to no bus, then the buses routed to none (a stem in a bus is heard in its
  /// bus's file, after the bus's EQ and fader). They sum to the master.
  /// What `render --stems` writes, for its summary: each file's strip name and kind ("stem",
  /// "bus", "input"), in the order written.
  public static func stemFileStrips(_ session: Session) -> [(name: String, kind: String)] {
    exportedStrips(session).map { ($0.name, $0.isBus ? "bus" : $0.isInput ? "input" : "stem") }
  }

  static func exportedStrips(_ session: Session) -> [(name: String, isBus: Bool, isInput: Bool)] {
    session.stems.filter { $0.bus == nil }.map { ($0.name, false, false) }
      + session.buses.filter { $0.bus == nil }.map { ($0.name, true, false) }
      + session.inputs.filter { $0.bus == nil }.map { ($0.name, false, true) }
  }

  /// `replaced`: the stem files that are there already (a render replaces them, as `--output`
  /// replaces its file, and says which).
  static func checkStemsFolder(
    _ folder: String, outputPath: String, extension ext: String, session: Session, sessionPath: String,
    inputs: [RenderInput] = []
  ) throws(MixerError) -> (paths: [String], made: Bool, replaced: [String]) {
    let shown = printableText(folder)
    var info = stat()
    var made = false
    if stat(RawFileName.cPath(folder), &info) != 0 {
      guard mkdir(RawFileName.cPath(folder), 0o777) == 0 else {
        throw MixerError("\(option: .stems) \(shown): cannot make the folder: \(String(cString: strerror(errno)))")
      }
      made = true
    } else if info.st_mode & S_IFMT != S_IFDIR {
      throw MixerError("\(option: .stems) \(shown): is not a folder; give a folder for the stem files")
    }
    var checked = false
    defer { if made && !checked { rmdir(RawFileName.cPath(folder)) } }
    guard !session.stems.isEmpty else { throw MixerError(file: sessionPath, "the session has no stems to render") }
    let base = folder.hasSuffix("/") ? folder : folder + "/"
    var paths: [String] = [], replaced: [String] = []
    for stem in exportedStrips(session) {
      let path = base + stem.name + "." + ext
      do {
        try checkOutput(path, session: session, sessionPath: sessionPath, inputs: inputs, choice: "\(option: .stems) folder")
      } catch {
        throw MixerError("\(option: .stems) \(shown): \(error)")
      }
      if sameTarget(path, outputPath) {
        throw MixerError(
          "\(option: .stems) \(shown): stem '\(printableText(stem.name))' would be written over \(option: .output) \(printableText(outputPath)); choose another folder"
        )
      }
      if lstat(RawFileName.cPath(path), &info) == 0 { replaced.append(stem.name + "." + ext) }
      paths.append(path)
    }
    checked = true
    return (paths, made, replaced)
  }

  /// Whether two output paths name the same file: one existing file (device and inode, so links
  /// count), or, for a name not there yet, the same name in the same folder (`a/x.wav` and
  /// `./a/x.wav`).
  static func sameTarget(_ a: String, _ b: String) -> Bool {
    if AtomicFile.sameFile(a, b) { return true }
    func split(_ path: String) -> (folder: String, name: Substring) {
      guard let slash = path.lastIndex(of: "/") else { return (".", path[...]) }
      return (slash == path.startIndex ? "/" : String(path[..<slash]), path[path.index(after: slash)...])
    }
    let x = split(a), y = split(b)
    return x.name == y.name && AtomicFile.sameFile(x.folder, y.folder)
  }

  /// The stem files of `render --stems`: temporary files beside their targets, renamed into place
  /// once all are complete.
  ///
  /// Written on a thread of their own (`stemdeck-stems`), so that the render thread only
  /// mixes: the renderer interleaves each stem's block straight into one of two chunk buffers
  /// (`chunkFrames` frames of every stem, `slot`), and a full chunk goes to the writer thread,
  /// which dithers and writes each stem's part in one call while the render fills the other
  /// (double buffering: the render waits only when the writer is a whole chunk behind): to an
  /// integer format converted into one shared buffer (`SoundFileWriter.writeConverted`, the
  /// master's conversion), to float WAV straight from the chunk to the disk (`DirectWAVWriter`:
  /// O_DIRECT, the chunk buffers aligned for it), to any other with `sf_writef_float`. A write
  /// error stops the render at the next chunk; nothing is put in place.
  final class StemFiles: @unchecked Sendable {
    let paths: [String]
    var temporaries: [String] = []
    /// `SoundFileWriter` is ~Copyable, so each lives in a box.
    final class Box {
      let writer: SoundFileWriter
      init(_ writer: consuming SoundFileWriter) { self.writer = writer }
    }
    var writers: [Box] = []
    /// Float WAV's writers instead (`writesDirect`).
    var directs: [DirectWAVWriter] = []
    /// Each stem file's ditherer, seeded by its strip's name (`TPDFDither.stemSeed`): every file
    /// its own sequence, so their rounding errors do not add up coherently when they are summed.
    var ditherers: [TPDFDither] = []
    /// An integer format's samples are converted into this (`SoundFileWriter.writeConverted`).
    let scratch: UnsafeMutablePointer<UInt8>?
    var placed = 0
    /// Frames of every stem in one chunk (256 KiB of interleaved float stereo per stem).
    let chunkFrames: Int
    let blockFrames: Int
    /// The two chunk buffers: stem i's frames at `i * chunkFrames * 2`.
    var chunks: [UnsafeMutablePointer<Float>] = []
    /// The chunk the render fills, and how many frames of it are filled (every stem alike).
    var filling = 0
    var filled = 0
    /// Render → writer: one signal per chunk handed over (`handed` counts them; chunk k is
    /// `chunks[k % 2]`, `chunkFill[k % 2]` frames), and a last one to stop.
    let ready = DispatchSemaphore(value: 0)
    let handed = Atomic<Int>(0)
    let chunkFill = UnsafeMutablePointer<Int>.allocate(capacity: 2)
    /// Writer → render: a chunk is free again.
    let free = DispatchSemaphore(value: 1)
    /// Writer → stop(): the thread has ended.
    let ended = DispatchSemaphore(value: 0)
    var running = false
    /// The first write error, set by the writer thread (read by the render after `free`/`ended`).
    var failure: MixerError?

    /// `names`: the strips the files are of, in `paths`' order; `ditherBits`: the integer depth
    /// to dither to, nil for none.
    init(
      paths: [String], names: [String], format: OutputFormat, sampleRate: Int, ditherBits: Int?, blockFrames: Int = 1024
    ) throws(MixerError) {
      self.paths = paths
      self.blockFrames = blockFrames
      chunkFrames = max(32768, blockFrames * 2)
      if let bits = ditherBits, !paths.isEmpty {
        ditherers = names.map { TPDFDither(bits: bits, seed: TPDFDither.stemSeed(name: $0)) }
      }
      scratch = paths.isEmpty || format.pcmLayout == nil ? nil : .allocate(capacity: chunkFrames * 2 * 4)
      for path in paths {
        let folder = String(path[..<path.lastIndex(of: "/")!])
        let name = String(path[path.index(after: path.lastIndex(of: "/")!)...])
        let candidate = folder + "/" + AtomicFile.temporaryName(for: name)
        do throws(SoundFileError) {
          if Self.writesDirect(format) {
            directs.append(try DirectWAVWriter(path: candidate, sampleRate: sampleRate, channelCount: 2))
          } else {
            writers.append(
              Box(
                try SoundFileWriter(
                  path: candidate, format: format, sampleRate: sampleRate, channelCount: 2, exclusive: true,
                  peakChunk: false)))
          }
        } catch {
          removeTemporaries()
          throw MixerError("\(printableText(path)): cannot create a temporary file beside it: \(error.reason)")
        }
        temporaries.append(candidate)
      }
      guard !paths.isEmpty else { return }
      // Aligned for direct writes: each stem's part starts at a multiple of 256 KiB.
      for _ in 0..<2 { chunks.append(Self.allocateChunk(floats: paths.count * chunkFrames * 2)) }
      running = true
      let thread = Thread { [self] in
        nameCurrentThread("stemdeck-stems")
        writeChunks()
      }
      thread.name = "stemdeck-stems"
      thread.start()
    }

    deinit {
      stop()
      for chunk in chunks { chunk.deallocate() }
      chunkFill.deallocate()
      scratch?.deallocate()
    }

    /// A chunk buffer of `floats` samples, on transparent huge pages where the kernel offers them
    /// (`MADV_HUGEPAGE`, a hint: without it, 4 KiB pages as before). 2 MiB aligned and rounded, so
    /// every 256 KiB stem part is aligned for `O_DIRECT`. Huge pages are for the kernel's sake:
    /// each direct write pins the buffer's pages (`get_user_pages`), 180,000 of them for 740 MB of
    /// stems in 4 KiB pages, which was the writer thread's largest cost; in 2 MiB pages the walk is
    /// one entry per 2 MiB, and the render's stores into the chunk miss the TLB less.
    static func allocateChunk(floats: Int) -> UnsafeMutablePointer<Float> {
      let huge = 2 << 20
      let bytes = (floats * MemoryLayout<Float>.size + huge - 1) / huge * huge
      let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: huge)
      #if os(Linux)
      _ = madvise(raw, bytes, MADV_HUGEPAGE)
      #endif
      return raw.bindMemory(to: Float.self, capacity: floats)
    }

    /// Whether the stem files of `format` are written by `DirectWAVWriter`: float WAV, whose
    /// bytes are the samples as they are on a little-endian machine.
    static func writesDirect(_ format: OutputFormat) -> Bool {
      #if _endian(little)
      return format == .wavFloat
      #else
      return false
      #endif
    }

    /// Where stem `index`'s next `n` frames go (interleaved stereo); `write` then takes them.
    func slot(_ index: Int) -> UnsafeMutablePointer<Float> {
      chunks[filling] + (index * chunkFrames + filled) * 2
    }

    /// Takes stem `index`'s next `n` frames (`interleaved`: its `slot`, or anywhere else). After
    /// the last stem of a block the block counts as filled, and a chunk with no room for another
    /// block goes to the writer thread.
    func write(_ index: Int, _ interleaved: UnsafeMutablePointer<Float>, _ n: Int) throws(MixerError) {
      let target = slot(index)
      if interleaved != target { target.update(from: interleaved, count: 2 * n) }
      guard index == paths.count - 1 else { return }
      filled += n
      if filled + blockFrames > chunkFrames { try handOff() }
    }

    /// Hands the filled chunk to the writer thread and waits for the other to be free.
    func handOff() throws(MixerError) {
      guard filled > 0 else { return }
      chunkFill[filling] = filled
      handed.add(1, ordering: .releasing)
      ready.signal()
      free.wait()
      filling ^= 1
      filled = 0
      if let failure { throw failure }
    }

    /// The writer thread: writes each chunk handed to it until told to stop.
    func writeChunks() {
      var written = 0
      while true {
        ready.wait()
        // Every chunk handed over is written before the stop signal (the last) is taken.
        guard written < handed.load(ordering: .acquiring) else { break }
        let chunk = written % 2, frames = chunkFill[chunk]
        written += 1
        if failure == nil {
          for index in paths.indices {
            let data = chunks[chunk] + index * chunkFrames * 2
            do throws(SoundFileError) {
              if index < ditherers.count { ditherers[index].apply(data, count: 2 * frames) }
              if !directs.isEmpty {
                try directs[index].write(data, count: frames * 2 * MemoryLayout<Float>.size)
              } else if let scratch {
                try writers[index].writer.writeConverted(data, frameCount: frames, scratch: scratch)
              } else {
                try writers[index].writer.write(data, frameCount: frames)
              }
            } catch {
              failure = MixerError(
                "\(printableText(paths[index])): \(error.reason) — the render stopped; previous stem files are left as they were")
              break
            }
          }
        }
        free.signal()
      }
      ended.signal()
    }

    /// Ends the writer thread (after the chunk it is writing, if any); idempotent.
    func stop() {
      guard running else { return }
      running = false
      ready.signal()
      ended.wait()
    }

    /// Writes what is left, ends the writer thread and finishes every file.
    func finish() throws(MixerError) {
      if running {
        try handOff()
        stop()
        if let failure { throw failure }
      }
      for i in paths.indices {
        do throws(SoundFileError) { try directs.isEmpty ? writers[i].writer.finish() : directs[i].finish() } catch {
          throw MixerError("\(printableText(paths[i])): \(error.reason)")
        }
      }
    }

    func putInPlace() throws(MixerError) {
      for i in paths.indices {
        if rename(RawFileName.cPath(temporaries[i]), RawFileName.cPath(paths[i])) != 0 {
          throw MixerError("\(printableText(paths[i])): cannot put the stem file in place: \(String(cString: strerror(errno)))")
        }
        placed = i + 1
      }
    }

    /// Ends the writer thread and removes the temporary files not renamed into place.
    func removeTemporaries() {
      stop()
      for i in placed..<temporaries.count { unlink(RawFileName.cPath(temporaries[i])) }
    }
  }

  /// Refuses an output that is not a regular file or a new name (a folder, device, FIFO or
  /// socket) and one that is one of the render's own inputs (the same file as a stem's or an
  /// effect's audio, an `--input` file, or the session file: compared by device and inode, so
  /// links count). `choice` is what the user can choose instead (the output; a stem file's folder).
  static func checkOutput(
    _ outputPath: String, session: Session, sessionPath: String, inputs: [RenderInput] = [],
    choice: ControlText = "\(option: .output)"
  ) throws(MixerError) {
    let shown = printableText(outputPath)
    var info = stat()
    // The folder it goes in must be there: otherwise the error would be the temporary file's.
    if let slash = outputPath.lastIndex(of: "/") {
      let folder = slash == outputPath.startIndex ? "/" : String(outputPath[..<slash])
      if stat(RawFileName.cPath(folder), &info) != 0 {
        let reason = errno == ENOENT ? "does not exist" : "cannot be reached (\(String(cString: strerror(errno))))"
        throw MixerError("\(shown): the folder \(printableText(folder)) \(reason); make it first, or choose another \(choice)")
      }
      if info.st_mode & S_IFMT != S_IFDIR {
        throw MixerError("\(shown): \(printableText(folder)) is not a folder; choose another \(choice)")
      }
    }
    if lstat(RawFileName.cPath(outputPath), &info) == 0 && info.st_mode & S_IFMT == S_IFDIR {
      throw MixerError("\(shown): is a folder; give a file name for the render")
    }
    if let what = AtomicFile.specialFileKind(at: outputPath) {
      throw MixerError("\(shown): is \(what), not a regular file; a render writes only to a regular file or a new name")
    }
    guard stat(RawFileName.cPath(outputPath), &info) == 0 else { return }  // a new name (or a dangling link, replaced)
    func same(_ path: String) -> Bool {
      var other = stat()
      return stat(RawFileName.cPath(path), &other) == 0 && other.st_dev == info.st_dev && other.st_ino == info.st_ino
    }
    for stem in session.stems where same(SessionFile.resolve(file: stem.file, sessionPath: sessionPath)) {
      throw MixerError(
        "\(shown): is the audio file of stem '\(printableText(stem.name))'; a render never writes over its own inputs (choose another \(choice))"
      )
    }
    for effect in session.effects where same(SessionFile.resolve(file: effect.file, sessionPath: sessionPath)) {
      throw MixerError(
        "\(shown): is the audio file of effect '\(printableText(effect.name))'; a render never writes over its own inputs (choose another \(choice))"
      )
    }
    for input in inputs where same(input.path) {
      throw MixerError(
        "\(shown): is the file of \(option: .input) \(printableText(input.name))=\(printableText(input.path)); a render never writes over its own inputs (choose another \(choice))"
      )
    }
    if same(sessionPath) {
      throw MixerError("\(shown): is the session file itself; choose another \(option: .output)")
    }
  }
}
