"""Case 5: open-to-play and `vol`-to-port latency (script mode on stdin; stemdeck-testrig watches the port)."""

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


def vol_to_port_periods(ctx, server, count=40, via="stdin"):
    """How many JACK periods a `vol` command takes to change the master port, measured outside
    stemdeck: stemdeck-testrig (built next to the binary) watches master_L of a constant (DC)
    stem for the first changed sample. Per command: the rig is armed, asked for JACK's current
    frame time t0 (jack_frame_time), then `vol` goes to stemdeck's stdin; the rig reports the
    frame time of the period in which the first changed sample left the port. The answer is that
    period's start minus the start of the period t0 fell in, in periods: 1 = the next period.
    The frame time is read again right after the write (t1); a command whose write straddled a
    period boundary (t0 and t1 in different periods) cannot be assigned and is counted apart.
    via="socket": the `vol` goes over stemdeck's control socket as a JSON request instead (its
    reply is read after the rig has answered), and the request → reply round trip of 200 `echo`
    requests is measured on the same connection.
    Returns (periods of the clean commands, number of straddling ones, round trips in seconds)."""
    cache = ctx["cache"]
    rig_bin = os.path.join(os.path.dirname(ctx["bin"]), "stemdeck-testrig")
    if not os.access(rig_bin, os.X_OK):
        raise BenchError(f"{rig_bin} is missing (scripts/build-release builds it)")
    dc = os.path.join(cache, "dc.wav")
    if not os.path.exists(dc):
        with wave.open(dc, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(SR)
            w.writeframes(struct.pack("<h", 16384) * (SR * 10))
    session = os.path.join(cache, "dc.json")
    with open(session, "w") as f:
        json.dump({"format": "stemdeck-session", "version": 1, "quality": "fast", "master": {"volume": 1},
                   "options": {"autoPauseOnDisconnect": False, "meterPoint": "post"},
                   "stems": [{"name": "dc", "file": "dc.wav", "volume": 1, "pan": 0, "rate": 1, "loops": -1,
                              "mute": False, "solo": False}]}, f, indent=2)
    rig = spawn([rig_bin, "--server", server.name, "--name", "benchrig"], env=server.env, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
    control = os.path.join(cache, f"bench-{os.getpid()}.sock")
    extra = ["--control", control] if via == "socket" else ["--no-control"]
    if via == "web":  # case 5w: the web mixer's WebSocket (web.py)
        from .web import free_tcp_port, web_link
        http_port = free_tcp_port()
        extra += ["--http", str(http_port)]
    sd = Stemdeck(ctx["bin"], [session, "--server", server.name, "--no-start-server", "--no-connect"] + extra, server.env,
                  os.path.join(cache, "logs", f"latency-port-{via}.log"))
    periods, straddled, round_trips = [], 0, []
    sock = sock_file = close_web = None
    try:
        if not rig.stdout.readline().startswith("ready"):
            raise BenchError("stemdeck-testrig did not start")

        def ask(request):
            rig.stdin.write(request + "\n")
            rig.stdin.flush()
            return rig.stdout.readline().split()

        sd.command("play", "wait 0.5", timeout=30)
        run(["jack_connect", "stemdeck:master_L", "benchrig-speaker:in"], timeout=10, env=server.env, what="jack_connect")
        time.sleep(0.3)
        if via == "web":
            request, reply, close_web = web_link(http_port)
        if via == "socket":
            import socket as socket_module
            sock = socket_module.socket(socket_module.AF_UNIX, socket_module.SOCK_STREAM)
            sock.connect(control)
            sock.settimeout(10)
            sock_file = sock.makefile("rb")

            def request(n, cmd):
                sock.sendall(json.dumps({"id": n, "cmd": cmd}).encode() + b"\n")

            def reply(n):
                r = json.loads(sock_file.readline())
                if r.get("id") != n or not r.get("ok"):
                    raise BenchError(f"control socket: unexpected reply {r}")

        if via in ("socket", "web"):
            for n in range(200):
                t = time.monotonic()
                request(n, "echo ping")
                reply(n)
                round_trips.append(time.monotonic() - t)
                time.sleep(0.002 + 0.0011 * (n % 7))
        for i in range(count):
            time.sleep(0.05 + 0.0037 * (i % 7))  # land at different points of a period
            if ask("arm") != ["armed"]:
                raise BenchError("stemdeck-testrig could not arm")
            t0 = int(ask("now")[1])
            if via in ("socket", "web"):
                request(1000 + i, f"vol dc {0.5 if i % 2 == 0 else 1}")
            else:
                sd.send(f"vol dc {0.5 if i % 2 == 0 else 1}")
            t1 = int(ask("now")[1])
            answer = ask("wait")
            if via in ("socket", "web"):
                reply(1000 + i)
            if answer[0] != "change":
                raise BenchError(f"master_L did not change within 3 s of a vol command (rig: {answer})")
            start, n = int(answer[2]), int(answer[3])
            s0 = t0 - ((t0 - start) % n)
            if t1 - s0 >= n:
                straddled += 1
                continue
            periods.append((start - s0) // n)
    finally:
        if sock is not None:
            sock.close()
        if close_web is not None:
            close_web()
        sd.quit()
        try:
            rig.stdin.close()
            rig.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            end_process(rig)
    return periods, straddled, round_trips


def case_latency(ctx):
    cache, runs = ctx["cache"], ctx["runs"]
    s = write_session(cache, "latency64", 64, loops=-1, gain_scale=0.5)
    server = JackServer(f"benchlat-{os.getpid()}", cache, ctx["env"])
    server.start()
    opens, open_cmd, play_to_playing, acks, to_silent, to_sound = [], [], [], [], [], []
    try:
        for r in range(runs):
            server.ensure_answering(f"case 5 run {r + 1}")
            sd = Stemdeck(ctx["bin"], ["--server", server.name, "--no-start-server", "--no-connect"], server.env,
                          os.path.join(cache, "logs", "latency.log"))
            try:
                sd.command("echo ready", timeout=30)
                time.sleep(0.5)
                t0 = sd.send(f"open {s}", "play", "status", "echo --end--")
                t_opened = t_play = None
                for _ in range(100000):
                    lines = sd.until("--end--", timeout=30)
                    for t, line in lines:
                        if line.startswith("error"):
                            raise BenchError(f"stemdeck: {line}")
                        if line.startswith("opened ") and t_opened is None:
                            t_opened = t
                        if line == "state: playing":
                            t_play = t
                    if t_play is not None:
                        break
                    if time.monotonic() - t0 > 30:
                        raise BenchError("64-stem session did not start playing within 30 s")
                    sd.send("status", "echo --end--")
                opens.append(t_play - t0)
                open_cmd.append(t_opened - t0)
                play_to_playing.append(t_play - t_opened)
                time.sleep(1.0)
                for _ in range(3):
                    for value, want_silent in (("0", True), ("0.5", False)):
                        t0 = sd.send(f"vol all {value}", "echo --vol--")
                        for _, line in sd.until("--vol--", timeout=10):
                            if line.startswith("error"):
                                raise BenchError(f"stemdeck: {line}")
                        acks.append(sd.marker_time - t0)
                        while True:
                            lines = sd.command("meters master", timeout=10)
                            peaks = re.findall(r"peak\s+(\S+)", " ".join(l for _, l in lines))
                            vals = [-math.inf if p == "-inf" else float(p) for p in peaks]
                            done = all(v <= -120 for v in vals) if want_silent else all(v > -60 for v in vals)
                            if vals and done:
                                (to_silent if want_silent else to_sound).append(lines[0][0] - t0)
                                break
                            if time.monotonic() - t0 > 5:
                                raise BenchError(f"master meter did not follow 'vol all {value}' within 5 s")
                        time.sleep(0.3)
                log(f"  case 5 run {r + 1}/{runs}: open→playing {opens[-1] * 1000:.0f} ms "
                    f"(open {open_cmd[-1] * 1000:.0f} ms), vol→silent {to_silent[-1] * 1000:.0f} ms")
            finally:
                sd.quit()
        port_periods, straddled, _ = vol_to_port_periods(ctx, server)
        log(f"  case 5: vol → master port, periods after the one it was sent in: {port_periods} "
            f"(+{straddled} sent across a period boundary)")
    finally:
        server.stop()
    return {"open_to_playing": opens, "open_cmd": open_cmd, "play_to_playing": play_to_playing, "ack": acks,
            "to_silent": to_silent, "to_sound": to_sound, "session": s, "port_periods": port_periods,
            "straddled": straddled}
