import StemdeckEngine
import StemdeckSession
import StemdeckText

// Plugin inserts in scenes (issue 39): a scene keeps each strip's inserts' bypass and values
// (SceneSettings.swift); a recall sets them where the strip has the same plugin at the same
// position. It never adds, removes or moves a plugin (a scene is a mix, not a rig), and a value
// a plugin would refuse (a hand-edited file) refuses the whole recall before anything changes.
// The values switch at the recall's start: plugin controls do not glide.

/// One insert's part of a recall: what to set on `name`'s insert `position`.
struct SceneInsertChange {
  let name: String
  let position: Int
  let bypass: Bool?
  let values: [(symbol: String, value: Double)]
}

extension Mixer {
  /// The scene's inserts that differ from the strips' now, checked: the same plugin at the same
  /// position, each value in its port's range. Under the lock; changes nothing.
  func sceneInsertChanges(_ scene: SceneSettings, scope: SceneScope) throws(MixerError) -> [SceneInsertChange] {
    guard scope.controls?.contains("inserts") ?? true else { return [] }
    var lists: [(name: String, target: StripTarget, stored: [InsertSettings])] = []
    for (_, _, strips) in scene.lists {
      for s in strips where scope.strips?.contains(s.name) ?? true {
        guard !recallSafe.contains(s.name), !s.strip.inserts.isEmpty, let (target, _) = try? insertStrip(s.name) else { continue }
        lists.append((s.name, target, s.strip.inserts))
      }
    }
    if scope.strips == nil && !scene.masterInserts.isEmpty { lists.append(("master", .master, scene.masterInserts)) }
    var changes: [SceneInsertChange] = []
    for (name, target, stored) in lists {
      let rack = insertRacks.racks[InsertKey(target)] ?? []
      for (i, want) in stored.enumerated() where i < rack.count && rack[i].uri == want.uri {
        let instance = rack[i]
        guard let info = instance.info else { continue }  // a placeholder: nothing runs
        var values: [(String, Double)] = []
        for v in want.values {
          guard let c = info.controls.first(where: { $0.symbol == v.symbol }),
            let now = instance.values.first(where: { $0.symbol == v.symbol })?.value, now != v.value
          else { continue }
          guard v.value >= c.minimum, v.value <= c.maximum else {
            throw MixerError(
              "scene '\(printableText(scene.name))': insert \(i + 1) of '\(printableText(name))' (\(info.name)) \(v.symbol) must be from \(NumberFormat.plain(c.minimum)) to \(NumberFormat.plain(c.maximum)) (got \(NumberFormat.plain(v.value))); nothing was recalled"
            )
          }
          values.append((v.symbol, v.value))
        }
        let bypass = want.bypass != instance.bypass ? want.bypass : nil
        if bypass != nil || !values.isEmpty {
          changes.append(SceneInsertChange(name: name, position: i + 1, bypass: bypass, values: values))
        }
      }
    }
    return changes
  }

  /// Sets what `sceneInsertChanges` found. Under the lock.
  func applySceneInserts(_ changes: [SceneInsertChange]) throws(MixerError) {
    for change in changes {
      for (symbol, value) in change.values { try inserts.setValue(change.name, position: change.position, symbol: symbol, value) }
      if let bypass = change.bypass { _ = try inserts.bypass(change.name, position: change.position, bypass) }
    }
  }

  /// Every strip's inserts into `scene` (being captured): the racks are the truth.
  func captureSceneInserts(_ scene: inout SceneSettings) {
    scene.masterInserts = insertSettings(.master, withState: false)
    for stem in table.stems {
      if let i = scene.stems.firstIndex(where: { $0.name == stem.settings.name }) {
        scene.stems[i].strip.inserts = insertSettings(.stem(slot: stem.slot), withState: false)
      }
    }
    for bus in busTable.buses {
      if let i = scene.buses.firstIndex(where: { $0.name == bus.settings.name }) {
        scene.buses[i].strip.inserts = insertSettings(.bus(bus.index), withState: false)
      }
    }
    for input in liveInputs.inputs {
      if let i = scene.inputs.firstIndex(where: { $0.name == input.settings.name }) {
        scene.inputs[i].strip.inserts = insertSettings(.input(Int32(input.index)), withState: false)
      }
    }
  }
}
