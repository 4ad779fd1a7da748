"""Shared by every case: constants, the state of the run, processes, timing and formatting helpers."""

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


REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MATERIAL_VERSION = "3"  # bump when the recipes change: the cache is regenerated
SR = 48000
STEM_SECONDS = 60
LONG_SECONDS = 600
N_STEMS = 32
N_LONG = 4
N_STRETCH = 8  # stems in the offline stretch case (a stretch stem costs 7–13 fast-sinc stems)
# Live stretch stems (case 3s): for each tempo, the counts tried, the target's count last
# (targets.py: 3s.tempo08, 3s.tempo115). Once a count saturates the period (load ≥ STRETCH_SATURATED)
# the counts between it and the target's are skipped.
STRETCH_LIVE = ((0.8, (4, 8, 12, 16, 24, 32)), (1.15, (4, 8, 12, 16, 24)))
STRETCH_SATURATED = 90
# Issue 25's stretch goal: after a tempo's target rows, this many `fast` stretch stems once more
# (shown in the table and the summary, not a target: the case's verdict stays the targets').
STRETCH_GOAL = {0.8: 64}
# Issue 25: a tempo change applied to all the target's stems at once must never xrun. After the
# `fast` target's row at this tempo, the same stems with `rate all` alternating between these tempi
# every 2 s (live_stemdeck's `tempi`), paired with a load-matched control like the target's row and
# judged on the totals the same way.
TEMPO_CHANGE_ROW = (0.8, (0.9, 0.8))
ALL_CASES = ("1", "1b", "1i", "1r", "1s", "2", "2f", "2s", "2r", "3", "3s", "3g", "3i", "4", "5", "5c", "5w", "5m", "5p")

# ---------------------------------------------------------------------------------------------
# Processes: every child gets its own process group; all are ended on exit, jackd last.

CHILDREN = []  # Popen objects still possibly alive
# main() sets them: jackd's own default (realtime) unless not allowed or --no-realtime.
STATE = {"jack_realtime": True, "no_rt_asked": False}
SERVERS = []


class BenchError(Exception):
    pass


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def spawn(cmd, env=None, **kw):
    p = subprocess.Popen(cmd, start_new_session=True, env=env, **kw)
    CHILDREN.append(p)
    return p


def end_process(p, grace=5.0):
    """SIGTERM the process group, then SIGKILL after `grace` seconds; reaps the process."""
    if p.returncode is None:
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(p.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                p.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
    if p in CHILDREN:
        CHILDREN.remove(p)


def cleanup():
    for p in list(CHILDREN):
        if p not in SERVERS:
            end_process(p, grace=2.0)
    for p in list(SERVERS):
        end_process(p, grace=5.0)
        SERVERS.remove(p)


def on_signal(signum, _frame):
    raise SystemExit(128 + signum)


def run(cmd, timeout, env=None, cwd=None, what=None, stderr_too=True):
    """Runs cmd to completion (bounded), returns its output; raises BenchError with stderr on failure."""
    p = spawn(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        end_process(p)
        raise BenchError(f"{what or cmd[0]}: timed out after {timeout} s: {shlex.join(cmd)[:300]}")
    finally:
        if p in CHILDREN and p.returncode is not None:
            CHILDREN.remove(p)
    if p.returncode != 0:
        raise BenchError(f"{what or cmd[0]} failed (exit {p.returncode}): {shlex.join(cmd)[:300]}\n{err.strip()[-2000:]}")
    return out + err if stderr_too else out


def run_timed(cmd, timeout, env=None, cwd=None, log_path=None):
    """Runs cmd, returns (cpu seconds user+sys of the process and its waited-for children, wall s)."""
    out = open(log_path or os.devnull, "w")
    start = time.monotonic()
    p = spawn(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                wall = time.monotonic() - start
                p.returncode = os.waitstatus_to_exitcode(status)
                CHILDREN.remove(p)
                break
            if time.monotonic() - start > timeout:
                end_process(p)
                raise BenchError(f"timed out after {timeout} s: {shlex.join(cmd)[:300]}")
            time.sleep(0.005)
    finally:
        out.close()
    if p.returncode != 0:
        tail = ""
        if log_path and os.path.exists(log_path):
            with open(log_path, errors="replace") as f:
                tail = f.read()[-2000:]
        raise BenchError(f"{cmd[0]} failed (exit {p.returncode}): {shlex.join(cmd)[:300]}\n{tail}")
    LAST_RUSAGE[:] = [ru.ru_utime, ru.ru_stime]
    return ru.ru_utime + ru.ru_stime, wall


LAST_RUSAGE = [0.0, 0.0]  # run_timed's last child: user and system CPU seconds (changed in place)


def cpu_busy(seconds=2.0):
    """Fraction of all CPUs busy over `seconds` (from /proc/stat), including this script."""
    def snap():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        idle = v[3] + (v[4] if len(v) > 4 else 0)
        return sum(v), idle
    t0, i0 = snap()
    time.sleep(seconds)
    t1, i1 = snap()
    return 1 - (i1 - i0) / max(1, t1 - t0)


def wait_quiet(max_wait, threshold=0.25):
    """Waits (at most max_wait s) until other processes leave the CPUs mostly idle; returns what it saw."""
    start = time.monotonic()
    busy = cpu_busy()
    while busy > threshold and time.monotonic() - start < max_wait:
        log(f"  machine busy ({busy * 100:.0f} % of {os.cpu_count()} CPUs): waiting for it to calm down…")
        busy = cpu_busy(5.0)
    return {"busy": busy, "waited": time.monotonic() - start, "loadavg": os.getloadavg()[0]}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, nd=2, unit=""):
    if x is None:
        return "–"
    if isinstance(x, float) and math.isinf(x):
        return "-inf" + unit
    return f"{x:.{nd}f}{unit}"


def span(xs, nd=2):
    xs = [x for x in xs if x is not None]
    if len(xs) < 2:
        return ""
    return f" ({min(xs):.{nd}f}–{max(xs):.{nd}f})"


def verdict(ok):
    return "PASS" if ok else "FAIL"


def realtime_allowed():
    """True if this user may give a thread SCHED_FIFO (jackd -R needs it), tried in a child process."""
    probe = "import os; os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))"
    try:
        return subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def scheduling_note():
    if STATE["jack_realtime"]:
        return ("realtime — `jackd -R`, jackd's default and how JACK is meant to run: the server's and every "
                "client's process thread are SCHED_FIFO; the same for the baselines, ecasound and stemdeck")
    return ("**not realtime** (`jackd --no-realtime`: " + ("asked for with --no-realtime" if STATE["no_rt_asked"] else
            "this user may not use SCHED_FIFO; give it an rtprio limit, e.g. the `audio` group") +
            "); the process threads compete with every other thread, so load and xruns follow preemption")


