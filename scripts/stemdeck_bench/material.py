"""The test material (generated with sox into the cache), sessions, and the sox measurements of outputs."""

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


# Material

NOTES = [110.0, 130.81, 146.83, 164.81, 196.0]  # A minor pentatonic


def stem_recipe(i, seconds):
    """sox synth arguments for stem i: pads, basses, hi-hat-like noise and leads at -26 dBFS peak."""
    f = NOTES[i % 5] * (2 ** ((i // 5) % 3))
    r = 0.2 + (i % 7) * 0.15
    kind = i % 4
    fmt = lambda x: f"{x:.3f}"
    if kind == 0:
        eff = ["synth", str(seconds), "sine", fmt(f), "sine", fmt(f * 1.498), "gain", "-8", "tremolo", fmt(r), "40"]
    elif kind == 1:
        eff = ["synth", str(seconds), "triangle", fmt(f / 2), "triangle", fmt(f / 2 * 1.002), "gain", "-8",
               "lowpass", "600", "tremolo", fmt(r), "70"]
    elif kind == 2:
        eff = ["synth", str(seconds), "pinknoise", "pinknoise", "gain", "-12", "highpass", "5000",
               "tremolo", fmt(4 + (i % 5)), "95"]
    else:
        eff = ["synth", str(seconds), "sawtooth", fmt(f), "sawtooth", fmt(f * 1.003), "gain", "-12",
               "lowpass", "2500", "tremolo", fmt(r), "50"]
    return eff + ["gain", "-n", "-26"]


def stem_path(cache, rate, i):
    return os.path.join(cache, "48k" if rate == 48000 else "44k", f"s{i + 1:02d}.wav")


def long_path(cache, i):
    return os.path.join(cache, "long", f"l{i + 1}.wav")


def generate_material(cache, env):
    stamp = os.path.join(cache, "material.json")
    want = {"version": MATERIAL_VERSION, "stems": N_STEMS, "seconds": STEM_SECONDS, "long": N_LONG,
            "long_seconds": LONG_SECONDS}
    jobs = []
    for rate in (48000, 44100):
        for i in range(N_STEMS):
            jobs.append((stem_path(cache, rate, i), rate, stem_recipe(i, STEM_SECONDS)))
    for i in range(N_LONG):
        jobs.append((long_path(cache, i), 48000, stem_recipe(i + 1, LONG_SECONDS)))
    have = None
    if os.path.exists(stamp):
        try:
            with open(stamp) as f:
                have = json.load(f)
        except (OSError, ValueError):
            have = None
    if have == want and all(os.path.exists(j[0]) for j in jobs):
        log(f"material: reusing {cache}")
        return jobs
    log(f"material: generating {len(jobs)} files in {cache} (sox)…")
    for d in ("48k", "44k", "long", "out", "logs"):
        os.makedirs(os.path.join(cache, d), exist_ok=True)
    if os.path.exists(stamp):
        os.remove(stamp)
    pending = list(jobs)
    running = []
    while pending or running:
        while pending and len(running) < max(1, os.cpu_count() or 1):
            path, rate, recipe = pending.pop(0)
            tmp = path + ".tmp.wav"
            cmd = ["sox", "-n", "-r", str(rate), "-b", "16", "-c", "2", tmp] + recipe
            p = spawn(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            running.append((p, path, tmp, cmd, time.monotonic()))
        time.sleep(0.05)
        for item in list(running):
            p, path, tmp, cmd, t0 = item
            if p.poll() is None:
                if time.monotonic() - t0 > 300:
                    end_process(p)
                    raise BenchError(f"sox timed out: {shlex.join(cmd)}")
                continue
            running.remove(item)
            CHILDREN.remove(p)
            err = p.stderr.read()
            if p.returncode != 0:
                raise BenchError(f"sox failed: {shlex.join(cmd)}\n{err}")
            os.replace(tmp, path)
    with open(stamp, "w") as f:
        json.dump(want, f)
    return jobs


# ---------------------------------------------------------------------------------------------
# Sessions


def stem_gain(i):
    return round(0.35 + 0.4 * ((i * 7) % N_STEMS) / (N_STEMS - 1), 4)


def stem_pan(i):
    return round(((i * 5) % 9 - 4) / 5, 2)


def write_session(cache, name, n, rate=1.0, quality="fast", loops=0, files=None, gain_scale=1.0,
                  pan=True, mode=None):
    """A session of n stems cycling through `files` (default: the 32 48 kHz stems); `mode`
    "stretch" plays them through Rubber Band (tempo without pitch) instead of varispeed."""
    files = files or [stem_path(cache, 48000, i) for i in range(N_STEMS)]
    stems = []
    for k in range(n):
        i = k % len(files)
        stems.append({
            "name": f"st{k + 1:03d}",
            "file": os.path.relpath(files[i], cache),
            "volume": round(stem_gain(k % N_STEMS) * gain_scale, 6),
            "pan": stem_pan(k % N_STEMS) if pan else 0,
            "rate": rate,
            "loops": loops,
            "mute": False,
            "solo": False,
        })
        if mode:
            stems[-1]["mode"] = mode
    doc = {"format": "stemdeck-session", "version": 1, "quality": quality, "master": {"volume": 1},
           "options": {"autoPauseOnDisconnect": False, "meterPoint": "post"}, "stems": stems}
    path = os.path.join(cache, f"{name}.json")  # stems are relative to CACHE
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return path


def ecasound_inputs(cache, rate_pct=None, sr=48000):
    args = []
    for i in range(N_STEMS):
        args += [f"-a:{i + 1}", "-i:" + stem_path(cache, sr, i), f"-ea:{stem_gain(i) * 100:.6g}",
                 f"-epp:{(stem_pan(i) + 1) * 50:.6g}"]
        if rate_pct is not None:
            args.append(f"-ei:{rate_pct}")
    return args


# ---------------------------------------------------------------------------------------------
# Measurements helpers


def peak_dbfs(path, env):
    """Peak level of a file in dBFS from `sox FILE -n stats` (resolution: sox's 32-bit internal samples)."""
    out = run(["sox", path, "-n", "stats"], timeout=120, env=env)
    for line in out.splitlines():
        if line.startswith("Pk lev dB"):
            v = line.split()[3]
            return -math.inf if v == "-inf" else float(v)
    raise BenchError(f"sox stats: no 'Pk lev dB' line for {path}:\n{out[-500:]}")


def rms_diff_dbfs(a, b, env, lowpass=None):
    """RMS of a − b in dBFS over both channels, optionally after a linear-phase low-pass at `lowpass` Hz on both."""
    cmd = ["sox", "-m", "-v", "1", a, "-v", "-1", b, "-n"] + (["sinc", f"-{lowpass}"] if lowpass else []) + ["stats"]
    out = run(cmd, timeout=300, env=env, what="sox difference")
    for line in out.splitlines():
        if line.startswith("RMS lev dB"):
            v = line.split()[3]
            return -math.inf if v == "-inf" else float(v)
    raise BenchError(f"sox stats: no 'RMS lev dB' line for {a} − {b}:\n{out[-500:]}")


def reference_mix(cache, env, path, rate=SR):
    """sox's mix of the N_STEMS stems at `rate` with stemdeck's balance law (left × g·min(1, 1−p), right ×
    g·min(1, 1+p)); stems at another rate than SR are converted to SR by sox's very high quality `rate -v`."""
    ref_inputs = []
    for i in range(N_STEMS):
        g, p = stem_gain(i), stem_pan(i)
        gl, gr = g * min(1.0, 1.0 - p), g * min(1.0, 1.0 + p)
        ref_inputs += ["-v", "1", f"|sox {shlex.quote(stem_path(cache, rate, i))} -p remix 1v{gl:.9g} 2v{gr:.9g}"]
    convert = [] if rate == SR else ["rate", "-v", str(SR)]
    cmd = ["sox", "-m"] + ref_inputs + ["-e", "floating-point", "-b", "32", "-c", "2", path] + convert
    run(cmd, timeout=600, env=env, what="sox reference mix")
    return cmd


def diff_dbfs(a, b, out, env):
    """Peak of a − b in dBFS (sox -m -v 1 A -v -1 B, then stats)."""
    run(["sox", "-m", "-v", "1", a, "-v", "-1", b, "-e", "floating-point", "-b", "32", out], timeout=300, env=env,
        what="sox difference")
    return peak_dbfs(out, env)


def duration_of(path, env):
    return float(run(["soxi", "-D", path], timeout=30, env=env, stderr_too=False).strip())
