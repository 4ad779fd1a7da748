"""The report: markdown rendered from a run's results (the JSON `scripts/bench` writes beside the
markdown), so `scripts/bench --report FILE.json` renders it again without running anything.

`run_info` collects what the report says about the run (machine, versions, settings, waits) when
the run ends; `render` turns {"run": …, "results": …} into the markdown and the targets'
verdicts. One `section_CASE` per case writes its part; the thresholds are in targets.py."""

import datetime
import os
import platform
import re
import shlex
import shutil
import subprocess
import time

from .common import *  # noqa: F401,F403 (constants, run, med/fmt/span/verdict)
from .common import scheduling_note
from .material import stem_path, stem_recipe
from .inserts import section_1i  # noqa: F401 (SECTIONS finds it by name)
from .resampling import section_1r  # noqa: F401 (SECTIONS finds it by name)
from .stretching import section_2r  # noqa: F401 (SECTIONS finds it by name)
from .report_live import section_3, section_3s, section_3g  # noqa: F401 (SECTIONS finds them by name)
from .live_inserts import section_3i  # noqa: F401 (SECTIONS finds it by name)
from .targets import met, target

def tool_versions(env):
    def first(cmd):  # some tools (ecasound) exit non-zero after printing their version
        try:
            p = subprocess.run(cmd, timeout=20, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
            return (p.stdout + p.stderr).strip().splitlines()[0]
        except (subprocess.SubprocessError, OSError, IndexError):
            return "unknown"
    v = {
        "ecasound": first(["ecasound", "--version"]),
        "sox": first(["sox", "--version"]).replace("sox:", "").strip(),
        "jackd": first(["jackd", "--version"]),
    }
    try:
        rev = run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], timeout=10).strip()
        dirty = run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"], timeout=10).strip()
        v["stemdeck"] = f"git {rev}{' + uncommitted changes' if dirty else ''}"
    except BenchError:
        v["stemdeck"] = "unknown"
    return v


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def short_cmd(cmd, cache):
    s = shlex.join(cmd)
    return s.replace(cache + "/", "$CACHE/").replace(cache, "$CACHE")


def abbreviated(cmd, cache):
    """The command with the per-stem arguments of stems 3…32 elided (the full form is below)."""
    s = short_cmd(cmd, cache)
    m = re.search(r"(-a:3 .*?)(?= -a:all)", s)
    if m:
        s = s.replace(m.group(1), "… (same for stems 3–32)")
    m = re.search(r"(-v \S+ '?\|?sox \$CACHE/48k/s03\.wav.*?|-v \S+ \$CACHE/4[48]k/s03\.wav.*?)(?= -e floating-point)", s)
    if m:
        s = s.replace(m.group(1), "… (same for stems 3–32)")
    return s


def run_info(ctx, failures):
    """What the report says about the run, gathered when it ends (the results JSON's "run")."""
    env = ctx["env"]
    built = datetime.datetime.fromtimestamp(os.path.getmtime(ctx["bin"])).astimezone().strftime("%Y-%m-%d %H:%M")
    return {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "nproc": os.cpu_count() if not shutil.which("nproc") else run(["nproc"], timeout=5).strip(),
        "cpu": cpu_model(), "kernel": platform.release(), "machine": platform.machine(),
        "versions": tool_versions(env),
        "bin": ctx["bin"], "bin_built": built,
        "bin_source": os.environ.get("STEMDECK_BIN_SOURCE") if os.environ.get("STEMDECK_BIN") else None,
        "minutes": (time.monotonic() - ctx["t_start"]) / 60,
        "jack_realtime": STATE["jack_realtime"], "scheduling": scheduling_note(),
        "cache": ctx["cache"], "partial": ctx["partial"], "quick": ctx["quick"], "cases": ctx["cases"],
        "runs": ctx["runs"], "live_seconds": ctx["live_seconds"], "live_runs": ctx["live_runs"],
        "quiet": ctx["quiet"], "max_wait": ctx["max_wait"],
        "failures": [[k, e] for k, e in failures],
    }


SECTIONS = {}  # case → its section writer, in the report's order (filled below)

def section_1(r, run, b, summary, commands):
    c = {k: med(v) for k, v in r["cpu"].items()}
    stem_s = N_STEMS * STEM_SECONDS
    b("## 1. Offline mix: 32 stems, gain and pan, no rate change → f32 stereo 48 kHz WAV")
    b("")
    b("| tool | CPU s (user+sys) | wall s | stem-seconds per CPU-second | CPU ratio (tool / stemdeck) | output length s |")
    b("|---|---:|---:|---:|---:|---:|")
    for k in r["cpu"]:
        b(f"| {k} | {fmt(c[k])}{span(r['cpu'][k])} | {fmt(med(r['wall'][k]))} | {fmt(stem_s / c[k], 0)} | "
          f"{fmt(c[k] / c['stemdeck'], 1)}× | {fmt(r['durations'][k], 3)} |")
    b("")
    ok_e = c["stemdeck"] * target("1.ecasound").limit <= c["ecasound"]
    ok_s = c["stemdeck"] * target("1.sox").limit <= c["sox"]
    ok_c = met("1.mix", r["diff_db"])
    b(f"- Correctness: stemdeck's render minus sox's mix of the same stems with stemdeck's balance law "
      f"(left × g·min(1, 1−p), right × g·min(1, 1+p)): max |difference| **{fmt(r['diff_db'], 1)} dBFS** "
      f"(target < −90 dBFS) **{verdict(ok_c)}**; mix peak {fmt(r['ref_peak'], 1)} dBFS (sox), "
      f"{fmt(r['sd_peak'], 1)} dBFS (stemdeck), so nothing clips. Controls: the same difference against "
      f"sox's gain-only mix (no pan) is {fmt(r['control_db'], 1)} dBFS (the check does see a wrong mix); against "
      f"ecasound's output {fmt(r['eca_db'], 1)} dBFS (its `-epp` is the same balance law).")
    b("- The sox timing row applies gain only (`sox -m -v G` cannot pan per input); ecasound applies "
      "`-ea` gain and `-epp` pan per chain and sums (`-z:mixmode,sum`).")
    b("")
    summary.append(("1", target("1.ecasound").text, f"{fmt(c['ecasound'] / c['stemdeck'], 1)}× less", verdict(ok_e)))
    summary.append(("1", target("1.sox").text, f"{fmt(c['sox'] / c['stemdeck'], 1)}× less", verdict(ok_s)))
    summary.append(("1", target("1.mix").text, f"{fmt(r['diff_db'], 1)} dBFS", verdict(ok_c)))
    commands["1"] = r["commands"]


def section_1b(r, run, b, summary, commands):
    c = {k: med(v) for k, v in r["cpu"].items()}
    b("### 1b. The 44.1 kHz set rendered at 48 kHz")
    b("")
    b("Each stem converts as its disk stream reads it, exactly as live: `fast` through the exact rows of 160/147 "
      "(stemdeck's own sinc, steady mode; issue 38), `medium` and `best` (informational rows) through soxr HQ and "
      "VHQ. sox mixes at 44.1 kHz and converts once with its `rate` effect (default high quality), so it does 1 "
      "conversion where stemdeck does 32.")
    b("")
    b("| tool | CPU s | stem-seconds per CPU-second |")
    b("|---|---:|---:|")
    for k in r["cpu"]:
        b(f"| {k} | {fmt(c[k])}{span(r['cpu'][k])} | {fmt(N_STEMS * STEM_SECONDS / c[k], 0)} |")
    b("")
    ratio = c["sox -m + rate"] / c["stemdeck fast"]
    band = r.get("rms_band")
    b(f"- CPU: sox / stemdeck **{fmt(ratio, 2)}×** (target ≥ 2×) **{verdict(met('1b.sox', ratio))}**.")
    b(f"- Correctness: stemdeck's render minus sox's reference (the balance-law mix at 44.1 kHz, then `rate -v 48000`), "
      f"RMS below 15 kHz **{fmt(band, 1)} dBFS** (target < −90 dBFS) **{verdict(met('1b.band', band))}**.")
    for q, v in r.get("rms_band_qualities", {}).items():
        b(f"- `{q}` (informational): sox / stemdeck {q} CPU {fmt(c['sox -m + rate'] / c['stemdeck ' + q], 2)}×, "
          f"RMS below 15 kHz against the same reference {fmt(v, 1)} dBFS.")
    b("")
    summary.append(("1b", target("1b.sox").text, f"{fmt(ratio, 2)}× less", verdict(met("1b.sox", ratio))))
    summary.append(("1b", target("1b.band").text, f"{fmt(band, 1)} dBFS", verdict(met("1b.band", band))))
    commands["1b"] = r["commands"]


def section_1s(r, run, b, summary, commands):
    c = {k: med(v) for k, v in r["cpu"].items()}
    wl = {k: med(v) for k, v in r["wall"].items()}
    # user/system and the write floor rows came later: older results lack them ("–", no floor line).
    us = {k: med(v) for k, v in r.get("user", {}).items()}
    sy = {k: med(v) for k, v in r.get("system", {}).items()}
    # Float stems are written with O_DIRECT (DirectWAVWriter): their floor is the direct one when measured.
    floors = {"--stems": "write floor direct" if "write floor direct" in c else "write floor",
              "--stems wav16": "write floor wav16"}
    ratio = c["--stems"] / c["plain"]
    b("## 1s. Stem export: the 32-stem mix with `--stems` (33 files) beside the master alone")
    b("")
    b("| render | CPU s (user+sys) | user s | sys s | wall s | CPU ratio --stems / plain | wall ratio "
      "| (--stems − floor) / plain, CPU | (--stems − floor) / plain, wall |")
    b("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k in r["cpu"]:
        pair = "plain" + k[len("--stems"):] if k.startswith("--stems") else None
        floor = floors.get(k) if floors.get(k) in c else None
        rc = f"{fmt(c[k] / c[pair], 2)}×" if pair in c else ""
        rw = f"{fmt(wl[k] / wl[pair], 2)}×" if pair in wl else ""
        fc = f"{fmt((c[k] - c[floor]) / c[pair], 2)}×" if floor and pair in c else ""
        fw = f"{fmt((wl[k] - wl[floor]) / wl[pair], 2)}×" if floor and pair in wl else ""
        b(f"| {k} | {fmt(c[k])}{span(r['cpu'][k])} | {fmt(us.get(k))} | {fmt(sy.get(k))} | {fmt(wl[k])} | {rc} | {rw} "
          f"| {fc} | {fw} |")
    b("")
    fl = floors["--stems"]
    net = (c["--stems"] - c[fl]) / c["plain"] if fl in c else None
    if "write floor direct" in c:
        b(f"- Direct write floor (the same bytes with O_DIRECT from a page-aligned buffer, the header padded to 4096 "
          f"bytes: how the float stem files are written, `DirectWAVWriter`): {fmt(c['write floor direct'], 2)} s of CPU "
          f"(user {fmt(us.get('write floor direct'))}, sys {fmt(sy.get('write floor direct'))}; "
          f"{fmt(c['write floor direct'] / c['plain'], 2)}× a plain render), {fmt(wl['write floor direct'], 2)} s wall. "
          f"plain + this floor = {fmt((c['plain'] + c['write floor direct']) / c['plain'], 2)}× a plain render: "
          "the least `--stems` can cost here with the mix computed once.")
    if net is not None:
        b(f"- Write floor (`WRITE_FLOOR` in `scripts/stemdeck_bench/export.py`: the 32 stem files' bytes, nothing "
          f"computed, same chunks, fsync'ed; python3's start-up included): float {fmt(c['write floor'], 2)} s of CPU "
          f"({fmt(c['write floor'] / c['plain'], 2)}× a plain render by itself), {fmt(wl['write floor'], 2)} s wall; "
          f"16-bit {fmt(c.get('write floor wav16'), 2)} s. `(--stems − floor) / plain` is the ratio the export would "
          "have if writing the bytes cost nothing: what is ours.")
    ok_r = met("1s.cpu", ratio)
    ok_d = met("1s.sum", r["diff_db"])
    b(f"- CPU ratio `--stems` / plain, float WAV: **{fmt(ratio, 2)}×** (target < 1.5×) **{verdict(ok_r)}**. One pass: the "
      "master's renderer taps each stem (`Renderer/StemTaps.swift`), and the stem files are written on their own "
      "thread in 32,768-frame chunks without libsndfile's PEAK chunk (integer WAV: converted and dithered there, "
      "one write a chunk; float WAV: the mix writes each stem's tap interleaved straight into the chunk, on huge "
      "pages, written with O_DIRECT, past the page cache). What remains is writing 33 files instead of one (32 × 60 s of float stereo, 740 MB: the process "
      f"pays the kernel's part{', the write floor above' if net is not None else ''}), "
      "which for these unresampled stems costs more than the mixing itself. 16-bit WAV and resampled stems are "
      "shown for scale (no target).")
    b(f"- The 32 stem files summed by sox minus the master: max |difference| **{fmt(r['diff_db'], 1)} dBFS** "
      f"(target < −100 dBFS) **{verdict(ok_d)}**; control, one stem left out of the sum: {fmt(r['control_db'], 1)} dBFS.")
    b("")
    summary.append(("1s", target("1s.cpu").text, f"{fmt(ratio, 2)}×", verdict(ok_r)))
    if net is not None:
        summary.append(("1s", "(no target) --stems CPU less the write floor, / plain (float WAV)",
                        f"{fmt(net, 2)}× ({fl} {fmt(c[fl] / c['plain'], 2)}× a plain render)", "INFO"))
    summary.append(("1s", target("1s.sum").text, f"{fmt(r['diff_db'], 1)} dBFS", verdict(ok_d)))
    commands["1s"] = r["commands"]


def section_2(r, run, b, summary, commands):
    c = {k: med(v) for k, v in r["cpu"].items()}
    eca = c["ecasound -ei:90"]
    b("## 2. Offline varispeed: 32 stems, every stem at rate 0.9")
    b("")
    b("| tool | quality | CPU s | stem-seconds per CPU-second | throughput vs ecasound | output length s | peak dBFS "
      "| RMS difference from sox VHQ, whole band / below 15 kHz, dBFS |")
    b("|---|---|---:|---:|---:|---:|---:|---:|")
    qual = {"stemdeck linear": "libsamplerate `SRC_LINEAR`: no anti-aliasing, low quality",
            "stemdeck fast": "stemdeck's own sinc (Kaiser-windowed, 40 taps, float SIMD): band-limited, "
                             "worst-case residual over the test tones lower than libsamplerate `SRC_SINC_FASTEST`'s, "
                             "not tone by tone (SincResamplerTests, README)",
            "ecasound -ei:90": "ecasound's own `-ei` pitch shifter (resamples by altering length)"}
    for k in r["cpu"]:
        b(f"| {k} | {qual[k]} | {fmt(c[k])}{span(r['cpu'][k])} | {fmt(N_STEMS * STEM_SECONDS / c[k], 0)} | "
          f"{fmt(eca / c[k], 1)}× | {fmt(r['durations'][k], 3)} | {fmt(r['peaks'][k], 1)} | "
          f"{fmt(r['rms_full'][k], 1)} / {fmt(r['rms_band'][k], 1)} |")
    b("")
    b("- Stem-seconds count source material (32 × 60 s); all three outputs cover the same 66.7 s of music "
      "(see the length column), so the ratio is a like-for-like throughput ratio.")
    b("- Quality is not equal: `linear` is the cheapest and worst (audible aliasing and high-frequency loss); "
      "`fast` is band-limited; ecasound's `-ei` is its own resampler, neither of libsamplerate's.")
    b("- The last column compares each output with the same mix slowed by sox's very-high-quality resampler "
      "(`speed 0.9 rate -v`): the RMS of the difference over the whole band, and after a 15 kHz low-pass on "
      "both (where a band-limited converter should be flat). It is the quality figure; the check below is "
      "the correctness one. ecasound's `-ei` output is a few milliseconds shorter, so its figure mostly "
      "measures that drift in time, not noise.")
    b("")
    band_ok = met("2.band", r["rms_band"]["stemdeck fast"])
    summary.append(("2", target("2.band").text,
                    f"{fmt(r['rms_band']['stemdeck fast'], 1)} dBFS", verdict(band_ok)))
    ok_f = met("2.fast", eca / c["stemdeck fast"])
    ok_l = met("2.linear", eca / c["stemdeck linear"])
    summary.append(("2", target("2.fast").text, f"{fmt(eca / c['stemdeck fast'], 1)}×", verdict(ok_f)))
    summary.append(("2", target("2.linear").text, f"{fmt(eca / c['stemdeck linear'], 1)}×", verdict(ok_l)))
    commands["2"] = r["commands"]


def section_2f(r, run, b, summary, commands):
    c = {k: med(v) for k, v in r["cpu"].items()}
    eca = c["ecasound -ei:120"]
    b("### 2f. (no target) Faster than the file: 32 stems at rate 1.2")
    b("")
    b("Playing faster than the file lowers the converter's cut-off to the output's Nyquist frequency, so "
      "its filter is wider (25 taps a side instead of 20). stemdeck builds each held ratio's own polyphase "
      "table over its first few periods; while a rate glides it computes the coefficients tap by tap.")
    b("")
    b("| tool | CPU s | stem-seconds per CPU-second | throughput vs ecasound | output length s | RMS difference from sox VHQ below 15 kHz, dBFS |")
    b("|---|---:|---:|---:|---:|---:|")
    for k in r["cpu"]:
        b(f"| {k} | {fmt(c[k])}{span(r['cpu'][k])} | {fmt(N_STEMS * STEM_SECONDS / c[k], 0)} | {fmt(eca / c[k], 1)}× | "
          f"{fmt(r['durations'][k], 3)} | {fmt(r['rms_band'][k], 1)} |")
    b("")
    summary.append(("2f", "(no target) fast sinc at rate 1.2: throughput vs ecasound -ei:120; difference from sox VHQ below 15 kHz",
                    f"{fmt(eca / c['stemdeck fast'], 1)}×; {fmt(r['rms_band']['stemdeck fast'], 1)} dBFS", "INFO"))
    commands["2f"] = r["commands"]


def section_2s(r, run, b, summary, commands):
    c = {k: med(v) for k, v in r["cpu"].items()}
    vari = c["stemdeck varispeed fast"]
    out_s = r["durations"]["stemdeck stretch"] or STEM_SECONDS / 0.9
    b(f"### 2s. Stretch beside varispeed: {N_STRETCH} stems at rate 0.9, offline")
    b("")
    b("| tool | quality | CPU s | stem-seconds per CPU-second | CPU per stem, % of a core in real time | cost vs varispeed | output length s | peak dBFS |")
    b("|---|---|---:|---:|---:|---:|---:|---:|")
    qual = {"stemdeck varispeed fast": "stemdeck's own sinc (`fast`): pitch follows the rate",
            "stemdeck stretch": "Rubber Band R3 (finer), short window, real-time mode: tempo only, pitch kept",
            "stemdeck stretch 44.1 kHz files": "the same from 44.1 kHz files (converted to 48 kHz by the `fast` sinc "
                                               "ahead of the stretcher)"}
    for k in r["cpu"]:
        per_stem = c[k] / N_STRETCH / (r["durations"][k] or out_s) * 100
        b(f"| {k} | {qual[k]} | {fmt(c[k])}{span(r['cpu'][k])} | {fmt(N_STRETCH * STEM_SECONDS / c[k], 0)} | "
          f"{fmt(per_stem, 2)} | {fmt(c[k] / vari, 1)}× | {fmt(r['durations'][k], 3)} | {fmt(r['peaks'][k], 1)} |")
    b("")
    b(f"- CPU per stem is the render's CPU time over {N_STRETCH} stems and the {fmt(out_s, 1)} s of output they make: "
      "the share of one core a stem of that kind would take playing live (disk reads included, JACK excluded).")
    b("")
    st = c["stemdeck stretch"]
    per_stem = st / N_STRETCH / out_s * 100
    summary.append(("2s", target("2s.cpu").text,
                    f"{fmt(per_stem, 2)} % of a core ({fmt(st / vari, 1)}× a fast-sinc varispeed stem)",
                    verdict(met("2s.cpu", per_stem))))
    commands["2s"] = r["commands"]



def section_4(r, run, b, summary, commands):
    mib = lambda key, rows=r["rows"]: med([x[key] for x in rows]) / 1024
    priv = mib("private")
    b("## 4. Memory: 32 stems of 10 minutes, playing")
    b("")
    b("| process | VmRSS MiB | RssShmem MiB (JACK's shared segments) | private = VmRSS − RssShmem MiB | RssAnon MiB | RssFile MiB | VmHWM MiB |")
    b("|---|---:|---:|---:|---:|---:|---:|")
    b(f"| 32 × 10-minute stems (4 distinct files), after 10 s of play ({r['rows'][-1]['state']}, "
      f"{r['rows'][-1]['underruns']} underruns) | {fmt(mib('VmRSS'), 1)} | {fmt(mib('RssShmem'), 1)} | "
      f"**{fmt(priv, 1)}**{span([x['private'] / 1024 for x in r['rows']], 1)} | {fmt(mib('RssAnon'), 1)} | "
      f"{fmt(mib('RssFile'), 1)} | {fmt(mib('VmHWM'), 1)} |")
    e = r["empty"]
    b(f"| the same, no stems (for scale) | {fmt(e['VmRSS'] / 1024, 1)} | {fmt(e.get('RssShmem', 0) / 1024, 1)} | "
      f"{fmt(e['private'] / 1024, 1)} | {fmt(e.get('RssAnon', 0) / 1024, 1)} | {fmt(e.get('RssFile', 0) / 1024, 1)} | "
      f"{fmt(e['VmHWM'] / 1024, 1)} |")
    b("")
    b(f"- The target is judged on the private figure: VmRSS includes the JACK server's shared memory that "
      f"every client maps ({fmt(mib('RssShmem'), 1)} MiB here, also counted in jackd's own RSS), which "
      f"stemdeck neither allocates nor can shrink. Taken literally, VmRSS = {fmt(mib('VmRSS'), 1)} MiB "
      f"is {'under' if mib('VmRSS') * 1.048576 < 64 else 'over'} 64 MB.")
    b("")
    summary.append(("4", target("4.memory").text,
                    f"{fmt(priv, 1)} MiB private (VmRSS {fmt(mib('VmRSS'), 1)} MiB incl. JACK shm)",
                    verdict(met("4.memory", priv * 1.048576))))


def section_5(r, run, b, summary, commands):
    o = med(r["open_to_playing"])
    b("## 5. Latency")
    b("")
    b("| measured from outside (script mode, stdin → stdout) | median ms | range ms |")
    b("|---|---:|---:|")
    rows = [("`open` a 64-stem session, `play`, poll `status` → first `state: playing`", r["open_to_playing"]),
            ("… of which the `open` command (until its `opened` line)", r["open_cmd"]),
            ("… of which `play` → `state: playing` (includes the status polling round trip)", r["play_to_playing"]),
            ("`vol all X` → the command's next output line (control thread only)", r["ack"]),
            ("`vol all 0` → master meter reads −inf (upper bound: 10 ms ramp + 50 ms meter windows)", r["to_silent"]),
            ("`vol all 0.5` (from 0) → master meter above −60 dB (same bound)", r["to_sound"])]
    for name, xs in rows:
        b(f"| {name} | {fmt(med(xs) * 1000, 1)} | {fmt(min(xs) * 1000, 1)}–{fmt(max(xs) * 1000, 1)} |")
    b("")
    b("The meter rows are upper bounds (the meter publishes once per 50 ms window). The port itself:")
    b("")
    pp = r["port_periods"]
    hist = {k: pp.count(k) for k in sorted(set(pp))}
    b("| `vol` → first changed sample at `master_L` (stemdeck-testrig watching the port; "
      f"{len(pp)} commands, 128-frame periods) | commands |")
    b("|---|---:|")
    for k, c in hist.items():
        b(f"| in period {k} after the one the command was sent in{' (the next period)' if k == 1 else ''} | {c} |")
    b("")
    b("Each command: the rig is armed on a constant stem, asked for JACK's frame time, `vol` is written to "
      "stemdeck's stdin, the frame time is read again, and the rig reports the period in which `master_L` "
      f"first changed. {r['straddled']} command(s) whose write straddled a period boundary cannot be assigned "
      "to a period and are left out; stemdeck's own handling (stdin thread, parse, queue) counts.")
    b("")
    summary.append(("5", target("5.open").text, f"{fmt(o * 1000, 0)} ms", verdict(met("5.open", o))))
    next_share = pp.count(1) / max(1, len(pp))
    summary.append(("5", target("5.port").text,
                    f"{pp.count(1)} of {len(pp)} in the next period ({next_share * 100:.0f} %), latest {max(pp)}",
                    verdict(met("5.port", max(pp)))))


def section_5c(r, run, b, summary, commands):
    b("### 5c. Control socket latency")
    b("")
    b("As case 5's port measurement, with each `vol` sent as a JSON request on stemdeck's control socket "
      "(`--control PATH`) instead of its stdin. The control loop waits in poll(2) on the socket, so the "
      "request is run the moment it arrives.")
    b("")
    request_latency_rows(r, b, summary, "5c", "the socket")


def request_latency_rows(r, b, summary, case, what):
    """Cases 5c and 5w: the periods a `vol` request took to the port, the round trip, the verdict."""
    pp, rt = r["port_periods"], sorted(r["round_trips"])
    b(f"| `vol` over {what} → first changed sample at `master_L` ({len(pp)} commands) | commands |")
    b("|---|---:|")
    for k in sorted(set(pp)):
        b(f"| in period {k} after the one the request was sent in{' (the next period)' if k == 1 else ''} | {pp.count(k)} |")
    b("")
    b(f"Request → reply round trip (`echo`, {len(rt)} requests on one connection, while playing): median "
      f"{fmt(med(rt) * 1000, 2)} ms, p95 {fmt(rt[int(len(rt) * 0.95)] * 1000, 2)} ms, max {fmt(rt[-1] * 1000, 2)} ms. "
      f"{r['straddled']} command(s) straddled a period boundary and are left out.")
    b("")
    summary.append((case, target(f"{case}.port").text,
                    f"{pp.count(1)} of {len(pp)} in the next period, latest {max(pp) if pp else '-'}",
                    verdict(bool(pp) and met(f"{case}.port", max(pp)))))


def section_5w(r, run, b, summary, commands):
    b("### 5w. Web mixer latency")
    b("")
    b("As case 5c, with each `vol` sent as a message on the web mixer's WebSocket (`--http PORT`, `/ws`): "
      "the libwebsockets thread hands it to the control thread through a socket pair.")
    b("")
    request_latency_rows(r, b, summary, "5w", "the WebSocket")


def section_5m(r, run, b, summary, commands):
    b("### 5m. Web mixer pages")
    b("")
    b(f"stemdeck playing {r['strips']} stems with `--http`; its CPU (all threads, % of one core, {r['window']} s windows) "
      f"with no page, with {r['pages']} WebSocket clients each subscribed to meters at {r['meter_rate']} a second, the "
      "transport and events after one fetch of the mix (what an idle page does; it fetches again only on `mixChanged`), "
      "and with no page again.")
    b("")
    b(f"| without | with {r['pages']} pages | cost | frames a second a page | bytes a frame |")
    b("|---:|---:|---:|---:|---:|")
    b(f"| {r['without'][0]} %, {r['without'][1]} % | {r['with']} % | +{r['cost_points']} points (× {r['ratio']}) | "
      f"{r['frames_per_page_second']} | {r['bytes_per_frame']} |")
    b("")
    b(f"By thread with the pages: {', '.join(f'{k} {v} %' for k, v in sorted(r['threads_with'].items()))}.")
    b("")
    summary.append(("5m", target("5m.cpu").text, f"+{r['cost_points']} points", verdict(met("5m.cpu", r["cost_points"]))))


def section_5p(r, run, b, summary, commands):
    b("### 5p. Web mixer page frame rate")
    b("")
    b(f"The page against stemdeck playing {r['strips']} stems, in headless Chromium at 1280×800 (software "
      "rendering, `--disable-gpu`), read through the DevTools protocol (`Runtime.evaluate`): 5 s of "
      "`requestAnimationFrame` callbacks once every strip is shown and meter frames arrive, and the time "
      "the page's own drawing (meters and loudness, `draw` in app.js) takes in each.")
    b("")
    b("| frames a second | interval median | p95 | max | drawing median | p95 |")
    b("|---:|---:|---:|---:|---:|---:|")
    b(f"| {r['fps']} | {r['gap_median_ms']} ms | {r['gap_p95_ms']} ms | {r['gap_max_ms']} ms | "
      f"{r['draw_median_ms']} ms | {r['draw_p95_ms']} ms |")
    b("")
    summary.append(("5p", target("5p.fps").text, f"{r['fps']} frames/s", verdict(met("5p.fps", r["fps"]))))


for _key in ALL_CASES:
    SECTIONS[_key] = globals()["section_" + _key]


def render(data):
    """(markdown, summary) for {"run": run_info(…), "results": {case: result}}; summary holds
    (case, target, figure, verdict) rows."""
    run, results = data["run"], data["results"]
    cache = run["cache"]
    versions = run["versions"]
    L = []
    summary = []  # (case, target, figure, verdict)
    commands = {}
    w = L.append
    w("# stemdeck benchmarks")
    w("")
    w("Generated by `scripts/bench` — do not edit by hand; method and caveats in "
      "[benchmarking.md](benchmarking.md).")
    w("")
    if run["partial"]:
        w(f"**Partial run** ({'--quick: 1 run, short live windows' if run['quick'] else 'cases ' + ','.join(run['cases'])}): "
          "a smoke test, not the published numbers.")
        w("")
    w(f"- Date: {run['date']}")
    w(f"- Machine: `nproc` = {run['nproc']}, "
      f"CPU: {run['cpu']}, kernel {run['kernel']}, {run['machine']}")
    w(f"- stemdeck: {run['bin_source'] or 'working tree at ' + versions['stemdeck']}; binary `{short_cmd([run['bin']], cache)}` "
      f"built {run['bin_built']}")
    w(f"- {versions['ecasound']}; {versions['sox']}; {versions['jackd']}")
    w(f"- Whole run (with waits for a quiet machine): {run['minutes']:.0f} min")
    w(f"- JACK scheduling (live cases): {run['scheduling']}")
    w(f"- Runs per offline case: {run['runs']} (figures are medians; ranges are min–max); live window "
      f"{run['live_seconds']} s × {run['live_runs']} run(s), `status` sampled once a second")
    w(f"- Material (`$CACHE` = `{cache}`): {N_STEMS} distinct stereo 16-bit {STEM_SECONDS} s stems at 48 kHz "
      f"and the same at 44.1 kHz, {N_LONG} distinct {LONG_SECONDS // 60}-minute stereo 16-bit 48 kHz files; "
      f"each stem peaks at −26 dBFS, gains 0.35…0.75, pans −0.8…0.8")
    if run["quiet"]:
        w("- CPU use by other processes just before each case (the machine is shared; the script waits up to "
          f"{run['max_wait']} s for it to drop below 25 %): " + ", ".join(
              f"case {k} {q['busy'] * 100:.0f} % (load average {q['loadavg']:.1f}{', waited %.0f s' % q['waited'] if q['waited'] > 3 else ''})"
              for k, q in run["quiet"].items()))
    w("")
    body = []
    for key, section in SECTIONS.items():
        if key in results:
            section(results[key], run, body.append, summary, commands)

    w("## Targets")
    w("")
    w("| case | target | measured | verdict |")
    w("|---|---|---|---|")
    for case, goal, fig, v in summary:
        w(f"| {case} | {goal} | {fig} | **{v}** |")
    w("")
    L += body
    w("## Exact commands")
    w("")
    w("Paths are relative to `$CACHE`. Material (per stem i, 48 kHz and 44.1 kHz; the long files use "
      "recipes 1–4 with 600 s):")
    w("")
    w("```sh")
    for i in range(4):
        w(short_cmd(["sox", "-n", "-r", str(SR), "-b", "16", "-c", "2", stem_path(cache, SR, i)]
                    + stem_recipe(i, STEM_SECONDS), cache) + f"   # recipe {i % 4}")
    w("# … stems 5–32 cycle the four recipes over A-minor-pentatonic notes and octaves; see stem_recipe() in scripts/stemdeck_bench/material.py")
    w("```")
    w("")
    for case, cmds in commands.items():
        w(f"Case {case}:")
        w("")
        w("```sh")
        for k, cmd in cmds.items():
            if cmd:
                w(f"# {k}")
                w(abbreviated([str(x) for x in cmd], cache))
        w("```")
        w("")
        long_ones = {k: c for k, c in cmds.items() if c and len(c) > 40}
        if long_ones:
            w("<details><summary>full command lines</summary>")
            w("")
            w("```sh")
            for k, cmd in long_ones.items():
                w(f"# {k}")
                w(short_cmd([str(x) for x in cmd], cache))
            w("```")
            w("")
            w("</details>")
            w("")
    if any(k in results for k in ("3", "3s", "3g", "3i", "4", "5")):
        w("Live cases drive `stemdeck SESSION --server NAME --no-start-server --no-connect` on stdin "
          "(`play`, `status`, `meters master`, `vol all X`, `open PATH`, `echo --end--` as a reply marker), "
          "one private `jackd` per case.")
        w("")
    text = "\n".join(L)
    if run["failures"]:
        text += "\n## Cases that could not run\n\n" + "\n".join(
            f"- case {k}: `{e.splitlines()[0]}`" for k, e in run["failures"]) + "\n"
    return text, summary
