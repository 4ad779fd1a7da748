import CLilv
import Foundation

// The LV2 host: lilv's world (every installed bundle, read once), the catalog of effects and
// what the host gives a plugin (URID map/unmap, options, bounded block length, log).
// Control thread only; the renderer sees a plugin only through the `run` pointer of an
// instance built here (PluginInstance.swift). docs/architecture.md, *Plugin inserts*.

/// An installed LV2 effect as the catalog lists it.
public struct PluginInfo: Sendable, Equatable {
  public let uri: String
  public let name: String
  /// lilv's label of its class (`Amplifier Plugin`, `Delay Plugin`…).
  public let className: String
  public let audioInputs: Int
  public let audioOutputs: Int
  /// Declares `lv2:hardRTCapable`: its `run` is safe on the realtime thread.
  public let hardRTCapable: Bool
  /// The first required feature stemdeck does not provide, if any.
  public let missingFeature: String?
  /// A port stemdeck cannot connect (a CV or event port, or an atom port that is not a
  /// sequence, that is not optional), if any.
  public let unsupportedPort: String?
  /// Atom sequence ports (stemdeck connects each to a buffer, InsertAtoms.swift).
  public var atomInputs = 0
  public var atomOutputs = 0
  /// Has the LV2 worker interface (its `work` runs on a worker thread).
  public var hasWorker = false
  /// Parameters set by a file (`patch:writable` with range `atom:Path`), such as convoLV2's
  /// impulse response.
  public var fileParameters: [PluginFileParameter] = []
  public let controls: [PluginControl]
  /// The directory of its bundle, if lilv knows it as a file (the crash probe's child loads
  /// only this bundle).
  public var bundle: String? = nil
}

/// A plugin parameter whose value is a file (`patch:writable`, `rdfs:range atom:Path`), set
/// with a `patch:Set` message on its control input.
public struct PluginFileParameter: Sendable, Equatable {
  public let uri: String
  /// The name `insert set` takes: the URI's last part (after `#` or `/`).
  public let symbol: String
  /// Its `rdfs:label`, or the symbol.
  public let label: String
}

/// One input control port of a plugin.
public struct PluginControl: Sendable, Equatable {
  public let index: Int
  public let symbol: String
  public let name: String
  public let minimum: Double
  public let maximum: Double
  public let defaultValue: Double
  /// Unit label (`dB`, `Hz`, `ms`…) or "".
  public let unit: String
  /// What the plugin says of the value: integer, toggled, enumeration, logarithmic.
  public let properties: [String]
  /// Named values (enumerations), in the plugin's order.
  public let scalePoints: [(value: Double, label: String)]

  public static func == (a: PluginControl, b: PluginControl) -> Bool {
    a.index == b.index && a.symbol == b.symbol && a.minimum == b.minimum && a.maximum == b.maximum
  }
}

/// The process's one LV2 host (lilv's world is costly to load: every bundle is parsed).
public final class PluginHost: @unchecked Sendable {
  /// The host, loaded on first use.
  public static let shared = PluginHost()

  let lock = NSLock()
  /// lilv's world; nil until first used (`LilvWorld*`).
  private var worldPointer: OpaquePointer?
  private var catalog: [PluginInfo]?
  let urids = URIDMap()

  /// Features a host must provide that stemdeck does, or that cost it nothing (it never runs a
  /// plugin in place, so `inPlaceBroken` is honoured).
  static let providedFeatures: Set<String> = [
    LV2URI.uridMap, LV2URI.uridUnmap, LV2URI.options, LV2URI.boundedBlockLength, LV2URI.log,
    LV2URI.core + "inPlaceBroken", LV2URI.core + "hardRTCapable", LV2URI.core + "isLive", LV2URI.workerSchedule,
    LV2URI.state + "mapPath", LV2URI.state + "freePath", LV2URI.state + "threadSafeRestore"
  ]

  /// One bundle's directory to load instead of every installed one, or nil for all.
  private let onlyBundle: String?

  /// A host of every installed bundle, or of `bundle` alone (the crash probe's child: one
  /// plugin's bundle parses in a fraction of the time of all of them).
  init(bundle: String? = nil) { onlyBundle = bundle }

  /// lilv's world with every bundle loaded, or the one bundle (the first call reads them).
  /// Under `lock`.
  func world() -> OpaquePointer {
    if let worldPointer { return worldPointer }
    let w = lilv_world_new()!
    if let onlyBundle {
      let node = lilv_new_file_uri(w, nil, onlyBundle.hasSuffix("/") ? onlyBundle : onlyBundle + "/")
      lilv_world_load_bundle(w, node)
      lilv_node_free(node)
    } else {
      lilv_world_load_all(w)
    }
    worldPointer = w
    return w
  }

  /// Every installed effect (audio in and out; instruments and MIDI-only plugins are left out),
  /// by name. Read once, then cached.
  public func plugins() -> [PluginInfo] {
    lock.withLock {
      if let catalog { return catalog }
      let w = world()
      var found: [PluginInfo] = []
      let all = lilv_world_get_all_plugins(w)
      var it = lilv_plugins_begin(all)
      while !lilv_plugins_is_end(all, it) {
        if let p = lilv_plugins_get(all, it), let info = describe(p, world: w), info.audioInputs > 0, info.audioOutputs > 0 {
          found.append(info)
        }
        it = lilv_plugins_next(all, it)
      }
      found.sort { ($0.name.lowercased(), $0.uri) < ($1.name.lowercased(), $1.uri) }
      catalog = found
      return found
    }
  }

  /// The lilv plugin with this URI (`const LilvPlugin*`), or nil. Under `lock`.
  func lilvPlugin(uri: String) -> OpaquePointer? {
    let w = world()
    let node = lilv_new_uri(w, uri)
    defer { lilv_node_free(node) }
    return lilv_plugins_get_by_uri(lilv_world_get_all_plugins(w), node)
  }

  /// Finds a plugin by URI or by a name (case-insensitive, whole or a unique part).
  public func find(_ query: String) throws(MixerError) -> PluginInfo {
    let all = plugins()
    if let exact = all.first(where: { $0.uri == query }) { return exact }
    let q = query.lowercased()
    let named = all.filter { $0.name.lowercased() == q }
    if named.count == 1 { return named[0] }
    let partial = named.isEmpty ? all.filter { $0.name.lowercased().contains(q) || $0.uri.lowercased().contains(q) } : named
    if partial.count == 1 { return partial[0] }
    let shown = partial.prefix(8).map { "'\($0.name)' <\($0.uri)>" }.joined(separator: ", ")
    if partial.isEmpty {
      throw MixerError("no installed LV2 effect is called '\(query)' ('plugins' lists them; a URI or a part of a name will do)")
    }
    throw MixerError("'\(query)' matches \(partial.count) plugins: \(shown)\(partial.count > 8 ? ", …" : ""); give its URI")
  }

  private func describe(_ p: OpaquePointer, world w: OpaquePointer) -> PluginInfo? {
    guard let uri = string(lilv_plugin_get_uri(p)) else { return nil }
    let nameNode = lilv_plugin_get_name(p)
    let name = string(nameNode) ?? uri
    lilv_node_free(nameNode)
    let className = lilv_plugin_get_class(p).flatMap { string(lilv_plugin_class_get_label($0)) } ?? "Plugin"
    let n = PluginNodes(world: w)
    defer { n.free() }
    var ins = 0, outs = 0, atomIns = 0, atomOuts = 0
    var unsupported: String?
    var controls: [PluginControl] = []
    for i in 0..<lilv_plugin_get_num_ports(p) {
      guard let port = lilv_plugin_get_port_by_index(p, i) else { continue }
      let symbol = string(lilv_port_get_symbol(p, port)) ?? "port\(i)"
      let input = lilv_port_is_a(p, port, n.input)
      if lilv_port_is_a(p, port, n.audio) {
        if input { ins += 1 } else { outs += 1 }
      } else if lilv_port_is_a(p, port, n.control) {
        if input { controls.append(control(p, port, index: Int(i), symbol: symbol, nodes: n)) }
      } else if isSequence(p, port, n) {
        if input { atomIns += 1 } else { atomOuts += 1 }
      } else if !lilv_port_has_property(p, port, n.connectionOptional) {
        unsupported = unsupported ?? symbol
      }
    }
    var missing: String?
    if let required = lilv_plugin_get_required_features(p) {
      var fi = lilv_nodes_begin(required)
      while !lilv_nodes_is_end(required, fi) {
        if let f = string(lilv_nodes_get(required, fi)), !Self.providedFeatures.contains(f) { missing = missing ?? f }
        fi = lilv_nodes_next(required, fi)
      }
      lilv_nodes_free(required)
    }
    var info = PluginInfo(
      uri: uri, name: name, className: className, audioInputs: ins, audioOutputs: outs,
      hardRTCapable: lilv_plugin_has_feature(p, n.hardRT), missingFeature: missing, unsupportedPort: unsupported,
      controls: controls)
    info.atomInputs = atomIns
    info.atomOutputs = atomOuts
    info.hasWorker = lilv_plugin_has_extension_data(p, n.workerInterface)
    info.fileParameters = fileParameters(p, world: w, nodes: n)
    if let bundleURI = lilv_plugin_get_bundle_uri(p).flatMap({ lilv_node_as_uri($0) }),
      let path = lilv_file_uri_parse(bundleURI, nil)
    {
      info.bundle = String(cString: path)
      lilv_free(path)
    }
    return info
  }

  /// An atom port whose buffer type is atom:Sequence.
  private func isSequence(_ p: OpaquePointer, _ port: OpaquePointer, _ n: PluginNodes) -> Bool {
    guard lilv_port_is_a(p, port, n.atom), let types = lilv_port_get_value(p, port, n.bufferType) else { return false }
    defer { lilv_nodes_free(types) }
    return lilv_nodes_contains(types, n.sequence)
  }

  /// The plugin's `patch:writable` parameters whose range is `atom:Path`, needing a control input.
  private func fileParameters(_ p: OpaquePointer, world w: OpaquePointer, nodes n: PluginNodes) -> [PluginFileParameter] {
    guard let writable = lilv_plugin_get_value(p, n.writable) else { return [] }
    defer { lilv_nodes_free(writable) }
    var found: [PluginFileParameter] = []
    var it = lilv_nodes_begin(writable)
    while !lilv_nodes_is_end(writable, it) {
      if let node = lilv_nodes_get(writable, it), let uri = string(node), lilv_world_ask(w, node, n.range, n.path) {
        let labelNode = lilv_world_get(w, node, n.label, nil)
        let symbol = String(uri.split(whereSeparator: { $0 == "#" || $0 == "/" }).last ?? Substring(uri))
        found.append(PluginFileParameter(uri: uri, symbol: symbol, label: string(labelNode) ?? symbol))
        lilv_node_free(labelNode)
      }
      it = lilv_nodes_next(writable, it)
    }
    return found
  }

  private func control(_ p: OpaquePointer, _ port: OpaquePointer, index: Int, symbol: String, nodes n: PluginNodes) -> PluginControl {
    var def: OpaquePointer?, lo: OpaquePointer?, hi: OpaquePointer?
    lilv_port_get_range(p, port, &def, &lo, &hi)
    let minimum = lo.map { Double(lilv_node_as_float($0)) } ?? 0
    let maximum = hi.map { Double(lilv_node_as_float($0)) } ?? 1
    let defaultValue = def.map { Double(lilv_node_as_float($0)) } ?? minimum
    lilv_node_free(def); lilv_node_free(lo); lilv_node_free(hi)
    let nameNode = lilv_port_get_name(p, port)
    let name = string(nameNode) ?? symbol
    lilv_node_free(nameNode)
    var properties: [String] = []
    for (word, node) in [("integer", n.integer), ("toggled", n.toggled), ("enumeration", n.enumeration), ("logarithmic", n.logarithmic)]
    where lilv_port_has_property(p, port, node) {
      properties.append(word)
    }
    var unit = ""
    if let units = lilv_port_get_value(p, port, n.unit) {
      if lilv_nodes_size(units) > 0, let u = lilv_nodes_get_first(units), let text = string(u) {
        unit = text.split(separator: "#").last.map(String.init) ?? ""
      }
      lilv_nodes_free(units)
    }
    var points: [(value: Double, label: String)] = []
    if let scale = lilv_port_get_scale_points(p, port) {
      var it = lilv_scale_points_begin(scale)
      while !lilv_scale_points_is_end(scale, it) {
        if let sp = lilv_scale_points_get(scale, it) {
          points.append((Double(lilv_node_as_float(lilv_scale_point_get_value(sp))), string(lilv_scale_point_get_label(sp)) ?? ""))
        }
        it = lilv_scale_points_next(scale, it)
      }
      lilv_scale_points_free(scale)
      points.sort { $0.value < $1.value }
    }
    return PluginControl(
      index: index, symbol: symbol, name: name, minimum: minimum, maximum: maximum, defaultValue: defaultValue,
      unit: unit, properties: properties, scalePoints: points)
  }
}

/// A lilv node's text (a URI or a literal), or nil.
func string(_ node: OpaquePointer?) -> String? {
  guard let node else { return nil }
  if lilv_node_is_uri(node) { return lilv_node_as_uri(node).map { String(cString: $0) } }
  return lilv_node_as_string(node).map { String(cString: $0) }
}

/// The URIs stemdeck asks lilv about.
enum LV2URI {
  static let core = "http://lv2plug.in/ns/lv2core#"
  static let uridMap = "http://lv2plug.in/ns/ext/urid#map"
  static let uridUnmap = "http://lv2plug.in/ns/ext/urid#unmap"
  static let options = "http://lv2plug.in/ns/ext/options#options"
  static let bufSize = "http://lv2plug.in/ns/ext/buf-size#"
  static let boundedBlockLength = bufSize + "boundedBlockLength"
  static let log = "http://lv2plug.in/ns/ext/log#log"
  static let atomInt = "http://lv2plug.in/ns/ext/atom#Int"
  static let atomFloat = "http://lv2plug.in/ns/ext/atom#Float"
  static let atomDouble = "http://lv2plug.in/ns/ext/atom#Double"
  static let atomBool = "http://lv2plug.in/ns/ext/atom#Bool"
  static let presets = "http://lv2plug.in/ns/ext/presets#"
  static let rdfsLabel = "http://www.w3.org/2000/01/rdf-schema#label"
  static let sampleRate = "http://lv2plug.in/ns/ext/parameters#sampleRate"
  static let portProps = "http://lv2plug.in/ns/ext/port-props#"
  static let atom = "http://lv2plug.in/ns/ext/atom#"
  static let workerSchedule = "http://lv2plug.in/ns/ext/worker#schedule"
  static let workerInterface = "http://lv2plug.in/ns/ext/worker#interface"
  static let state = "http://lv2plug.in/ns/ext/state#"
  static let patch = "http://lv2plug.in/ns/ext/patch#"
}

/// The lilv nodes `describe` compares ports with (made per call, freed after).
private struct PluginNodes {
  let input, audio, control, connectionOptional, hardRT, integer, toggled, enumeration, logarithmic, unit: OpaquePointer
  let atom, sequence, bufferType, workerInterface, writable, range, path, label: OpaquePointer

  init(world w: OpaquePointer) {
    input = lilv_new_uri(w, LV2URI.core + "InputPort")
    audio = lilv_new_uri(w, LV2URI.core + "AudioPort")
    control = lilv_new_uri(w, LV2URI.core + "ControlPort")
    connectionOptional = lilv_new_uri(w, LV2URI.core + "connectionOptional")
    hardRT = lilv_new_uri(w, LV2URI.core + "hardRTCapable")
    integer = lilv_new_uri(w, LV2URI.core + "integer")
    toggled = lilv_new_uri(w, LV2URI.core + "toggled")
    enumeration = lilv_new_uri(w, LV2URI.core + "enumeration")
    logarithmic = lilv_new_uri(w, LV2URI.portProps + "logarithmic")
    unit = lilv_new_uri(w, "http://lv2plug.in/ns/extensions/units#unit")
    atom = lilv_new_uri(w, LV2URI.atom + "AtomPort")
    sequence = lilv_new_uri(w, LV2URI.atom + "Sequence")
    bufferType = lilv_new_uri(w, LV2URI.atom + "bufferType")
    workerInterface = lilv_new_uri(w, LV2URI.workerInterface)
    writable = lilv_new_uri(w, LV2URI.patch + "writable")
    range = lilv_new_uri(w, "http://www.w3.org/2000/01/rdf-schema#range")
    path = lilv_new_uri(w, LV2URI.atom + "Path")
    label = lilv_new_uri(w, LV2URI.rdfsLabel)
  }

  func free() {
    for node in [
      input, audio, control, connectionOptional, hardRT, integer, toggled, enumeration, logarithmic, unit, atom, sequence, bufferType,
      workerInterface, writable, range, path, label
    ] {
      lilv_node_free(node)
    }
  }
}

/// The URID map and unmap features' table: thread-safe (a plugin may map from its own
/// threads), never called on the realtime thread by stemdeck.
final class URIDMap: @unchecked Sendable {
  private let lock = NSLock()
  private var ids: [String: UInt32] = [:]
  private var uris: [UnsafeMutablePointer<CChar>] = []

  func map(_ uri: String) -> UInt32 {
    lock.withLock {
      if let id = ids[uri] { return id }
      uris.append(strdup(uri))
      let id = UInt32(uris.count)
      ids[uri] = id
      return id
    }
  }

  /// The URI of `id` (a C string that lives as long as the map), or nil.
  func unmap(_ id: UInt32) -> UnsafePointer<CChar>? {
    lock.withLock { id >= 1 && Int(id) <= uris.count ? UnsafePointer(uris[Int(id) - 1]) : nil }
  }
}
