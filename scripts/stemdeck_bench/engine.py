"""Cases 1, 1b, 2, 2f, 2s: the engine's CPU cost offline (`render`) against ecasound and sox: the
plain mix, file-rate conversion, varispeed (slower and faster), stretch beside varispeed."""

import argparse
import datetime
import json
import math
import os
import platform
import queue
import re
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import wave
import struct

from .common import *  # noqa: F401,F403 (constants, run/spawn, med/fmt)
from .material import *  # noqa: F401,F403


def case_offline_mix(ctx):
    cache, env, runs, sd = ctx["cache"], ctx["env"], ctx["runs"], ctx["bin"]
    sess = write_session(cache, "mix32", N_STEMS)
    out = lambda n: os.path.join(cache, "out", n)
    cmds = {
        "stemdeck": [sd, "render", sess, "--output", out("stemdeck-mix.wav"), "--sample-rate", str(SR)],
        "ecasound": ["ecasound", "-q", "-z:mixmode,sum"] + ecasound_inputs(cache)
        + ["-a:all", f"-f:f32_le,2,{SR}", "-o:" + out("ecasound-mix.wav")],
        "sox": ["sox", "-m"] + sum((["-v", f"{stem_gain(i):.6g}", stem_path(cache, SR, i)] for i in range(N_STEMS)), [])
        + ["-e", "floating-point", "-b", "32", "-r", str(SR), "-c", "2", out("sox-mix.wav")],
    }
    cpu = {k: [] for k in cmds}
    wall = {k: [] for k in cmds}
    for r in range(runs):
        for k, cmd in cmds.items():
            c, w = run_timed(cmd, timeout=600, env=env, log_path=os.path.join(cache, "logs", f"mix-{k}.log"))
            cpu[k].append(c)
            wall[k].append(w)
            log(f"  case 1 run {r + 1}/{runs}: {k:9s} cpu {c:6.2f} s  wall {w:6.2f} s")
    # Correctness: sox reference with stemdeck's balance law per stem, then the difference.
    ref_cmd = reference_mix(cache, env, out("reference-mix.wav"))
    diff_cmd = ["sox", "-m", "-v", "1", out("stemdeck-mix.wav"), "-v", "-1", out("reference-mix.wav"),
                "-e", "floating-point", "-b", "32", out("diff-mix.wav")]
    diff_db = diff_dbfs(out("stemdeck-mix.wav"), out("reference-mix.wav"), out("diff-mix.wav"), env)
    # Controls: against sox's gain-only mix (no pan: must differ, so the check can fail) and ecasound.
    control_db = diff_dbfs(out("stemdeck-mix.wav"), out("sox-mix.wav"), out("diff-control.wav"), env)
    eca_db = diff_dbfs(out("stemdeck-mix.wav"), out("ecasound-mix.wav"), out("diff-ecasound.wav"), env)
    ref_peak = peak_dbfs(out("reference-mix.wav"), env)
    sd_peak = peak_dbfs(out("stemdeck-mix.wav"), env)
    durs = {k: duration_of(out(f"{k}-mix.wav"), env) for k in cmds}
    res = {"cpu": cpu, "wall": wall, "diff_db": diff_db, "control_db": control_db, "eca_db": eca_db, "ref_peak": ref_peak, "sd_peak": sd_peak,
           "durations": durs, "commands": dict(cmds, **{"sox reference (correctness)": ref_cmd, "sox difference": diff_cmd,
                                                          "stats": ["sox", out("diff-mix.wav"), "-n", "stats"]}),
           "session": sess}
    return res


def case_varispeed(ctx):
    cache, env, runs, sd = ctx["cache"], ctx["env"], ctx["runs"], ctx["bin"]
    out = lambda n: os.path.join(cache, "out", n)
    s_lin = write_session(cache, "vari32-linear", N_STEMS, rate=0.9, quality="linear")
    s_fast = write_session(cache, "vari32-fast", N_STEMS, rate=0.9, quality="fast")
    cmds = {
        "stemdeck linear": [sd, "render", s_lin, "--output", out("stemdeck-vari-linear.wav"), "--sample-rate", str(SR)],
        "stemdeck fast": [sd, "render", s_fast, "--output", out("stemdeck-vari-fast.wav"), "--sample-rate", str(SR)],
        "ecasound -ei:90": ["ecasound", "-q", "-z:mixmode,sum"] + ecasound_inputs(cache, rate_pct=90)
        + ["-a:all", f"-f:f32_le,2,{SR}", "-o:" + out("ecasound-vari.wav")],
    }
    outs = {"stemdeck linear": out("stemdeck-vari-linear.wav"), "stemdeck fast": out("stemdeck-vari-fast.wav"),
            "ecasound -ei:90": out("ecasound-vari.wav")}
    cpu = {k: [] for k in cmds}
    for r in range(runs):
        for k, cmd in cmds.items():
            c, w = run_timed(cmd, timeout=900, env=env, log_path=os.path.join(cache, "logs", f"vari-{k.split()[-1]}.log"))
            cpu[k].append(c)
            log(f"  case 2 run {r + 1}/{runs}: {k:16s} cpu {c:6.2f} s  wall {w:6.2f} s")
    durs = {k: duration_of(p, env) for k, p in outs.items()}
    peaks = {k: peak_dbfs(p, env) for k, p in outs.items()}
    # Correctness and quality: the same mix slowed by sox's very-high-quality resampler
    # (`speed 0.9 rate -v`), against each output: the whole band, and below 15 kHz where every
    # band-limited converter here should be flat (so a fast wrong answer cannot win).
    reference_mix(cache, env, out("reference-mix.wav"))
    ref_cmd = ["sox", out("reference-mix.wav"), out("reference-vari.wav"), "speed", "0.9", "rate", "-v", str(SR)]
    run(ref_cmd, timeout=600, env=env, what="sox reference varispeed")
    rms_full = {k: rms_diff_dbfs(p, out("reference-vari.wav"), env) for k, p in outs.items()}
    rms_band = {k: rms_diff_dbfs(p, out("reference-vari.wav"), env, lowpass=15000) for k, p in outs.items()}
    return {"cpu": cpu, "durations": durs, "peaks": peaks, "rms_full": rms_full, "rms_band": rms_band,
            "commands": dict(cmds, **{"sox reference (speed 0.9, very high quality)": ref_cmd})}


def case_varispeed_faster(ctx):
    """Informational: 32 stems at rate 1.2, where the converter's cut-off drops below the file's
    band (the widened filter of ratios below 1), against ecasound -ei:120 and sox's VHQ speed 1.2."""
    cache, env, runs, sd = ctx["cache"], ctx["env"], ctx["runs"], ctx["bin"]
    out = lambda n: os.path.join(cache, "out", n)
    s_fast = write_session(cache, "vari32-fast-1.2", N_STEMS, rate=1.2, quality="fast")
    cmds = {
        "stemdeck fast": [sd, "render", s_fast, "--output", out("stemdeck-vari12-fast.wav"), "--sample-rate", str(SR)],
        "ecasound -ei:120": ["ecasound", "-q", "-z:mixmode,sum"] + ecasound_inputs(cache, rate_pct=120)
        + ["-a:all", f"-f:f32_le,2,{SR}", "-o:" + out("ecasound-vari12.wav")],
    }
    outs = {"stemdeck fast": out("stemdeck-vari12-fast.wav"), "ecasound -ei:120": out("ecasound-vari12.wav")}
    cpu = {k: [] for k in cmds}
    for r in range(runs):
        for k, cmd in cmds.items():
            c, w = run_timed(cmd, timeout=900, env=env, log_path=os.path.join(cache, "logs", f"vari12-{k.split()[-1]}.log"))
            cpu[k].append(c)
            log(f"  case 2f run {r + 1}/{runs}: {k:16s} cpu {c:6.2f} s  wall {w:6.2f} s")
    durs = {k: duration_of(p, env) for k, p in outs.items()}
    reference_mix(cache, env, out("reference-mix.wav"))
    ref_cmd = ["sox", out("reference-mix.wav"), out("reference-vari12.wav"), "speed", "1.2", "rate", "-v", str(SR)]
    run(ref_cmd, timeout=600, env=env, what="sox reference varispeed 1.2")
    # At rate 1.2 the file's top 3.3 kHz fold above the output's Nyquist: compare below 15 kHz.
    rms_band = {k: rms_diff_dbfs(p, out("reference-vari12.wav"), env, lowpass=15000) for k, p in outs.items()}
    return {"cpu": cpu, "durations": durs, "rms_band": rms_band,
            "commands": dict(cmds, **{"sox reference (speed 1.2, very high quality)": ref_cmd})}


def case_stretch_offline(ctx):
    """Stretch (Rubber Band R3, tempo without pitch) beside varispeed (fast sinc): N_STRETCH stems at rate 0.9."""
    cache, env, runs, sd = ctx["cache"], ctx["env"], ctx["runs"], ctx["bin"]
    out = lambda n: os.path.join(cache, "out", n)
    s_fast = write_session(cache, f"vari{N_STRETCH}-fast", N_STRETCH, rate=0.9, quality="fast")
    s_str = write_session(cache, f"stretch{N_STRETCH}", N_STRETCH, rate=0.9, quality="fast", mode="stretch")
    files44 = [stem_path(cache, 44100, i) for i in range(N_STEMS)]
    s_str44 = write_session(cache, f"stretch{N_STRETCH}-44k", N_STRETCH, rate=0.9, quality="fast", mode="stretch",
                            files=files44)
    cmds = {
        "stemdeck varispeed fast": [sd, "render", s_fast, "--output", out("stemdeck-vari8-fast.wav"), "--sample-rate", str(SR)],
        "stemdeck stretch": [sd, "render", s_str, "--output", out("stemdeck-stretch8.wav"), "--sample-rate", str(SR)],
        "stemdeck stretch 44.1 kHz files": [sd, "render", s_str44, "--output", out("stemdeck-stretch8-44k.wav"),
                                            "--sample-rate", str(SR)],
    }
    outs = {"stemdeck varispeed fast": out("stemdeck-vari8-fast.wav"), "stemdeck stretch": out("stemdeck-stretch8.wav"),
            "stemdeck stretch 44.1 kHz files": out("stemdeck-stretch8-44k.wav")}
    cpu = {k: [] for k in cmds}
    for r in range(runs):
        for k, cmd in cmds.items():
            c, w = run_timed(cmd, timeout=1800, env=env, log_path=os.path.join(cache, "logs", f"stretch-{k.split()[-1]}.log"))
            cpu[k].append(c)
            log(f"  case 2s run {r + 1}/{runs}: {k:24s} cpu {c:6.2f} s  wall {w:6.2f} s")
    durs = {k: duration_of(p, env) for k, p in outs.items()}
    peaks = {k: peak_dbfs(p, env) for k, p in outs.items()}
    return {"cpu": cpu, "durations": durs, "peaks": peaks, "commands": cmds}


def case_rate_conversion(ctx):
    """Informational: the 44.1 kHz set rendered at 48 kHz (file-rate conversion in the same pass)."""
    cache, env, runs, sd = ctx["cache"], ctx["env"], ctx["runs"], ctx["bin"]
    out = lambda n: os.path.join(cache, "out", n)
    files = [stem_path(cache, 44100, i) for i in range(N_STEMS)]
    s_fast = write_session(cache, "mix32-44k-fast", N_STEMS, files=files, quality="fast")
    # The other qualities (informational): `medium` and `best` convert with soxr HQ and VHQ.
    s_medium = write_session(cache, "mix32-44k-medium", N_STEMS, files=files, quality="medium")
    s_best = write_session(cache, "mix32-44k-best", N_STEMS, files=files, quality="best")
    cmds = {
        "stemdeck fast": [sd, "render", s_fast, "--output", out("stemdeck-44k.wav"), "--sample-rate", str(SR)],
        "stemdeck medium": [sd, "render", s_medium, "--output", out("stemdeck-44k-medium.wav"), "--sample-rate", str(SR)],
        "stemdeck best": [sd, "render", s_best, "--output", out("stemdeck-44k-best.wav"), "--sample-rate", str(SR)],
        "sox -m + rate": ["sox", "-m"] + sum((["-v", f"{stem_gain(i):.6g}", files[i]] for i in range(N_STEMS)), [])
        + ["-e", "floating-point", "-b", "32", "-c", "2", out("sox-44k.wav"), "rate", str(SR)],
    }
    cpu = {k: [] for k in cmds}
    for r in range(runs):
        for k, cmd in cmds.items():
            c, w = run_timed(cmd, timeout=600, env=env, log_path=os.path.join(cache, "logs", "rate44k.log"))
            cpu[k].append(c)
            log(f"  case 1b run {r + 1}/{runs}: {k:15s} cpu {c:6.2f} s  wall {w:6.2f} s")
    # Correctness: sox's very-high-quality conversion of the reference mix, below 15 kHz where a
    # band-limited converter should be flat (so a fast wrong answer cannot win).
    ref_cmd = reference_mix(cache, env, out("reference-mix-44k.wav"), rate=44100)
    rms_band = rms_diff_dbfs(out("stemdeck-44k.wav"), out("reference-mix-44k.wav"), env, lowpass=15000)
    bands = {q: rms_diff_dbfs(out(f"stemdeck-44k-{q}.wav"), out("reference-mix-44k.wav"), env, lowpass=15000)
             for q in ("medium", "best")}
    return {"cpu": cpu, "rms_band": rms_band, "rms_band_qualities": bands,
            "commands": dict(cmds, **{"sox reference (mix at 44.1 kHz, rate -v 48000)": ref_cmd})}
