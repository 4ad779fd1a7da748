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


def case_stem_export(ctx):
    """`render --stems` of the 32-stem mix beside a plain render of it: the CPU ratio (target
    < 1.5×), and the 32 stem files summed by sox against the master (target < −100 dBFS)."""
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
    cpu = {k: [] for k in cmds}
    wall = {k: [] for k in cmds}
    for r in range(runs):
        for k, cmd in cmds.items():
            # Every export writes new files: freeing the previous run's 740 MB is not its cost.
            if k.startswith("--stems"):
                shutil.rmtree(scratch if k.startswith("--stems ") else folder, ignore_errors=True)
            c, w = run_timed(cmd, timeout=600, env=env,
                             log_path=os.path.join(cache, "logs", "stems-" + k.strip("-").replace(" ", "-") + ".log"))
            cpu[k].append(c)
            wall[k].append(w)
            log(f"  case 1s run {r + 1}/{runs}: {k:14s} cpu {c:6.2f} s  wall {w:6.2f} s")
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
    return {"cpu": cpu, "wall": wall, "diff_db": diff_db, "control_db": control_db,
            "commands": dict(cmds, **{"sox sum of the stems": sum_cmd[:4] + ["…"] + sum_cmd[-6:]})}
