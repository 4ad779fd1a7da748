"""Case 1r (issue 38): stemdeck's `fast` sinc beside the converter libraries in Debian, quality and
cost side by side, for file-rate conversion (44.1 → 48, 48 → 44.1, 96 → 48 kHz) and varispeed
(rates 0.9 and 1.2 at 48 kHz; a glide 0.9 → 1.2 for cost only).

Quality comes from tones, whose right answer is known exactly: each converter's output of a
stereo tone is fitted with the ideal tone at the output's rate (least squares: sine, cosine, DC),
and the rest is the converter's error (aliases, images, noise). Per converter: the largest gain
error over the tones in the band every converter here keeps (up to 80 % of the lower Nyquist
frequency), the worst residual under the tone there, and the worst residual anywhere up to 90 %
(where some filters have already started to roll off). Cost: CPU nanoseconds per output sample
per channel on a real stem (the bench's 44.1 kHz or 48 kHz stem 1, 20 s), 128 output frames a
call as in a live period, median of the runs.

stemdeck's converter runs in `stemdeck-dsp-bench` (Sources/stemdeck-dsp-bench), the libraries in
`resample_compare` (resample_compare.cpp, built here with g++); both time only the conversion
calls. Python standard library only, like the rest of the bench."""

import array
import math
import os

from .common import *  # noqa: F401,F403 (constants, run, med/fmt/span/verdict)
from .material import stem_path
from .targets import met, target

HERE = os.path.dirname(os.path.abspath(__file__))

# (label, program, mode arguments) — program "sd" is stemdeck-dsp-bench, "lib" resample_compare.
CONVERTERS = [
    ("stemdeck fast (exact rows, AVX2 when present)", "sd", ["fast"]),
    ("stemdeck fast, SSE only", "sd", ["fast-sse"]),
    ("stemdeck fast, interpolated table (before issue 38)", "sd", ["fast-general"]),
    ("libsamplerate SINC_FASTEST", "lib", ["src", "sinc_fastest"]),
    ("libsamplerate SINC_MEDIUM", "lib", ["src", "sinc_medium"]),
    ("libsamplerate SINC_BEST", "lib", ["src", "sinc_best"]),
    ("soxr quick", "lib", ["soxr", "quick"]),
    ("soxr low", "lib", ["soxr", "low"]),
    ("soxr medium", "lib", ["soxr", "medium"]),
    ("soxr high", "lib", ["soxr", "high"]),
    ("soxr very high", "lib", ["soxr", "very_high"]),
    ("zita Resampler (hlen 32)", "lib", ["zita", "resampler"]),
    ("zita VResampler (hlen 32), set up for this rate", "lib", ["zita", "vresampler"]),
]

# (label, input rate, output rate, rate from, rate to); rate None: a fixed-ratio conversion.
JOBS = [
    ("44.1 → 48 kHz", 44100, 48000, None, None),
    ("48 → 44.1 kHz", 48000, 44100, None, None),
    ("96 → 48 kHz", 96000, 48000, None, None),
    ("varispeed 0.9 at 48 kHz", 48000, 48000, 0.9, None),
    ("varispeed 1.2 at 48 kHz", 48000, 48000, 1.2, None),
    ("glide 0.9 → 1.2 at 48 kHz (cost only)", 48000, 48000, 0.9, 1.2),
]

TONES = (0.05, 0.2, 0.4, 0.6, 0.75, 0.8, 0.85, 0.9)  # fractions of the lower Nyquist frequency
KEPT = 0.8  # the band every converter here keeps
TONE_FRAMES = 24000
SKIP = 3000  # frames left out at each edge of a tone's output (filter start-up and flush)


def build_tool(cache, env, name, libs):
    """The C++ harness NAME.cpp (beside this file) built into the cache with g++, again whenever it
    or bench_io.h (what the harnesses share) is newer than the build."""
    exe = os.path.join(cache, name)
    sources = [os.path.join(HERE, name + ".cpp"), os.path.join(HERE, "bench_io.h")]
    if not os.path.exists(exe) or os.path.getmtime(exe) < max(map(os.path.getmtime, sources)):
        run(["g++", "-O2", "-std=c++17", "-o", exe, sources[0]] + libs, timeout=300, env=env, what=f"g++ {name}.cpp")
    return exe


def ns_per_sample(output):
    """The figure a harness (or stemdeck-dsp-bench) prints: "ns_per_sample N frames_out F"."""
    fields = output.split()
    return float(fields[fields.index("ns_per_sample") + 1])


def write_f32(path, samples):
    a = array.array("f", samples)
    with open(path, "wb") as f:
        a.tofile(f)


def read_f32(path):
    a = array.array("f")
    with open(path, "rb") as f:
        a.frombytes(f.read())
    return a


def tone_input(path, cycles):
    """A stereo tone at `cycles` per input frame: left sine, right cosine, amplitude 0.5."""
    w = 2 * math.pi * cycles
    s = []
    for i in range(TONE_FRAMES):
        s.append(0.5 * math.sin(w * i))
        s.append(0.5 * math.cos(w * i))
    write_f32(path, s)


def fit(samples, cycles):
    """(gain, residual dB under the tone) of the left channel fitted with a tone at `cycles`
    per output frame (sine, cosine and DC by least squares), edges skipped."""
    n = len(samples) // 2
    idx = range(SKIP, n - SKIP)
    w = 2 * math.pi * cycles
    m = [[0.0] * 4 for _ in range(3)]
    rows = []
    for i in idx:
        r = (math.sin(w * i), math.cos(w * i), 1.0)
        v = samples[2 * i]
        rows.append((r, v))
        for a in range(3):
            for b in range(3):
                m[a][b] += r[a] * r[b]
            m[a][3] += r[a] * v
    for p in range(3):
        for q in range(p + 1, 3):
            f = m[q][p] / m[p][p]
            for k in range(p, 4):
                m[q][k] -= f * m[p][k]
    c = [0.0] * 3
    for p in (2, 1, 0):
        t = m[p][3] - sum(m[p][k] * c[k] for k in range(p + 1, 3))
        c[p] = t / m[p][p]
    sig = res = 0.0
    for r, v in rows:
        y = c[0] * r[0] + c[1] * r[1] + c[2]
        sig += y * y
        res += (v - y) * (v - y)
    gain = math.hypot(c[0], c[1]) / 0.5
    return gain, 10 * math.log10(sig / max(res, 1e-30))


def convert(ctx, tools, conv, job, src, dst, channels=2):
    _, prog, mode = conv
    _, rin, rout, rfrom, rto = job
    rates = [str(rfrom)] + ([str(rto)] if rto else []) if rfrom else []
    exe = tools["sd"] if prog == "sd" else tools["lib"]
    cmd = [exe] + (["resample"] if prog == "sd" else []) + mode + [src, str(channels), str(rin), str(rout), dst] + rates
    out = run(cmd, timeout=600, env=ctx["env"], what=f"{conv[0]} {job[0]}", stderr_too=False)
    return ns_per_sample(out), cmd


def case_resampling(ctx):
    cache, env, runs = ctx["cache"], ctx["env"], ctx["runs"]
    work = os.path.join(cache, "resampling")
    os.makedirs(work, exist_ok=True)
    tools = {"lib": build_tool(cache, env, "resample_compare", ["-lsamplerate", "-lsoxr", "-lzita-resampler"]),
             "sd": os.path.join(os.path.dirname(ctx["bin"]), "stemdeck-dsp-bench")}
    # Timing material: stem 1 (20 s) at each input rate, raw float.
    material = {}
    for rate in (44100, 48000, 96000):
        path = os.path.join(work, f"stem-{rate}.f32")
        if not os.path.exists(path):
            source = stem_path(cache, 44100 if rate == 44100 else SR, 0)
            run(["sox", source, "-t", "f32", "-e", "floating-point", "-b", "32", path, "trim", "0", "20"]
                + (["rate", "-v", str(rate)] if rate == 96000 else []), timeout=120, env=env, what="sox material")
        material[rate] = path
    results, commands = [], {}
    for job in JOBS:
        label, rin, rout, rfrom, rto = job
        ratio = rout / rin / (rfrom or 1)
        for conv in CONVERTERS:
            if conv[2][:1] == ["zita"] and conv[2][1] == "resampler" and rfrom:
                continue  # zita's fixed-ratio Resampler has no varispeed
            row = {"job": label, "converter": conv[0]}
            try:
                ns = []
                for _ in range(runs):
                    v, cmd = convert(ctx, tools, conv, job, material[rin], os.path.join(work, "timed.f32"))
                    ns.append(v)
                row["ns"] = ns
                commands[f"{label}: {conv[0]}"] = cmd
                if rto is None:
                    worst_kept = worst_all = 200.0
                    gain_err = 0.0
                    for fr in TONES:
                        cycles = fr * 0.5 * min(1.0, ratio)  # per input frame
                        tin = os.path.join(work, f"tone-{cycles:.9f}.f32")
                        if not os.path.exists(tin):
                            tone_input(tin, cycles)
                        tout = os.path.join(work, "tone-out.f32")
                        convert(ctx, tools, conv, job, tin, tout)
                        g, snr = fit(read_f32(tout), cycles / ratio)
                        worst_all = min(worst_all, snr)
                        if fr <= KEPT:
                            worst_kept = min(worst_kept, snr)
                            gain_err = max(gain_err, abs(20 * math.log10(max(g, 1e-9))))
                    row.update(gain_db=gain_err, kept_db=worst_kept, all_db=worst_all)
            except BenchError as e:
                row["error"] = str(e).splitlines()[0]
            log(f"  case 1r {label:28s} {conv[0]:50s} " + (f"{med(row['ns']):7.2f} ns" if "ns" in row else row.get("error", "")))
            results.append(row)
    return {"rows": results, "commands": commands}


def section_1r(r, run_info, b, summary, commands):
    b("### 1r. Converters side by side: stemdeck's `fast` sinc and the libraries in Debian (issue 38)")
    b("")
    b("Tones with a known right answer through each converter (gain error and the residual under the tone, worst "
      f"over tones up to {KEPT * 100:.0f} % of the lower Nyquist frequency, and up to 90 %); cost in CPU ns per "
      "output sample per channel on 20 s of a real stem, 128 output frames a call. Higher dB is cleaner. "
      "soxr's and zita's filters keep more of the band (to about 91–95 %) than stemdeck's and libsamplerate's "
      "fastest (80 %); their residual at 85–90 % shows it. zita's VResampler keeps one filter, set up for one "
      "ratio, here the lowest of each run: a host that rebuilds it at every rate change or glide (off the realtime "
      "thread, with a crossfade), where stemdeck's converter takes any rate up to 2 at once.")
    jobs = []
    for row in r["rows"]:
        if row["job"] not in jobs:
            jobs.append(row["job"])
    for job in jobs:
        b("")
        b(f"**{job}**")
        b("")
        b(f"| converter | ns per sample per channel | gain error to {KEPT * 100:.0f} %, dB | residual to {KEPT * 100:.0f} %, dB "
          "| residual to 90 %, dB |")
        b("|---|---:|---:|---:|---:|")
        for row in (x for x in r["rows"] if x["job"] == job):
            if "error" in row:
                b(f"| {row['converter']} | error: {row['error']} | | | |")
                continue
            b(f"| {row['converter']} | {fmt(med(row['ns']))}{span(row['ns'])} | {fmt(row.get('gain_db'), 4)} | "
              f"{fmt(row.get('kept_db'), 1)} | {fmt(row.get('all_db'), 1)} |")
    b("")
    fast = {x["job"]: x for x in r["rows"] if x["converter"].startswith("stemdeck fast (") and "ns" in x}
    soxr = {x["job"]: x for x in r["rows"] if x["converter"] == "soxr high" and "ns" in x}
    job = "44.1 → 48 kHz"
    if job in fast and job in soxr:
        ratio = med(soxr[job]["ns"]) / med(fast[job]["ns"])
        summary.append(("1r", target("1r.soxr").text, f"soxr high costs {fmt(ratio, 2)}× stemdeck's "
                        f"({fmt(med(soxr[job]['ns']))} against {fmt(med(fast[job]['ns']))} ns)",
                        verdict(met("1r.soxr", ratio))))
    kept = [(x["job"], x["kept_db"]) for x in fast.values() if x.get("kept_db") is not None]
    if kept:
        job, worst = min(kept, key=lambda jw: jw[1])
        summary.append(("1r", target("1r.clean").text, f"worst {fmt(worst, 1)} dB ({job})",
                        verdict(met("1r.clean", worst))))
    commands["1r"] = r["commands"]
