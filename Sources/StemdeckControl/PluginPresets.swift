import CLilv
import Foundation
import StemdeckEngine
import StemdeckText

// LV2 presets (the presets extension, through lilv): a plugin's presets are the `pset:Preset`
// resources that apply to it (its bundle's, and the user's saved in ~/.lv2); loading one sets
// the control values it holds, through the same path as `insert set` (one that also holds
// plugin state replaces the insert with a new instance given that state); saving writes the
// insert's control values as a preset bundle any LV2 host can load. Control thread only.
// docs/architecture.md, *Plugin inserts*.

/// One preset of a plugin.
public struct PluginPreset: Sendable, Equatable {
  public let uri: String
  public let label: String
}

extension PluginHost {
  /// Calls `body` with a URID map and unmap on this host's table (for lilv's state calls).
  func withURIDs<T>(_ body: (UnsafeMutablePointer<LV2_URID_Map>, UnsafeMutablePointer<LV2_URID_Unmap>) -> T) -> T {
    let context = Unmanaged.passUnretained(urids).toOpaque()
    var map = LV2_URID_Map(
      handle: context,
      map: { handle, uri in
        guard let handle, let uri else { return 0 }
        return Unmanaged<URIDMap>.fromOpaque(handle).takeUnretainedValue().map(String(cString: uri))
      })
    var unmap = LV2_URID_Unmap(
      handle: context,
      unmap: { handle, id in
        guard let handle else { return nil }
        return Unmanaged<URIDMap>.fromOpaque(handle).takeUnretainedValue().unmap(id)
      })
    return body(&map, &unmap)
  }

  /// The presets of plugin `uri`, by label.
  public func presets(of uri: String) -> [PluginPreset] {
    lock.withLock {
      guard let plugin = lilvPlugin(uri: uri) else { return [] }
      let w = world()
      let presetClass = lilv_new_uri(w, LV2URI.presets + "Preset")
      let label = lilv_new_uri(w, LV2URI.rdfsLabel)
      defer { lilv_node_free(presetClass); lilv_node_free(label) }
      guard let related = lilv_plugin_get_related(plugin, presetClass) else { return [] }
      defer { lilv_nodes_free(related) }
      var found: [PluginPreset] = []
      var it = lilv_nodes_begin(related)
      while !lilv_nodes_is_end(related, it) {
        if let node = lilv_nodes_get(related, it), let presetURI = string(node) {
          lilv_world_load_resource(w, node)
          let labels = lilv_world_get(w, node, label, nil)
          found.append(PluginPreset(uri: presetURI, label: string(labels) ?? presetURI))
          lilv_node_free(labels)
        }
        it = lilv_nodes_next(related, it)
      }
      return found.sorted { ($0.label.lowercased(), $0.uri) < ($1.label.lowercased(), $1.uri) }
    }
  }

  /// Calls `body` with preset `preset` loaded from the world as a lilv state (freed after),
  /// under the host's lock; throws when lilv cannot read it.
  private func withPresetState<T>(_ preset: PluginPreset, _ body: (OpaquePointer) -> T) throws(MixerError) -> T {
    let result = lock.withLock { () -> T? in
      let w = world()
      let node = lilv_new_uri(w, preset.uri)
      defer { lilv_node_free(node) }
      return withURIDs { map, _ in
        guard let state = lilv_state_new_from_world(w, map, node) else { return nil }
        defer { lilv_state_free(state) }
        return body(state)
      }
    }
    guard let result else { throw MixerError("the LV2 preset '\(preset.label)' <\(preset.uri)> could not be read") }
    return result
  }

  /// The control values preset `preset` holds, by port symbol, and whether it also holds plugin
  /// state (restored by `restorePresetState` into a new instance).
  func presetContents(_ preset: PluginPreset) throws(MixerError) -> (values: [(symbol: String, value: Double)], holdsState: Bool) {
    try withPresetState(preset) { state in
      let box = PortValues(urids: urids)
      lilv_state_emit_port_values(
        state,
        { symbol, data, value, size, type in
          guard let symbol, let data, let value else { return }
          Unmanaged<PortValues>.fromOpaque(data).takeUnretainedValue().add(String(cString: symbol), value, size: size, type: type)
        }, Unmanaged.passUnretained(box).toOpaque())
      return (box.values, lilv_state_get_num_properties(state) > 0)
    }
  }

  /// Hands preset `preset`'s plugin state to the plugin's `restore` in each of `instances` (not
  /// yet the renderer's), `plumbing` giving each its worker (`work` then runs at once, as for a
  /// session's state). lilv maps the preset's paths (relative to its bundle) itself.
  func restorePresetState(
    _ preset: PluginPreset, into instances: [UnsafeMutablePointer<LilvInstance>], plumbing: [UnsafeMutablePointer<InsertPlumbing>]
  ) throws(MixerError) {
    try withPresetState(preset) { state in
      for (k, instance) in instances.enumerated() {
        let context = PluginStateContext(urids: urids, sessionPath: nil)
        let schedule = k < plumbing.count ? UnsafeMutableRawPointer(plumbing[k]) : nil
        context.withFeatures(schedule: schedule, paths: false) { features in
          lilv_state_restore(state, instance, nil, nil, 0, features)
        }
      }
    }
  }

  /// Saves `values` of `instance` (plugin `uri`) as preset `label`: a bundle `directory/NAME.lv2`
  /// holding `NAME.ttl` and a manifest, then loaded so the plugin lists it. Returns the bundle.
  func savePreset(
    uri: String, instance: UnsafeMutablePointer<LilvInstance>, values: [(symbol: String, value: Double)], label: String,
    directory: String
  ) throws(MixerError) -> String {
    let safe = String(label.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
    let bundle = (directory as NSString).appendingPathComponent(safe + ".lv2")
    do { try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true) } catch {
      throw MixerError("cannot create the preset bundle \(bundle): \(error.localizedDescription)")
    }
    let saved = lock.withLock { () -> Int32 in
      guard let plugin = lilvPlugin(uri: uri) else { return -1 }
      let w = world()
      let box = PortValues(urids: urids)
      box.prepare(values)
      return withURIDs { map, unmap in
        guard
          let state = lilv_state_new_from_instance(
            plugin, instance, map, nil, nil, nil, bundle,
            { symbol, data, size, type in
              guard let symbol, let data, let size, let type else { return nil }
              return Unmanaged<PortValues>.fromOpaque(data).takeUnretainedValue().value(String(cString: symbol), size: size, type: type)
            }, Unmanaged.passUnretained(box).toOpaque(), 0, nil)
        else { return -1 }
        defer { lilv_state_free(state) }
        lilv_state_set_label(state, label)
        let rc = lilv_state_save(w, map, unmap, state, nil, bundle, safe + ".ttl")
        if rc == 0 {
          let node = lilv_new_file_uri(w, nil, bundle + "/")
          lilv_world_load_bundle(w, node)
          lilv_node_free(node)
        }
        return rc
      }
    }
    guard saved == 0 else { throw MixerError("cannot save the LV2 preset '\(label)' in \(bundle) (lilv_state_save failed)") }
    return bundle
  }
}

/// Port values passed through lilv's callbacks: collected (a preset read) or served (saved).
private final class PortValues {
  let urids: URIDMap
  var values: [(symbol: String, value: Double)] = []
  private var served: [String: UnsafeMutablePointer<Float>] = [:]

  init(urids: URIDMap) { self.urids = urids }

  deinit { for p in served.values { p.deallocate() } }

  func add(_ symbol: String, _ value: UnsafeRawPointer, size: UInt32, type: UInt32) {
    switch urids.unmap(type).map({ String(cString: $0) }) {
    case LV2URI.atomFloat? where size >= 4: values.append((symbol, Double(value.load(as: Float.self))))
    case LV2URI.atomDouble? where size >= 8: values.append((symbol, value.load(as: Double.self)))
    case LV2URI.atomInt? where size >= 4: values.append((symbol, Double(value.load(as: Int32.self))))
    case LV2URI.atomBool? where size >= 4: values.append((symbol, value.load(as: Int32.self) != 0 ? 1 : 0))
    default: break  // a value of a type a control port cannot hold
    }
  }

  func prepare(_ list: [(symbol: String, value: Double)]) {
    for (symbol, value) in list {
      let p = UnsafeMutablePointer<Float>.allocate(capacity: 1)
      p.initialize(to: Float(value))
      served[symbol] = p
    }
  }

  func value(_ symbol: String, size: UnsafeMutablePointer<UInt32>, type: UnsafeMutablePointer<UInt32>) -> UnsafeRawPointer? {
    guard let p = served[symbol] else { return nil }
    size.pointee = 4
    type.pointee = urids.map(LV2URI.atomFloat)
    return UnsafeRawPointer(p)
  }
}

extension Mixer {

  /// Insert `position` of strip `name` with its plugin's description (not a placeholder).
  private func pluginOf(_ name: String, _ position: Int) throws(MixerError) -> (instance: InsertInstance, info: PluginInfo) {
    let x = try insertAt(name, position).instance
    guard let info = x.info else { throw MixerError("insert \(position) of '\(name)' is a placeholder: <\(x.uri)> is not installed") }
    return (x, info)
  }
}

extension Mixer.Inserts {
  /// The presets of insert `position` of strip `name`.
  public func presets(of name: String, position: Int) throws(MixerError) -> [PluginPreset] {
    let uri = try mixer.lock.locked { () throws(MixerError) -> String in try mixer.pluginOf(name, position).info.uri }
    return PluginHost.shared.presets(of: uri)
  }

  /// Loads preset `query` (its label, case-insensitive, or its URI) into insert `position` of
  /// strip `name`: every control it holds, clamped to the port's range. Returns its label.
  @discardableResult
  public func loadPreset(_ name: String, position: Int, preset query: String) throws(MixerError) -> String {
    let uri = try mixer.lock.locked { () throws(MixerError) -> String in try mixer.pluginOf(name, position).info.uri }
    let all = PluginHost.shared.presets(of: uri)
    let wanted = query.lowercased()
    let byURI = all.first { $0.uri == query }
    guard let preset = byURI ?? all.first(where: { $0.label.lowercased() == wanted }) else {
      let known = all.map { "'\($0.label)'" }.joined(separator: ", ")
      throw MixerError("insert \(position) of '\(name)' has no preset '\(query)' (its presets: \(known.isEmpty ? "none" : known))")
    }
    let (values, holdsState) = try PluginHost.shared.presetContents(preset)
    if holdsState {
      try loadStatePreset(name, position: position, preset, values: values)
      return preset.label
    }
    try mixer.lock.locked { () throws(MixerError) in
      let (instance, info) = try mixer.pluginOf(name, position)
      let ports = Self.presetPorts(values, instance, info)
      for (port, value, _) in ports { try mixer.send(.setInsertControl(port: port, value: value)) }
      for (_, value, i) in ports { instance.values[i].value = Double(value) }
      mixer.isDirty = true
    }
    return preset.label
  }

  /// A preset's `values` as `instance`'s control ports: each clamped to its range (whole for an
  /// integer or toggle), and its index in `instance.values`; values for ports it lacks are left out.
  private static func presetPorts(
    _ values: [(symbol: String, value: Double)], _ instance: InsertInstance, _ info: PluginInfo
  ) -> [(UnsafeMutablePointer<Float>, Float, Int)] {
    values.compactMap { symbol, value in
      guard let c = info.controls.first(where: { $0.symbol == symbol }), let port = instance.port(symbol),
        let i = instance.values.firstIndex(where: { $0.symbol == symbol })
      else { return nil }
      var v = min(max(value, c.minimum), c.maximum)
      if c.properties.contains("integer") || c.properties.contains("toggled") { v = v.rounded() }
      return (port, Float(v), i)
    }
  }

  /// Loads a preset that holds plugin state (x42's zeroconvolv presets name an impulse response):
  /// a new instance of the plugin gets the insert's values and bypass, then the preset's state
  /// and control values, and replaces the insert in its chain (the old one is freed once the
  /// renderer has let go of it: as a rack rebuilt by undo). Nothing changes if any step fails.
  private func loadStatePreset(
    _ name: String, position: Int, _ preset: PluginPreset, values: [(symbol: String, value: Double)]
  ) throws(MixerError) {
    try mixer.lock.locked { () throws(MixerError) in
      let (old, info) = try mixer.pluginOf(name, position)
      let (target, channels) = try mixer.insertStrip(name)
      let fresh = try InsertInstance(
        info, channels: channels, sampleRate: mixer.sampleRate, maxBlockFrames: mixer.renderState.pointee.maxBlockFrames,
        bypass: old.bypass, values: old.values, host: PluginHost.shared, worker: mixer.pluginWorker)
      do throws(MixerError) {
        try PluginHost.shared.restorePresetState(preset, into: fresh.lilvInstances, plumbing: fresh.plumbing)
        for (port, value, i) in Self.presetPorts(values, fresh, info) {
          port.pointee = value  // not running yet: the port is the control thread's to write
          fresh.values[i].value = Double(value)
        }
        var rack = mixer.insertRacks.racks[InsertKey(target)] ?? []
        rack[position - 1] = fresh
        try mixer.sendRack(rack, target)
      } catch {
        fresh.free()
        throw error
      }
      mixer.insertRacks.released.append(old)
      mixer.isDirty = true
    }
  }

  /// Saves insert `position` of strip `name`'s control values as preset `label` in `directory`
  /// (the console's: ~/.lv2, where LV2 hosts keep user presets). Returns the bundle's path.
  @discardableResult
  public func savePreset(_ name: String, position: Int, label: String, directory: String) throws(MixerError) -> String {
    let (uri, instance, values) = try mixer.lock.locked {
      () throws(MixerError) -> (String, UnsafeMutablePointer<LilvInstance>?, [(symbol: String, value: Double)]) in
      let x = try mixer.pluginOf(name, position).instance
      return (x.uri, x.lilvInstance, x.values)
    }
    guard !label.isEmpty, let instance else { throw MixerError("a preset needs a name") }
    return try PluginHost.shared.savePreset(uri: uri, instance: instance, values: values, label: label, directory: directory)
  }
}
