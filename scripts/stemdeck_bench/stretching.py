"""Case 2r (issue 38): stemdeck's `fast` stretch (its own WSOLA) beside SoundTouch (WSOLA too) and
Rubber Band (R2, R3, and R3 with the short window: stemdeck's `fine`), cost and measurable
quality side by side, at tempo 0.8 and 1.15 (case 3s's tempos), 48 kHz, real-time mode.

Cost: CPU nanoseconds per output sample per channel on 20 s of stem 1, 256 input frames fed and
128 output frames read a call, median of the runs. Quality, from signals whose right answer is
known (5 s each, the first and last second left out):
- pitch error: a 440 Hz sine; its frequency from the upward zero crossings, in cents;
- level flutter: a 440 + 660 Hz chord (−10 dBFS each); the range of its level in 50 ms windows,
  in dB (the input's own range is about 0.1 dB);
- transients: a click (one sample at 0.5) every 250 ms; the clicks found in the output beside the
  number expected in its window (one more or less at the window's edges: none lost or doubled), and the share of a click's energy within ±1 ms of its
  peak out of ±10 ms (100 %: not smeared), median over the clicks.

stemdeck's WSOLA runs in `stemdeck-dsp-bench stretch` (Sources/stemdeck-dsp-bench), the libraries in
`stretch_compare` (stretch_compare.cpp, built here with g++). Python standard library only."""

import math
import os

from .common import *  # noqa: F401,F403 (constants, run, med/fmt/span/verdict)
from .material import stem_path
from .resampling import build_tool, ns_per_sample, read_f32, write_f32

TEMPOS = (0.8, 1.15)
STRETCHERS = [
    ("stemdeck fast (WSOLA)", "sd", ["wsola"]),
    ("SoundTouch (WSOLA, default settings)", "lib", ["soundtouch", "default"]),
    ("Rubber Band R2 (real-time)", "lib", ["rubberband", "r2"]),
    ("Rubber Band R3 (real-time)", "lib", ["rubberband", "r3"]),
    ("Rubber Band R3, short window (stemdeck fine)", "lib", ["rubberband", "r3short"]),
]
SIGNAL_SECONDS = 5


def signals(work):
    """The three test signals (stereo, both channels alike) at SR, written once."""
    n = SIGNAL_SECONDS * SR
    paths = {k: os.path.join(work, f"stretch-{k}.f32") for k in ("sine", "chord", "clicks")}
    if not os.path.exists(paths["clicks"]):
        sine, chord, clicks = [], [], []
        a = 10 ** (-10 / 20)
        for i in range(n):
            t = i / SR
            s = 0.5 * math.sin(2 * math.pi * 440 * t)
            c = a * math.sin(2 * math.pi * 440 * t) + a * math.sin(2 * math.pi * 660 * t)
            k = 0.5 if i % (SR // 4) == SR // 8 else 0.0
            sine += (s, s)
            chord += (c, c)
            clicks += (k, k)
        write_f32(paths["sine"], sine)
        write_f32(paths["chord"], chord)
        write_f32(paths["clicks"], clicks)
    return paths


def middle(x):
    """The left channel without its first and last second."""
    left = x[0::2]
    return left[SR:len(left) - SR]


def pitch_cents(x):
    y = middle(x)
    crossings = []
    for i in range(1, len(y)):
        if y[i - 1] < 0 <= y[i]:
            crossings.append(i - 1 + (-y[i - 1]) / (y[i] - y[i - 1]))
    if len(crossings) < 10:
        return None
    f = (len(crossings) - 1) / ((crossings[-1] - crossings[0]) / SR)
    return 1200 * math.log2(f / 440)


def flutter_db(x):
    y = middle(x)
    w = SR // 20
    levels = []
    for s in range(0, len(y) - w, w):
        e = sum(v * v for v in y[s:s + w]) / w
        levels.append(10 * math.log10(max(e, 1e-20)))
    return max(levels) - min(levels) if levels else None


def transients(x, tempo):
    y = middle(x)
    seconds = len(y) / SR
    expected = seconds * 4 * tempo  # a click every 250 ms of input = 250 / tempo ms of output
    found, shares = 0, []
    i, guard = 0, int(0.02 * SR)
    narrow, wide = int(0.001 * SR), int(0.01 * SR)
    while i < len(y):
        if abs(y[i]) > 0.1:
            seg = range(i, min(len(y), i + guard))
            p = max(seg, key=lambda j: abs(y[j]))
            e_wide = sum(v * v for v in y[max(0, p - wide):p + wide])
            e_narrow = sum(v * v for v in y[max(0, p - narrow):p + narrow])
            shares.append(100 * e_narrow / e_wide if e_wide > 0 else 0)
            found += 1
            i = p + guard
        else:
            i += 1
    return found, expected, med(shares) if shares else None


def stretch(ctx, tools, entry, src, dst, tempo):
    _, prog, mode = entry
    exe = tools[prog]
    cmd = [exe] + (["stretch"] if prog == "sd" else []) + mode + [src, "2", str(SR), str(tempo), dst]
    out = run(cmd, timeout=900, env=ctx["env"], what=f"{entry[0]} tempo {tempo}", stderr_too=False)
    return ns_per_sample(out), cmd


def case_stretch_compare(ctx):
    cache, env, runs = ctx["cache"], ctx["env"], ctx["runs"]
    work = os.path.join(cache, "stretching")
    os.makedirs(work, exist_ok=True)
    tools = {"lib": build_tool(cache, env, "stretch_compare", ["-lrubberband", "-lSoundTouch"]),
             "sd": os.path.join(os.path.dirname(ctx["bin"]), "stemdeck-dsp-bench")}
    material = os.path.join(work, "stem.f32")
    if not os.path.exists(material):
        run(["sox", stem_path(cache, SR, 0), "-t", "f32", "-e", "floating-point", "-b", "32", material, "trim", "0", "20"],
            timeout=120, env=env, what="sox material")
    paths = signals(work)
    rows, commands = [], {}
    for tempo in TEMPOS:
        for entry in STRETCHERS:
            row = {"tempo": tempo, "stretcher": entry[0]}
            try:
                ns = []
                for _ in range(runs):
                    v, cmd = stretch(ctx, tools, entry, material, os.path.join(work, "timed.f32"), tempo)
                    ns.append(v)
                row["ns"] = ns
                commands[f"tempo {tempo}: {entry[0]}"] = cmd
                out = os.path.join(work, "out.f32")
                stretch(ctx, tools, entry, paths["sine"], out, tempo)
                row["cents"] = pitch_cents(read_f32(out))
                stretch(ctx, tools, entry, paths["chord"], out, tempo)
                row["flutter"] = flutter_db(read_f32(out))
                stretch(ctx, tools, entry, paths["clicks"], out, tempo)
                row["clicks"], row["expected"], row["sharp"] = transients(read_f32(out), tempo)
            except BenchError as e:
                row["error"] = str(e).splitlines()[0]
            log(f"  case 2r tempo {tempo} {entry[0]:45s} " + (f"{med(row['ns']):8.2f} ns" if "ns" in row else row.get("error", "")))
            rows.append(row)
    return {"rows": rows, "commands": commands, "input_flutter": flutter_db(read_f32(paths["chord"]))}


def section_2r(r, run_info, b, summary, commands):
    b("### 2r. Stretchers side by side: stemdeck's WSOLA, SoundTouch, Rubber Band (issue 38; no target)")
    b("")
    b("Cost in CPU ns per output sample per channel on 20 s of a real stem (real-time mode, 256 frames in, 128 out "
      "a call). Pitch error of a 440 Hz sine; level flutter of a 440 + 660 Hz chord in 50 ms windows (the input's "
      f"own: {fmt(r.get('input_flutter'), 2)} dB); clicks every 250 ms: found beside expected (±1 at the window's edges), and the share of each "
      "click's energy within ±1 ms of its peak (of ±10 ms; median).")
    for tempo in TEMPOS:
        b("")
        b(f"**tempo {tempo}**")
        b("")
        b("| stretcher | ns per sample per channel | pitch error, cents | level flutter, dB | clicks found / expected "
          "| click energy within ±1 ms |")
        b("|---|---:|---:|---:|---:|---:|")
        for row in (x for x in r["rows"] if x["tempo"] == tempo):
            if "error" in row:
                b(f"| {row['stretcher']} | error: {row['error']} | | | | |")
                continue
            b(f"| {row['stretcher']} | {fmt(med(row['ns']))}{span(row['ns'])} | {fmt(row.get('cents'), 2)} | "
              f"{fmt(row.get('flutter'), 2)} | {row.get('clicks')} / {fmt(row.get('expected'), 1)} | {fmt(row.get('sharp'), 0)} % |")
    b("")
    commands["2r"] = r["commands"]
