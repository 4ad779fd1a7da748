"""The live cases' report sections (3, 3s, 3g), split from report.py (which imports them so that
SECTIONS finds them by name): the DSP-load tables, the load-matched controls' paired windows and
the targets' verdicts."""

import os
import re

from .common import *  # noqa: F401,F403 (constants, med/fmt/span/verdict)
from .jack import CONTROL, PAIRED_EXTRA
from .targets import met, target


def paired_totals(r, rows, controls):
    """Each target row's paired windows against its load-matched control (`controls[(kind, n)]`),
    the table's first window and the control's first one as the first pair; pairs with an error
    left out: the pairs, the xruns of each side in all, and the row's median load."""
    paired = {}
    for k, n, pairs in r.get("paired", []):
        first = next((x for kk, m, x in rows if kk == k and m == n), None)
        if first is None or (k, n) not in controls:
            continue
        all_pairs = [(first, controls[(k, n)])] + [p for p in pairs if all("error" not in x for x in p)]
        paired[(k, n)] = {"pairs": all_pairs, "sd": sum(a["xruns"] for a, _ in all_pairs),
                          "ctl": sum(c["xruns"] for _, c in all_pairs),
                          "load": med([a["load"] for a, _ in all_pairs if a["load"] is not None])}
    return paired


def section_3(r, run, b, summary, commands):
    errors = [(k, n, x["error"]) for k, n, x in r["rows"] if "error" in x]
    r = dict(r, rows=[(k, n, x) for k, n, x in r["rows"] if "error" not in x])
    base = [x for k, n, x in r["rows"] if k.startswith("baseline")]
    allowed = max(x["xruns"] for x in base) if base else 0
    # A target row may also have as many xruns as its load-matched control had (see below).
    controls = {}
    for k, n, x in r["rows"]:
        if k == CONTROL:
            kind = "stemdeck plain" if "(plain " in n else "stemdeck varispeed 0.9 fast"
            controls[(kind, int(n.rstrip(")").split()[-1]))] = x
    allowed_for = lambda k, n: max(allowed, controls[(k, n)]["xruns"]) if (k, n) in controls else allowed
    # Totals over the paired windows (the table's window is the first pair).
    paired = paired_totals(r, r["rows"], controls)
    b(f"## 3. Live: private jackd, dummy driver, {SR} Hz, 128 frames ({128 / SR * 1000:.2f} ms periods)")
    b("")
    b(f"DSP load is JACK's `jack_cpu_load` for the whole server as printed by `status` (median of the "
      f"once-a-second samples over the window; max in brackets). xruns and underruns are counted over the "
      f"{run['live_seconds']} s window; \"since start\" includes loading and starting. Allowed xruns = the "
      f"largest count of the observer-alone baselines in this run ({allowed}).")
    b("")
    b("| client | stems | DSP load % (max) | client CPU % | xruns in window | xruns since start | underruns | start → playing s | private MiB | others' CPU % | ≤ 50 % and xruns ≤ baseline |")
    b("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    best = ("stemdeck plain", "stemdeck varispeed 0.9 fast", "stemdeck 44.1 kHz files, fast")
    ok_at = {}
    for k, n, x in r["rows"]:
        ok = met("3.load", x["load"]) and x["xruns"] <= allowed_for(k, n)
        judged = k in best
        if judged:
            ok_at.setdefault(k, {})[n] = ok and ok_at.get(k, {}).get(n, True)
        disturbed = not ok and x.get("others", 0) > 0.15
        mark = ("DISTURBED" if disturbed else verdict(ok)) if judged else ""
        if "earlier" in x:
            mark += " (earlier disturbed windows: " + "; ".join(
                f"others {f1['others'] * 100:.0f} % → {fmt(f1['load'], 1)} %, {f1['xruns']} xruns" for f1 in x["earlier"]) + ")"
        b(f"| {k} | {n} | {fmt(x['load'], 1)} ({fmt(x['load_max'], 1)}) | {fmt(x.get('client_cpu'), 1)} | {x['xruns']} | {x['xruns_total']} | "
          f"{x['underruns']} | {fmt(x.get('start_s'), 2)} | {fmt((x.get('rss_kib') or 0) / 1024, 1)} | "
          f"{fmt(x.get('others', 0) * 100, 0)} | {mark} |")
    for k, n, e in errors:
        b(f"| {k} | {n} | error: {e} | | | | | | | | {'FAIL' if k in best else ''} |")
        if k in best:
            ok_at.setdefault(k, {})[n] = False
    b("")
    byrow = {(k, n): x for k, n, x in r["rows"]}
    loads, cpus = {}, {}
    for k, n, x in r["rows"]:
        if n == 32:
            loads.setdefault(k, []).append(x["load"])
            cpus.setdefault(k, []).append(x.get("client_cpu"))
    base_load = med([x["load"] for x in base])
    sd32, eca32 = med(loads.get("stemdeck plain + observer", [])), med(loads.get("ecasound + observer", []))
    sdc, ecac = med(cpus.get("stemdeck plain + observer", [])), med(cpus.get("ecasound + observer", []))
    self32 = med(loads.get("stemdeck plain", []))
    net = lambda v: None if v is None or base_load is None else v - base_load
    b(f"- The 32-stem comparison uses the same arrangement on both sides: the mixer plays, and the observer "
      f"(a stemdeck client with no stems, the only way to read `jack_cpu_load` from outside) prints the "
      f"server's load, in {len(loads.get('ecasound + observer', []))} windows each, alternating (medians; "
      f"ecasound {', '.join(fmt(v, 1) for v in loads.get('ecasound + observer', []))} %; stemdeck "
      f"{', '.join(fmt(v, 1) for v in loads.get('stemdeck plain + observer', []))} %). "
      f"ecasound + observer {fmt(eca32, 1)} %, stemdeck + observer {fmt(sd32, 1)} %; net of the "
      f"observer-alone baseline ({fmt(base_load, 1)} %), i.e. what the mixer adds: ecasound {fmt(net(eca32), 1)} %, "
      f"stemdeck {fmt(net(sd32), 1)} % (stemdeck measuring itself: {fmt(self32, 1)} %). The target is judged on "
      f"the net figures.")
    b(f"- `client CPU %` is the mixer process's own CPU time over the window (all its threads: JACK callback, "
      f"disk reader, control), in % of one core, from /proc/PID/stat; for the observer rows it is the mixer's "
      f"(or the observer's, for the baselines). 32 stems: ecasound {fmt(ecac, 1)} %, stemdeck {fmt(sdc, 1)} %.")
    b("- `private MiB` is VmRSS minus RssShmem: every JACK client maps the server's shared segments "
      "(about 100 MiB on jackd2 1.9.21), which VmRSS counts. For the observer rows it is the observer's.")
    b("- `others' CPU %` is the share of both CPUs used during the window by processes other than jackd and the "
      "clients measured (from /proc): the other tenants of this shared machine. A row that misses its target "
      "while that exceeds 15 % is measured again (up to three windows); the last window is reported, and "
      "marked DISTURBED (a target row: INCONCLUSIVE) if it still misses with others above 15 %.")
    b("- Both mixers' outputs are left unconnected (`--no-connect`, `-o:jack`); JACK runs every client each cycle regardless.")
    if controls:
        strict = []
        for (k, n), ctl in controls.items():
            x = byrow.get((k, n))
            if x:
                strict.append(f"{k.split()[1]} {n}: {x['xruns']} xruns against {allowed} → "
                              f"{'PASS' if x['xruns'] <= allowed else 'FAIL'} (its control: {ctl['xruns']})")
        for (k, n), pt in paired.items():
            b(f"- Paired windows, {k} {n} against its control: " + "; ".join(
                f"{i + 1}: {a['xruns']} vs {c['xruns']} xruns ({fmt(a['load'], 1)} vs {fmt(c['load'], 1)} % load)"
                for i, (a, c) in enumerate(pt["pairs"])) + f"; totals {pt['sd']} vs {pt['ctl']}.")
        b("- **Control rows** (`" + CONTROL + "`): `jack_cpu` (JACK's own example client, shipped with jackd2) "
          "busy-waits the given share of every period and does nothing else; the observer reads the load. "
          "The share is what the target row's stemdeck added over the observer-alone baseline. Its xruns are "
          "what this machine does to *any* client that keeps the cycle that busy (host preemption of a "
          "2-vCPU VM). Because such xruns are random, a few per minute or none, each target row is measured "
          f"in {1 + PAIRED_EXTRA} windows alternating with its control, and passes when its load is ≤ 50 % and "
          "its total xruns are no more than the control's total (or the no-client baseline's count). The "
          "summary gives every count. Judged on the first window against the no-client baseline alone: "
          + "; ".join(strict) + ".")
    b("- `jack_cpu_load` (jackd2) is a smoothed maximum: each update takes the longest cycle of the last 32 "
      "periods. " + ("With realtime scheduling the JACK threads (server and clients' process threads) are "
                     "SCHED_FIFO, so other threads of the machine cannot preempt them; the hypervisor still can, "
                     "which is what the baseline rows' xruns are." if run["jack_realtime"] else
                     "On the dummy driver without realtime scheduling on a shared 2-core machine it follows "
                     "preemption as much as DSP work, and xruns happen with no client at all (the baseline rows)."))
    b("")
    for k, key in (("stemdeck plain", "3.plain"), ("stemdeck varispeed 0.9 fast", "3.varispeed"),
                   ("stemdeck 44.1 kHz files, fast", "3.44k")):
        target_n, label = int(target(key).limit), target(key).text
        okn = ok_at.get(k, {})
        x = byrow.get((k, target_n))
        passes = [str(n) for n in sorted(okn) if okn[n]]
        misses = [f"{n} (others {byrow[(k, n)].get('others', 0) * 100:.0f} %)" if (k, n) in byrow else str(n)
                  for n in sorted(okn) if not okn[n]]
        ctl = controls.get((k, target_n))
        fig = (f"{target_n}: {fmt(x['load'], 1)} %, {x['xruns']} xruns (no-client baseline {allowed}"
               + (f"; JACK's jack_cpu at the same load {ctl['xruns']}" if ctl else "") + ")"
               if x and "error" not in x else f"{target_n}: not measured")
        fig += f"; within target at {', '.join(passes) or 'none'}"
        if misses:
            fig += f"; missed at {', '.join(misses)}"
        v = verdict(bool(okn.get(target_n)))
        pt = paired.get((k, target_n))
        if pt:
            ok_pairs = met("3.load", pt["load"]) and pt["sd"] <= max(pt["ctl"], allowed)
            fig += (f"; over {len(pt['pairs'])} paired windows: stemdeck {pt['sd']} xruns, load-matched jack_cpu "
                    f"{pt['ctl']} (median load {fmt(pt['load'], 1)} %) — judged on these totals")
            v = verdict(ok_pairs)
        if v == "FAIL" and x and x.get("others", 0) > 0.15:
            v = "INCONCLUSIVE"  # every window at the target N was disturbed by other tenants
            fig += " — every window at this N had other processes above 15 % CPU; rerun on a quiet machine"
        summary.append(("3", f"≥ {target_n} {label} stems at ≤ 50 % load, xruns ≤ baseline", fig, v))
    # Issue 38: what a 44.1 kHz stem costs live against a native-rate one, 256 of each, net of the baseline.
    p256, k256 = byrow.get(("stemdeck plain", 256)), byrow.get(("stemdeck 44.1 kHz files, fast", 256))
    if p256 and k256 and net(p256["load"]) and net(k256["load"]) is not None:
        cost = net(k256["load"]) / net(p256["load"])
        summary.append(("3", target("3.44kcost").text,
                        f"{fmt(cost, 2)}× ({fmt(net(k256['load']), 1)} % against {fmt(net(p256['load']), 1)} % net of "
                        f"the {fmt(base_load, 1)} % baseline)", verdict(met("3.44kcost", cost))))
    ok32 = net(sd32) is not None and net(eca32) is not None and net(sd32) <= net(eca32) * target("3.ecasound").limit
    summary.append(("3", target("3.ecasound").text,
                    f"{fmt(net(sd32), 1)} % vs {fmt(net(eca32), 1)} % (raw {fmt(sd32, 1)} vs {fmt(eca32, 1)}; "
                    f"process CPU {fmt(sdc, 1)} vs {fmt(ecac, 1)} % of a core)", verdict(ok32)))
    eca_cmd = next((x["command"] for k, n, x in r["rows"] if k.startswith("ecasound")), None)
    commands["3"] = {"jackd": r["server_cmd"], "ecasound (live)": eca_cmd,
                            "stemdeck (live)": [run["bin"], os.path.join(run["cache"], "live-plain256.json"), "--server", "bench-PID",
                                                "--no-start-server", "--no-connect", "--name", "sdbench"],
                            "observer": [run["bin"], "--server", "bench-PID", "--no-start-server", "--no-connect",
                                         "--name", "observer"]}


def section_3s(r, run, b, summary, commands):
    errors = [(k, n, x["error"]) for k, n, x in r["rows"] if "error" in x]
    rows = [(k, n, x) for k, n, x in r["rows"] if "error" not in x]
    base = [x for k, n, x in rows if k.startswith("baseline")]
    allowed = max(x["xruns"] for x in base) if base else 0
    # A target row may also have as many xruns as its load-matched control had (as in case 3).
    controls = {}
    for k, n, x in rows:
        if k == CONTROL:
            # "P % (stretch TEMPO N)" or "P % (stretch TEMPO fast N)": the row's kind and count.
            words = n[n.index("(") + 1:].rstrip(")").split()
            controls[("stemdeck " + " ".join(words[:-1]), int(words[-1]))] = x
    allowed_for = lambda k, n: max(allowed, controls[(k, n)]["xruns"]) if (k, n) in controls else allowed
    paired = paired_totals(r, rows, controls)
    b(f"### 3s. Live stretch stems: private jackd, dummy driver, {SR} Hz, 128 frames")
    b("")
    b(f"Columns as in case 3; its own baselines (allowed xruns {allowed}). Counts tried per tempo: "
      + "; ".join(f"{t}: {', '.join(map(str, c))}" for t, c in STRETCH_LIVE)
      + f" (after a count at ≥ {STRETCH_SATURATED} % load, only the target's).")
    b("")
    b("| client | stems | DSP load % (max) | client CPU % | xruns in window | xruns since start | underruns | start → playing s | private MiB | others' CPU % | ≤ 50 % and xruns ≤ baseline |")
    b("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    fit = {}
    for k, n, x in rows:
        ok = (met("3.load", x["load"]) and x["xruns"] <= allowed_for(k, n)
              and (x.get("client_cpu") or 0) < STRETCH_SATURATED)
        judged = k.startswith("stemdeck stretch")
        if judged:
            fit.setdefault(k, {})[n] = ok
        mark = ("DISTURBED" if not ok and x.get("others", 0) > 0.15 else verdict(ok)) if judged else ""
        if "earlier" in x:
            mark += " (earlier disturbed windows: " + "; ".join(
                f"others {f1['others'] * 100:.0f} % → {fmt(f1['load'], 1)} %, {f1['xruns']} xruns" for f1 in x["earlier"]) + ")"
        b(f"| {k} | {n} | {fmt(x['load'], 1)} ({fmt(x['load_max'], 1)}) | {fmt(x.get('client_cpu'), 1)} | {x['xruns']} | {x['xruns_total']} | "
          f"{x['underruns']} | {fmt(x.get('start_s'), 2)} | {fmt((x.get('rss_kib') or 0) / 1024, 1)} | "
          f"{fmt(x.get('others', 0) * 100, 0)} | {mark} |")
    for k, n, e in errors:
        b(f"| {k} | {n} | error: {e} | | | | | | | | {'FAIL' if k.startswith('stemdeck stretch') else ''} |")
        if k.startswith("stemdeck stretch"):
            fit.setdefault(k, {})[n] = False
    b("")
    for (k, n), pt in paired.items():
        b(f"- Paired windows, {k} {n} against its load-matched control: " + "; ".join(
            f"{i + 1}: {a['xruns']} vs {c['xruns']} xruns ({fmt(a['load'], 1)} vs {fmt(c['load'], 1)} % load)"
            for i, (a, c) in enumerate(pt["pairs"])) + f"; totals {pt['sd']} vs {pt['ctl']}.")
    b("- A target row within 50 % load is measured in paired windows with a load-matched control, as in case 3, "
      "and judged on the totals; a row over 50 % fails without one.")
    b("")
    byrow = {(k, n): x for k, n, x in rows}
    # Each quality's rows are judged on the targets (a results file without `fast` rows: `fine` only).
    for tempo, key, suffix in ((t, key, s) for t, key in ((0.8, "3s.tempo08"), (1.15, "3s.tempo115"))
                               for s in ("", " fast")):
        k, target_n = f"stemdeck stretch {tempo}{suffix}", int(target(key).limit)
        if suffix and k not in fit:
            continue
        okn = fit.get(k, {})
        x = byrow.get((k, target_n))
        passes = [str(n) for n in sorted(okn) if okn[n]]
        fig = (f"{target_n}: {fmt(x['load'], 1)} %, {x['xruns']} xruns (no-client baseline {allowed})"
               if x else f"{target_n}: not measured")
        fig += f"; within target at {', '.join(passes) or 'none'} (tried {', '.join(map(str, sorted(okn)))})"
        v = verdict(bool(okn.get(target_n)))
        pt = paired.get((k, target_n))
        if pt:
            fig += (f"; over {len(pt['pairs'])} paired windows: stemdeck {pt['sd']} xruns, load-matched jack_cpu "
                    f"{pt['ctl']} (median load {fmt(pt['load'], 1)} %) — judged on these totals")
            v = verdict(met("3.load", pt["load"]) and pt["sd"] <= max(pt["ctl"], allowed))
        if x and (x.get("client_cpu") or 0) >= STRETCH_SATURATED:
            fig += f" — stemdeck used {fmt(x['client_cpu'], 0)} % of a core: the period was full (JACK then reads ≈ 1 % load)"
        elif v == "FAIL" and x and x.get("others", 0) > 0.15:
            v = "INCONCLUSIVE"
            fig += " — other processes above 15 % CPU in this window; rerun on a quiet machine"
        summary.append(("3s", f"≥ {target_n} {target(key).text}{suffix} stems at ≤ 50 % load, xruns ≤ baseline", fig, v))
    for tempo, goal in STRETCH_GOAL.items():
        k = f"stemdeck stretch {tempo} fast"
        x = byrow.get((k, goal))
        if x is None:
            continue
        ok = met("3.load", x["load"]) and x["xruns"] <= allowed_for(k, goal) and (x.get("client_cpu") or 0) < STRETCH_SATURATED
        summary.append(("3s", f"stretch goal (not a target): {goal} stretch at tempo {tempo} fast stems at ≤ 50 % load",
                        f"{goal}: {fmt(x['load'], 1)} %, {x['xruns']} xruns in one window (no-client baseline {allowed}), "
                        f"client CPU {fmt(x.get('client_cpu'), 1)} % — goal {'met' if ok else 'not met'}", "INFO"))
    tempo, tempi = TEMPO_CHANGE_ROW
    k, n = f"stemdeck stretch {tempo} fast, rate all every 2 s", int(target("3s.tempo08").limit)
    x, pt = byrow.get((k, n)), paired.get((k, n))
    if x:
        fig = (f"{n} stems, `rate all` alternating {' / '.join(map(str, tempi))} every 2 s: {fmt(x['load'], 1)} %, "
               f"{x['xruns']} xruns in the first window")
        v = verdict(met("3.load", x["load"]) and x["xruns"] <= allowed_for(k, n))
        if pt:
            fig += (f"; over {len(pt['pairs'])} paired windows: stemdeck {pt['sd']} xruns, load-matched jack_cpu "
                    f"{pt['ctl']} (median load {fmt(pt['load'], 1)} %) — judged on these totals")
            v = verdict(met("3.load", pt["load"]) and pt["sd"] <= max(pt["ctl"], allowed))
        summary.append(("3s", f"a tempo change for all {n} fast stems at once never xruns (xruns ≤ the load-matched control)",
                        fig, v))
    last_tempo, last_counts = STRETCH_LIVE[0]
    commands["3s"] = {"jackd": r["server_cmd"],
                      "stemdeck (live)": [run["bin"], os.path.join(run["cache"], f"live-stretch{last_tempo}-{last_counts[-1]}.json"),
                                          "--server", "benchstretch-PID", "--no-start-server", "--no-connect", "--name", "sdbench"]}


def section_3g(r, run, b, summary, commands):
    errors = [(k, n, x["error"]) for k, n, x in r["rows"] if "error" in x]
    rows = [(k, n, x) for k, n, x in r["rows"] if "error" not in x]
    base = [x for k, n, x in rows if k.startswith("baseline")]
    allowed = max(x["xruns"] for x in base) if base else 0
    byrow = {(k, n): x for k, n, x in rows}
    on, off, none = "stemdeck graph, EQ on", "stemdeck graph, EQ bypassed", "stemdeck graph, no EQ"
    ctl = next((x for k, n, x in rows if k == CONTROL), None)
    b("### 3g. Live mixer graph: 64 stems with EQ, 8 buses, 2 aux sends; private jackd, dummy driver, "
      f"{SR} Hz, 128 frames")
    b("")
    b("Each stem: a high-pass (12 or 24 dB/oct, 40–120 Hz) and low shelf, peaking mid and high shelf away from 0 dB "
      "(`stem_eq` in `scripts/stemdeck_bench/graph.py`), routed to one of 8 buses (8 stems each), sending to both aux "
      "sends (`verb` post-fader, `dly` pre-fader); the 32 stems twice, looping. The same session with every stem's "
      "EQ `\"enabled\": false` (bypassed, settings kept), and without `\"eq\"` (flat), beside it; and 64 plain stems "
      f"(no buses, sends or EQ) for scale. Columns as in case 3; its own baselines (allowed xruns {allowed}).")
    b("")
    b("| client | stems | DSP load % (max) | client CPU % | xruns in window | xruns since start | underruns | start → playing s | private MiB | others' CPU % |")
    b("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k, n, x in rows:
        b(f"| {k} | {n} | {fmt(x['load'], 1)} ({fmt(x['load_max'], 1)}) | {fmt(x.get('client_cpu'), 1)} | {x['xruns']} | "
          f"{x['xruns_total']} | {x['underruns']} | {fmt(x.get('start_s'), 2)} | {fmt((x.get('rss_kib') or 0) / 1024, 1)} | "
          f"{fmt(x.get('others', 0) * 100, 0)} |")
    for k, n, e in errors:
        b(f"| {k} | {n} | error: {e} | | | | | | | |")
    b("")
    # The target row: its first window and the paired ones against the control, judged on the totals.
    first = byrow.get((on, 64))
    pairs = []
    for k, n, ps in r.get("paired", []):
        if k == on:
            pairs = [p for p in ps if all("error" not in x for x in p)]
    all_pairs = ([(first, ctl)] if first and ctl else []) + [tuple(p) for p in pairs]
    if all_pairs:
        sd_x, ctl_x = sum(a["xruns"] for a, _ in all_pairs), sum(c["xruns"] for _, c in all_pairs)
        load = med([a["load"] for a, _ in all_pairs])
        b(f"- Paired windows, {on} against its load-matched control (`{CONTROL}`, busy for what the graph added over "
          "the observer-alone baseline): " + "; ".join(
              f"{i + 1}: {a['xruns']} vs {c['xruns']} xruns ({fmt(a['load'], 1)} vs {fmt(c['load'], 1)} % load)"
              for i, (a, c) in enumerate(all_pairs)) + f"; totals {sd_x} vs {ctl_x}.")
        ok = met("3g.load", load) and sd_x <= max(ctl_x, allowed)
        fig = (f"{fmt(load, 1)} % (median of {len(all_pairs)} windows); xruns {sd_x}, load-matched jack_cpu {ctl_x}, "
               f"no-client baseline {allowed}")
        v = verdict(ok)
        if not ok and any(a.get("others", 0) > 0.15 for a, _ in all_pairs):
            v, fig = "INCONCLUSIVE", fig + " — other processes above 15 % CPU in a window; rerun on a quiet machine"
    elif first:
        ok = met("3g.load", first["load"]) and first["xruns"] <= allowed
        fig, v = f"{fmt(first['load'], 1)} %, {first['xruns']} xruns (no control measured; baseline {allowed})", verdict(ok)
    else:
        fig, v = "not measured", "FAIL"
    summary.append(("3g", target("3g.load").text, fig, v))
    # Bypassed against no EQ: the first windows and the extra pairs, by their medians.
    offs = [x for x in [byrow.get((off, 64))] + [p[0] for p in r.get("bypass_pairs", []) if len(p) == 2] if x and "error" not in x]
    nones = [x for x in [byrow.get((none, 64))] + [p[1] for p in r.get("bypass_pairs", []) if len(p) == 2] if x and "error" not in x]
    d_load = (med([x["load"] for x in offs]) - med([x["load"] for x in nones])) if offs and nones else None
    d_cpu = (med([x.get("client_cpu") for x in offs]) - med([x.get("client_cpu") for x in nones])
             if offs and nones and med([x.get("client_cpu") for x in offs]) is not None else None)
    oc = {k: med(v) for k, v in r.get("offline_cpu", {}).items()}
    peaks = r.get("offline_peak_db", {})
    if offs and nones:
        b(f"- EQ bypassed against no EQ, live: DSP load {', '.join(fmt(x['load'], 1) for x in offs)} % against "
          f"{', '.join(fmt(x['load'], 1) for x in nones)} % (windows in turn): medians differ by **{fmt(d_load, 2)} points** "
          f"(target ≤ {fmt(target('3g.bypass').limit, 1)}: a window's noise); the process's CPU by {fmt(d_cpu, 1)} % of a core.")
    if oc.get("off") and oc.get("none"):
        b(f"- The same offline (`render --duration {STEM_SECONDS}` of each session, {run['runs']} run(s), median CPU): EQ on "
          f"{fmt(oc['on'])} s, bypassed {fmt(oc['off'])} s, no EQ {fmt(oc['none'])} s: bypassed / no EQ "
          f"**{fmt(oc['off'] / oc['none'], 3)}×**, on / no EQ {fmt(oc['on'] / oc['none'], 2)}×. The bypassed render minus "
          f"the one without EQ: max |difference| {fmt(peaks.get('off − none'), 1)} dBFS (bit-exact bypass: −inf); "
          f"control, EQ on minus no EQ: {fmt(peaks.get('on − none'), 1)} dBFS.")
    b("")
    fig = f"{fmt(d_load, 2)} points live" if d_load is not None else "not measured"
    if oc.get("off") and oc.get("none"):
        fig += f"; offline CPU bypassed / no EQ {fmt(oc['off'] / oc['none'], 3)}× (EQ on {fmt(oc['on'] / oc['none'], 2)}×)"
    summary.append(("3g", target("3g.bypass").text, fig, verdict(met("3g.bypass", d_load))))
    commands["3g"] = r["commands"]
