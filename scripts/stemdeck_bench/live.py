"""Cases 3 and 3s: live DSP load and xruns on a private jackd, with the observer-alone baselines and
load-matched controls (JACK's jack_cpu), and the live stretch stems."""

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
from .jack import *  # noqa: F401,F403


def case_live(ctx):
    cache, seconds = ctx["cache"], ctx["live_seconds"]
    server = JackServer(f"bench-{os.getpid()}", cache, ctx["env"])
    server.start()
    res = {"rows": [], "server_cmd": server.cmd, "paired": {}}
    row = lambda kind, n, fn: live_row(ctx, server, res, "3", kind, n, fn)
    sessions = {}

    try:
        for rep in range(ctx["live_runs"]):
            row("baseline (no stems)", "before", lambda: observer(ctx, server, seconds, "baseline-before"))
            row("ecasound + observer", 32, lambda: live_ecasound(ctx, server, seconds))
            s32 = write_session(cache, "live-plain32", 32, loops=-1)
            row("stemdeck plain + observer", 32, lambda: live_stemdeck_observed(ctx, server, s32, seconds, "observed32"))
            # A load of 1–3 % moves by half a percent from window to window (jack_cpu_load is a
            # smoothed maximum, so one slow cycle shows): the comparison takes the median of
            # alternating windows.
            for i in range(PAIRED_EXTRA):
                row("ecasound + observer", 32, lambda: live_ecasound(ctx, server, seconds))
                row("stemdeck plain + observer", 32,
                    lambda: live_stemdeck_observed(ctx, server, s32, seconds, f"observed32-{i + 2}"))
            for n in (32, 64, 128, 256, 512):
                s = write_session(cache, f"live-plain{n}", n, loops=-1, gain_scale=min(1.0, 32 / n))
                sessions[("stemdeck plain", n)] = s
                row("stemdeck plain", n, lambda: live_stemdeck(ctx, server, s, seconds, f"plain{n}"))
            for n in (16, 32, 64, 128):
                s = write_session(cache, f"live-vari{n}", n, rate=0.9, quality="fast", loops=-1, gain_scale=min(1.0, 32 / n))
                sessions[("stemdeck varispeed 0.9 fast", n)] = s
                row("stemdeck varispeed 0.9 fast", n, lambda: live_stemdeck(ctx, server, s, seconds, f"vari{n}"))
            for n in (32, 64):
                s = write_session(cache, f"live-vari12-{n}", n, rate=1.2, quality="fast", loops=-1, gain_scale=min(1.0, 32 / n))
                row("stemdeck varispeed 1.2 fast", n, lambda: live_stemdeck(ctx, server, s, seconds, f"vari12-{n}"))
            files = [stem_path(cache, 44100, i) for i in range(N_STEMS)]
            for n in (32, 256):
                # Issue 38's rows: a 44.1 kHz stem on this 48 kHz server is converted by its disk worker (steady
                # mode); at rate 1 its voice mixes straight from its ring.
                s = write_session(cache, f"live-44k{n}", n, files=files,
                                  quality="fast", loops=-1, gain_scale=min(1.0, 32 / n))
                row("stemdeck 44.1 kHz files, fast", n, lambda: live_stemdeck(ctx, server, s, seconds, f"44k{n}"))
            # Load-matched controls and paired windows for the two target rows.
            for kind, n in (("stemdeck plain", 256), ("stemdeck varispeed 0.9 fast", 64)):
                x = next((x for k, m, x in reversed(res["rows"]) if k == kind and m == n and "error" not in x), None)
                if x is None or x["load"] is None:
                    continue
                s = sessions[(kind, n)]
                control_and_pairs(ctx, server, res, row, "3", kind, n, x,
                                  lambda tag, s=s: live_stemdeck(ctx, server, s, seconds, tag),
                                  f"{kind.split()[1]}{n}", f"{kind.split()[1]} {n}")
            row("baseline (no stems)", "after", lambda: observer(ctx, server, seconds, "baseline-after"))
    finally:
        server.stop()
    # JSON has no tuple keys: [kind, n, pairs] for each target row.
    res["paired"] = [[kind, n, pairs] for (kind, n), pairs in res["paired"].items()]
    return res


# Case 3s's stretch qualities: Rubber Band R3 (`fine`, rows "stemdeck stretch TEMPO") and
# stemdeck's WSOLA (`fast`, rows "stemdeck stretch TEMPO fast"; issue 25).
STRETCH_QUALITIES = ("fine", "fast")


def stretch_quality_session(path, quality):
    """The session at `path` with every stem's stretch quality set (`fine` is the default: unchanged)."""
    if quality == "fine":
        return path
    with open(path) as f:
        doc = json.load(f)
    for s in doc["stems"]:
        s["stretch"] = quality
    out = path[:-len(".json")] + f"-{quality}.json"
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    return out


def case_stretch_live(ctx):
    """Live stretch stems: for each tempo of STRETCH_LIVE and each of STRETCH_QUALITIES the counts
    up to the target's (32 at 0.8, 24 at 1.15), between two observer baselines. A target row within
    50 % load gets a load-matched control and paired windows, as case 3's target rows."""
    cache, seconds = ctx["cache"], ctx["live_seconds"]
    server = JackServer(f"benchstretch-{os.getpid()}", cache, ctx["env"])
    server.start()
    res = {"rows": [], "server_cmd": server.cmd, "paired": {}}
    row = lambda kind, n, fn: live_row(ctx, server, res, "3s", kind, n, fn)
    try:
        for rep in range(ctx["live_runs"]):
            row("baseline (no stems)", "before", lambda: observer(ctx, server, seconds, "stretch-baseline-before"))
            for tempo, counts, quality in ((t, c, q) for t, c in STRETCH_LIVE for q in STRETCH_QUALITIES):
                kind = f"stemdeck stretch {tempo}" + ("" if quality == "fine" else f" {quality}")
                tag = "" if quality == "fine" else f"-{quality}"
                saturated = False
                for n in counts:
                    if saturated and n != counts[-1]:
                        continue  # a smaller count already filled the period: straight to the target's
                    s = write_session(cache, f"live-stretch{tempo}-{n}", n, rate=tempo, quality="fast", loops=-1,
                                      gain_scale=min(1.0, 32 / n), mode="stretch")
                    s = stretch_quality_session(s, quality)
                    row(kind, n, lambda: live_stemdeck(ctx, server, s, seconds, f"stretch{tempo}{tag}-{n}"))
                    saturated = saturated or stretch_saturated(res["rows"][-1][2])
                paired_windows(ctx, server, res, row, kind, n, s, f"stretch{tempo}{tag}-{n}")
                if quality == "fast" and tempo == TEMPO_CHANGE_ROW[0]:
                    # The target's stems with a tempo change for all of them at once every 2 s.
                    k, t = f"{kind}, rate all every 2 s", TEMPO_CHANGE_ROW[1]
                    row(k, n, lambda: live_stemdeck(ctx, server, s, seconds, f"stretch{tempo}{tag}-{n}-changes", tempi=t))
                    paired_windows(ctx, server, res, row, k, n, s, f"stretch{tempo}{tag}-{n}-changes", tempi=t)
                goal = STRETCH_GOAL.get(tempo)
                if goal and quality == "fast":
                    g = write_session(cache, f"live-stretch{tempo}-{goal}", goal, rate=tempo, quality="fast", loops=-1,
                                      gain_scale=min(1.0, 32 / goal), mode="stretch")
                    g = stretch_quality_session(g, quality)
                    log(f"  case 3s: {kind}, {goal}: the stretch goal (not a target)")
                    row(kind, goal, lambda: live_stemdeck(ctx, server, g, seconds, f"stretch{tempo}{tag}-{goal}"))
            row("baseline (no stems)", "after", lambda: observer(ctx, server, seconds, "stretch-baseline-after"))
    finally:
        server.stop()
    # JSON has no tuple keys: [kind, n, pairs] for each target row.
    res["paired"] = [[kind, n, pairs] for (kind, n), pairs in res["paired"].items()]
    return res


def paired_windows(ctx, server, res, row, kind, n, session, label, tempi=None):
    """After a target row (the last of res["rows"]): when it is within 50 % load, its load-matched
    control and paired windows (control_and_pairs)."""
    x = res["rows"][-1][2]
    if stretch_saturated(x) or x["load"] > 50:
        return  # over the load target: no control can save it
    control_and_pairs(ctx, server, res, row, "3s", kind, n, x,
                      lambda tag: live_stemdeck(ctx, server, session, ctx["live_seconds"], tag, tempi),
                      label, f"{kind[len('stemdeck '):]} {n}")


def stretch_saturated(x):
    """True when a live window filled the period: load ≥ STRETCH_SATURATED, or the client used that
    much of a core (a client that overruns every cycle reads as ≈ 1 % load: JACK skips its cycles)."""
    return ("error" in x or x["load"] is None or x["load"] >= STRETCH_SATURATED
            or (x.get("client_cpu") or 0) >= STRETCH_SATURATED)
