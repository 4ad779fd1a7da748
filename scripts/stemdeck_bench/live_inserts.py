"""Case 3i (issue 39): what stemdeck itself adds, live, to the cost of LV2 inserts beyond the plugins'
own `run()`. 64 stems each with case 1i's chain (swh's DJ EQ and SC4 compressor, both stereo) on a
private dummy jackd at 48 kHz and 128 frames, against the same 64 stems without inserts, in
windows taken in turn; the plugins alone (the same URIs, control values, features, block size and
stems, run by lv2_run_cost.cpp through lilv with nothing around them) converted to a share of the
period. Host overhead = (with − without − plugins alone) / plugins alone, by the CPU time of
stemdeck's JACK process thread (the harness's clock; JACK's load shown beside it); target < 10 %.
A jack_cpu client busy for the plugins' share of each period shows how JACK's load reads a known
added cost on this machine. Method: docs/benchmarking.md, case 3i."""

import os
import re

from .common import *  # noqa: F401,F403 (constants, run/spawn, med/fmt)
from .material import *  # noqa: F401,F403
from .jack import *  # noqa: F401,F403
from .inserts import CHAIN, insert_session
from .resampling import build_tool
from .targets import met, target

INSERT_STEMS = 64
INSERT_PAIRS = 5  # windows with inserts and without, in turn (and a harness run after each pair)
PERIOD = 128
WITH, WITHOUT = "stemdeck, 2 inserts a stem", "stemdeck, no inserts"
CALIBRATION = "calibration: jack_cpu busy client"
HARNESS_FIFO = 5  # the paced harness's SCHED_FIFO priority: what jackd -R gives its clients' process threads (its own: 10)


def harness_command(tool, cache, seconds, paced=False):
    """lv2_run_cost on the case's chain, stems and period (stem k plays file k mod 32, as in the session);
    `paced`: one block a period, SCHED_FIFO when the live cases' jackd is realtime (as its clients are)."""
    cmd = [tool, "--rate", str(SR), "--frames", str(PERIOD), "--stems", str(INSERT_STEMS), "--seconds", str(seconds)]
    if paced:
        cmd += ["--paced"] + (["--fifo", str(HARNESS_FIFO)] if STATE["jack_realtime"] else [])
    for uri, values in CHAIN:
        cmd += ["--plugin", uri] + [f"{symbol}={value:g}" for symbol, value in values]
    return cmd + ["--"] + [stem_path(cache, SR, i) for i in range(N_STEMS)]


def run_harness(ctx, cmd, label):
    """One harness run: its figures (the "key value" line it prints), its process CPU and wall time,
    and the share of all CPUs that other processes used meanwhile."""
    logp = os.path.join(ctx["cache"], "logs", f"lv2-run-cost-{label}.log")
    before = cpu_ticks([])
    cpu, wall = run_timed(cmd, timeout=600, env=ctx["env"], log_path=logp)
    after = cpu_ticks([])
    with open(logp) as f:
        words = f.read().split()
    try:
        x = {words[i]: float(words[i + 1]) for i in range(words.index("blocks"), len(words) - 1, 2)}
    except (ValueError, IndexError):
        raise BenchError(f"lv2_run_cost printed no figures (see {logp})")
    busy = (after[1] - before[1]) / max(1, after[0] - before[0])
    x.update(process_cpu=cpu, wall=wall, others=max(0.0, busy - cpu / max(wall, 1e-9) / os.cpu_count()))
    log(f"  case 3i: plugins alone ({label}{', paced' if x.get('paced') else ''}): "
        f"{x['cpu_ns_per_block'] / 1000:.1f} µs CPU per {PERIOD}-frame block, "
        f"{int(x['instances'])} instances (others {x['others'] * 100:.0f} %)")
    return x


def chain_check(sd):
    """The first and last stem each hold the chain's plugins, installed and active (a plugin that is
    missing would open as a pass-through placeholder and cost nothing)."""
    for strip in ("st001", f"st{INSERT_STEMS:03d}"):
        lines = [line for _, line in sd.command(f"insert list {strip}")]
        active = [line for line in lines if re.match(r"\d+  -  ", line)]
        if len(active) != len(CHAIN) or any(uri not in line for line, (uri, _) in zip(active, CHAIN)):
            raise BenchError(f"{strip}'s inserts are not the chain's {len(CHAIN)} active plugins: {lines}")


def case_live_inserts(ctx):
    cache, env, seconds = ctx["cache"], ctx["env"], ctx["live_seconds"]
    libs = run(["pkg-config", "--cflags", "--libs", "lilv-0"], timeout=30, env=env, what="pkg-config lilv-0").split()
    tool = build_tool(cache, env, "lv2_run_cost", libs)
    with_chain = insert_session(cache, f"live-inserts{INSERT_STEMS}", CHAIN, n=INSERT_STEMS, loops=-1, gain_scale=0.5)
    plain = write_session(cache, f"live-plain{INSERT_STEMS}", INSERT_STEMS, loops=-1, gain_scale=0.5)
    harness = {"tight": harness_command(tool, cache, seconds), "paced": harness_command(tool, cache, seconds, paced=True)}
    res = {"rows": [], "pairs": [], "harness": [], "period_ns": PERIOD / SR * 1e9}
    server = JackServer(f"benchinserts-{os.getpid()}", cache, env)
    server.start()
    res["server_cmd"] = server.cmd
    row = lambda kind, n, fn: live_row(ctx, server, res, "3i", kind, n, fn)
    try:
        for rep in range(ctx["live_runs"]):
            row("baseline (no stems)", "before", lambda: observer(ctx, server, seconds, f"inserts-baseline-before{rep}"))
            for i in range(1 if ctx["quick"] else INSERT_PAIRS):
                tag = f"{rep + 1}-{i + 1}"
                row(WITH, INSERT_STEMS, lambda: live_stemdeck(ctx, server, with_chain, seconds, f"inserts{tag}",
                                                              check=chain_check))
                row(WITHOUT, INSERT_STEMS, lambda: live_stemdeck(ctx, server, plain, seconds, f"noinserts{tag}"))
                res["pairs"].append([len(res["rows"]) - 2, len(res["rows"]) - 1])
                wait_quiet(ctx["row_wait"])
                try:
                    res["harness"].append({mode: run_harness(ctx, cmd, f"{tag}-{mode}") for mode, cmd in harness.items()})
                except BenchError as e:
                    log(f"  case 3i: plugins alone FAILED: {e}")
                    res["harness"].append({"error": str(e).splitlines()[0][:200]})
            # How JACK's load reads a client that is busy for the plugins' share of each period.
            alone = med([h["paced"]["cpu_ns_per_block"] for h in res["harness"] if "error" not in h])
            if alone:
                pct = max(1, min(99, round(alone / res["period_ns"] * 100)))
                row(CALIBRATION, f"{pct} %", lambda: live_control(ctx, server, seconds, pct, f"inserts-calibration{rep}"))
            row("baseline (no stems)", "after", lambda: observer(ctx, server, seconds, f"inserts-baseline-after{rep}"))
    finally:
        server.stop()
    res["commands"] = {"jackd": server.cmd,
                       "stemdeck (live, inserts)": [ctx["bin"], with_chain, "--server", "benchinserts-PID", "--no-start-server",
                                                    "--no-connect", "--name", "sdbench"],
                       "stemdeck (live, no inserts)": [ctx["bin"], plain, "--server", "benchinserts-PID",
                                                       "--no-start-server", "--no-connect", "--name", "sdbench"],
                       "g++ (the plugins-alone harness)": ["g++", "-O2", "-std=c++17", "-o", tool,
                                                           "scripts/stemdeck_bench/lv2_run_cost.cpp"] + libs,
                       "plugins alone, back to back": harness["tight"],
                       "plugins alone, one block a period": harness["paced"]}
    return res


def overhead(added, alone):
    """Host overhead in % of the plugins' own cost: (what the chain added − the plugins alone) / alone."""
    return None if added is None or not alone else (added - alone) / alone * 100


def section_3i(r, run, b, summary, commands):
    rows = r["rows"]
    good = lambda x: "error" not in x and x.get("load") is not None
    base = [x for k, n, x in rows if k.startswith("baseline") and good(x)]
    period_ms = r["period_ns"] / 1e6
    b(f"### 3i. Live plugin inserts: 64 stems × an LV2 EQ and compressor, host overhead beyond the plugins' `run()`; "
      f"private jackd, dummy driver, {SR} Hz, {PERIOD} frames ({period_ms:.2f} ms periods)")
    b("")
    b(f"Every stem runs case 1i's chain (swh `dj_eq` then `sc4`, both stereo: {INSERT_STEMS * len(CHAIN)} instances); "
      "the same 64 stems without inserts in the window after it, in turn; the plugins alone in `lv2_run_cost` "
      "(lilv, the same URIs, values, features, block size and stems, only their `run()` timed, thread CPU time) after "
      "each pair, one block a period as live and back to back. Columns as in case 3.")
    b("")
    b("| client | stems | DSP load % (max) | client CPU % | xruns in window | xruns since start | underruns | "
      "start → playing s | private MiB | others' CPU % |")
    b("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k, n, x in rows:
        if "error" in x:
            b(f"| {k} | {n} | error: {x['error']} | | | | | | | |")
            continue
        b(f"| {k} | {n} | {fmt(x['load'], 1)} ({fmt(x['load_max'], 1)}) | {fmt(x.get('client_cpu'), 1)} | {x['xruns']} | "
          f"{x['xruns_total']} | {x['underruns']} | {fmt(x.get('start_s'), 2)} | {fmt((x.get('rss_kib') or 0) / 1024, 1)} | "
          f"{fmt(x.get('others', 0) * 100, 0)} |")
    b("")
    hs = [h for h in r["harness"] if "error" not in h]
    share = lambda h: h["cpu_ns_per_block"] / r["period_ns"] * 100  # % of the period = % of one core
    alone = med([share(h["paced"]) for h in hs])
    tight = med([share(h["tight"]) for h in hs])
    us = lambda xs: ", ".join(fmt(v / 1000, 1) for v in xs)
    for mode, what in (("paced", "one block a period, as live (the figure the overhead is judged against)"),
                       ("tight", "blocks back to back")):
        xs = [h[mode] for h in hs]
        if not xs:
            continue
        b(f"- The plugins alone, {what}: `lv2_run_cost`{' --paced' if mode == 'paced' else ''}, "
          f"{int(xs[0]['instances'])} instances, {int(xs[0]['blocks'])} blocks a run after a second's warm-up, "
          f"{len(xs)} runs: **{fmt(med([x['cpu_ns_per_block'] for x in xs]) / 1000, 1)} µs CPU per block** "
          f"({us([x['cpu_ns_per_block'] for x in xs])}), **{fmt(med([share(x) for x in xs]), 2)} % of the period**; "
          f"per-block wall clock median {fmt(med([x['wall_ns_median'] for x in xs]) / 1000, 1)} µs, slowest of 32 "
          f"(median) {fmt(med([x['wall_ns_max32_median'] for x in xs]) / 1000, 1)} µs"
          f"{', SCHED_FIFO ' + str(int(xs[0]['fifo'])) if xs[0].get('fifo') else ', not realtime'}; others' CPU during "
          f"the runs {', '.join(fmt(x['others'] * 100, 0) for x in xs)} %; output peak {fmt(xs[0]['peak'], 3)} "
          "(the chain ran).")
    errors = [h["error"] for h in r["harness"] if "error" in h]
    if errors:
        b(f"- Harness runs that failed: {'; '.join(errors)}")
    # Pairs: each window with inserts against the window without it that followed, and the harness runs after them.
    loads, cpus, ovl, ovc, threads, ovt = [], [], [], [], [], []
    for (i, j), h in zip(r["pairs"], r["harness"]):
        a, c = rows[i][2], rows[j][2]
        if not (good(a) and good(c)):
            continue
        loads.append(a["load"] - c["load"])
        both_cpu = a.get("client_cpu") is not None and c.get("client_cpu") is not None
        if both_cpu:
            cpus.append(a["client_cpu"] - c["client_cpu"])
        both_thread = a.get("process_thread_cpu") is not None and c.get("process_thread_cpu") is not None
        if both_thread:
            threads.append(a["process_thread_cpu"] - c["process_thread_cpu"])
        if "error" not in h:
            ovl.append(overhead(loads[-1], share(h["paced"])))
            if both_cpu:
                ovc.append(overhead(cpus[-1], share(h["paced"])))
            if both_thread:
                ovt.append(overhead(threads[-1], share(h["paced"])))
    with_l = [x["load"] for k, n, x in rows if k == WITH and good(x)]
    without_l = [x["load"] for k, n, x in rows if k == WITHOUT and good(x)]
    added, added_cpu = med(loads), med(cpus)
    ov, ov_cpu, ov_tight = overhead(added, alone), overhead(added_cpu, alone), overhead(added, tight)
    if loads:
        b(f"- DSP load with inserts {fmt(med(with_l), 2)} %{span(with_l)}, without {fmt(med(without_l), 2)} %{span(without_l)}; "
          f"no-client baseline {fmt(med([x['load'] for x in base]), 2)} %{span([x['load'] for x in base])}. What the chain "
          f"added, window after window: {', '.join(fmt(v, 2) for v in loads)} points, **median {fmt(added, 2)}**; "
          f"the plugins alone {fmt(alone, 2)}: overhead by DSP load **{fmt(ov, 1)} %** of the plugins' cost (per pair "
          f"{', '.join(fmt(v, 0) for v in ovl)} %); against the plugins back to back ({fmt(tight, 2)}) "
          f"{fmt(ov_tight, 1)} %. JACK's load is a smoothed maximum over 32 cycles, so a window moves by a few tenths "
          "of a point: the pairs' spread is the measure's resolution.")
    if cpus:
        b(f"- The same by CPU time (stemdeck's process, all threads, /proc, in % of one core): the chain added "
          f"{', '.join(fmt(v, 2) for v in cpus)}, median **{fmt(added_cpu, 2)}** against the plugins' {fmt(alone, 2)}: "
          f"overhead **{fmt(ov_cpu, 1)} %** (per pair {', '.join(fmt(v, 0) for v in ovc)} %); it counts the disk, "
          "control and worker threads too.")
    added_thread = med(threads)
    ov_thread, ov_thread_tight = overhead(added_thread, alone), overhead(added_thread, tight)
    if threads:
        b(f"- The same by the CPU time of stemdeck's JACK process thread alone (the SCHED_FIFO thread, "
          f"`/proc/PID/task/TID/schedstat`, nanoseconds; no disk or control threads), % of one core: the chain added "
          f"{', '.join(fmt(v, 2) for v in threads)}, median **{fmt(added_thread, 2)}**: overhead **{fmt(ov_thread, 1)} %** "
          f"(the target's figure: the same clock as the harness's) against the paced plugins (per pair {', '.join(fmt(v, 0) for v in ovt)} %), {fmt(ov_thread_tight, 1)} % "
          "against the back-to-back ones.")
    cal = [(n, x) for k, n, x in rows if k == CALIBRATION and good(x)]
    if cal and base:
        n, x = cal[-1]
        b(f"- Calibration: JACK's `jack_cpu` busy for {n} of every period read as {fmt(x['load'], 2)} % load, "
          f"{fmt(x['load'] - med([y['load'] for y in base]), 2)} points over the no-client baseline: how this "
          "machine's load shows a known added cost.")
    b("")
    # The figure judged: the process thread's CPU time, the clock the harness times the plugins with
    # (JACK's load is the wall time of jackd's whole cycle, a smoothed maximum: shown beside it).
    judged = ov_thread if ov_thread is not None else ov
    basis = "the process thread's CPU time" if ov_thread is not None else "DSP load (no thread figure)"
    fig = (f"{fmt(judged, 1)} % by {basis} (median added {fmt(added_thread if ov_thread is not None else added, 2)} "
           f"points − plugins alone {fmt(alone, 2)} %, {len(loads)} pairs; by DSP load {fmt(ov, 1)} %, the process's CPU "
           f"{fmt(ov_cpu, 1)} %; against the plugins back to back {fmt(ov_thread_tight, 1)} % by thread, "
           f"{fmt(ov_tight, 1)} % by load)") if judged is not None else "not measured"
    v = verdict(met("3i.overhead", judged))
    disturbed = [x for k, n, x in rows if k in (WITH, WITHOUT) and x.get("others", 0) > 0.15]
    if v == "FAIL" and disturbed:
        v = "INCONCLUSIVE"
        fig += f" — {len(disturbed)} window(s) had other processes above 15 % CPU; rerun on a quiet machine"
    summary.append(("3i", target("3i.overhead").text, fig, v))
    commands["3i"] = r["commands"]
