import Foundation
import StemdeckControl
import StemdeckSession
import StemdeckTestSupport
import Testing

/// The channel EQ rendered offline against an independent reference: numpy/scipy's `sosfilt`
/// with the RBJ cookbook coefficients computed in Python (scripts/install-deps installs
/// python3-scipy), stems filtered before their fader and pan, the master after the sum and
/// before the master volume.
@Suite struct EQRenderTests {
  /// -100 dBFS.
  static let tolerance = 1e-5

  /// The reference: reads each stem's samples (raw float32, interleaved) and settings from
  /// `spec.json`, writes the mix as raw float64 left then right.
  static let referenceScript = #"""
    import json, math, sys
    import numpy as np
    from scipy.signal import sosfilt

    def rbj(kind, fs, f0, gain=0.0, q=0.707):
        # Robert Bristow-Johnson's Audio EQ Cookbook; shelves with slope S = 1.
        a = 10 ** (gain / 40)
        w0 = 2 * math.pi * f0 / fs
        c, s = math.cos(w0), math.sin(w0)
        if kind == "hpf":
            al = s / (2 * q)
            b, den = [(1 + c) / 2, -(1 + c), (1 + c) / 2], [1 + al, -2 * c, 1 - al]
        elif kind == "peak":
            al = s / (2 * q)
            b, den = [1 + al * a, -2 * c, 1 - al * a], [1 + al / a, -2 * c, 1 - al / a]
        else:
            al = s / 2 * math.sqrt((a + 1 / a) * (1 / 1 - 1) + 2)
            k = 2 * math.sqrt(a) * al
            if kind == "low":
                b = [a * ((a + 1) - (a - 1) * c + k), 2 * a * ((a - 1) - (a + 1) * c), a * ((a + 1) - (a - 1) * c - k)]
                den = [(a + 1) + (a - 1) * c + k, -2 * ((a - 1) + (a + 1) * c), (a + 1) + (a - 1) * c - k]
            else:
                b = [a * ((a + 1) + (a - 1) * c + k), -2 * a * ((a - 1) + (a + 1) * c), a * ((a + 1) + (a - 1) * c - k)]
                den = [(a + 1) - (a - 1) * c + k, 2 * ((a - 1) - (a + 1) * c), (a + 1) - (a - 1) * c - k]
        return [x / den[0] for x in b] + [1.0] + [x / den[0] for x in den[1:]]

    def sos(eq, fs):
        rows = []
        if not eq or not eq.get("enabled", True):
            return rows
        hpf = eq.get("hpf")
        if hpf:
            qs = [1 / math.sqrt(2)] if hpf["slope"] == 12 else [0.541196100146197, 1.3065629648763766]
            rows += [rbj("hpf", fs, hpf["frequency"], q=q) for q in qs]
        for key, kind in (("low", "low"), ("mid", "peak"), ("high", "high")):
            band = eq.get(key)
            if band and band["gain"] != 0:
                rows.append(rbj(kind, fs, band["frequency"], band["gain"], band.get("q", 0.707)))
        return rows

    def filt(rows, x):
        return sosfilt(np.array(rows), x) if rows else x

    spec = json.load(open(sys.argv[1]))
    fs, n = spec["rate"], spec["frames"]
    left, right = np.zeros(n), np.zeros(n)
    for st in spec["stems"]:
        x = np.fromfile(st["samples"], dtype=np.float32).astype(np.float64)
        ch, start = st["channels"], st["start"]
        rows = sos(st.get("eq"), fs)
        if ch == 1:
            y = filt(rows, x)
            l, r = y, y
        else:
            l, r = filt(rows, x[0::2]), filt(rows, x[1::2])
        m = min(len(l), n - start)
        left[start:start + m] += st["gainLeft"] * l[:m]
        right[start:start + m] += st["gainRight"] * r[:m]
    rows = sos(spec.get("masterEQ"), fs)
    left, right = filt(rows, left) * spec["master"], filt(rows, right) * spec["master"]
    np.concatenate([left, right]).astype(np.float64).tofile(sys.argv[2])
    """#

  /// The EQ of `eq` as the script reads it.
  static func json(_ eq: EQSettings) -> [String: Any] {
    var out: [String: Any] = ["enabled": eq.enabled]
    if let hpf = eq.highPass { out["hpf"] = ["frequency": hpf.frequency, "slope": hpf.slope] }
    out["low"] = ["frequency": eq.low.frequency, "gain": eq.low.gain]
    out["mid"] = ["frequency": eq.mid.frequency, "gain": eq.mid.gain, "q": eq.mid.q]
    out["high"] = ["frequency": eq.high.frequency, "gain": eq.high.gain]
    return out
  }

  @Test("offline render with stem and master EQ equals scipy's sosfilt of the RBJ biquads within -100 dBFS")
  func offlineEqualsScipy() throws {
    let folder = try TemporaryFolder()
    let rate = 48000
    // Mono noise with a 24 dB/oct high-pass and a mid cut; stereo sines and noise with shelves;
    // a stem whose EQ is switched off; one with a 12 dB/oct high-pass only, starting late.
    let noise = Signal.noise(frames: 40000, amplitude: 0.5, seed: 11)
    let padL = zip(
      Signal.sine(frequency: 90, sampleRate: 48000, frames: 50000, amplitude: 0.3),
      Signal.noise(frames: 50000, amplitude: 0.2, seed: 12)
    ).map { $0 + $1 }
    let padR = Signal.sine(frequency: 5000, sampleRate: 48000, frames: 50000, amplitude: 0.4, phase: 0.5)
    let off = Signal.noise(frames: 30000, amplitude: 0.3, seed: 13)
    let late = Signal.noise(frames: 20000, amplitude: 0.4, seed: 14)
    try writeAudio(folder.file("noise.wav"), format: .wavFloat, channels: [noise])
    try writeAudio(folder.file("pad.wav"), format: .wavFloat, channels: [padL, padR])
    try writeAudio(folder.file("off.wav"), format: .wavFloat, channels: [off])
    try writeAudio(folder.file("late.wav"), format: .wavFloat, channels: [late])

    var session = Session()
    session.masterVolume = 0.8
    session.masterEQ.mid = EQBand(frequency: 2500, gain: 5, q: 2)
    session.masterEQ.highPass = EQHighPass(frequency: 30, slope: 12)
    session.stems = [
      stem("noise", "noise.wav") {
        $0.volume = 0.9; $0.pan = -0.4
        $0.eq.highPass = EQHighPass(frequency: 200, slope: 24)
        $0.eq.mid = EQBand(frequency: 1200, gain: -9, q: 1.4)
      },
      stem("pad", "pad.wav") {
        $0.volume = 0.7; $0.pan = 0.3
        $0.eq.low = EQBand(frequency: 150, gain: 6)
        $0.eq.high = EQBand(frequency: 4000, gain: -12)
      },
      stem("off", "off.wav") {
        $0.volume = 0.5
        $0.eq.mid = EQBand(frequency: 500, gain: 18, q: 3)
        $0.eq.enabled = false
      },
      stem("late", "late.wav") {
        $0.volume = 0.6; $0.pan = 1; $0.startOffset = 0.25
        $0.eq.highPass = EQHighPass(frequency: 500, slope: 12)
      }
    ]
    let (summary, output) = try renderOffline(session, in: folder)
    #expect(summary.frames == 50000)

    var stems: [[String: Any]] = []
    for (settings, samples, channels) in [
      (session.stems[0], noise, 1), (session.stems[1], Signal.interleave([padL, padR]), 2),
      (session.stems[2], off, 1), (session.stems[3], late, 1)
    ] {
      let path = folder.file(settings.name + ".f32")
      try samples.withUnsafeBufferPointer { try Data(buffer: $0).write(to: URL(fileURLWithPath: path)) }
      let g = referenceGains(pan: settings.pan, channels: channels)
      stems.append([
        "samples": path, "channels": channels, "start": Int((settings.startOffset * Double(rate)).rounded()),
        "gainLeft": g.left * settings.volume, "gainRight": g.right * settings.volume, "eq": Self.json(settings.eq)
      ])
    }
    let spec: [String: Any] = [
      "rate": rate, "frames": summary.frames, "master": session.masterVolume, "masterEQ": Self.json(session.masterEQ),
      "stems": stems
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
    #expect(errorLeft < Self.tolerance, "left: max error \(errorLeft) (\(decibels(errorLeft)) dBFS)")
    #expect(errorRight < Self.tolerance, "right: max error \(errorRight) (\(decibels(errorRight)) dBFS)")
    print("EQ offline vs scipy sosfilt: max error L \(decibels(errorLeft)) dBFS, R \(decibels(errorRight)) dBFS")
    // The EQ is doing something: the render is far from the same mix without it.
    var flat = session
    for i in flat.stems.indices { flat.stems[i].eq = EQSettings() }
    flat.masterEQ = EQSettings()
    let plain = try renderOffline(flat, in: folder, name: "flat.wav").output
    #expect(maxAbsError(plain.left, refLeft) > 0.05)
  }

  @Test("a stem whose EQ is off or flat renders bit for bit as without EQ")
  func bypassedEQIsBitExact() throws {
    let folder = try TemporaryFolder()
    try writeAudio(
      folder.file("a.wav"), format: .wavFloat,
      channels: [Signal.noise(frames: 20000, amplitude: 0.5, seed: 21), Signal.noise(frames: 20000, amplitude: 0.5, seed: 22)])
    var session = Session()
    session.stems = [
      stem("a", "a.wav") {
        $0.volume = 0.7; $0.pan = 0.2
      }
    ]
    let plain = try renderOffline(session, in: folder, name: "plain.wav").output
    session.stems[0].eq.mid = EQBand(frequency: 800, gain: 10, q: 1)
    session.stems[0].eq.enabled = false
    session.masterEQ.enabled = false
    session.masterEQ.low = EQBand(frequency: 100, gain: -6)
    let off = try renderOffline(session, in: folder, name: "off.wav").output
    #expect(off.left == plain.left && off.right == plain.right)
    session.stems[0].eq = EQSettings()
    session.stems[0].eq.mid.frequency = 3000  // a frequency, but no gain: flat
    let flat = try renderOffline(session, in: folder, name: "flat.wav").output
    #expect(flat.left == plain.left && flat.right == plain.right)
  }
}
