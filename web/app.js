// stemdeck's web mixer (docs/web.md). It speaks the control socket's protocol over a WebSocket:
// {"id", "cmd": "vol drums -6dB"} requests, one reply each, and pushed meters, transport and
// events after {"subscribe": [...]}. Every strip control is built from the control table the
// `stems` reply carries ("controls": key, word, kind, range, default), not written here per control.
"use strict";

const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

// ---- The fader's scale: dB marks evenly spaced from the top (+6) to -72, silence at the bottom.
const MARKS = [6, 0, -6, -12, -24, -48, -72];
const MAX_DB = 20 * Math.log10(2); // a volume is at most 2 (linear)
const SPAN = 0.94; // the part of the track the marks take; below -72 falls to silence
function dbToPos(db) { // 0 (bottom, silence) … 1 (top)
  if (db === null || !isFinite(db) || db <= -90) return 0;
  db = Math.min(db, MAX_DB);
  if (db >= MARKS[0]) return 1;
  for (let i = 1; i < MARKS.length; i++) {
    if (db >= MARKS[i]) {
      const f = (MARKS[i - 1] - db) / (MARKS[i - 1] - MARKS[i]);
      return 1 - SPAN * (i - 1 + f) / (MARKS.length - 1);
    }
  }
  const below = (MARKS[MARKS.length - 1] - db) / 18; // -72 … -90 fades to the bottom
  return Math.max(0, (1 - SPAN) * (1 - below));
}
function posToDb(pos) {
  if (pos <= 0.001) return -Infinity;
  if (pos >= 1) return MARKS[0];
  const top = 1 - pos;
  if (top <= SPAN) {
    const x = top / SPAN * (MARKS.length - 1);
    const i = Math.min(Math.floor(x), MARKS.length - 2);
    return MARKS[i] + (MARKS[i + 1] - MARKS[i]) * (x - i);
  }
  return MARKS[MARKS.length - 1] - 18 * (1 - pos / (1 - SPAN));
}
const dbText = (db) => (db === null || !isFinite(db) ? "-inf" : (db > 0 ? "+" : "") + db.toFixed(1)) + " dB";
const linToDb = (v) => (v > 0 ? 20 * Math.log10(v) : -Infinity);

// ---- Words for the command line: a name with spaces or quotes is quoted as the console reads it.
function word(s) {
  return /^[A-Za-z0-9_.+:\-]+$/.test(s) ? s : '"' + s.replace(/\\/g, "\\\\").replace(/"/g, '\\"') + '"';
}

// ---- The connection: reconnects while stemdeck is away, asks for the token once when it needs one.
const link = { ws: null, id: 0, pending: new Map(), opened: false, everOpened: false, retry: 500 };
const loopback = /^(localhost|127\.[0-9.]+|\[::1\])$/.test(location.hostname) || location.hostname === "::1";
(function takeTokenFromAddress() {
  const m = /[#&]token=([A-Za-z0-9]+)/.exec(location.hash);
  if (m) {
    localStorage.setItem("stemdeck-token", m[1]);
    history.replaceState(null, "", location.pathname);
  }
})();

function connect() {
  const token = localStorage.getItem("stemdeck-token");
  const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws" +
    (token ? "?token=" + encodeURIComponent(token) : "");
  const ws = new WebSocket(url, "stemdeck");
  link.ws = ws;
  link.opened = false;
  ws.onopen = () => {
    link.opened = link.everOpened = true;
    link.retry = 500;
    $("token").hidden = true;
    document.body.classList.remove("offline");
    document.body.dataset.connected = "yes";
    $("state").textContent = "connected";
    request({ subscribe: ["meters@30", "transport", "events"] });
    refresh("connect");
  };
  ws.onmessage = (m) => {
    let o;
    try { o = JSON.parse(m.data); } catch (e) { return; }
    if (o.push) return pushed(o);
    const done = link.pending.get(o.id);
    if (done) { link.pending.delete(o.id); done(o); }
    else if (o.ok === false) say(o.error);
  };
  ws.onclose = () => {
    document.body.classList.add("offline");
    document.body.dataset.connected = "no";
    for (const done of link.pending.values()) done({ ok: false, error: "the connection was lost" });
    link.pending.clear();
    if (!link.everOpened && !loopback) { // refused (a wrong token) or not there: ask once it never opened
      $("token").hidden = false;
      $("tokenvalue").value = localStorage.getItem("stemdeck-token") || "";
    }
    $("state").textContent = link.everOpened ? "stemdeck is gone — reconnecting…" : "no answer — retrying…";
    setTimeout(connect, link.retry);
    link.retry = Math.min(link.retry * 2, 4000);
  };
}

function request(o) {
  return new Promise((resolve) => {
    if (!link.ws || link.ws.readyState !== WebSocket.OPEN) return resolve({ ok: false, error: "not connected" });
    o.id = ++link.id;
    link.pending.set(o.id, resolve);
    link.ws.send(JSON.stringify(o));
  });
}
async function run(cmd) {
  const r = await request({ cmd });
  if (!r.ok) say(r.error + (r.hint ? " — " + r.hint : ""));
  return r;
}
let sayTimer = 0;
function say(text) {
  $("message").textContent = text;
  clearTimeout(sayTimer);
  sayTimer = setTimeout(() => { $("message").textContent = ""; }, 6000);
}

// ---- The model: strips and controls from `stems; status; scene list; setlist`, fetched again
// when stemdeck pushes `mixChanged` (any front end changed the mix: another browser, the console,
// OSC, MIDI), on connecting, and as a slow resync; the transport and meters come pushed.
const mix = { controls: [], strips: [], layout: "", master: null, transport: {}, scenes: null,
  sends: [], inserts: {}, cues: {}, setlist: null, refreshes: 0, reason: "" };
const views = new Map(); // strip key ("stem:drums") → its view
const RESYNC_MS = 15000; // the slow resync, in case a push was missed
const REFRESH_GAP_MS = 150; // pushes during a drag elsewhere: at most one fetch per gap
const fetching = { busy: false, again: null, last: 0, timer: 0 };

// Fetches the mix now, or once the fetch under way and the gap are over (the latest reason wins).
function refresh(reason = "asked") {
  if (fetching.busy || fetching.timer) { fetching.again = reason; return; }
  const wait = fetching.last + REFRESH_GAP_MS - performance.now();
  if (wait > 0) {
    fetching.again = reason;
    fetching.timer = setTimeout(() => { fetching.timer = 0; const r = fetching.again; fetching.again = null; refresh(r); }, wait);
    return;
  }
  fetchMix(reason).finally(() => {
    fetching.busy = false;
    fetching.last = performance.now();
    if (fetching.again !== null) { const r = fetching.again; fetching.again = null; refresh(r); }
  });
}

async function fetchMix(reason) {
  fetching.busy = true;
  // `setlist` last: without a setlist it fails, and the line stops there.
  const r = await request({ cmd: "stems; status; scene list; setlist" });
  if (!r.stems || !r.status) return; // data is there even when a later command of the line failed
  mix.refreshes++;
  mix.reason = reason;
  mix.sends = r.sends || [];
  mix.inserts = r.stripInserts || {};
  mix.cues = Object.fromEntries((r.cues || []).map((c) => [c.name, c.tap]));
  mix.setlist = r.setlist || null;
  mix.controls = r.controls || [];
  const strips = [];
  for (const s of r.stems || []) strips.push({ kind: "stem", ...s });
  for (const s of r.buses || []) strips.push({ kind: "bus", ...s });
  for (const s of r.inputs || []) strips.push({ kind: "input", ...s });
  mix.strips = strips;
  const master = r.status ? r.status.master : { volume: 1 };
  mix.master = { kind: "master", name: "master", volume: master.volume };
  mix.transport = Object.assign(mix.transport, { state: r.status.state, position: r.status.position, length: r.status.length,
    at: performance.now() });
  mix.solo = r.status.solo;
  const layout = JSON.stringify([strips.map((s) => s.kind + ":" + s.name), mix.controls.map((c) => c.key + c.kind + c.strips),
    mix.sends.map((x) => x.name), Object.entries(mix.inserts).map(([k, v]) => k + v.length)]);
  if (layout !== mix.layout) { mix.layout = layout; build(); }
  for (const s of [...strips, mix.master]) views.get(s.kind + ":" + s.name)?.update(s);
  setScenes(r.scenes || []);
  showSetlist();
  showTransport();
  panelRefresh();
}

function build() {
  sized = false; // strips come and go: the meters' sizes are read again
  const strips = $("strips");
  const keep = new Set();
  for (const s of mix.strips) keep.add(s.kind + ":" + s.name);
  for (const [key, view] of views) if (key !== "master:master" && !keep.has(key)) { view.root.remove(); views.delete(key); }
  const order = [];
  for (const s of mix.strips) {
    const key = s.kind + ":" + s.name;
    let view = views.get(key);
    if (!view || view.layout !== mix.layout) { view?.root.remove(); view = makeStrip(s); views.set(key, view); }
    order.push(view.root);
  }
  strips.replaceChildren(...order);
  const old = views.get("master:master");
  if (!old || old.layout !== mix.layout) {
    const view = makeStrip(mix.master);
    views.set("master:master", view);
    $("master").replaceChildren(view.root);
  }
}

// One strip: the table's toggles as buttons, its numbers as sliders, its gain as the fader.
function makeStrip(s) {
  const root = el("div", "strip");
  root.dataset.name = s.name;
  root.dataset.kind = s.kind;
  root.append(el("div", "name", s.name), el("div", "kind", s.kind));
  const controls = mix.controls.filter((c) => c.strips.includes(s.kind));
  const updates = [];
  const toggles = el("div", "toggles");
  for (const c of controls.filter((c) => c.kind === "toggle")) {
    const b = el("button", "", c.key === "soloSafe" ? "safe" : c.word.slice(0, 1).toUpperCase() + c.word.slice(1, 4));
    b.dataset.key = c.key;
    b.title = c.word + " " + s.name;
    b.onclick = () => {
      const on = !b.classList.contains("on");
      b.classList.toggle("on", on);
      run((on ? c.word : "un" + c.word) + " " + word(s.name)); // the push brings the mix back
    };
    updates.push((v) => { if (v[c.key] !== undefined) b.classList.toggle("on", !!v[c.key]); });
    toggles.append(b);
  }
  const cue = makeCue(s);
  if (cue) { toggles.append(cue.root); updates.push(cue.update); }
  if (toggles.children.length) root.append(toggles);
  for (const c of controls.filter((c) => c.kind === "number")) {
    const slider = makeSlider(s, c);
    root.append(slider.root);
    updates.push(slider.update);
  }
  for (const extra of [makeSends(s), makeInserts(s)]) {
    if (extra) { root.append(extra.root); updates.push(extra.update); }
  }
  const gain = controls.find((c) => c.kind === "gain");
  const channel = el("div", "channel");
  const meter = el("canvas", "meter");
  channel.append(meter);
  let fader = null;
  if (gain) {
    fader = makeFader(s, gain);
    channel.append(fader.root);
    updates.push(fader.update);
  }
  root.append(channel);
  const value = el("div", "value", "");
  root.append(value);
  let loud = null;
  if (s.kind === "master") { loud = el("div", "loudness", ""); root.append(loud); }
  const view = {
    root, layout: mix.layout, meter, value, loud, levels: [], fader,
    update(v) {
      for (const u of updates) u(v);
      if (fader) value.textContent = dbText(fader.db);
      root.classList.toggle("silent", !!v.mute || (v.audible === false));
    },
  };
  view.update(s);
  return view;
}

// ---- Dragging: a fader or slider moves by how far the pointer moves, not to where it lands;
// fine mode (the button, or Shift) moves a quarter as far; a double tap returns to 0 dB or the
// control's default. Values go out one request at a time, the latest winning.
const fine = { on: false };
function sender(cmdFor) {
  let busy = false, next = null;
  return async function send(v) {
    next = v;
    if (busy) return;
    busy = true;
    while (next !== null) {
      const value = next;
      next = null;
      await run(cmdFor(value));
    }
    busy = false;
  };
}
function draggable(target, axis, get, set, reset) {
  let start = null, lastTap = 0, moved = false;
  target.addEventListener("pointerdown", (e) => {
    e.preventDefault();
    target.setPointerCapture(e.pointerId);
    start = { x: e.clientX, y: e.clientY, v: get(), size: axis === "y" ? target.clientHeight : target.clientWidth };
    moved = false;
    target.classList.add("held");
  });
  target.addEventListener("pointermove", (e) => {
    if (!start) return;
    const d = axis === "y" ? start.y - e.clientY : e.clientX - start.x;
    if (Math.abs(d) > 3) moved = true;
    if (!moved) return;
    const scale = fine.on || e.shiftKey ? 0.25 : 1;
    set(start.v + d / Math.max(start.size, 1) * scale, false);
  });
  const end = (e) => {
    if (!start) return;
    start = null;
    target.classList.remove("held");
    if (!moved && e.type === "pointerup") {
      const now = e.timeStamp;
      if (now - lastTap < 350) { reset(); lastTap = 0; } else lastTap = now;
    } else {
      set(null, true);
    }
  };
  target.addEventListener("pointerup", end);
  target.addEventListener("pointercancel", end);
  return () => start !== null;
}

function makeFader(s, c) {
  const root = el("div", "fader");
  root.dataset.name = s.name;
  const track = el("div", "track");
  root.append(track);
  for (const m of MARKS) {
    const mark = el("div", "mark");
    mark.style.top = "calc(8px + (100% - 16px) * " + (1 - dbToPos(m)).toFixed(4) + ")";
    mark.append(el("span", "", m > 0 ? "+" + m : String(m)));
    root.append(mark);
  }
  const thumb = el("div", "thumb");
  root.append(thumb);
  const f = { root, db: -Infinity, pos: 0 };
  const show = () => { thumb.style.top = "calc(8px + (100% - 16px) * " + (1 - f.pos).toFixed(4) + ")"; };
  const cmd = (db) => (s.kind === "master" ? "master " : c.word + " " + word(s.name) + " ") + (isFinite(db) ? db.toFixed(2) + "dB" : "0");
  const send = sender(cmd);
  const held = draggable(root, "y", () => f.pos, (pos, done) => {
    if (pos !== null) {
      f.pos = Math.max(0, Math.min(1, pos));
      f.db = Math.min(posToDb(f.pos), MAX_DB);
      show();
      views.get(s.kind + ":" + s.name).value.textContent = dbText(f.db);
    }
    send(f.db);
  }, () => { f.pos = dbToPos(0); f.db = 0; show(); send(0); });
  f.update = (v) => {
    if (held() || v[c.key] === undefined) return;
    f.db = linToDb(v[c.key]);
    f.pos = dbToPos(f.db);
    show();
  };
  return f;
}

function makeSlider(s, c) {
  const text = (v) => (c.key === "pan" ? (Math.abs(v) < 0.005 ? "C" : (v < 0 ? "L" : "R") + Math.round(Math.abs(v) * 100)) : c.word + " " + v.toFixed(2));
  return makeRange({ key: c.key, name: s.name, min: c.min ?? 0, max: c.max ?? 1, def: c.default, text,
    cmd: (v) => c.word + " " + word(s.name) + " " + v.toFixed(3), read: (v) => v[c.key] });
}

// A horizontal control dragged like a fader (relative, fine mode, double tap to its default):
// `o` gives its range, default, label text, command and how to read its value from an update.
function makeRange(o) {
  const root = el("div", "slider");
  root.dataset.key = o.key;
  root.dataset.name = o.name;
  const fill = el("div", "fill"), label = el("div", "label", "");
  root.append(fill, label);
  const min = o.min, max = o.max, origin = o.origin ?? (min < 0 && max > 0 ? 0 : min); // the fill starts there
  const def = o.def ?? origin;
  const sl = { root, value: def };
  const text = o.text;
  const show = () => {
    const a = (Math.min(origin, sl.value) - min) / (max - min), b = (Math.max(origin, sl.value) - min) / (max - min);
    fill.style.left = (a * 100).toFixed(2) + "%";
    fill.style.width = (Math.max(b - a, 0.02) * 100).toFixed(2) + "%";
    label.textContent = text(sl.value);
  };
  const send = sender(o.cmd);
  const held = draggable(root, "x", () => (sl.value - min) / (max - min), (f, done) => {
    if (f !== null) sl.value = min + Math.max(0, Math.min(1, f)) * (max - min);
    show();
    send(sl.value);
  }, () => { sl.value = def; show(); send(def); });
  sl.update = (v) => {
    const x = o.read(v);
    if (!held() && typeof x === "number") { sl.value = Math.max(min, Math.min(max, x)); show(); }
  };
  show();
  return sl;
}

// ---- Pushes: meter frames (drawn at the display's rate), the transport, events.
const meters = { frame: null };
function pushed(o) {
  if (o.push === "meters") meters.frame = o;
  else if (o.push === "transport") { Object.assign(mix.transport, o, { at: performance.now() }); showTransport(); }
  else if (o.push === "event" && o.event === "mixChanged") refresh("push");
  else if (o.push === "event" && o.text) say(o.text);
}
function levelsFor(key, frame) {
  if (!frame) return null;
  const [kind, name] = [key.slice(0, key.indexOf(":")), key.slice(key.indexOf(":") + 1)];
  if (kind === "master") return frame.master;
  const group = { stem: frame.stems, bus: frame.buses, input: frame.inputs }[kind];
  return group ? group[name] : null;
}
let lastDraw = 0;
// Each frame: the levels fall and holds age for every meter (reads no layout, writes no DOM), then
// only the meters whose picture changed are painted; the loudness text changes with meter frames.
// The canvases' sizes are read on a resize, not per frame (a read after a DOM write forces layout).
let sized = false;
addEventListener("resize", () => { sized = false; });
function draw(now) {
  const dt = Math.min((now - lastDraw) / 1000, 0.25);
  lastDraw = now;
  const frame = meters.frame;
  if (!sized) { for (const view of views.values()) view.size = null; sized = true; }
  for (const [key, view] of views) {
    const m = levelsFor(key, frame);
    const peaks = m ? m.peak : [];
    const n = Math.max(peaks.length, 1);
    let top = -Infinity, picture = "";
    for (let i = 0; i < n; i++) {
      const target = peaks[i] === null || peaks[i] === undefined ? -Infinity : peaks[i];
      const lv = view.levels[i] || (view.levels[i] = { shown: -Infinity, hold: -Infinity, holdAge: 0 });
      // Rises at once, falls at 24 dB a second; the hold stays 1.5 s, then falls.
      lv.shown = target >= lv.shown ? target : Math.max(target, lv.shown - 24 * dt);
      if (target >= lv.hold) { lv.hold = target; lv.holdAge = 0; } else if ((lv.holdAge += dt) > 1.5) lv.hold = Math.max(target, lv.hold - 24 * dt);
      top = Math.max(top, lv.shown);
      picture += dbToPos(lv.shown).toFixed(3) + " " + dbToPos(lv.hold).toFixed(3) + " ";
    }
    const c = view.meter;
    if (!view.size || !view.size.w || !view.size.h) view.size = { w: c.clientWidth, h: c.clientHeight };
    const { w, h } = view.size;
    if (w && h && picture !== view.picture) { view.picture = picture; paintMeter(view, c, w, h, n); }
    const peakText = isFinite(top) ? top.toFixed(1) : "-inf";
    if (c.dataset.peak !== peakText) c.dataset.peak = peakText;
    if (view.loud && frame && frame !== view.loudFrame && frame.master.loudness) {
      view.loudFrame = frame;
      showLoudness(view, frame.master.loudness);
    }
  }
  requestAnimationFrame(draw);
}
function paintMeter(view, c, w, h, n) {
  const dpr = window.devicePixelRatio || 1;
  if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) { c.width = Math.round(w * dpr); c.height = Math.round(h * dpr); }
  const g = c.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  if (!view.gradient || view.gradientHeight !== h) {
    const grad = g.createLinearGradient(0, h, 0, 0);
    grad.addColorStop(0, "#2f9e5a"); grad.addColorStop(dbToPos(-6), "#3fbf6f");
    grad.addColorStop(dbToPos(-3), "#e0c030"); grad.addColorStop(dbToPos(0), "#ff4a4a");
    view.gradient = grad;
    view.gradientHeight = h;
  }
  const bw = (w - (n - 1)) / n;
  for (let i = 0; i < n; i++) {
    const lv = view.levels[i], x = i * (bw + 1), y = h * (1 - dbToPos(lv.shown));
    g.fillStyle = view.gradient;
    g.fillRect(x, y, bw, h - y);
    if (isFinite(lv.hold)) {
      g.fillStyle = lv.hold >= 0 ? "#ff4a4a" : "#e8e8e8";
      g.fillRect(x, Math.round(h * (1 - dbToPos(lv.hold))), bw, 2);
    }
  }
}
function showLoudness(view, l) {
  const f = (v) => (v === null ? "-inf" : v.toFixed(1));
  if (!view.loudCells) {
    view.loudCells = [];
    for (const [label, unit] of [["M", ""], ["S", ""], ["I", " LUFS"], ["TP", " dBTP"]]) {
      const line = el("div", "", label + " "), b = el("b", "", "");
      line.append(b, unit);
      view.loud.append(line);
      view.loudCells.push(b);
    }
  }
  [l.momentary, l.shortTerm, l.integrated, l.truePeak].forEach((v, i) => {
    const text = f(v);
    if (view.loudCells[i].textContent !== text) view.loudCells[i].textContent = text;
  });
}

// ---- The bar: transport, setlist, undo, scenes.
function showTransport() {
  const t = mix.transport, clock = (s) => (s === null || s === undefined ? "--:--" :
    Math.floor(s / 60) + ":" + String(Math.floor(s % 60)).padStart(2, "0"));
  $("clock").textContent = clock(t.position) + " / " + clock(t.length);
  showSeek();
  $("play").setAttribute("aria-pressed", String(t.state === "playing" || t.state === "starting"));
  $("clock").dataset.state = t.state || "";
}
function setScenes(names) {
  const select = $("scene");
  if (JSON.stringify(names) === JSON.stringify(mix.scenes)) return;
  mix.scenes = names;
  const chosen = select.value;
  select.replaceChildren(...names.map((n) => { const o = el("option", "", n); o.value = n; return o; }));
  if (names.includes(chosen)) select.value = chosen;
  $("scenes").hidden = names.length === 0;
}
function wire() {
  for (const [id, cmd] of [["play", "play"], ["pause", "pause"], ["stop", "stop"], ["next", "next"], ["prev", "prev"], ["undo", "undo"], ["redo", "redo"]]) {
    $(id).onclick = () => run(cmd);
  }
  $("recall").onclick = () => { if ($("scene").value) run("scene recall " + word($("scene").value)); };
  wireShow();
  $("fine").onclick = () => { fine.on = !fine.on; $("fine").setAttribute("aria-pressed", String(fine.on)); };
  $("token").onsubmit = (e) => {
    e.preventDefault();
    localStorage.setItem("stemdeck-token", $("tokenvalue").value.trim());
    $("token").hidden = true;
    if (link.ws) link.ws.close();
  };
  // Changes come pushed (`mixChanged`); this only catches what a lost push would miss.
  setInterval(() => { if (link.opened && !document.hidden) refresh("resync"); }, RESYNC_MS);
}

wire();
connect();
requestAnimationFrame(draw);
