import CSampleRate
import Foundation
import StemdeckAudioFile
import StemdeckEngine
import StemdeckSession

// Live inputs in an offline render (`render --input NAME=FILE`): a session's input strips are
// silent unless a file stands in for what would arrive at their ports. docs/architecture.md,
// *Live inputs*.

/// A file that stands in for a live input in an offline render.
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
/// - A mono file for a stereo input feeds both of its channels; a stereo file for a mono input
///   is refused (add the input as stereo, or give a mono file); files of more than two channels
///   are folded to stereo first, as for stems. Another sample rate is converted (libsamplerate,
///   best quality).
struct InputFeeds {
  struct Feed {
    var name: String
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
      guard let settings = session.inputs.first(where: { $0.name == input.name }) else {
        let known = session.inputs.map(\.name)
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
      if channels == 2 && settings.channels == .mono {
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
      let right: [Float]? = settings.channels == .stereo ? (planes.count > 1 ? planes[1] : planes[0]) : nil
      result.feeds.append(Feed(name: input.name, left: left, right: right))
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
    for (k, feed) in feeds.enumerated() {
      guard let index = indices[feed.name] else { continue }
      func fill(_ plane: [Float], _ target: UnsafeMutablePointer<Float>) {
        let available = max(0, min(count, plane.count - frame))
        for i in 0..<available { target[i] = plane[frame + i] }
        for i in available..<count { target[i] = 0 }
      }
      let l = scratch + 2 * k * blockFrames, r = l + blockFrames
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
}
