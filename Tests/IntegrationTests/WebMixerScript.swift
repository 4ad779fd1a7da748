// The browser side of WebMixerTests: a /usr/bin/python3 script (python3-selenium, Debian's
// chromium and chromium-driver) driving two headless Chromiums against one stemdeck, and a raw
// WebSocket client on plain sockets for the refusals. It prints one JSON line per finding; the
// Swift test judges them.

enum WebMixerScript {
  static let text = #"""
    import base64, json, os, socket, struct, sys, time
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    port, token, shots, control = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    base = "http://127.0.0.1:%d/" % port

    def say(check, **facts):
        print(json.dumps(dict(check=check, **facts)), flush=True)

    def until(what, timeout=15.0):
        end = time.time() + timeout
        while time.time() < end:
            v = what()
            if v:
                return v
            time.sleep(0.05)
        return what()

    # --- Raw WebSockets: the handshake's answer and what follows.
    def handshake(path, origin=None, extra=""):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        key = base64.b64encode(os.urandom(16)).decode()
        h = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: stemdeck\r\n") % (path, port, key)
        if origin:
            h += "Origin: %s\r\n" % origin
        s.sendall((h + extra + "\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            d = s.recv(4096)
            if not d:
                break
            head += d
        return s, head.split(b"\r\n")[0].decode(errors="replace")

    def send_text(s, data):
        mask = os.urandom(4)
        n = len(data)
        hdr = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536
                               else bytes([0x80 | 127]) + struct.pack(">Q", n))
        s.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def receive(s):
        def exact(n):
            b = b""
            while len(b) < n:
                d = s.recv(n - len(b))
                if not d:
                    raise EOFError
                b += d
            return b
        h = exact(2)
        n = h[1] & 127
        n = struct.unpack(">H", exact(2))[0] if n == 126 else struct.unpack(">Q", exact(8))[0] if n == 127 else n
        return h[0] & 15, exact(n)

    own = "http://127.0.0.1:%d" % port
    for name, path, origin in [("foreign origin", "/ws?token=" + token, "http://evil.example"),
                               ("wrong token", "/ws?token=0123456789abcdef0123456789abcdef", own),
                               ("no token", "/ws", own), ("right token", "/ws?token=" + token, own)]:
        s, status = handshake(path, origin)
        say("handshake", name=name, status=status)
        s.close()
    s, status = handshake("/ws?token=" + token, own)
    send_text(s, b'{"id": 1, "cmd": "' + b"x" * 70000 + b'"}')
    try:
        op, data = receive(s)
        code = struct.unpack(">H", data[:2])[0] if op == 8 and len(data) >= 2 else None
    except (EOFError, OSError):
        op, code = None, None
    say("oversized", opcode=op, code=code)
    s.close()

    # --- Two browsers: a phone and a desktop.
    def browser(w, h):
        o = Options()
        for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=%d,%d" % (w, h)]:
            o.add_argument(a)
        d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
        # The window has a minimum width; the page's viewport is set exactly (a phone: mobile, touch).
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": w < 500})
        d.get(base + "#token=" + token)
        return d

    phone, desk = browser(390, 844), browser(1280, 800)
    try:
        js = lambda d, code: d.execute_script(code)
        ready = lambda d: js(d, "return document.body.dataset.connected === 'yes' && views.has('stem:drums') && !!meters.frame")
        say("connected", phone=bool(until(lambda: ready(phone))), desk=bool(until(lambda: ready(desk))))
        peak = lambda d: js(d, "const m = meters.frame && meters.frame.stems.drums; return m ? m.peak[0] : null")
        p0 = until(lambda: peak(phone))
        js(phone, "window.__seen = meters.frame")
        moved = until(lambda: js(phone, "return meters.frame !== window.__seen"))
        say("meters", peak=p0, moving=bool(moved), canvas=js(phone, "return document.querySelector('.strip[data-name=drums] canvas').dataset.peak"))

        # Drag the drums fader down by 80 px with the pointer (a mouse's pointer events).
        fader = phone.find_element(By.CSS_SELECTOR, ".strip[data-name=drums] .fader")
        thumb = fader.find_element(By.CSS_SELECTOR, ".thumb")
        before = js(phone, "return views.get('stem:drums').fader.db")
        ActionChains(phone).move_to_element(thumb).click_and_hold().move_by_offset(0, 20).move_by_offset(0, 30).move_by_offset(0, 30).release().perform()
        after = js(phone, "return views.get('stem:drums').fader.db")
        desk_db = until(lambda: (lambda v: v if v is not None and abs(v - after) < 0.05 else None)(js(desk, "return views.get('stem:drums').fader.db")))
        settled = until(lambda: (lambda p: p if p is not None and abs((p - p0) - (after - before)) < 1.0 else None)(peak(phone)), timeout=5)
        say("drag", before=before, after=after, desk=desk_db, peakBefore=p0, peakAfter=peak(phone), settled=settled is not None)

        # The desktop mutes bass; the phone's button follows.
        desk.find_element(By.CSS_SELECTOR, ".strip[data-name=bass] button[data-key=mute]").click()
        seen = until(lambda: "on" in phone.find_element(By.CSS_SELECTOR, ".strip[data-name=bass] button[data-key=mute]").get_attribute("class"))
        say("mute", phoneSees=bool(seen))

        # The phone drags drums' pan (the desktop follows), then a double tap puts it back to the centre.
        pan = phone.find_element(By.CSS_SELECTOR, ".strip[data-name=drums] .slider[data-key=pan]")
        label = "return document.querySelector('.strip[data-name=drums] .slider[data-key=pan] .label').textContent"
        ActionChains(phone).move_to_element(pan).click_and_hold().move_by_offset(10, 0).move_by_offset(10, 0).release().perform()
        dragged = until(lambda: (lambda t: t if t != "C" else None)(js(desk, label)))
        ActionChains(phone).double_click(pan).perform()
        centred = until(lambda: js(desk, label) == "C")
        say("pan", deskSees=dragged, centred=bool(centred))

        # A change over the control socket reaches the page by the push (mixChanged), not the slow resync.
        c = socket.socket(socket.AF_UNIX)
        c.connect(control)
        c.sendall(b'{"id": 1, "cmd": "vol bass -10dB"}\n')
        c.recv(65536)
        c.close()
        bass = "return views.get('stem:bass').fader.db"
        pushed = until(lambda: abs(js(phone, bass) + 10) < 0.05, timeout=5)
        say("push", seen=bool(pushed), reason=js(phone, "return mix.reason"), db=js(phone, bass))

        say("fits", width=js(phone, "return document.documentElement.scrollWidth"))
        phone.save_screenshot(shots + "/phone-390x844.png")
        desk.save_screenshot(shots + "/desktop-1280x800.png")

        # The desktop double-taps drums' send to verb: 0 dB (the test reads it back from stemdeck).
        send = desk.find_element(By.CSS_SELECTOR, ".strip[data-name=drums] .sends .slider[data-send=verb]")
        ActionChains(desk).double_click(send).perform()
        slabel = "return document.querySelector('.strip[data-name=drums] .sends .slider[data-send=verb] .label').textContent"
        say("send", phoneSees=until(lambda: (lambda t: t if t == "verb 0" else None)(js(phone, slabel))))

        # The phone opens drums' insert (swh amp) and types its gain: the stem's meter falls by it.
        phone.find_element(By.CSS_SELECTOR, ".strip[data-name=drums] .inserts button").click()
        box = until(lambda: (lambda e: e[0] if e else None)(phone.find_elements(By.CSS_SELECTOR, "#panel .param[data-symbol=gain] .pvalue")))
        p1 = until(lambda: peak(phone))
        box.clear()
        box.send_keys("-20\n")
        heard = until(lambda: (lambda p: p if p is not None and abs((p - p1) + 20) < 1.0 else None)(peak(phone)), timeout=8)
        label = js(phone, "return document.querySelector('#panel .param[data-symbol=gain] .label').textContent")
        phone.save_screenshot(shots + "/phone-insert-390x844.png")
        say("insert", peakBefore=p1, peakAfter=peak(phone), heard=heard is not None, label=label)

        # Stop from the desktop: the meters fall silent on the phone.
        desk.find_element(By.ID, "stop").click()
        silent = until(lambda: peak(phone) is None and js(phone, "return document.getElementById('clock').dataset.state") == "stopped")
        say("stopped", silent=bool(silent))

        # The test stops stemdeck and starts another on the same port: both pages say they lost
        # it, then reconnect by themselves and show the new one's strips.
        say("restart-me")
        connected = lambda d: js(d, "return document.body.dataset.connected")
        lost = until(lambda: connected(phone) == "no" and connected(desk) == "no")
        say("lost", both=bool(lost), text=js(phone, "return document.getElementById('state').textContent"))
        back = until(lambda: ready(phone) and ready(desk), timeout=30)
        say("back", both=bool(back), drums=js(phone, "return views.get('stem:drums').fader.db"))
    finally:
        phone.quit()
        desk.quit()
    """#
}
