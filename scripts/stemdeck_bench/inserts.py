"""Case 1i (issue 39): plugin inserts offline. The 32 stems of case 1, each through the same LV2
chain (swh's 3-band DJ EQ, then swh's SC4 compressor: both stereo, one instance per stem), in
stemdeck (`render` of a session whose stems carry the chain as inserts) and in ecasound hosting
the same plugins through lilv (`-elv2:URI,values…` on each chain, before its gain and pan, as
stemdeck's inserts run before the fader). Each tool is also timed without the chain, so that the
plugins' own share (with − without) is beside the host's; and with a chain that costs next to
nothing (swh's amp twice: mono, two instances a stereo stem in both hosts), where what is left
is hosting. Target: stemdeck's CPU with the EQ and compressor ≤ ½ of ecasound's."""

import json
import os

from .common import *  # noqa: F401,F403 (constants, run/spawn, med/fmt)
from .material import *  # noqa: F401,F403
from .targets import met, target

DJ_EQ = "http://plugin.org.uk/swh-plugins/dj_eq"
SC4 = "http://plugin.org.uk/swh-plugins/sc4"
# The chain's control values, in each plugin's input-control port order (ecasound's -elv2 takes
# them so; stemdeck's session names them by symbol). The EQ lifts lows and highs, the
# compressor works on every stem (threshold well under the stems' level after the EQ).
CHAIN = [
    (DJ_EQ, [("lo", 3), ("mid", -2), ("hi", 2)]),
    (SC4, [("rms_peak", 0), ("attack", 10), ("release", 100), ("threshold", -30), ("ratio", 4), ("knee", 3),
           ("makeup_gain", 6)]),
]
AMP = "http://plugin.org.uk/swh-plugins/amp"
LIGHT = [(AMP, [("gain", -3)]), (AMP, [("gain", 3)])]


def insert_session(cache, name, chain, n=N_STEMS, **session):
    """Case 1's 32-stem session (or `n` stems, `session` as write_session takes it) with `chain` on
    every stem."""
    path = write_session(cache, name, n, **session)
    with open(path) as f:
        doc = json.load(f)
    for stem in doc["stems"]:
        stem["inserts"] = [{"uri": uri, "values": dict(values)} for uri, values in chain]
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return path


def ecasound_chains(cache, chain):
    """ecasound's 32 chains: each stem, the LV2 `chain` (none: []), then gain and pan."""
    args = []
    for i in range(N_STEMS):
        args += [f"-a:{i + 1}", "-i:" + stem_path(cache, SR, i)]
        args += ["-elv2:" + ",".join([uri] + [f"{v:g}" for _, v in values]) for uri, values in chain]
        args += [f"-ea:{stem_gain(i) * 100:.6g}", f"-epp:{(stem_pan(i) + 1) * 50:.6g}"]
    return args


def case_offline_inserts(ctx):
    cache, env, runs, sd = ctx["cache"], ctx["env"], ctx["runs"], ctx["bin"]
    out = lambda n: os.path.join(cache, "out", n)
    with_chain = insert_session(cache, "inserts32", CHAIN)
    light = insert_session(cache, "inserts32-amp", LIGHT)
    plain = write_session(cache, "mix32", N_STEMS)
    eca = lambda chain, name: (["ecasound", "-q", "-z:mixmode,sum"] + ecasound_chains(cache, chain)
                               + ["-a:all", f"-f:f32_le,2,{SR}", "-o:" + out(name)])
    render = lambda session, name: [sd, "render", session, "--output", out(name), "--sample-rate", str(SR)]
    cmds = {
        "stemdeck, inserts": render(with_chain, "stemdeck-inserts.wav"),
        "ecasound, -elv2": eca(CHAIN, "ecasound-inserts.wav"),
        "stemdeck, 2 × amp": render(light, "stemdeck-amp.wav"),
        "ecasound, 2 × amp": eca(LIGHT, "ecasound-amp.wav"),
        "stemdeck, no inserts": render(plain, "stemdeck-plain.wav"),
        "ecasound, no plugins": eca([], "ecasound-plain.wav"),
    }
    cpu = {k: [] for k in cmds}
    wall = {k: [] for k in cmds}
    for r in range(runs):
        for k, cmd in cmds.items():
            c, w = run_timed(cmd, timeout=900, env=env, log_path=os.path.join(cache, "logs", f"inserts-{k.split(',')[0]}.log"))
            cpu[k].append(c)
            wall[k].append(w)
            log(f"  case 1i run {r + 1}/{runs}: {k:22s} cpu {c:6.2f} s  wall {w:6.2f} s")
    # The plugins alone: the same chain on the same 32 stems through lilv with nothing around it,
    # back to back in 1,024-frame blocks (both hosts' offline block), only `run()` timed. What
    # no host can go below: ½ of ecasound's total is reachable only if it is above this.
    alone = plugins_alone(ctx)
    commands = dict(cmds, **({"plugins alone (lv2_run_cost, back to back)": alone["command"]} if alone else {}))
    # The chain did run (the render with it differs from the one without), and the two hosts
    # agree as far as their balance laws do (case 1: the same law).
    control_db = diff_dbfs(out("stemdeck-inserts.wav"), out("stemdeck-plain.wav"), out("diff-inserts-plain.wav"), env)
    eca_db = diff_dbfs(out("stemdeck-inserts.wav"), out("ecasound-inserts.wav"), out("diff-inserts-ecasound.wav"), env)
    peaks = {k: peak_dbfs(out(n), env) for k, n in
             [("stemdeck", "stemdeck-inserts.wav"), ("ecasound", "ecasound-inserts.wav")]}
    return {"cpu": cpu, "wall": wall, "control_db": control_db, "eca_db": eca_db, "peaks": peaks,
            "chain": [[uri, values] for uri, values in CHAIN], "commands": commands, "alone": alone}


def plugins_alone(ctx):
    """CPU seconds the chain's `run()` calls take on case 1's 32 stems for their whole length in
    `lv2_run_cost` (case 3i's harness), back to back at 1,024 frames, median of the runs; None if
    the harness fails (the case goes on without the figure)."""
    from .resampling import build_tool
    cache, env = ctx["cache"], ctx["env"]
    try:
        libs = run(["pkg-config", "--cflags", "--libs", "lilv-0"], timeout=30, env=env, what="pkg-config lilv-0").split()
        tool = build_tool(cache, env, "lv2_run_cost", libs)
        cmd = [tool, "--rate", str(SR), "--frames", "1024", "--stems", str(N_STEMS), "--seconds", str(STEM_SECONDS)]
        for uri, values in CHAIN:
            cmd += ["--plugin", uri] + [f"{symbol}={value:g}" for symbol, value in values]
        cmd += ["--"] + [stem_path(cache, SR, i) for i in range(N_STEMS)]
        seconds = []
        for r in range(ctx["runs"]):
            words = run(cmd, timeout=900, env=env, what="lv2_run_cost (case 1i)", stderr_too=False).split()
            x = {words[i]: float(words[i + 1]) for i in range(words.index("blocks"), len(words) - 1, 2)}
            seconds.append(x["cpu_ns_per_block"] * x["blocks"] / 1e9)
            log(f"  case 1i run {r + 1}/{ctx['runs']}: plugins alone    cpu {seconds[-1]:6.2f} s")
        return {"cpu": seconds, "command": cmd}
    except (BenchError, KeyError, ValueError) as e:
        log(f"  case 1i: plugins alone FAILED: {e}")
        return None


def section_1i(r, run, b, summary, commands):
    c = {k: med(v) for k, v in r["cpu"].items()}
    b("### 1i. Plugin inserts offline: 32 stems, each through an LV2 EQ and compressor (issue 39)")
    b("")
    b("Every stem runs swh's DJ EQ (`dj_eq`: lo +3, mid −2, hi +2 dB) and SC4 compressor (`sc4`: threshold −30 dB, "
      "ratio 4, attack 10 ms, release 100 ms, makeup +6 dB), both stereo; stemdeck as inserts in the session "
      "(`render`), ecasound through lilv (`-elv2:URI,values…`), before each stem's gain and pan in both. Each "
      "tool is timed without the chain too: the difference is what the plugins (and hosting them) cost.")
    b("")
    b("| run | CPU s (user+sys) | wall s |")
    b("|---|---:|---:|")
    for k in r["cpu"]:
        b(f"| {k} | {fmt(c[k])}{span(r['cpu'][k])} | {fmt(med(r['wall'][k]))} |")
    b("")
    ratio = c["ecasound, -elv2"] / c["stemdeck, inserts"]
    ok = ratio >= target("1i.ecasound").limit
    sd_chain = c["stemdeck, inserts"] - c["stemdeck, no inserts"]
    eca_chain = c["ecasound, -elv2"] - c["ecasound, no plugins"]
    light = c["ecasound, 2 × amp"] / c["stemdeck, 2 × amp"]
    b(f"- CPU: ecasound / stemdeck with the chain **{fmt(ratio, 2)}×** (target ≥ 2×) **{verdict(ok)}**. The chain's "
      f"own cost (with − without): stemdeck {fmt(sd_chain)} s, ecasound {fmt(eca_chain)} s (the same plugins' "
      "`run`; what differs is the host around it). Where the plugins cost most of the time, no host can be twice "
      "as fast as another: the target needs ecasound's own overhead to be as large as the plugins'.")
    b(f"- With a chain that costs next to nothing (amp −3 dB, amp +3 dB: mono, two instances a stem in both hosts), "
      f"ecasound / stemdeck **{fmt(light, 2)}×**; over the run without plugins, stemdeck "
      f"+{fmt(c['stemdeck, 2 × amp'] - c['stemdeck, no inserts'])} s, ecasound "
      f"+{fmt(c['ecasound, 2 × amp'] - c['ecasound, no plugins'])} s.")
    alone = r.get("alone")
    if alone:
        p = med(alone["cpu"])
        half = c["ecasound, -elv2"] / 2
        b(f"- The plugins alone (`lv2_run_cost`, case 3i's lilv harness: the same chain on the same 32 stems for their "
          f"whole length, back to back in 1,024-frame blocks, only `run()` timed): **{fmt(p)} s**{span(alone['cpu'])}. "
          f"Half of ecasound's CPU is {fmt(half)} s: "
          + (f"below what the plugins alone cost, so no host can meet the target with this chain. " if p > half else
             "above what the plugins alone cost, so the target is within a host's reach. ")
          + f"What each host spends beyond the plugins' `run()` (CPU with the chain − plugins alone): stemdeck "
          f"{fmt(c['stemdeck, inserts'] - p)} s, ecasound {fmt(c['ecasound, -elv2'] - p)} s: "
          f"**{fmt((c['ecasound, -elv2'] - p) / max(c['stemdeck, inserts'] - p, 1e-9), 2)}×** less for stemdeck.")
    b(f"- The chain ran: stemdeck's render with it minus without, max |difference| {fmt(r['control_db'], 1)} dBFS; "
      f"against ecasound's render with the same chain {fmt(r['eca_db'], 1)} dBFS. Peaks: stemdeck "
      f"{fmt(r['peaks']['stemdeck'], 1)} dBFS, ecasound {fmt(r['peaks']['ecasound'], 1)} dBFS.")
    b("")
    summary.append(("1i", target("1i.ecasound").text, f"{fmt(ratio, 2)}× less", verdict(ok)))
    if alone:
        host = (c["ecasound, -elv2"] - p) / max(c["stemdeck, inserts"] - p, 1e-9)
        summary.append(("1i", target("1i.host").text, f"{fmt(host, 2)}× less (stemdeck {fmt(c['stemdeck, inserts'] - p)} s, "
                        f"ecasound {fmt(c['ecasound, -elv2'] - p)} s beyond the plugins' {fmt(p)} s)",
                        verdict(met("1i.host", host))))
    commands["1i"] = r["commands"]
