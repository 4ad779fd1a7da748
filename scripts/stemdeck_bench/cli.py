"""The command line: options, tools, build, material, the cases in order, the results JSON and
the report (`scripts/bench --help`)."""

import argparse
import json
import os
import shutil
import signal
import sys
import time

from . import report
from .common import *  # noqa: F401,F403
from .common import on_signal, realtime_allowed
from .control_socket import case_socket_latency
from .engine import case_offline_mix, case_rate_conversion, case_stretch_offline, case_varispeed, case_varispeed_faster
from .resampling import case_resampling
from .stretching import case_stretch_compare
from .export import case_stem_export
from .graph import case_graph_live
from .inserts import case_offline_inserts
from .latency import case_latency
from .live import case_live, case_stretch_live
from .live_inserts import case_live_inserts
from .material import generate_material
from .memory import case_memory
from .web import case_web_clients, case_web_latency, case_web_page

USAGE = """stemdeck benchmarks: offline mix and varispeed against ecasound and sox, live DSP load and
xruns on a private JACK server, resident memory, open-to-play and volume-change latency.

Usage: scripts/bench [--runs N] [--quick] [--live-seconds S] [--live-runs N]
                     [--cases 1,1b,1i,1r,1s,2,2f,2s,2r,3,3s,3g,3i,4,5,5c,5w,5m,5p] [--cache DIR] [--output FILE] [--no-realtime]
       scripts/bench --report RESULTS.json [--output FILE]

Cases: 1 offline mix, 1b 44.1 kHz files, 1i offline plugin inserts (against ecasound -elv2), 1r converters side by side (stemdeck's sinc, libsamplerate, soxr, zita), 1s stem export (render --stems), 2 offline varispeed, 2f varispeed faster than the file
(rate 1.2), 2s offline stretch beside varispeed, 2r stretchers side by side (WSOLA, SoundTouch, Rubber Band), 3 live load, 3s live stretch stems, 3g live mixer graph
(64 stems with EQ, 8 buses, 2 sends; EQ bypassed beside no EQ), 3i live plugin inserts (64 stems × an LV2 EQ
and compressor against none, and the plugins alone in a lilv harness: stemdeck's own overhead), 4 memory, 5 latency,
5c a `vol` over the control socket to the port, and the socket's round trip. 5w the same over the web
mixer's WebSocket; 5m what 8 idle web mixer pages (meters at 30/s) cost stemdeck with 64 stems; 5p the
page's frame rate with 64 strips in headless Chromium (DevTools protocol). `--cases 2s,3s` runs only the stretch cases.

Generates its own material with sox into the cache directory (default /tmp/stemdeck-bench,
reused when present), runs every case, prints a table of medians and ratios and writes it, with
the machine, the tool versions and the exact commands, to docs/benchmarks.md, and the results with them to docs/benchmarks.json (`--report` renders the
markdown again from that file without running anything). A --quick run or
a run of only some --cases writes to CACHE/benchmarks-partial.md (and .json) instead (unless --output is
given), so a smoke run never overwrites the published numbers.

Builds stemdeck (and stemdeck-testrig, next to it) with `scripts/build-release` unless STEMDECK_BIN names a
binary (STEMDECK_BIN_SOURCE, if set, says in the report what it was built from). Needs sox,
soxi, ecasound, jackd (jackd2), jack_wait and jack_lsp. Exit status 0 if every target passes,
1 if one fails or a case cannot run, 2 on a missing tool or build failure. Method and caveats:
docs/benchmarking.md. Python 3.11 standard library only.
"""

# (case, name, function), in the order they run and are reported (ALL_CASES).
CASES = [("1", "offline mix", case_offline_mix), ("1b", "44.1 kHz → 48 kHz", case_rate_conversion),
         ("1i", "offline plugin inserts", case_offline_inserts),
         ("1r", "converters side by side", case_resampling),
         ("1s", "stem export", case_stem_export),
         ("2", "offline varispeed", case_varispeed), ("2f", "offline varispeed at rate 1.2", case_varispeed_faster),
         ("2s", "offline stretch", case_stretch_offline), ("2r", "stretchers side by side", case_stretch_compare),
         ("3", "live load", case_live), ("3s", "live stretch", case_stretch_live),
         ("3g", "live mixer graph", case_graph_live),
         ("3i", "live plugin inserts: host overhead", case_live_inserts),
         ("4", "memory", case_memory), ("5", "latency", case_latency),
         ("5c", "control socket latency", case_socket_latency),
         ("5w", "web mixer latency", case_web_latency), ("5m", "web mixer pages", case_web_clients),
         ("5p", "web mixer page frame rate", case_web_page)]
assert [k for k, _, _ in CASES] == list(ALL_CASES)


def rerender(path, output):
    """`--report FILE`: the report of an earlier run, from its results JSON; exit status as the run's."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        log(f"error: {path}: {e}")
        return 2
    text, summary = report.render(data)
    if output:
        with open(output, "w") as f:
            f.write(text.rstrip() + "\n")
        log(f"wrote {output}")
    print(text)
    failed = data["run"]["failures"] or any(v not in ("PASS", "INFO") for *_, v in summary)
    return 1 if failed else 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/bench", description=USAGE, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="runs per offline case (default 5)")
    ap.add_argument("--quick", action="store_true", help="1 run, 5 s live windows: a smoke run")
    ap.add_argument("--live-seconds", type=int, default=None, help="live measuring window (default 30, --quick 5)")
    ap.add_argument("--live-runs", type=int, default=1, help="repetitions of the whole live case (default 1)")
    ap.add_argument("--max-wait", type=int, default=180,
                    help="before each case, wait up to this many seconds for other load to drop below 25 %% (default 180)")
    ap.add_argument("--cases", default=",".join(ALL_CASES), help="comma-separated subset of " + ",".join(ALL_CASES))
    ap.add_argument("--cache", default=os.environ.get("STEMDECK_BENCH_CACHE", "/tmp/stemdeck-bench"))
    ap.add_argument("--output", default=None, help="markdown output (default docs/benchmarks.md)")
    ap.add_argument("--no-realtime", action="store_true",
                    help="run the live cases' jackd without realtime scheduling (by default it uses it, as jackd "
                         "does, when this user may)")
    ap.add_argument("--report", metavar="RESULTS.json", default=None,
                    help="render the report of an earlier run from its results JSON (written beside its markdown) "
                         "without running anything; printed, and written to --output when given")
    a = ap.parse_args(argv)
    if a.report:
        return rerender(a.report, a.output)
    STATE["no_rt_asked"] = a.no_realtime
    STATE["jack_realtime"] = not a.no_realtime and realtime_allowed()
    if a.runs < 1 or a.live_runs < 1:
        ap.error("--runs and --live-runs must be at least 1")
    cases = [c.strip() for c in a.cases.split(",") if c.strip()]
    bad = [c for c in cases if c not in ALL_CASES]
    if bad:
        ap.error(f"unknown case(s): {', '.join(bad)}")
    runs = 1 if a.quick else a.runs
    live_seconds = a.live_seconds or (5 if a.quick else 30)
    partial = a.quick or set(cases) != set(ALL_CASES) or live_seconds < 30
    cache = os.path.abspath(a.cache)
    output = a.output or (os.path.join(cache, "benchmarks-partial.md") if partial
                          else os.path.join(REPO, "docs", "benchmarks.md"))

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started with SIGINT ignored

    need = ["sox", "soxi", "ecasound", "jackd", "jack_wait", "jack_lsp"]
    missing = [t for t in need if not shutil.which(t)]
    binary = os.environ.get("STEMDECK_BIN")
    if not binary and not shutil.which("swift"):
        missing.append("swift (or set STEMDECK_BIN)")
    if missing:
        log("error: missing tools: " + ", ".join(missing))
        log("  Debian: apt-get install -y --no-install-recommends sox libsox-fmt-all ecasound jackd2")
        return 2

    env = dict(os.environ, JACK_NO_START_SERVER="1", JACK_NO_AUDIO_RESERVATION="1", LC_ALL="C")
    env.pop("JACK_DEFAULT_SERVER", None)
    try:
        if binary:
            binary = os.path.abspath(binary)
            if not os.access(binary, os.X_OK):
                raise BenchError(f"STEMDECK_BIN={binary} is not an executable file")
        else:
            # The release build every script shares (scripts/build-release), so the tests' and the
            # benchmark's binaries are the same one.
            build = os.path.join(REPO, "scripts", "build-release")
            log("building: scripts/build-release --product stemdeck (and stemdeck-testrig, for case 5)")
            run([build, "--product", "stemdeck"], timeout=3600, cwd=REPO, env=env, what="scripts/build-release")
            run([build, "--product", "stemdeck-testrig"], timeout=3600, cwd=REPO, env=env, what="scripts/build-release")
            run([build, "--product", "stemdeck-dsp-bench"], timeout=3600, cwd=REPO, env=env, what="scripts/build-release")
            binary = os.path.join(REPO, ".build", "release", "stemdeck")
        os.makedirs(cache, exist_ok=True)
        generate_material(cache, env)
        for d in ("out", "logs"):
            os.makedirs(os.path.join(cache, d), exist_ok=True)
        ctx = {"t_start": time.monotonic(), "cache": cache, "env": env, "runs": runs, "bin": binary, "live_seconds": live_seconds,
               "live_runs": 1 if a.quick else a.live_runs, "mem_runs": runs, "quick": a.quick, "partial": partial,
               "cases": cases, "commands": {}, "quiet": {}, "max_wait": 10 if a.quick else a.max_wait,
               "row_wait": 0 if a.quick else min(30, a.max_wait)}
        results = {}
        failures = []
        for key, name, fn in CASES:
            if key not in cases:
                continue
            log(f"case {key}: {name}")
            ctx["quiet"][key] = wait_quiet(ctx["max_wait"])
            t = time.monotonic()
            try:
                results[key] = fn(ctx)
            except BenchError as e:
                failures.append((key, str(e)))
                log(f"case {key} FAILED: {e}")
            except Exception as e:  # a bug in this script: report it, keep the other cases
                import traceback
                traceback.print_exc()
                failures.append((key, f"{type(e).__name__}: {e}"))
            log(f"case {key}: {time.monotonic() - t:.0f} s")
        # The report is rendered from the results as written to the JSON (read back), so that
        # `--report` renders the same text.
        data = {"run": report.run_info(ctx, failures), "results": results}
        os.makedirs(os.path.dirname(output), exist_ok=True)
        results_path = os.path.splitext(output)[0] + ".json"
        if results_path == output:
            results_path = output + ".results.json"
        with open(results_path, "w") as f:
            json.dump(data, f, indent=1, default=str)
            f.write("\n")
        with open(results_path) as f:
            data = json.load(f)
        text, summary = report.render(data)
        with open(output, "w") as f:
            f.write(text.rstrip() + "\n")
        print(text)
        log(f"wrote {output} and {results_path}")
        failed = failures or any(v not in ("PASS", "INFO") for *_, v in summary)
        return 1 if failed else 0
    except BenchError as e:
        log(f"error: {e}")
        return 2
    except KeyboardInterrupt:
        log("interrupted: cleaning up")
        return 130
    finally:
        cleanup()
