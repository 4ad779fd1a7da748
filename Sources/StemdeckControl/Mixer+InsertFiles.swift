import Foundation
import StemdeckEngine
import StemdeckText

// File parameters of plugin inserts: a plugin's `patch:writable` parameters whose range is
// `atom:Path` (convoLV2's impulse response, a sampler's sample). `insert set STRIP N impulse
// FILE` checks the file and sends a `patch:Set` message through the plugin's control input
// (an atom sequence, InsertAtoms.swift), as jalv and other hosts do; the plugin loads it on
// its worker thread. docs/architecture.md, *Plugin inserts*.

/// A file parameter of an insert and the file it was last given here, if any.
public struct InsertFileValue: Sendable, Equatable {
  public let parameter: PluginFileParameter
  public let path: String?
}

extension Mixer.Inserts {
  /// The file parameters of insert `position` of strip `name`, with the file each was last set to.
  public func fileParameters(of name: String, position: Int) throws(MixerError) -> [InsertFileValue] {
    try mixer.lock.locked { () throws(MixerError) -> [InsertFileValue] in
      let x = try mixer.insertAt(name, position).instance
      return (x.info?.fileParameters ?? []).map { InsertFileValue(parameter: $0, path: x.files[$0.uri]) }
    }
  }

  /// Sets file parameter `symbol` (its short name, label or URI) of insert `position` of strip
  /// `name` to the file at `path` (relative: to the current directory), which must exist and be
  /// readable. The plugin loads it on its worker: `workCounts` counts when it has.
  public func setFile(_ name: String, position: Int, parameter symbol: String, path: String) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let x = try mixer.insertAt(name, position).instance
      guard let info = x.info else {
        throw MixerError("insert \(position) of '\(name)' is a placeholder (<\(x.uri)> is not installed): its values cannot change")
      }
      guard let p = info.fileParameters.first(where: { $0.symbol == symbol || $0.uri == symbol || $0.label == symbol }) else {
        let known = info.fileParameters.map(\.symbol).joined(separator: ", ")
        throw MixerError("'\(info.name)' has no file parameter '\(symbol)' (its file parameters: \(known.isEmpty ? "none" : known))")
      }
      let file = try Self.readableFile(path)
      let message = Self.patchSet(property: mixer.urid(p.uri), path: file, urid: mixer.urid)
      guard !x.plumbing.isEmpty, x.plumbing.allSatisfy({ $0.pointee.inputCount > 0 }) else {
        throw MixerError("'\(info.name)' has no control input to send the file to")
      }
      let sent = message.withUnsafeBytes { bytes in x.plumbing.allSatisfy { $0.pointee.send(atom: bytes) } }
      guard sent else { throw MixerError("'\(info.name)' is not taking messages (its queue is full): try again in a moment") }
      x.files[p.uri] = file
      mixer.isDirty = true
    }
  }

  /// How many requests the worker of insert `position` of strip `name` has run (`worked`: its
  /// plugin's `work`, such as loading a file, returned) and how many responses the renderer has
  /// handed back to the plugin (`delivered`), over its instances: counters to wait on.
  public func workCounts(_ name: String, position: Int) throws(MixerError) -> (worked: Int, delivered: Int) {
    try mixer.lock.locked { () throws(MixerError) -> (worked: Int, delivered: Int) in
      let plumbing = try mixer.insertAt(name, position).instance.plumbing
      return (
        plumbing.reduce(0) { $0 + $1.pointee.requestsWorked.load(ordering: .acquiring) },
        plumbing.reduce(0) { $0 + $1.pointee.responsesDelivered.load(ordering: .acquiring) }
      )
    }
  }

  /// `path` made absolute, if it names a readable regular file; otherwise an error naming it.
  static func readableFile(_ path: String) throws(MixerError) -> String {
    let absolute =
      path.hasPrefix("/") ? path : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(path)
    let file = (absolute as NSString).standardizingPath
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else {
      throw MixerError(file: path, "no such file")
    }
    if isDirectory.boolValue { throw MixerError(file: path, "is a directory, not a file") }
    guard FileManager.default.isReadableFile(atPath: file) else { throw MixerError(file: path, "is not readable (permission denied)") }
    guard file.utf8.count < 1000 else { throw MixerError(file: path, "path too long for a plugin (at most 999 bytes)") }
    return file
  }

  /// A `patch:Set` message (an `LV2_Atom_Object`) setting `property` to the path `path`:
  /// `{ patch:property: URID, patch:value: atom:Path }`, each atom padded to 8 bytes.
  static func patchSet(property: UInt32, path: String, urid: (String) -> UInt32) -> [UInt8] {
    var out: [UInt8] = []
    func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
    func pad() { while out.count % 8 != 0 { out.append(0) } }
    let text = Array(path.utf8) + [0]
    let padded = (text.count + 7) / 8 * 8
    u32(UInt32(8 + 24 + 16 + padded))  // the object's body: id, otype, two properties
    u32(urid(LV2URI.atom + "Object"))
    u32(0)  // id: none
    u32(urid(LV2URI.patch + "Set"))
    u32(urid(LV2URI.patch + "property"))
    u32(0)  // context
    u32(4)
    u32(urid(LV2URI.atom + "URID"))
    u32(property)
    pad()
    u32(urid(LV2URI.patch + "value"))
    u32(0)
    u32(UInt32(text.count))
    u32(urid(LV2URI.atom + "Path"))
    out += text
    pad()
    return out
  }
}

extension Mixer {
  /// The URID of `uri` in the process's one LV2 host's map.
  func urid(_ uri: String) -> UInt32 { PluginHost.shared.urids.map(uri) }
}
