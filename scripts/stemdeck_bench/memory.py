"""Case 4: resident memory with 32 ten-minute stems playing."""

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


def case_memory(ctx):
    cache, runs = ctx["cache"], ctx["mem_runs"]
    files = [long_path(cache, i) for i in range(N_LONG)]
    s = write_session(cache, "memory32-long", 32, files=files, loops=-1)
    server = JackServer(f"benchmem-{os.getpid()}", cache, ctx["env"])
    server.start()
    rows = []
    try:
        for r in range(runs):
            server.ensure_answering(f"case 4 run {r + 1}")
            sd = Stemdeck(ctx["bin"], [s, "--server", server.name, "--no-start-server", "--no-connect"], server.env,
                          os.path.join(cache, "logs", "memory.log"))
            try:
                sd.command("play", timeout=60)
                wait_playing(sd, timeout=60)
                time.sleep(10)
                st = sd.status()
                m = sd.rss_kib()
                m["state"] = st.get("state")
                m["underruns"] = int(st.get("underruns", "0"))
                rows.append(m)
                log(f"  case 4 run {r + 1}/{runs}: VmRSS {m['VmRSS'] / 1024:.1f} MiB, VmHWM {m['VmHWM'] / 1024:.1f} MiB")
            finally:
                sd.quit()
        # For scale: the same process with no stems.
        sd = Stemdeck(ctx["bin"], ["--server", server.name, "--no-start-server", "--no-connect"], server.env,
                      os.path.join(cache, "logs", "memory-empty.log"))
        try:
            sd.command("echo ready", timeout=30)
            time.sleep(2)
            empty = sd.rss_kib()
        finally:
            sd.quit()
    finally:
        server.stop()
    return {"rows": rows, "empty": empty, "session": s}
