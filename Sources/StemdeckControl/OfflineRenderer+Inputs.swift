import CSampleRate
import Foundation
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession
import StemdeckText

// Live inputs in an offline render (`render --input NAME=FILE`): a session's input strips are
// silent unless a file stands in for what would arrive at their ports. docs/architecture.md,
// *Live inputs*. An aux send's return is fed the same way (`--input verb_return=FILE`: what the
// external effect would send back to `verb_return_L/R`); without a file it is silent, and the
// send's outputs go nowhere offline (docs/architecture.md, *Aux sends*).

/// A file that stands in for a live input (or a send's return, `NAME_return`) in an offline render.
public struct RenderInput: Equatable, Sendable {
  public var name: String
  public var path: String

  public init(name: String, path: String) {
    self.name = name
    self.path = path
  }
}

/// The render inputs' signals, decoded at the render rate: what the driver's port buffers would
/// hold, handed to the renderer a block at a time (`attach`).
///
/// - The file sounds from the render's first frame (whatever `--from` is), then silence.
/// - `NAME_return` names send NAME's return (stereo) when no live input has that name.
/// - A mono file for a stereo input feeds both of its channels; a stereo file for a mono input
///   is refused (add the input as stereo, or give a mono file); files of more than two channels
///   are folded to stereo first, as for stems. Another sample rate is converted (libsamplerate,
///   best quality).
struct InputFeeds {
  struct Feed {
    var name: String
    /// The send whose return it feeds (`NAME_return`), or nil: a live input.
    var sendReturn: String? = nil
    /// Planes (left, right; a mono input: left only) at the render rate.
    var left: [Float]
    var right: [Float]?
  }
  var feeds: [Feed] = []

  static let none = InputFeeds()

  /// Reads every file: errors name the input, the file and what is allowed.
  static func load(_ inputs: [RenderInput], session: Session, sessionPath: String, sampleRate: Int) throws(MixerError) -> InputFeeds {
    var result = InputFeeds()
    var seen = Set<String>()
    for input in inputs {
      let flag: ControlText = "\(option: .input) \(printableText(input.name))=\(printableText(input.path))"
      let settings = session.inputs.first(where: { $0.name == input.name })
      let sendReturn = session.sends.first { $0.name + "_return" == input.name }?.name
      if settings == nil && sendReturn == nil {
        let known = session.inputs.map(\.name)
        let returns = session.sends.map { $0.name + "_return" }
        if !returns.isEmpty {
          let lists =
            (known.isEmpty ? [] : ["its inputs: " + known.joined(separator: ", ")]) + [
              "its send returns: " + returns.joined(separator: ", ")
            ]
          throw MixerError(
            file: sessionPath,
            "\(flag): the session has no live input or send return named '\(printableText(input.name))' (\(lists.joined(separator: "; ")))")
        }
        throw MixerError(
          file: sessionPath,
          known.isEmpty
            ? "\(flag): the session has no live inputs (its \"inputs\" list is empty)"
            : "\(flag): the session has no live input named '\(printableText(input.name))' (its inputs: \(known.joined(separator: ", ")))")
      }
      guard seen.insert(input.name).inserted else {
        throw MixerError("\(flag): input '\(printableText(input.name))' is given twice; give one file per input")
      }
      let samples: [Float], channels: Int, fileRate: Int
      do throws(SoundFileError) {
        let file = try SoundFile(readingFrom: input.path)
        fileRate = file.info.sampleRate
        (samples, channels) = try file.readAll(maxFrames: Int(24 * 3600 * Double(fileRate)))
      } catch {
        throw MixerError("\(flag): \(error)")
      }
      if channels == 2, let settings, settings.channels == .mono {
        throw MixerError(
          "\(flag): '\(printableText(input.name))' is a mono input and the file is stereo; give a mono file (a mono file for a stereo input feeds both sides)"
        )
      }
      var planes = deinterleave(samples, channels: channels)
      if fileRate != sampleRate {
        planes = try planes.map { (plane: [Float]) throws(MixerError) -> [Float] in
          try resample(plane, from: fileRate, to: sampleRate, what: flag)
        }
      }
      let left = planes[0]
      // A return is stereo, as a stereo input: a mono file feeds both sides.
      let stereo = settings.map { $0.channels == .stereo } ?? true
      let right: [Float]? = stereo ? (planes.count > 1 ? planes[1] : planes[0]) : nil
      result.feeds.append(Feed(name: input.name, sendReturn: settings == nil ? sendReturn : nil, left: left, right: right))
    }
    return result
  }

  static func deinterleave(_ samples: [Float], channels: Int) -> [[Float]] {
    if channels == 1 { return [samples] }
    let frames = samples.count / channels
    var planes = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channels)
    for c in 0..<channels { for i in 0..<frames { planes[c][i] = samples[i * channels + c] } }
    return planes
  }

  static func resample(_ plane: [Float], from fileRate: Int, to rate: Int, what: ControlText) throws(MixerError) -> [Float] {
    let ratio = Double(rate) / Double(fileRate)
    var out = [Float](repeating: 0, count: Int(Double(plane.count) * ratio) + 64)
    var error: Int32 = 0
    var produced = 0
    plane.withUnsafeBufferPointer { i in
      out.withUnsafeMutableBufferPointer { o in
        var data = SRC_DATA()
        data.data_in = i.baseAddress
        data.input_frames = Int(plane.count)
        data.data_out = o.baseAddress
        data.output_frames = Int(o.count)
        data.src_ratio = ratio
        error = src_simple(&data, Int32(SRC_SINC_BEST_QUALITY), 1)
        produced = Int(data.output_frames_gen)
      }
    }
    if error != 0 { throw MixerError("\(what): resampling failed: \(String(cString: src_strerror(error)))") }
    return Array(out.prefix(produced))
  }

  /// Points the renderer's input buffers for the block starting at render frame `frame` (`count`
  /// frames) at `scratch` (2 × `blockFrames` per feed), filled from the files (silence past their end).
  func attach(
    to state: UnsafeMutablePointer<RenderState>, mixer: Mixer, scratch: UnsafeMutablePointer<Float>, blockFrames: Int,
    frame: Int, count: Int
  ) {
    let indices = mixer.inputStripIndices()
    let sends = mixer.sendIndices()
    for (k, feed) in feeds.enumerated() {
      func fill(_ plane: [Float], _ target: UnsafeMutablePointer<Float>) {
        let available = max(0, min(count, plane.count - frame))
        for i in 0..<available { target[i] = plane[frame + i] }
        for i in available..<count { target[i] = 0 }
      }
      let l = scratch + 2 * k * blockFrames, r = l + blockFrames
      if let send = feed.sendReturn {
        guard let index = sends[send], let right = feed.right else { continue }
        fill(feed.left, l)
        fill(right, r)
        state.pointee.sends.returns[2 * index] = l
        state.pointee.sends.returns[2 * index + 1] = r
        continue
      }
      guard let index = indices[feed.name] else { continue }
      fill(feed.left, l)
      state.pointee.inputs.buffers[2 * index] = l
      if let right = feed.right {
        fill(right, r)
        state.pointee.inputs.buffers[2 * index + 1] = r
      }
    }
  }
}

extension Mixer {
  /// Each live input's strip index (the offline renderer hands their buffers in).
  func inputStripIndices() -> [String: Int] {
    lock.locked { Dictionary(uniqueKeysWithValues: liveInputs.inputs.map { ($0.settings.name, $0.index) }) }
  }

  /// Each aux send's index in the renderer (the offline renderer hands their returns' buffers in).
  func sendIndices() -> [String: Int] {
    lock.locked { Dictionary(uniqueKeysWithValues: sendTable.sends.map { ($0.name, $0.index) }) }
  }
}
