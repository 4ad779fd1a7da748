// stemdeck's web mixer (docs/web.md): what a strip has beyond its table's controls — the cue,
// the aux sends, the plugin inserts and their detail panel — and the bar's position and setlist.
// Loaded before app.js, whose helpers (el, word, run, makeRange, mix, views…) these use when called.
"use strict";

// ---- The cue (headphones): a strip's button cycles off → PFL → AFL → off (`cue NAME pfl|afl|off`).
const CUE_KINDS = ["stem", "bus", "input"]; // the strips `cue` takes
function makeCue(s) {
  if (!CUE_KINDS.includes(s.kind)) return null;
  const b = el("button", "cue", "cue");
  b.dataset.key = "cue";
  b.title = "cue " + s.name + " on the headphones (PFL, then AFL)";
  b.onclick = () => {
    const now = mix.cues[s.name] || "off", next = { off: "pfl", pfl: "afl", afl: "off" }[now];
    mix.cues[s.name] = next;
    show(next);
    run("cue " + word(s.name) + " " + next);
  };
  const show = (tap) => {
    b.classList.toggle("on", tap !== "off");
    b.textContent = tap === "off" ? "cue" : tap;
  };
  return { root: b, update: () => show(mix.cues[s.name] || "off") };
}

// ---- Sends: a row per aux send, its level dragged like a fader in dB; the far left is off.
const SEND_MIN_DB = -60, SEND_MAX_DB = 6;
function makeSends(s) {
  if (s.kind === "master" || !mix.sends.length) return null;
  const root = el("div", "sends");
  const rows = [];
  for (const aux of mix.sends) {
    const level = () => mix.sends.find((x) => x.name === aux.name)?.levels[s.name] ?? null;
    const off = SEND_MIN_DB - 1;
    const r = makeRange({
      key: "send", name: s.name, min: off, max: SEND_MAX_DB, def: 0, origin: off,
      text: (v) => aux.name + " " + (v <= SEND_MIN_DB ? "off" : Math.round(v)),
      cmd: (v) => "send " + word(s.name) + " " + word(aux.name) + " " +
        (v <= SEND_MIN_DB ? "off" : v.toFixed(2) + "dB" + (level()?.pre ? " pre" : "")),
      read: () => { const l = level(); return l ? (l.db === null ? off : l.db) : off; },
    });
    r.root.dataset.send = aux.name;
    root.append(r.root);
    rows.push(r);
  }
  return { root, update: (v) => { for (const r of rows) r.update(v); } };
}

// ---- Inserts: a button per plugin (dimmed when bypassed); a tap opens its detail panel.
function makeInserts(s) {
  const key = s.kind === "master" ? "master" : s.name;
  const list = mix.inserts[key];
  if (!list || !list.length) return null;
  const root = el("div", "inserts");
  const buttons = list.map((x) => {
    const b = el("button", "insert", x.position + " " + (x.name || "?"));
    b.dataset.position = x.position;
    b.title = (x.name || x.uri) + " on " + key + ": its parameters";
    b.onclick = () => openPanel(key, x.position);
    root.append(b);
    return b;
  });
  const update = () => {
    for (const [i, b] of buttons.entries()) b.classList.toggle("bypassed", !!(mix.inserts[key] || [])[i]?.bypass);
  };
  return { root, update };
}

// The detail panel: one insert's bypass and its parameters (`insert params STRIP N`), each a
// slider dragged like a fader, a box to type the value, and on/off or a list where the plugin
// says the value is one.
const panel = { strip: null, position: 0, layout: "", rows: [] };
async function openPanel(strip, position) {
  panel.strip = strip;
  panel.position = position;
  panel.layout = "";
  $("panel").hidden = false;
  await panelRefresh();
}
function closePanel() {
  panel.strip = null;
  $("panel").hidden = true;
}
async function panelRefresh() {
  if (!panel.strip) return;
  const { strip, position } = panel;
  const r = await request({ cmd: "insert list " + word(strip) + "; insert params " + word(strip) + " " + position });
  if (panel.strip !== strip || panel.position !== position) return;
  const x = (r.inserts || []).find((i) => i.position === position);
  if (!x || !r.params) { closePanel(); return; }
  $("panel-title").textContent = strip + " · " + position + ": " + (x.name || x.uri);
  $("panel-bypass").setAttribute("aria-pressed", String(x.bypass));
  const layout = JSON.stringify(r.params.map((p) => p.symbol + p.min + p.max));
  if (layout !== panel.layout) {
    panel.layout = layout;
    panel.rows = r.params.map((p) => paramRow(strip, position, p));
    $("panel-params").replaceChildren(...panel.rows.map((row) => row.root));
  }
  for (const [i, p] of r.params.entries()) panel.rows[i].update(p);
}
function paramRow(strip, position, p) {
  const root = el("div", "param");
  root.dataset.symbol = p.symbol;
  root.append(el("div", "pname", p.name + (p.unit ? " (" + p.unit + ")" : "")));
  const cmd = (v) => "insert set " + word(strip) + " " + position + " " + p.symbol + " " + v;
  const box = el("input", "pvalue");
  box.inputMode = "decimal";
  box.setAttribute("aria-label", p.name);
  box.onkeydown = (e) => {
    if (e.key !== "Enter") return;
    const v = Number(box.value);
    if (box.value.trim() === "" || !isFinite(v)) { say(p.name + ": a number from " + p.min + " to " + p.max); return; }
    run(cmd(v));
    box.blur();
  };
  const toggled = p.properties.includes("toggled");
  let control;
  if (toggled) {
    const b = el("button", "", "off");
    b.onclick = () => run(cmd(b.classList.contains("on") ? 0 : 1));
    control = { root: b, update: (q) => { b.classList.toggle("on", q.value >= 0.5); b.textContent = q.value >= 0.5 ? "on" : "off"; } };
  } else if (p.scalePoints && p.properties.includes("enumeration")) {
    const sel = el("select");
    sel.replaceChildren(...p.scalePoints.map((sp) => { const o = el("option", "", sp.label); o.value = sp.value; return o; }));
    sel.onchange = () => run(cmd(sel.value));
    control = { root: sel, update: (q) => { sel.value = String(q.value); } };
  } else {
    const integer = p.properties.includes("integer");
    control = makeRange({
      key: "param", name: p.symbol, min: p.min, max: p.max, def: p.default,
      text: (v) => (integer ? String(Math.round(v)) : Number(v.toPrecision(4)).toString()),
      cmd: (v) => cmd(integer ? Math.round(v) : Number(v.toPrecision(6))), read: (q) => q.value,
    });
  }
  root.append(control.root, box);
  return {
    root,
    update(q) {
      control.update(q);
      if (document.activeElement !== box) box.value = String(q.value);
    },
  };
}

// ---- The bar: the position (a tap or drag on it seeks) and the setlist's songs (choose: goto).
function showSeek() {
  const t = mix.transport, bar = $("seek");
  if (bar.matches(":active")) return; // being dragged
  const length = typeof t.length === "number" && t.length > 0 ? t.length : 0;
  bar.disabled = !length;
  bar.max = String(length || 1);
  bar.value = String(Math.min(t.position || 0, length || 0));
}
function showSetlist() {
  const list = mix.setlist, select = $("song");
  $("setlist").hidden = !list;
  if (!list) return;
  const names = JSON.stringify(list.songs);
  if (select.dataset.songs !== names) {
    select.dataset.songs = names;
    select.replaceChildren(...list.songs.map((n, i) => { const o = el("option", "", (i + 1) + ". " + n); o.value = i + 1; return o; }));
  }
  select.value = String(list.current);
}
function wireShow() {
  $("seek").onchange = () => run("seek " + Number($("seek").value).toFixed(3));
  $("song").onchange = () => run("goto " + $("song").value);
  $("panel-close").onclick = closePanel;
  $("panel-bypass").onclick = () => {
    const on = $("panel-bypass").getAttribute("aria-pressed") !== "true";
    if (panel.strip) run("insert bypass " + word(panel.strip) + " " + panel.position + " " + (on ? "on" : "off"));
  };
  // While playing, the position moves on between the transport's pushes (once a second).
  setInterval(() => {
    const t = mix.transport;
    if (t.state !== "playing" || typeof t.position !== "number" || !t.at) return;
    const now = performance.now();
    t.position += (now - t.at) / 1000;
    t.at = now;
    showTransport();
  }, 250);
}
