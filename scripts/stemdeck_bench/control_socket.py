"""Case 5c: a `vol` over the control socket to the port, and the socket's round trip."""

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
from .latency import vol_to_port_periods


def case_socket_latency(ctx):
    """5c: a `vol` sent over the control socket reaches master_L in the next period, as from the
    REPL (vol_to_port_periods, via="socket"); and the socket's request → reply round trip."""
    return request_latency(ctx, "socket", "5c", "the socket")


def request_latency(ctx, via, case, what):
    """A `vol` sent as a JSON request over `via` ("socket", "web": case 5w) to the master port,
    and that connection's request → reply round trip."""
    server = JackServer(f"bench{via}-{os.getpid()}", ctx["cache"], ctx["env"])
    server.start()
    try:
        periods, straddled, round_trips = vol_to_port_periods(ctx, server, via=via)
    finally:
        server.stop()
    rt = sorted(round_trips)
    log(f"  case {case}: vol over {what} → master port, periods: {periods} (+{straddled} across a boundary); "
        f"round trip median {med(rt) * 1000:.2f} ms, p95 {rt[int(len(rt) * 0.95)] * 1000:.2f} ms")
    return {"port_periods": periods, "straddled": straddled, "round_trips": round_trips}
