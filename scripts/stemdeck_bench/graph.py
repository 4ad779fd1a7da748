"""Case 3g: the mixer graph live (issue 22): 64 stems, each with a high-pass and a 3-band EQ, over 8
buses, with 2 aux sends, at 128 frames; a load-matched control for its xruns; and the same session
with every stem's EQ bypassed beside it without EQ (live load, and offline CPU for precision)."""

import json
import os

from .common import *  # noqa: F401,F403 (constants, run/spawn, med/fmt)
from .material import *  # noqa: F401,F403
from .jack import *  # noqa: F401,F403

GRAPH_STEMS = 64
GRAPH_BUSES = 8
GRAPH_SENDS = ("verb", "dly")
# The graph sessions by EQ: "on" (every stem: high-pass + 3 bands, none flat), "off" (the same
# settings with "enabled": false: bypassed), "none" (no "eq": flat, the plain stem).
GRAPH_EQ = ("on", "off", "none")
GRAPH_KIND = {"on": "graph, EQ on", "off": "graph, EQ bypassed", "none": "graph, no EQ"}


def stem_eq(k, enabled=True):
    """A stem's EQ: a high-pass (12 or 24 dB/oct) and three bands away from 0 dB, varied by stem."""
    eq = {"hpf": {"frequency": 40 + (k % 5) * 20, "slope": 24 if k % 2 else 12},
          "low": {"frequency": 100 + (k % 3) * 40, "gain": 2 + k % 3},
          "mid": {"frequency": 800 + (k % 7) * 150, "gain": -3 - k % 4, "q": 1.2},
          "high": {"frequency": 7000 + (k % 4) * 1000, "gain": 1.5}}
    if not enabled:
        eq = {"enabled": False, **eq}
    return eq


def write_graph_session(cache, name, eq, n=GRAPH_STEMS):
    """n looping stems (the 32 48 kHz stems twice), stem k on bus k % GRAPH_BUSES + 1, every stem
    sending to both aux sends (the first post-fader, the second pre-fader); `eq` one of GRAPH_EQ."""
    stems = []
    for k in range(n):
        i = k % N_STEMS
        stem = {"name": f"st{k + 1:03d}", "file": os.path.relpath(stem_path(cache, SR, i), cache),
                "volume": round(stem_gain(i) * min(1.0, 32 / n), 6), "pan": stem_pan(i), "rate": 1.0,
                "loops": -1, "mute": False, "solo": False, "bus": f"bus{k % GRAPH_BUSES + 1}",
                "sends": [{"to": GRAPH_SENDS[0], "level": 0.2}, {"to": GRAPH_SENDS[1], "level": 0.1, "pre": True}]}
        if eq != "none":
            stem["eq"] = stem_eq(k, enabled=eq == "on")
        stems.append(stem)
    doc = {"format": "stemdeck-session", "version": 3, "quality": "fast", "master": {"volume": 1},
           "options": {"autoPauseOnDisconnect": False, "meterPoint": "post"},
           "buses": [{"name": f"bus{b + 1}", "volume": 1, "pan": 0, "mute": False, "solo": False}
                     for b in range(GRAPH_BUSES)],
           "sends": [{"name": s, "returnVolume": 1} for s in GRAPH_SENDS],
           "stems": stems}
    path = os.path.join(cache, f"{name}.json")  # stems are relative to CACHE
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return path


def case_graph_live(ctx):
    cache, seconds, env, sd = ctx["cache"], ctx["live_seconds"], ctx["env"], ctx["bin"]
    sessions = {eq: write_graph_session(cache, f"graph{GRAPH_STEMS}-eq-{eq}", eq) for eq in GRAPH_EQ}
    res = {"rows": [], "paired": {}, "bypass_pairs": [], "sessions": {eq: os.path.basename(p) for eq, p in sessions.items()}}

    # Offline first (no server): the render CPU of the bypassed graph beside the graph without EQ
    # (and with it), the precise form of "a stem with EQ bypassed costs nothing extra".
    cpu = {eq: [] for eq in GRAPH_EQ}
    cmds = {}
    for r in range(ctx["runs"]):
        for eq in GRAPH_EQ:
            out = os.path.join(cache, "out", f"graph-eq-{eq}.wav")
            cmd = [sd, "render", sessions[eq], "--output", out, "--duration", str(STEM_SECONDS), "--quiet"]
            cmds[f"render, {GRAPH_KIND[eq]}"] = cmd
            c, _ = run_timed(cmd, timeout=600, env=env, log_path=os.path.join(cache, "logs", f"graph-render-{eq}.log"))
            cpu[eq].append(c)
            log(f"  case 3g run {r + 1}/{ctx['runs']}: render {GRAPH_KIND[eq]:20s} cpu {c:6.2f} s")
    res["offline_cpu"] = cpu
    # Control: the bypassed render must equal the render without EQ, and differ from the one with it.
    res["offline_peak_db"] = {
        "off − none": diff_dbfs(os.path.join(cache, "out", "graph-eq-off.wav"), os.path.join(cache, "out", "graph-eq-none.wav"),
                                os.path.join(cache, "out", "graph-diff-off-none.wav"), env),
        "on − none": diff_dbfs(os.path.join(cache, "out", "graph-eq-on.wav"), os.path.join(cache, "out", "graph-eq-none.wav"),
                               os.path.join(cache, "out", "graph-diff-on-none.wav"), env)}

    server = JackServer(f"benchgraph-{os.getpid()}", cache, env)
    server.start()
    res["server_cmd"] = server.cmd
    row = lambda kind, n, fn: live_row(ctx, server, res, "3g", kind, n, fn)
    live = lambda eq, label: (lambda: live_stemdeck(ctx, server, sessions[eq], seconds, label))
    try:
        for rep in range(ctx["live_runs"]):
            row("baseline (no stems)", "before", lambda: observer(ctx, server, seconds, "graph-baseline-before"))
            for eq in GRAPH_EQ:
                row(f"stemdeck {GRAPH_KIND[eq]}", GRAPH_STEMS, live(eq, f"graph-{eq}"))
            s64 = write_session(cache, "live-plain64", GRAPH_STEMS, loops=-1, gain_scale=0.5)
            row("stemdeck plain (no buses, sends, EQ)", GRAPH_STEMS,
                lambda: live_stemdeck(ctx, server, s64, seconds, "graph-plain64"))
            # Bypassed against no EQ: a difference of a few tenths of a percent is within one
            # window's noise, so more windows of the two in turn, compared by their medians.
            for i in range(PAIRED_EXTRA):
                res["bypass_pairs"].append(list(measured_pair(
                    ctx, "3g", f"bypassed against no EQ: paired window {i + 2}",
                    [(GRAPH_KIND[eq], live(eq, f"graph-{eq}-pair{i + 2}")) for eq in ("off", "none")], server=server)))
            # The load-matched control of the target row (EQ on), in paired windows as case 3's.
            kind = f"stemdeck {GRAPH_KIND['on']}"
            x = next((x for k, m, x in res["rows"] if k == kind and "error" not in x), None)
            if x is not None and x["load"] is not None:
                control_and_pairs(ctx, server, res, row, "3g", kind, GRAPH_STEMS, x,
                                  lambda tag: live("on", tag)(), "graph", f"graph {GRAPH_STEMS}")
            row("baseline (no stems)", "after", lambda: observer(ctx, server, seconds, "graph-baseline-after"))
    finally:
        server.stop()
    # JSON has no tuple keys: [kind, n, pairs] for the target row.
    res["paired"] = [[k, n, pairs] for (k, n), pairs in res["paired"].items()]
    res["commands"] = dict(cmds, **{"jackd": server.cmd,
                                    "stemdeck (live)": [sd, sessions["on"], "--server", "benchgraph-PID", "--no-start-server",
                                                        "--no-connect", "--name", "sdbench"]})
    return res
