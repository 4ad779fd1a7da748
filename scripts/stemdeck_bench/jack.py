"""A private jackd, stemdeck driven in script mode, and the live measuring windows shared by the live cases."""

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


class JackServer:
    def __init__(self, name, cache, env):
        self.base_name, self.base_env, self.cache = name, env, cache
        self.restarts = []  # (where, why) of each fresh server started in place of one that stopped answering
        self._name(name)
        self.proc = None

    def _name(self, name):
        self.name = name
        self.env = dict(self.base_env, JACK_DEFAULT_SERVER=name)
        self.cmd = (["jackd", "-n", name, "-R" if STATE["jack_realtime"] else "--no-realtime"]
                    + ["-d", "dummy", "-r", str(SR), "-p", "128"])
        self.log_path = os.path.join(self.cache, "logs", f"jackd-{name}.log")

    def answers(self, timeout=5):
        """Whether the server takes a client and answers it within `timeout` s: `jack_lsp` under a
        deadline. A jackd can stop answering while it runs (a live run saw its request thread wait
        on a futex after a heavy window: `jack_lsp` hung, and so did every later client)."""
        try:
            run(["jack_lsp", "-s", self.name], timeout=timeout, env=self.env, what="jack_lsp")
            return True
        except BenchError:
            return False

    def ensure_answering(self, where):
        """Before a window: when the server died or does not answer, stops it (SIGTERM, then
        SIGKILL: a wedged jackd may hang in its own shutdown) and starts a fresh one under a new
        name (nothing of the old one's registry entry or files in /dev/shm can get in its way), as
        the tests' private servers do. Returns why it restarted, or None."""
        if self.alive() and self.answers():
            return None
        why = "died" if not self.alive() else "did not answer jack_lsp within 5 s"
        log(f"  jackd '{self.name}' {why} ({where}): starting a fresh server (log of the old one: {self.log_path})")
        self.stop()
        self.restarts.append((where, why))
        self._name(f"{self.base_name}-r{len(self.restarts)}")
        self.start()
        return why

    def start(self):
        """Starts jackd and waits until clients can connect. When it does not come up, the JACK
        preflight (scripts/jack-preflight) runs once and the start is tried again, as the tests'
        private server does: jackd2's metadata database, shared by every JACK process of the user,
        stays locked after a process was killed while holding its lock, and then every new jackd
        hangs at startup; the preflight moves such a database aside when no JACK server runs
        (docs/architecture.md, *JACK metadata*). What it said is part of the error if the retry
        fails too."""
        try:
            self._start_once()
        except BenchError as first:
            self.stop()
            try:
                preflight = subprocess.run([os.path.join(REPO, "scripts", "jack-preflight")], env=self.env,
                                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, text=True, timeout=90)
                said = f"exit {preflight.returncode}; it said:\n{preflight.stdout.strip()[-2000:]}"
            except (OSError, subprocess.TimeoutExpired) as e:
                said = f"it did not run to the end: {e}"
            log(f"jackd did not start; ran scripts/jack-preflight ({said}); trying again")
            try:
                self._start_once(log_mode="a")  # the first attempt's log kept above
            except BenchError as second:
                raise BenchError(f"{second}\nafter scripts/jack-preflight ({said})\nthe first attempt: {first}")

    def _start_once(self, log_mode="w"):
        logf = open(self.log_path, log_mode)
        self.proc = spawn(self.cmd, env=self.env, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        logf.close()
        SERVERS.append(self.proc)
        try:
            run(["jack_wait", "-s", self.name, "-w", "-t", "10"], timeout=20, env=self.env, what="jack_wait")
        except BenchError as e:
            raise BenchError(f"jackd did not start ({e}); log: {self.log_path}")
        if self.proc.poll() is not None:
            raise BenchError(f"jackd exited at once; log: {self.log_path}")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def ports(self):
        return run(["jack_lsp"], timeout=10, env=self.env, what="jack_lsp").split()

    def stop(self):
        if self.proc:
            end_process(self.proc)
            if self.proc in SERVERS:
                SERVERS.remove(self.proc)
            self.proc = None


class Stemdeck:
    """stemdeck in script mode on stdin, with a reader thread timestamping every stdout line."""

    def __init__(self, binary, args, env, log_path):
        self.log_path = log_path
        self.errf = open(log_path, "w")
        self.proc = spawn([binary] + args, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=self.errf, text=True, bufsize=1)
        self.lines = queue.Queue()
        self.transcript = []
        t = threading.Thread(target=self._reader, daemon=True)
        t.start()

    def _reader(self):
        for line in self.proc.stdout:
            self.lines.put((time.monotonic(), line.rstrip("\n")))
        self.lines.put((time.monotonic(), None))

    def stderr_tail(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-1500:]
        except OSError:
            return ""

    def send(self, *commands):
        t = time.monotonic()
        try:
            self.proc.stdin.write("".join(c + "\n" for c in commands))
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise BenchError(f"stemdeck exited (exit {self.proc.poll()}): {self.stderr_tail()}")
        self.transcript += list(commands)
        return t

    def until(self, marker, timeout):
        """Lines up to the line equal to `marker`, as (time, line) pairs."""
        got = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BenchError(f"stemdeck: no '{marker}' within {timeout} s; got {[l for _, l in got][-8:]}; "
                                 f"stderr: {self.stderr_tail()}")
            try:
                t, line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise BenchError(f"stemdeck exited (exit {self.proc.wait(timeout=5)}) before '{marker}'; "
                                 f"stderr: {self.stderr_tail()}")
            if line == marker:
                self.marker_time = t
                return got
            got.append((t, line))

    def command(self, *commands, timeout=30):
        self.send(*commands, "echo --end--")
        return self.until("--end--", timeout)

    def status(self, timeout=10):
        lines = self.command("status", timeout=timeout)
        st = {}
        for t, line in lines:
            k, _, v = line.partition(": ")
            st[k] = v
            st.setdefault("_time", t)
        return st

    def quit(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.stdin.close()
            except (BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
        end_process(self.proc)
        self.errf.close()

    def rss_kib(self):
        out = {}
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:", "RssAnon:", "RssFile:", "RssShmem:")):
                    out[line.split(":")[0]] = int(line.split()[1])
        out["private"] = out["VmRSS"] - out.get("RssShmem", 0)  # JACK's shared segments excluded
        return out


def parse_load(st):
    m = re.match(r"([0-9.]+)", st.get("dsp load", ""))
    return float(m.group(1)) if m else None


def wait_playing(sd, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = sd.status()
        if st.get("state") == "playing":
            return st
        time.sleep(0.05)
    raise BenchError(f"stemdeck did not reach 'state: playing' within {timeout} s")


def cpu_ticks(pids):
    """(all-CPU total ticks, busy ticks, ticks used by `pids`) from /proc."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    total = sum(v)
    busy = total - v[3] - (v[4] if len(v) > 4 else 0)
    ours = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ours += int(fields[11]) + int(fields[12])  # utime, stime (all threads)
        except (OSError, IndexError, ValueError):
            pass
    return total, busy, ours


def sample_window(sd, seconds, pids, client=None):
    """Samples `status` once a second for `seconds`. Returns (status dicts, share of all CPUs used by
    processes other than `pids` — the server and the clients measured — during the window, CPU time
    of the process `client` over the window in % of one core)."""
    samples = []
    before = cpu_ticks(pids)
    c0 = cpu_ticks([client])[2] if client else 0
    t0 = time.monotonic()
    for k in range(int(seconds) + 1):
        target = t0 + k
        delay = target - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        samples.append(sd.status())
    after = cpu_ticks(pids)
    elapsed = time.monotonic() - t0
    c1 = cpu_ticks([client])[2] if client else 0
    total = max(1, after[0] - before[0])
    others = max(0.0, ((after[1] - before[1]) - (after[2] - before[2])) / total)
    client_cpu = (c1 - c0) / os.sysconf("SC_CLK_TCK") / elapsed * 100 if client else None
    return samples, others, client_cpu


def realtime_thread(pid):
    """The thread of process `pid` that runs SCHED_FIFO (a JACK client's process thread under a realtime
    jackd), or None."""
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[38]) == 1:  # policy (field 41): SCHED_FIFO
                return int(tid)
    except (OSError, IndexError, ValueError):
        pass
    return None


def thread_cpu_ns(pid, tid):
    """Nanoseconds thread `tid` of `pid` has run (/proc/…/schedstat: exact, not in clock ticks), or None."""
    try:
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            return int(f.read().split()[0])
    except (OSError, IndexError, ValueError):
        return None


def summarize_window(samples):
    loads = [parse_load(s) for s in samples[1:]]
    xr = [int(s.get("xruns", "0")) for s in samples]
    un = [int(s.get("underruns", "0")) for s in samples]
    states = {s.get("state") for s in samples}
    return {"load": med(loads), "load_max": max((l for l in loads if l is not None), default=None),
            "xruns": xr[-1] - xr[0], "xruns_total": xr[-1], "underruns": un[-1] - un[0],
            "underruns_total": un[-1], "states": sorted(s for s in states if s), "samples": len(loads)}


# ---------------------------------------------------------------------------------------------
# Cases


def live_stemdeck(ctx, server, session, seconds, label, tempi=None, check=None):
    """stemdeck playing `session`, sampled for `seconds`. With `tempi`, `rate all T` (T taking each of
    `tempi` in turn) follows every second status sample: a tempo change for every stem at once every 2 s
    (issue 25: such a change must never xrun). `check(sd)`, when given, runs once it plays, before the
    window (it raises BenchError when stemdeck is not set up as the case needs)."""
    sd = Stemdeck(ctx["bin"], [session, "--server", server.name, "--no-start-server", "--no-connect", "--name", "sdbench"],
                  server.env, os.path.join(ctx["cache"], "logs", f"live-{label}.log"))
    try:
        t0 = time.monotonic()
        sd.command("play", timeout=120)
        wait_playing(sd, timeout=60)
        started = time.monotonic() - t0
        if check:
            check(sd)
        time.sleep(2)  # settle
        changes, samples = [0], [0]
        if tempi:
            plain = sd.status

            def status(timeout=10):
                st = plain(timeout)
                samples[0] += 1
                if samples[0] % 2 == 0:
                    sd.command(f"rate all {tempi[changes[0] % len(tempi)]}")
                    changes[0] += 1
                return st
            sd.status = status
        rt = realtime_thread(sd.proc.pid)
        rt0, m0 = (thread_cpu_ns(sd.proc.pid, rt), time.monotonic()) if rt else (None, None)
        samples, others, client_cpu = sample_window(sd, seconds, [server.proc.pid, sd.proc.pid], client=sd.proc.pid)
        rt1 = thread_cpu_ns(sd.proc.pid, rt) if rt0 is not None else None
        res = summarize_window(samples)
        if rt1 is not None:
            # The JACK process thread alone (no disk or control threads), in % of one core.
            res["process_thread_cpu"] = (rt1 - rt0) / ((time.monotonic() - m0) * 1e9) * 100
        res["others"] = others
        res["client_cpu"] = client_cpu
        res["start_s"] = started
        res["rss_kib"] = sd.rss_kib().get("private")
        if tempi:
            res["tempo_changes"] = changes[0]
        return res
    finally:
        sd.quit()


def observer(ctx, server, seconds, label, pids=(), client=None):
    sd = Stemdeck(ctx["bin"], ["--server", server.name, "--no-start-server", "--no-connect", "--name", "observer"],
                  server.env, os.path.join(ctx["cache"], "logs", f"observer-{label}.log"))
    try:
        sd.command("echo ready", timeout=30)
        time.sleep(1)
        samples, others, client_cpu = sample_window(sd, seconds, [server.proc.pid, sd.proc.pid, *pids],
                                                    client=client or sd.proc.pid)
        res = summarize_window(samples)
        res["others"] = others
        res["client_cpu"] = client_cpu
        res["rss_kib"] = sd.rss_kib().get("private")
        return res
    finally:
        sd.quit()


def live_stemdeck_observed(ctx, server, session, seconds, label):
    """stemdeck playing, its load read by the observer: the same arrangement as the ecasound row."""
    sd = Stemdeck(ctx["bin"], [session, "--server", server.name, "--no-start-server", "--no-connect", "--name", "sdbench"],
                  server.env, os.path.join(ctx["cache"], "logs", f"live-{label}.log"))
    try:
        sd.command("play", timeout=120)
        wait_playing(sd, timeout=60)
        time.sleep(2)
        res = observer(ctx, server, seconds, label, pids=[sd.proc.pid], client=sd.proc.pid)
        if sd.status().get("state") != "playing":
            raise BenchError("stemdeck stopped playing during the observed window")
        return res
    finally:
        sd.quit()


def live_ecasound(ctx, server, seconds):
    cache = ctx["cache"]
    cmd = ["ecasound", "-q", "-z:mixmode,sum", "-G:jack,ecabench,notransport"] + ecasound_inputs(cache) + \
          ["-a:all", f"-f:f32_le,2,{SR}", "-o:jack"]
    logp = os.path.join(cache, "logs", "live-ecasound.log")
    logf = open(logp, "w")
    eca = spawn(cmd, env=server.env, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    logf.close()
    try:
        deadline = time.monotonic() + 30
        while not any(p.startswith("ecabench:") for p in server.ports()):
            if eca.poll() is not None or time.monotonic() > deadline:
                with open(logp, errors="replace") as f:
                    raise BenchError(f"ecasound did not appear on the JACK server: {f.read()[-1500:]}")
            time.sleep(0.2)
        time.sleep(2)
        res = observer(ctx, server, seconds, "ecasound", pids=[eca.pid], client=eca.pid)
        if eca.poll() is not None:
            raise BenchError("ecasound stopped before the end of the measuring window (see logs/live-ecasound.log)")
        res["command"] = cmd
        return res
    finally:
        end_process(eca)


def live_control(ctx, server, seconds, percent, label):
    """JACK's own `jack_cpu` example client busy-waiting `percent` % of every period, with the
    observer: how often this machine xruns for any client that keeps the cycle that busy."""
    logp = os.path.join(ctx["cache"], "logs", f"control-{label}.log")
    logf = open(logp, "w")
    busy = spawn(["jack_cpu", "-n", "busyctl", "-c", str(percent)], env=server.env, stdout=logf,
                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    logf.close()
    try:
        time.sleep(3)
        if busy.poll() is not None:
            raise BenchError(f"jack_cpu exited (see {logp})")
        res = observer(ctx, server, seconds, f"control-{label}", pids=[busy.pid], client=busy.pid)
        res["command"] = ["jack_cpu", "-n", "busyctl", "-c", str(percent)]
        return res
    finally:
        end_process(busy)


def live_row(ctx, server, res, case, kind, n, fn):
    """One live configuration; an error is recorded in its row and the case goes on. A window that
    fails its target while other processes used > 15 % of the CPUs is measured once more."""
    first = None
    for attempt in (1, 2, 3):
        wait_quiet(ctx["row_wait"])
        restarted = server.ensure_answering(f"case {case}: {kind}, {n}")
        if restarted:
            res.setdefault("server_restarts", []).append([kind, n, restarted])
        log(f"  case {case}: {kind}, {n}{' (again: the last window was disturbed)' if attempt > 1 else ''}")
        try:
            x = fn()
        except BenchError as e:
            log(f"  case {case}: {kind} {n} FAILED: {e}")
            x = {"error": str(e).splitlines()[0][:200]}
        if not server.alive():
            # The next window starts a fresh server (ensure_answering); this one's numbers are void.
            x = {"error": f"jackd died during the window (log: {server.log_path})"}
        if first is not None:
            x["earlier"] = first
        base = [b["xruns"] for k, _, b in res["rows"] if k.startswith("baseline") and "error" not in b]
        failing = "error" not in x and (x["load"] is None or x["load"] > 50 or (base and x["xruns"] > max(base)))
        if attempt < 3 and failing and x.get("others", 0) > 0.15 and not kind.startswith("baseline"):
            first = (first or []) + [x]
            continue
        res["rows"].append((kind, n, x))
        return


CONTROL = "control: jack_cpu busy client"
PAIRED_EXTRA = 2  # windows of each target row and its control beyond the first (3 pairs in all)


def measured_pair(ctx, case, what, runs, server=None):
    """One window of each (name, fn) of `runs` in turn, each after the machine is quiet (and the
    server answers: `JackServer.ensure_answering`); a window that fails keeps its error in its place."""
    pair = []
    for name, fn in runs:
        wait_quiet(ctx["row_wait"])
        if server is not None:
            server.ensure_answering(f"case {case}: {what}, {name}")
        log(f"  case {case}: {what}, {name}")
        try:
            pair.append(fn())
        except BenchError as e:
            pair.append({"error": str(e).splitlines()[0][:200]})
    return tuple(pair)


def control_and_pairs(ctx, server, res, row, case, kind, n, x, live, label, named):
    """A target row's load-matched control and PAIRED_EXTRA more windows of the row and the control
    in turn, in res["paired"][(kind, n)]: single windows of random xruns cannot tell a client from
    the machine; totals over several can. `x` is the row's first window, `live(tag)` measures one
    more; the control (JACK's jack_cpu, busy for the share of the period the row added over the
    observer-alone baselines) is the row "P % (named)"."""
    seconds = ctx["live_seconds"]
    base_loads = [b["load"] for k, _, b in res["rows"] if k.startswith("baseline") and "error" not in b
                  and b["load"] is not None]
    pct = max(1, min(99, round(x["load"] - (med(base_loads) or 0))))
    row(CONTROL, f"{pct} % ({named})", lambda: live_control(ctx, server, seconds, pct, label))
    for i in range(PAIRED_EXTRA):
        tag = f"{label}-pair{i + 2}"
        res["paired"].setdefault((kind, n), []).append(measured_pair(
            ctx, case, f"{kind}, {n}: paired window {i + 2}",
            (("stemdeck", lambda: live(tag)), ("control", lambda: live_control(ctx, server, seconds, pct, tag))),
            server=server))
