import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// Buses (subgroups) rendered offline: against an independent numpy/scipy mix (the RBJ biquads
/// of `EQRenderTests.referenceScript`, run through `sosfilt`), solo and mute along the graph, and
/// the control API's refusals (loops, names, the limit).
@Suite struct BusRenderTests {
  /// The reference for a graph: stems (filtered, fader and pan) summed into buses or the master;
  /// each bus filtered, scaled by its balance gains and added to the bus it feeds, deepest first;
  /// then the master EQ and volume. The RBJ functions are EQRenderTests' own (its script up to
  /// its main part), so both tests check against the same formulas.
  /// Optional (aux sends, `SendGraphRenderTests`): a stem's or bus's "sends" (`to`, and the
  /// `left`/`right` factors on its filtered signal: the level, times its fader gains when
  /// post-fader) feed the sends of "sendNames", written after the master; "returns" (files,
  /// `gain`) join the master before its EQ.
  static var referenceScript: String {
    let functions = EQRenderTests.referenceScript.components(separatedBy: "spec = json.load")[0]
    return functions + #"""
      spec = json.load(open(sys.argv[1]))
      fs, n = spec["rate"], spec["frames"]
      sums = {None: (np.zeros(n), np.zeros(n))}
      sends = {s: (np.zeros(n), np.zeros(n)) for s in spec.get("sendNames", [])}
      def feed(entry, l, r, m):
          for s in entry.get("sends", []):
              sl, sr = sends[s["to"]]
              sl[:m] += s["left"] * l[:m]
              sr[:m] += s["right"] * r[:m]
      for b in spec["buses"]:
          sums[b["name"]] = (np.zeros(n), np.zeros(n))
      for st in spec["stems"]:
          x = np.fromfile(st["samples"], dtype=np.float32).astype(np.float64)
          rows = sos(st.get("eq"), fs)
          if st["channels"] == 1:
              y = filt(rows, x)
              l, r = y, y
          else:
              l, r = filt(rows, x[0::2]), filt(rows, x[1::2])
          m = min(len(l), n)
          feed(st, l, r, m)
          dl, dr = sums[st.get("bus")]
          dl[:m] += st["gainLeft"] * l[:m]
          dr[:m] += st["gainRight"] * r[:m]
      for b in sorted(spec["buses"], key=lambda b: -b["depth"]):
          l, r = sums[b["name"]]
          rows = sos(b.get("eq"), fs)
          dl, dr = sums[b.get("bus")]
          fl, fr = filt(rows, l), filt(rows, r)
          feed(b, fl, fr, n)
          dl += b["gainLeft"] * fl
          dr += b["gainRight"] * fr
      left, right = sums[None]
      for rt in spec.get("returns", []):
          x = np.fromfile(rt["samples"], dtype=np.float32).astype(np.float64)
          l, r = (x, x) if rt["channels"] == 1 else (x[0::2], x[1::2])
          m = min(len(l), n)
          left[:m] += rt["gain"] * l[:m]
          right[:m] += rt["gain"] * r[:m]
      rows = sos(spec.get("masterEQ"), fs)
      left, right = filt(rows, left) * spec["master"], filt(rows, right) * spec["master"]
      outs = [left, right] + [c for s in spec.get("sendNames", []) for c in sends[s]]
      np.concatenate(outs).astype(np.float64).tofile(sys.argv[2])
      """#
  }

  struct Sources {
    let noise: [Float], padL: [Float], padR: [Float], bass: [Float]
  }

  /// Two stems into a bus with EQ and volume/pan, that bus into a second bus with its own EQ,
  /// that one into the master; a third stem straight to the master.
  static func graphSession(in folder: TemporaryFolder) throws -> (Session, Sources) {
    let noise = Signal.noise(frames: 40000, amplitude: 0.5, seed: 31)
    let padL = zip(
      Signal.sine(frequency: 110, sampleRate: 48000, frames: 48000, amplitude: 0.3),
      Signal.noise(frames: 48000, amplitude: 0.2, seed: 32)
    ).map { $0 + $1 }
    let padR = Signal.sine(frequency: 3000, sampleRate: 48000, frames: 48000, amplitude: 0.4, phase: 0.3)
    let bass = Signal.noise(frames: 30000, amplitude: 0.4, seed: 33)
    try writeAudio(folder.file("kick.wav"), format: .wavFloat, channels: [noise])
    try writeAudio(folder.file("snare.wav"), format: .wavFloat, channels: [padL, padR])
    try writeAudio(folder.file("bass.wav"), format: .wavFloat, channels: [bass])
    var session = Session()
    session.masterVolume = 0.8
    session.masterEQ.low = EQBand(frequency: 80, gain: 3)
    var drums = BusSettings(name: "drums_bus")
    drums.volume = 0.7
    drums.pan = -0.3
    drums.eq.highPass = EQHighPass(frequency: 120, slope: 24)
    drums.eq.mid = EQBand(frequency: 2000, gain: -6, q: 1.2)
    drums.bus = "band"
    var band = BusSettings(name: "band")
    band.volume = 0.9
    band.pan = 0.2
    band.eq.high = EQBand(frequency: 6000, gain: 4)
    session.buses = [drums, band]
    session.stems = [
      stem("kick", "kick.wav") {
        $0.volume = 0.9; $0.pan = 0.4; $0.bus = "drums_bus"
        $0.eq.mid = EQBand(frequency: 800, gain: 5, q: 2)
      },
      stem("snare", "snare.wav") {
        $0.volume = 0.6; $0.pan = -0.2; $0.bus = "drums_bus"
      },
      stem("bass", "bass.wav") {
        $0.volume = 0.8; $0.pan = -0.5
      }
    ]
    return (session, Sources(noise: noise, padL: padL, padR: padR, bass: bass))
  }

  @Test("offline render of stems into nested buses with EQ, volume and pan equals scipy's mix within -100 dBFS")
  func offlineEqualsScipy() throws {
    let folder = try TemporaryFolder()
    let (session, sources) = try Self.graphSession(in: folder)
    let (summary, output) = try renderOffline(session, in: folder)
    #expect(summary.frames == 48000)

    var stems: [[String: Any]] = []
    for (settings, samples, channels) in [
      (session.stems[0], sources.noise, 1), (session.stems[1], Signal.interleave([sources.padL, sources.padR]), 2),
      (session.stems[2], sources.bass, 1)
    ] {
      let path = folder.file(settings.name + ".f32")
      try samples.withUnsafeBufferPointer { try Data(buffer: $0).write(to: URL(fileURLWithPath: path)) }
      let g = referenceGains(pan: settings.pan, channels: channels)
      var entry: [String: Any] = [
        "samples": path, "channels": channels, "gainLeft": g.left * settings.volume, "gainRight": g.right * settings.volume,
        "eq": EQRenderTests.json(settings.eq)
      ]
      if let bus = settings.bus { entry["bus"] = bus }
      stems.append(entry)
    }
    let buses: [[String: Any]] = session.buses.map { b in
      let g = referenceGains(pan: b.pan, channels: 2)
      var entry: [String: Any] = [
        "name": b.name, "gainLeft": g.left * b.volume, "gainRight": g.right * b.volume, "eq": EQRenderTests.json(b.eq),
        "depth": b.bus == nil ? 0 : 1
      ]
      if let target = b.bus { entry["bus"] = target }
      return entry
    }
    let spec: [String: Any] = [
      "rate": 48000, "frames": summary.frames, "master": session.masterVolume, "masterEQ": EQRenderTests.json(session.masterEQ),
      "stems": stems, "buses": buses
    ]
    try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: folder.file("spec.json")))
    try Data(Self.referenceScript.utf8).write(to: URL(fileURLWithPath: folder.file("reference.py")))
    let outcome = try runProcess(
      "/usr/bin/python3", [folder.file("reference.py"), folder.file("spec.json"), folder.file("reference.f64")],
      stderr: folder.file("python.err"), timeout: 120)
    let err = (try? String(contentsOfFile: folder.file("python.err"), encoding: .utf8)) ?? ""
    #expect(outcome.status == 0, "python3 with numpy and scipy (scripts/install-deps): \(err)")
    let data = try Data(contentsOf: URL(fileURLWithPath: folder.file("reference.f64")))
    let values = data.withUnsafeBytes { Array($0.bindMemory(to: Double.self)) }
    try #require(values.count == 2 * summary.frames)
    let refLeft = Array(values[0..<summary.frames]), refRight = Array(values[summary.frames...])
    let errorLeft = maxAbsError(output.left, refLeft)
    let errorRight = maxAbsError(output.right, refRight)
    #expect(errorLeft < EQRenderTests.tolerance, "left: max error \(errorLeft) (\(decibels(errorLeft)) dBFS)")
    #expect(errorRight < EQRenderTests.tolerance, "right: max error \(errorRight) (\(decibels(errorRight)) dBFS)")
    print("buses offline vs scipy sosfilt: max error L \(decibels(errorLeft)) dBFS, R \(decibels(errorRight)) dBFS")
    // The buses are doing something: every stem straight to the master sounds far off.
    var flat = session
    for i in flat.stems.indices { flat.stems[i].bus = nil }
    flat.buses = []
    let plain = try renderOffline(flat, in: folder, name: "flat.wav").output
    #expect(maxAbsError(plain.left, refLeft) > 0.05)
    // Block size does not matter (live periods are 128 frames, the offline render 1,024).
    let small = try renderOffline(session, in: folder, name: "small.wav", blockFrames: 128).output
    #expect(maxAbsError(small.left, output.left) < 1e-6 && maxAbsError(small.right, output.right) < 1e-6)
  }

  /// Peak of a stereo render.
  func peak(_ s: Stereo) -> Float { max(s.left.map(abs).max() ?? 0, s.right.map(abs).max() ?? 0) }

  @Test("solo follows the graph: a soloed bus plays its members, a soloed stem keeps its buses open; a muted bus silences them")
  func soloAlongTheGraph() throws {
    let folder = try TemporaryFolder()
    var (session, _) = try Self.graphSession(in: folder)
    session.masterEQ = EQSettings()
    func only(_ names: Set<String>) throws -> Stereo {
      var s = session
      for i in s.stems.indices where !names.contains(s.stems[i].name) { s.stems[i].mute = true }
      return try renderOffline(s, in: folder, name: "only-\(names.sorted().joined()).wav").output
    }
    // Soloing the drums bus: kick and snare through both buses, no bass.
    var soloBus = session
    soloBus.buses[0].solo = true
    let a = try renderOffline(soloBus, in: folder, name: "solo-bus.wav").output
    let drumsOnly = try only(["kick", "snare"])
    #expect(peak(drumsOnly) > 0.05)
    #expect(maxAbsError(a.left, drumsOnly.left) < 1e-6 && maxAbsError(a.right, drumsOnly.right) < 1e-6)
    // Soloing the outer bus does the same (the drums bus lies on its way in).
    var soloOuter = session
    soloOuter.buses[1].solo = true
    let b = try renderOffline(soloOuter, in: folder, name: "solo-outer.wav").output
    #expect(maxAbsError(b.left, drumsOnly.left) < 1e-6)
    // Soloing the kick: the kick alone, still through its buses (their EQ and faders).
    var soloKick = session
    soloKick.stems[0].solo = true
    let c = try renderOffline(soloKick, in: folder, name: "solo-kick.wav").output
    let kickOnly = try only(["kick"])
    #expect(peak(kickOnly) > 0.05)
    #expect(maxAbsError(c.left, kickOnly.left) < 1e-6 && maxAbsError(c.right, kickOnly.right) < 1e-6)
    // Soloing the bass (straight to the master) silences both buses.
    var soloBass = session
    soloBass.stems[2].solo = true
    let d = try renderOffline(soloBass, in: folder, name: "solo-bass.wav").output
    let bassOnly = try only(["bass"])
    #expect(maxAbsError(d.left, bassOnly.left) < 1e-6)
    // Muting the outer bus silences everything routed through it.
    var muted = session
    muted.buses[1].mute = true
    let e = try renderOffline(muted, in: folder, name: "muted.wav").output
    #expect(maxAbsError(e.left, bassOnly.left) < 1e-6 && maxAbsError(e.right, bassOnly.right) < 1e-6)
  }

  @Test("routes, loops, names and the limit: refused with clear errors, nothing changed")
  func refusals() throws {
    let folder = try TemporaryFolder()
    try writeAudio(folder.file("a.wav"), format: .wavFloat, channels: [Signal.noise(frames: 4800, amplitude: 0.3, seed: 1)])
    let rig = MixerRig()
    let m = rig.mixer
    _ = try m.stems.add(path: folder.file("a.wav"), settings: StemSettings(name: "kick", file: "a.wav"))
    try m.buses.add(BusSettings(name: "drums_bus"))
    try m.buses.add(BusSettings(name: "band"))
    try m.buses.route("kick", to: "drums_bus")
    try m.buses.route("drums_bus", to: "band")
    func message(_ body: () throws(MixerError) -> Void) -> String {
      do throws(MixerError) { try body() } catch { return error.description }
      return "(no error)"
    }
    #expect(message { () throws(MixerError) in try m.buses.route("band", to: "drums_bus") }.contains("loop (band → drums_bus → band)"))
    #expect(message { () throws(MixerError) in try m.buses.route("band", to: "band") }.contains("to itself"))
    #expect(try m.buses.destination(of: "band") == nil)
    #expect(message { () throws(MixerError) in try m.buses.route("kick", to: "drum_bus") }.contains("did you mean 'drums_bus'"))
    #expect(message { () throws(MixerError) in try m.buses.route("kik", to: "band") }.contains("unknown stem or bus 'kik'"))
    #expect(message { () throws(MixerError) in try m.buses.add(BusSettings(name: "kick")) }.contains("a stem named 'kick'"))
    #expect(message { () throws(MixerError) in try m.buses.add(BusSettings(name: "master")) }.contains("reserved"))
    #expect(message { () throws(MixerError) in try m.buses.add(BusSettings(name: "all")) }.contains("reserved"))
    #expect(message { () throws(MixerError) in try m.buses.add(BusSettings(name: "band")) }.contains("already exists"))
    #expect(
      message { () throws(MixerError) in
        _ = try m.stems.add(path: folder.file("a.wav"), settings: StemSettings(name: "band", file: "a.wav"))
      }
      .contains("a bus named 'band'"))
    #expect(message { () throws(MixerError) in try m.stems.setRate("drums_bus", 1.5) }.contains("is a bus"))
    #expect(m.buses.members(of: "drums_bus") == ["kick"])
    // Removing the drums bus sends the kick where the bus went (band).
    let removed = try m.buses.remove("drums_bus")
    #expect(removed.members == ["kick"] && removed.destination == "band")
    #expect(try m.buses.destination(of: "kick") == "band")
    // The limit.
    for i in m.buses.names.count..<64 { try m.buses.add(BusSettings(name: "b\(i)")) }
    #expect(message { () throws(MixerError) in try m.buses.add(BusSettings(name: "one_more")) }.contains("at most 64 buses"))
    // Plans come back and are freed: many route changes do not leak the renderer's plans.
    for i in 0..<200 { try m.buses.route("b1", to: i % 2 == 0 ? "band" : nil) }
    _ = rig.render(1024)
    _ = m.pump()
    #expect(m.buses.names.count == 64)
  }

  @Test("render --stems with buses: a file per strip feeding the master (stems outside buses, top buses); they sum to the master")
  func stemExportWithBuses() throws {
    let folder = try TemporaryFolder()
    var (session, _) = try Self.graphSession(in: folder)
    session.masterEQ = EQSettings()  // the stem files carry no master EQ (README, Stem export)
    let summary = try OfflineRenderer.render(
      session: session, sessionPath: folder.file("s.stemdeck"), outputPath: folder.file("mix.wav"), duration: nil,
      normalize: .init(target: -16), stemsFolder: folder.file("stems"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.file("stems")).sorted() == ["band.wav", "bass.wav"])
    let master = Stereo(try readAudio(folder.file("mix.wav")))
    #expect(master.count == summary.frames)
    let files = try ["bass", "band"].map { Stereo(try readAudio(folder.file("stems/\($0).wav"))) }
    #expect(files.allSatisfy { $0.count == master.count })
    #expect(files.allSatisfy { peak($0) > 0.01 }, "every file has sound")
    let residual = StemExportTests.residual(master: master, stems: files)
    #expect(residual < -100, "master − Σ files: \(residual) dBFS")
    print("stem export with buses: master − (bass + band) \(residual) dBFS")
  }

  @Test("a bus's volume glide sounds as the same glide on its one stem; the setting takes the target")
  func busGlideEqualsStemGlide() throws {
    let folder = try TemporaryFolder()
    let tone = Signal.sine(frequency: 220, sampleRate: 48000, frames: 96_000, amplitude: 0.5)
    try writeAudio(folder.file("t.wav"), format: .wavFloat, channels: [tone, tone])
    func render(bus: Bool, exponential: Bool) throws -> Stereo {
      let rig = MixerRig()
      let m = rig.mixer
      _ = try m.stems.add(path: folder.file("t.wav"), settings: StemSettings(name: "t", file: "t.wav"))
      if bus {
        try m.buses.add(BusSettings(name: "b"))
        try m.buses.route("t", to: "b")
      }
      try m.transport.play()
      var out = rig.render(4800, block: 128)
      try m.strips.glide(bus ? "b" : "t", to: .volume(0.1), seconds: 0.5, exponential: exponential)
      let rest = rig.render(40_000, block: 128)
      out.left += rest.left
      out.right += rest.right
      if bus { #expect(try m.buses.setting("b").volume == 0.1) }
      return out
    }
    for exponential in [false, true] {
      let viaBus = try render(bus: true, exponential: exponential)
      let viaStem = try render(bus: false, exponential: exponential)
      #expect(maxAbsError(viaBus.left, viaStem.left) < 1e-6, "exponential \(exponential)")
      // It moved: the end is at a tenth of the start.
      let start = viaBus.left[2000..<4000].map(abs).max()!, end = viaBus.left[40_000..<44_800].map(abs).max()!
      #expect(abs(end / start - 0.1) < 0.01, "\(start) → \(end)")
    }
  }

  @Test("routing a playing stem to another bus crossfades: the largest sample step stays within the signal's slope")
  func routeChangeDoesNotClick() throws {
    let folder = try TemporaryFolder()
    let tone = Signal.sine(frequency: 220, sampleRate: 48000, frames: 96_000, amplitude: 0.5)
    try writeAudio(folder.file("t.wav"), format: .wavFloat, channels: [tone, tone])
    let rig = MixerRig()
    let m = rig.mixer
    _ = try m.stems.add(path: folder.file("t.wav"), settings: StemSettings(name: "t", file: "t.wav"))
    var quiet = BusSettings(name: "quiet")
    quiet.volume = 0.25
    try m.buses.add(quiet)
    try m.transport.play()
    var out = rig.render(4800, block: 128)
    for (i, target) in ["quiet", nil, "quiet"].enumerated() {
      try m.buses.route("t", to: target)
      let part = rig.render(4800 + 37 * i, block: 128)
      out.left += part.left
    }
    // The tone's own largest step: 2π·220/48000·0.5 ≈ 0.0144; a cut would step by up to 0.375.
    let slope = 2 * Double.pi * 220 / 48000 * 0.5
    var worst = 0.0
    for i in 1..<out.left.count { worst = max(worst, abs(Double(out.left[i] - out.left[i - 1]))) }
    #expect(worst < slope * 1.1, "largest step \(worst), the tone's \(slope)")
    // And it went through: the end is at the bus's level.
    let end = out.left.suffix(2000).map(abs).max()!
    #expect(abs(end - 0.125) < 0.002, "\(end)")
  }
}
