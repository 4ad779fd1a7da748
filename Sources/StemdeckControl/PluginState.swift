import CLilv
import Foundation
import StemdeckEngine
import StemdeckSession

// A plugin's own state (the LV2 state extension): saved with the session beside the insert's
// control values (InsertSettings' "state"), restored when the session opens. Paths in it go
// through state:mapPath: a file under the session's folder is kept relative to it; a file from
// elsewhere is copied into `<session name>-files/` beside the session (never over a different
// file) and kept relative, so that the session's folder can move. Control thread only.
// docs/architecture.md, *Plugin inserts*.

/// What `store` and `retrieve` see, and the map/free path features' handle.
final class PluginStateContext {
  let urids: URIDMap
  /// The session's folder (nil: paths stay absolute) and its files folder's name.
  let folder: String?
  let filesFolder: String
  /// Stored by `save`; read by `retrieve` during `restore` (kept alive until it returns).
  var values: [InsertStateValue] = []
  private var retrieved: [UnsafeMutableRawPointer] = []
  /// Why a file could not be kept beside the session (the path then stays absolute).
  var problems: [String] = []
  /// Whether `abstractPath` copies a file from elsewhere into the files folder (a session being
  /// written); otherwise it answers the name the copy would have and touches nothing (a session
  /// compared, shown or kept in memory: `diff`, the unsaved-changes checks).
  let copiesFiles: Bool

  init(urids: URIDMap, sessionPath: String?, copiesFiles: Bool = false) {
    self.urids = urids
    self.copiesFiles = copiesFiles
    // A session in `/` (undo's snapshots: Mixer+Undo.swift) keeps paths absolute, as its stems.
    if let sessionPath, sessionPath.hasPrefix("/"), (sessionPath as NSString).deletingLastPathComponent != "/" {
      folder = (sessionPath as NSString).deletingLastPathComponent
      filesFolder = ((sessionPath as NSString).lastPathComponent as NSString).deletingPathExtension + "-files"
    } else {
      folder = nil
      filesFolder = ""
    }
  }

  deinit { for r in retrieved { r.deallocate() } }

  /// `retrieve`: the value stored under `key` (nil: none), valid until the context goes.
  func retrieve(_ key: UInt32) -> (UnsafeRawPointer, Int, UInt32, UInt32)? {
    guard let uri = urids.unmap(key).map({ String(cString: $0) }), let v = values.first(where: { $0.key == uri }) else { return nil }
    let copy = UnsafeMutableRawPointer.allocate(byteCount: max(1, v.bytes.count), alignment: 16)
    v.bytes.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: v.bytes.count) }
    retrieved.append(copy)
    return (UnsafeRawPointer(copy), v.bytes.count, urids.map(v.type), v.flags)
  }

  /// `abstract_path`: relative to the session's folder, copying a file from elsewhere into the
  /// files folder first.
  func abstractPath(_ absolute: String) -> String {
    guard let folder else { return absolute }
    let file = (absolute as NSString).standardizingPath
    let prefix = folder.hasSuffix("/") ? folder : folder + "/"
    if file.hasPrefix(prefix) { return String(file.dropFirst(prefix.count)) }
    let fm = FileManager.default
    let name = (file as NSString).lastPathComponent
    let base = (name as NSString).deletingPathExtension, ext = (name as NSString).pathExtension
    do {
      if copiesFiles { try fm.createDirectory(atPath: prefix + filesFolder, withIntermediateDirectories: true) }
      for n in 1...1000 {
        let candidate = n == 1 ? name : base + "-\(n)" + (ext.isEmpty ? "" : "." + ext)
        let relative = filesFolder + "/" + candidate
        let target = prefix + relative
        if fm.fileExists(atPath: target) {
          if fm.contentsEqual(atPath: target, andPath: file) { return relative }
          continue  // a different file by that name: never overwritten
        }
        if copiesFiles { try fm.copyItem(atPath: file, toPath: target) }
        return relative
      }
      problems.append("\(file): no free name in \(prefix + filesFolder)")
    } catch {
      problems.append("\(file): could not be copied into \(prefix + filesFolder) (\(error.localizedDescription))")
    }
    return file
  }

  /// `absolute_path`: a relative path is the session folder's.
  func absolutePath(_ abstract: String) -> String {
    guard let folder, !abstract.hasPrefix("/") else { return abstract }
    return (folder as NSString).appendingPathComponent(abstract)
  }

  /// Calls `body` with the features `save` and `restore` are given: map path and free path
  /// (unless `paths` is false: lilv gives its own when it restores a preset, relative to the
  /// preset's bundle), and for restore a worker schedule that runs `work` at once
  /// (`restoreSchedule`).
  func withFeatures<T>(
    schedule: UnsafeMutableRawPointer?, paths: Bool = true, _ body: (UnsafePointer<UnsafePointer<LV2_Feature>?>) -> T
  ) -> T {
    let me = Unmanaged.passUnretained(self).toOpaque()
    var map = LV2_State_Map_Path(
      handle: me,
      abstract_path: { handle, path in
        guard let handle, let path else { return nil }
        return strdup(Unmanaged<PluginStateContext>.fromOpaque(handle).takeUnretainedValue().abstractPath(String(cString: path)))
      },
      absolute_path: { handle, path in
        guard let handle, let path else { return nil }
        return strdup(Unmanaged<PluginStateContext>.fromOpaque(handle).takeUnretainedValue().absolutePath(String(cString: path)))
      })
    var free = LV2_State_Free_Path(handle: me, free_path: { _, path in Foundation.free(path) })
    var worker = LV2_Worker_Schedule(handle: schedule, schedule_work: Self.restoreSchedule)
    return strdupScope([LV2URI.state + "mapPath", LV2URI.state + "freePath", LV2URI.workerSchedule]) { names in
      withUnsafeMutablePointer(to: &map) { m in
        withUnsafeMutablePointer(to: &free) { f in
          withUnsafeMutablePointer(to: &worker) { w in
            var features = [
              LV2_Feature(URI: names[0], data: UnsafeMutableRawPointer(m)), LV2_Feature(URI: names[1], data: UnsafeMutableRawPointer(f)),
              LV2_Feature(URI: names[2], data: UnsafeMutableRawPointer(w))
            ]
            let chosen = (paths ? [0, 1] : []) + (schedule == nil ? [] : [2])
            return features.withUnsafeMutableBufferPointer { list in
              var pointers: [UnsafePointer<LV2_Feature>?] = chosen.map { UnsafePointer(list.baseAddress! + $0) } + [nil]
              return pointers.withUnsafeMutableBufferPointer { body(UnsafePointer($0.baseAddress!)) }
            }
          }
        }
      }
    }
  }

  /// The worker schedule given to `restore` (a plugin may load files there): runs the plugin's
  /// `work` at once on this thread, and its response at once too, as the worker spec allows
  /// outside `run` (the instance is not running yet). The handle is the instance's plumbing.
  static let restoreSchedule: @convention(c) (LV2_Worker_Schedule_Handle?, UInt32, UnsafeRawPointer?) -> LV2_Worker_Status = {
    handle, size, data in
    guard let handle else { return LV2_WORKER_ERR_UNKNOWN }
    let p = handle.assumingMemoryBound(to: InsertPlumbing.self)
    guard let work = p.pointee.work else { return LV2_WORKER_ERR_UNKNOWN }
    let status = work(
      p.pointee.handle,
      { handle, size, data in
        guard let handle else { return 1 }
        let p = handle.assumingMemoryBound(to: InsertPlumbing.self)
        return p.pointee.workResponse?(p.pointee.handle, size, data) ?? 0
      }, handle, size, data)
    return LV2_Worker_Status(rawValue: status)
  }
}

/// Calls `body` with C copies of `strings`, freed after.
private func strdupScope<T>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>]) -> T) -> T {
  let copies = strings.map { strdup($0)! }
  defer { for c in copies { free(c) } }
  return body(copies)
}

extension InsertInstance {
  /// The plugin's state interface (`LV2_State_Interface`), if it has one.
  private var stateInterface: LV2_State_Interface? {
    guard let instance = lilvInstance, let raw = lilv_instance_get_extension_data(instance, LV2URI.state + "interface") else { return nil }
    return raw.assumingMemoryBound(to: LV2_State_Interface.self).pointee
  }

  /// What the plugin's `save` stores (nil: it has no state interface), paths mapped for a session
  /// at `sessionPath` (nil: kept absolute); `copyingFiles`: that session is being written, so
  /// files from elsewhere are copied beside it (else only named). A placeholder answers the
  /// state it was opened with.
  func saveState(sessionPath: String?, copyingFiles: Bool = false) -> (state: [InsertStateValue]?, problems: [String]) {
    guard let instance = lilvInstance else { return (savedState, []) }
    guard let save = stateInterface?.save else { return (nil, []) }
    let context = PluginStateContext(urids: PluginHost.shared.urids, sessionPath: sessionPath, copiesFiles: copyingFiles)
    let flags = LV2_STATE_IS_POD.rawValue | LV2_STATE_IS_PORTABLE.rawValue
    _ = context.withFeatures(schedule: nil) { features in
      save(
        instance.pointee.lv2_handle,
        { handle, key, value, size, type, flags in
          guard let handle, let value, size > 0 else { return LV2_STATE_ERR_UNKNOWN }
          let c = Unmanaged<PluginStateContext>.fromOpaque(handle).takeUnretainedValue()
          guard let k = c.urids.unmap(key), let t = c.urids.unmap(type) else { return LV2_STATE_ERR_BAD_TYPE }
          let bytes = Array(UnsafeRawBufferPointer(start: value, count: size))
          let v = InsertStateValue(key: String(cString: k), type: String(cString: t), flags: flags, bytes: bytes)
          c.values.removeAll { $0.key == v.key }
          c.values.append(v)
          return LV2_STATE_SUCCESS
        }, Unmanaged.passUnretained(context).toOpaque(), flags, features)
    }
    return (context.values, context.problems)
  }

  /// Hands `state` to the plugin's `restore` in every instance (before the renderer has them),
  /// relative paths being the folder of the session at `sessionPath`. Throws, naming the first
  /// key the plugin refused, when it fails.
  func restoreState(_ state: [InsertStateValue], sessionPath: String?) throws(MixerError) {
    guard let restore = stateInterface?.restore else { return }
    for (k, instance) in instancesForState.enumerated() {
      let context = PluginStateContext(urids: PluginHost.shared.urids, sessionPath: sessionPath)
      context.values = state
      let schedule = k < plumbing.count ? UnsafeMutableRawPointer(plumbing[k]) : nil
      let status = context.withFeatures(schedule: schedule) { features in
        restore(
          instance,
          { handle, key, size, type, flags in
            guard let handle else { return nil }
            let c = Unmanaged<PluginStateContext>.fromOpaque(handle).takeUnretainedValue()
            guard let (value, count, t, f) = c.retrieve(key) else { return nil }
            size?.pointee = count
            type?.pointee = t
            flags?.pointee = f
            return value
          }, Unmanaged.passUnretained(context).toOpaque(), 0, features)
      }
      if status != LV2_STATE_SUCCESS {
        let why =
          switch status {
          case LV2_STATE_ERR_NO_PROPERTY: "a property it needs is missing"
          case LV2_STATE_ERR_BAD_TYPE: "a value has a type it does not take"
          case LV2_STATE_ERR_NO_FEATURE: "it lacks a feature"
          default: "error \(status.rawValue)"
          }
        let keys = state.map(\.key).joined(separator: ", ")
        throw MixerError("its saved state (\(keys.isEmpty ? "no properties" : keys)) was refused: \(why)")
      }
    }
  }
}
