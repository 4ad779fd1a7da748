"""Cases 5w, 5m and 5p: the web mixer (`--http`, issue 40). 5w: a `vol` sent over the WebSocket
reaches the port in the next period (as 5c over the control socket); 5m: what 8 pages cost
stemdeck (each subscribed to meters at 30 a second, transport and events, as web/app.js does)
with 64 stems playing, against the same stemdeck with no page; 5p: the page's own frame rate
with those 64 strips in headless Chromium, read through the DevTools protocol."""

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.request

from .common import *  # noqa: F401,F403 (constants, run/spawn, med/fmt)
from .material import *  # noqa: F401,F403
from .jack import *  # noqa: F401,F403

PAGES = 8
METER_RATE = 30
STRIPS = 64
WINDOW = 10  # seconds per CPU window


def free_tcp_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class WebSocketClient:
    """A WebSocket client on a plain socket (RFC 6455: masked text frames out, unmasked in), as
    a page speaks to stemdeck's `/ws`: one JSON request a message, replies and pushes as messages."""

    def __init__(self, port, timeout=10, path="/ws", protocol="stemdeck"):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        sub = f"Sec-WebSocket-Protocol: {protocol}\r\n" if protocol else ""
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                           f"{sub}Origin: http://127.0.0.1:{port}\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            d = self.sock.recv(4096)
            if not d:
                raise BenchError("the web mixer closed the WebSocket handshake")
            head += d
        status = head.split(b"\r\n")[0]
        if b" 101 " not in status:
            raise BenchError(f"the web mixer refused the WebSocket: {status.decode(errors='replace')}")
        self.buffer = head.split(b"\r\n\r\n", 1)[1]
        self.received = 0  # bytes of messages

    def send(self, obj):
        data = json.dumps(obj).encode()
        n, mask = len(data), os.urandom(4)
        hdr = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536
                               else bytes([0x80 | 127]) + struct.pack(">Q", n))
        self.sock.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exact(self, n):
        while len(self.buffer) < n:
            d = self.sock.recv(65536)
            if not d:
                raise EOFError
            self.buffer += d
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def message(self):
        h = self._exact(2)
        n = h[1] & 127
        n = struct.unpack(">H", self._exact(2))[0] if n == 126 else struct.unpack(">Q", self._exact(8))[0] if n == 127 else n
        data = self._exact(n)
        self.received += n
        return json.loads(data) if h[0] & 15 == 1 else None

    def reply(self, n):
        """The reply to request `n` (pushes before it are skipped)."""
        while True:
            o = self.message()
            if o is not None and "push" not in o and o.get("id") == n:
                if not o.get("ok"):
                    raise BenchError(f"web mixer: request {n} failed: {o}")
                return o

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def web_link(port):
    """(request, reply, close) over a WebSocket, for vol_to_port_periods(via="web")."""
    ws = WebSocketClient(port)
    return (lambda n, cmd: ws.send({"id": n, "cmd": cmd})), ws.reply, ws.close


def case_web_latency(ctx):
    """5w: a `vol` sent over the web mixer's WebSocket reaches master_L in the next period
    (vol_to_port_periods, via="web"), and the WebSocket's request → reply round trip."""
    from .control_socket import request_latency
    return request_latency(ctx, "web", "5w", "the WebSocket")


def thread_ticks(pid):
    """CPU ticks (utime + stime) of each thread of `pid`, by thread name."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                text = f.read()
            name = text[text.index("(") + 1:text.rindex(")")]
            fields = text.rsplit(")", 1)[1].split()
            out[name] = out.get(name, 0) + int(fields[11]) + int(fields[12])
        except (OSError, ValueError, IndexError):
            pass
    return out


def cpu_window(pid, seconds):
    """stemdeck's CPU over `seconds`, in % of one core: (whole process, {thread name: %})."""
    hz = os.sysconf("SC_CLK_TCK")
    t0, a = time.monotonic(), thread_ticks(pid)
    p0 = cpu_ticks([pid])[2]
    time.sleep(seconds)
    t1, b = time.monotonic(), thread_ticks(pid)
    p1 = cpu_ticks([pid])[2]
    elapsed = t1 - t0
    threads = {k: round((b[k] - a.get(k, 0)) / hz / elapsed * 100, 2) for k in b if b[k] - a.get(k, 0) > 0}
    return (p1 - p0) / hz / elapsed * 100, threads


def case_web_clients(ctx):
    """5m: stemdeck playing 64 stems with `--http`; its CPU (all threads, % of one core) over a
    window with no page, one with 8 WebSocket clients each doing what a page does when idle (the
    subscription, one fetch of the mix, then reading every push), and one without again; the cost
    is the middle window minus the mean of the two around it."""
    cache = ctx["cache"]
    session = write_session(cache, "web64", STRIPS, loops=-1, gain_scale=0.5)
    server = JackServer(f"benchpages-{os.getpid()}", cache, ctx["env"])
    server.start()
    port = free_tcp_port()
    sd = Stemdeck(ctx["bin"], [session, "--server", server.name, "--no-start-server", "--no-connect", "--no-control",
                               "--http", str(port)], server.env, os.path.join(cache, "logs", "web-clients.log"))
    clients, readers, stop = [], [], threading.Event()
    try:
        sd.command("play", timeout=120)
        wait_playing(sd, timeout=60)
        time.sleep(2)
        pid = sd.proc.pid
        before, before_threads = cpu_window(pid, WINDOW)
        frames = [0] * PAGES
        for i in range(PAGES):
            ws = WebSocketClient(port)
            ws.send({"id": 1, "subscribe": [f"meters@{METER_RATE}", "transport", "events"]})
            ws.reply(1)
            ws.send({"id": 2, "cmd": "stems; status; scene list; setlist"})
            try:
                ws.reply(2)
            except BenchError:
                pass  # `setlist` fails without one; the page reads the rest

            def read(ws=ws, i=i):
                while not stop.is_set():
                    try:
                        o = ws.message()
                    except (EOFError, OSError, ValueError):
                        return
                    if o and o.get("push") == "meters":
                        frames[i] += 1
            t = threading.Thread(target=read, daemon=True)
            t.start()
            clients.append(ws)
            readers.append(t)
        time.sleep(2)
        f0 = sum(frames)
        during, during_threads = cpu_window(pid, WINDOW)
        rate = (sum(frames) - f0) / WINDOW / PAGES
        bytes_per_frame = sum(c.received for c in clients) / max(1, sum(frames))
        stop.set()
        for c in clients:
            c.close()
        time.sleep(2)
        after, _ = cpu_window(pid, WINDOW)
        if sd.status().get("state") != "playing":
            raise BenchError("stemdeck stopped playing during case 5m")
    finally:
        stop.set()
        for c in clients:
            c.close()
        sd.quit()
        server.stop()
    base = (before + after) / 2
    res = {"pages": PAGES, "meter_rate": METER_RATE, "strips": STRIPS, "window": WINDOW,
           "without": [round(before, 2), round(after, 2)], "with": round(during, 2),
           "cost_points": round(during - base, 2), "ratio": round(during / base, 2) if base > 0 else None,
           "frames_per_page_second": round(rate, 1), "bytes_per_frame": round(bytes_per_frame),
           "threads_without": before_threads, "threads_with": during_threads}
    log(f"  case 5m: {PAGES} pages at {METER_RATE} meter frames/s, {STRIPS} stems: stemdeck {during:.1f} % of a core "
        f"against {base:.1f} % without ({before:.1f}, {after:.1f}): +{during - base:.1f} points, "
        f"{rate:.1f} frames/s a page, {bytes_per_frame:.0f} bytes a frame")
    return res


# What the page is asked over the DevTools protocol: once it shows every strip and has meter
# frames, 5 s of requestAnimationFrame callbacks, with the time its own drawing (app.js's `draw`,
# wrapped) takes in each.
FRAME_PROBE = """
new Promise((resolve) => {
  const ready = () => typeof views !== "undefined" && views.size >= %d && !!meters.frame;
  const begin = Date.now();
  const start = () => {
    const inner = draw;
    const busy = [];
    window.draw = (t) => { const a = performance.now(); inner(t); busy.push(performance.now() - a); };
    const gaps = [];
    let last = performance.now();
    const end = last + 5000;
    const tick = (now) => {
      gaps.push(now - last);
      last = now;
      if (now < end) requestAnimationFrame(tick);
      else resolve({ frames: gaps.length, seconds: 5, gaps, busy, strips: views.size });
    };
    requestAnimationFrame(tick);
  };
  const wait = () => (ready() ? start() : Date.now() - begin > 30000 ? resolve({ error: "the page never showed every strip" })
    : setTimeout(wait, 100));
  wait();
})
"""


def case_web_page(ctx):
    """5p: the page with 64 strips playing, in headless Chromium (1280×800): frames a second and
    the frame intervals (requestAnimationFrame), and the time the page's drawing takes a frame."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise BenchError("case 5p needs chromium (Debian: chromium)")
    cache = ctx["cache"]
    session = write_session(cache, "web64", STRIPS, loops=-1, gain_scale=0.5)
    server = JackServer(f"benchpage-{os.getpid()}", cache, ctx["env"])
    server.start()
    port, devtools = free_tcp_port(), free_tcp_port()
    sd = Stemdeck(ctx["bin"], [session, "--server", server.name, "--no-start-server", "--no-connect", "--no-control",
                               "--http", str(port)], server.env, os.path.join(cache, "logs", "web-page.log"))
    profile = tempfile.mkdtemp(prefix="stemdeck-bench-chromium-")
    browser = None
    try:
        sd.command("play", timeout=120)
        wait_playing(sd, timeout=60)
        browser = spawn([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--window-size=1280,800",
                         f"--user-data-dir={profile}", f"--remote-debugging-port={devtools}", "--remote-allow-origins=*",
                         f"http://127.0.0.1:{port}/"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        page = None
        deadline = time.monotonic() + 30
        while page is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{devtools}/json", timeout=2) as r:
                    page = next((t for t in json.load(r) if t.get("type") == "page"), None)
            except OSError:
                pass
            if page is None:
                if time.monotonic() > deadline:
                    raise BenchError("chromium's DevTools did not answer within 30 s")
                time.sleep(0.3)
        path = page["webSocketDebuggerUrl"].split(str(devtools), 1)[1]
        cdp = WebSocketClient(devtools, timeout=60, path=path, protocol=None)
        # Asked again while the page is still loading (its first context is destroyed by the navigation).
        for n in range(1, 41):
            cdp.send({"id": n, "method": "Runtime.evaluate",
                      "params": {"expression": FRAME_PROBE % (STRIPS + 1), "awaitPromise": True, "returnByValue": True}})
            while True:
                o = cdp.message()
                if o and o.get("id") == n:
                    break
            if "error" not in o:
                break
            time.sleep(0.5)
        cdp.close()
        value = o.get("result", {}).get("result", {}).get("value") or {}
        if "error" in value or "frames" not in value:
            raise BenchError(f"case 5p: the page did not measure: {value.get('error') or o}")
    finally:
        if browser is not None:
            end_process(browser)
        shutil.rmtree(profile, ignore_errors=True)
        sd.quit()
        server.stop()
    gaps, busy = sorted(value["gaps"][1:]), sorted(value["busy"])
    res = {"strips": value["strips"] - 1, "fps": round(value["frames"] / value["seconds"], 1),
           "gap_median_ms": round(med(gaps), 2), "gap_p95_ms": round(gaps[int(len(gaps) * 0.95)], 2),
           "gap_max_ms": round(gaps[-1], 2), "draw_median_ms": round(med(busy), 2) if busy else None,
           "draw_p95_ms": round(busy[int(len(busy) * 0.95)], 2) if busy else None}
    log(f"  case 5p: the page with {res['strips']} strips: {res['fps']} frames/s, intervals median {res['gap_median_ms']} ms, "
        f"p95 {res['gap_p95_ms']} ms; drawing median {res['draw_median_ms']} ms, p95 {res['draw_p95_ms']} ms a frame")
    return res
