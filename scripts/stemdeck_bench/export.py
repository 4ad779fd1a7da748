"""Case 1s: stem export (`render --stems`, 33 files) beside a plain render."""

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

# The write floor of case 1s: the stem files' bytes (a fixed pattern, nothing computed) written
# to N new files in the stem writer's 32,768-frame chunks, round robin, each fsync'ed and closed,
# as the export does: what writing them costs the kernel alone (plus python3's start-up). With
# "direct" (the float stems' way, DirectWAVWriter): O_DIRECT from a page-aligned buffer, the
# header padded to 4096 bytes, an unaligned tail through the page cache.
WRITE_FLOOR = """
import fcntl, mmap, os, sys
folder, n, size, chunk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
direct = len(sys.argv) > 5 and sys.argv[5] == "direct"
buf = mmap.mmap(-1, chunk + 4096)  # page-aligned, as O_DIRECT needs
buf.write(bytes(range(256)) * ((chunk + 4096) // 256))
data = memoryview(buf)
flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | (os.O_DIRECT if direct else 0)
fds = [os.open(os.path.join(folder, "floor%03d.raw" % i), flags, 0o666) for i in range(n)]
done = 0
while done < size:
    k = min(chunk, size - done)
    if direct and k % 4096:  # the tail: through the page cache, as the stem writer does
        for fd in fds:
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_DIRECT)
    for fd in fds:
        if os.write(fd, data[:k]) != k:
            sys.exit("short write")
    done += k
for fd in fds:
    os.fsync(fd)
    os.close(fd)
"""


def case_stem_export(ctx):
    """`render --stems` of the 32-stem mix beside a plain render of it: the CPU ratio (target
    < 1.5×), and the 32 stem files summed by sox against the master (target < −100 dBFS); each
    render's user and system CPU apart, and the write floor (WRITE_FLOOR) before each export."""
    cache, env, runs, sd = ctx["cache"], ctx["env"], ctx["runs"], ctx["bin"]
    sess = write_session(cache, "mix32", N_STEMS)
    out = lambda n: os.path.join(cache, "out", n)
    folder = out("stems32")
    shutil.rmtree(folder, ignore_errors=True)
    # Beside the float-WAV pair (the target's case): 16-bit WAV (dithered, half the bytes), and
    # the 44.1 kHz stems resampled to 48 kHz (fast sinc), where the mixing is most of the work.
    sess44 = write_session(cache, "mix32-44k-stems", N_STEMS, files=[stem_path(cache, 44100, i) for i in range(N_STEMS)])
    scratch = out("stems32-other")
    cmds = {
        "plain": [sd, "render", sess, "--output", out("stems-plain.wav"), "--quiet"],
        "--stems": [sd, "render", sess, "--output", out("stems-master.wav"), "--stems", folder, "--quiet"],
        "plain wav16": [sd, "render", sess, "--output", out("stems-plain16.wav"), "--format", "wav16", "--quiet"],
        "--stems wav16": [sd, "render", sess, "--output", out("stems-master16.wav"), "--format", "wav16", "--stems", scratch, "--quiet"],
        "plain 44.1k": [sd, "render", sess44, "--output", out("stems-plain44.wav"), "--quiet"],
        "--stems 44.1k": [sd, "render", sess44, "--output", out("stems-master44.wav"), "--stems", scratch, "--quiet"],
    }
    # The write floor: the 32 stem files' bytes, float and 16-bit (the WAV data, 8 or 4 bytes a
    # frame, and a 44-byte header), written by python3 in the same chunks (WRITE_FLOOR).
    # Each run just before its export, so that both meet the same state of the machine (the
    # kernel's cost of writing varies severalfold with the other processes' I/O).
    floor_dir = out("write-floor")
    floors = {name: [sys.executable, "-c", WRITE_FLOOR, floor_dir, str(N_STEMS),
                     str(STEM_SECONDS * SR * frame_bytes + header), str(32768 * frame_bytes)] + extra
              for name, frame_bytes, header, extra in (("write floor", 8, 44, []), ("write floor direct", 8, 4096, ["direct"]),
                                                       ("write floor wav16", 4, 44, []))}
    order = ["plain", "write floor", "write floor direct", "--stems", "plain wav16", "write floor wav16", "--stems wav16", "plain 44.1k", "--stems 44.1k"]
    cmds = {k: cmds.get(k) or floors[k] for k in order}
    cpu = {k: [] for k in cmds}
    wall = {k: [] for k in cmds}
    user = {k: [] for k in cmds}
    system = {k: [] for k in cmds}
    for r in range(runs):
        for k, cmd in cmds.items():
            # Every export writes new files: freeing the previous run's 740 MB is not its cost.
            if k.startswith("--stems"):
                shutil.rmtree(scratch if k.startswith("--stems ") else folder, ignore_errors=True)
            if k.startswith("write floor"):
                shutil.rmtree(floor_dir, ignore_errors=True)
                os.makedirs(floor_dir)
            os.sync()  # the previous run's dirty pages are not this one's to write back
            c, w = run_timed(cmd, timeout=600, env=env,
                             log_path=os.path.join(cache, "logs", "stems-" + k.strip("-").replace(" ", "-") + ".log"))
            cpu[k].append(c)
            wall[k].append(w)
            user[k].append(LAST_RUSAGE[0])
            system[k].append(LAST_RUSAGE[1])
            log(f"  case 1s run {r + 1}/{runs}: {k:17s} cpu {c:6.2f} s (user {LAST_RUSAGE[0]:5.2f}, sys {LAST_RUSAGE[1]:5.2f})  wall {w:6.2f} s")
    shutil.rmtree(floor_dir, ignore_errors=True)
    shutil.rmtree(scratch, ignore_errors=True)
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder))
    if len(files) != N_STEMS:
        raise BenchError(f"--stems wrote {len(files)} files, not {N_STEMS}")
    sum_cmd = ["sox", "-m"] + sum((["-v", "1", f] for f in files), []) + ["-e", "floating-point", "-b", "32", out("stems-sum.wav")]
    run(sum_cmd, timeout=600, env=env, what="sox sum of the stem files")
    diff_db = diff_dbfs(out("stems-sum.wav"), out("stems-master.wav"), out("diff-stems.wav"), env)
    # Control: one stem left out of the sum must show.
    ctl_cmd = ["sox", "-m"] + sum((["-v", "1", f] for f in files[1:]), []) + ["-e", "floating-point", "-b", "32", out("stems-sum-31.wav")]
    run(ctl_cmd, timeout=600, env=env, what="sox sum of 31 stem files")
    control_db = diff_dbfs(out("stems-sum-31.wav"), out("stems-master.wav"), out("diff-stems-31.wav"), env)
    # The report shows the snippet by name, not its text.
    cmds = {k: (v if not k.startswith("write floor") else v[:2] + ["WRITE_FLOOR (scripts/stemdeck_bench/export.py)"] + v[3:])
            for k, v in cmds.items()}
    return {"cpu": cpu, "wall": wall, "user": user, "system": system, "diff_db": diff_db, "control_db": control_db,
            "commands": dict(cmds, **{"sox sum of the stems": sum_cmd[:4] + ["…"] + sum_cmd[-6:]})}
