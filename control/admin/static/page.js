// strata's operator page. It polls the admin API every second, keeps the
// time series the server returns (history from process start, then only
// newer points), and draws every chart as SVG itself. No dependency, no
// external request: the page works on an air-gapped host.
"use strict";

const $ = (id) => document.getElementById(id);
const API = "/admin/v1/";
const POLL_MS = 1000;
let token = sessionStorage.getItem("strata-token") || "";
let endpoints = null; // Set of paths the server has; null until read
let points = [];      // history points, oldest first
let lastT = 0;
let promotion = null;
let report = null;
let hotkeySplit = new Map();

function say(text, cls) { const m = $("msg"); m.textContent = text; m.className = cls || ""; }
function esc(s) { return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c])); }
function pct(x) { return x < 0 || x === undefined || x === null ? "–" : (100 * x).toFixed(1) + " %"; }
function num(x, d) { if (x === undefined || x === null || Number.isNaN(x)) return "–"; return Number(x).toLocaleString("en-US", { maximumFractionDigits: d === undefined ? 1 : d }); }
function bytes(n) { const u = ["B", "KiB", "MiB", "GiB", "TiB"]; let i = 0; n = Number(n) || 0; while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; } return n.toFixed(i ? 1 : 0) + " " + u[i]; }

// api calls the admin API. A 401 asks for the token; other errors carry
// the server's message and the field it names.
async function api(path, method, body) {
  const opts = { method: method || "GET", headers: {}, cache: "no-store" };
  if (token) opts.headers.Authorization = "Bearer " + token;
  if (body !== undefined) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
  const r = await fetch(API + path, opts);
  const j = await r.json().catch(() => ({ error: "the reply is not JSON" }));
  if (r.status === 401) { $("ftoken").classList.add("need"); throw new Error("this strata needs a token: type it at the top right"); }
  if (!r.ok) { const e = new Error((j.field ? j.field + ": " : "") + (j.error || r.statusText)); e.status = r.status; e.field = j.field || ""; throw e; }
  $("ftoken").classList.remove("need");
  return j;
}

function has(path) { return endpoints !== null && endpoints.has(API + path); }
function hasPrefix(prefix) { if (!endpoints) return false; for (const p of endpoints) if (p.startsWith(API + prefix)) return true; return false; }
function notConfigured(el, what) { el.innerHTML = `<div class="notconf">${esc(what)}: not configured on this strata</div>`; }

// ---- charts ---------------------------------------------------------------

const W = 400, H = 150, PAD_L = 34, PAD_B = 14, PAD_T = 6, PAD_R = 6;

// chart draws series of [x, y] points into an svg; y < 0 is "no data" and
// breaks the line. data-points on the svg counts the points drawn, which
// the CI test reads.
function chart(svg, series, opts) {
  opts = opts || {};
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  let xmin = Infinity, xmax = -Infinity, ymax = opts.ymax || 0, drawn = 0;
  for (const s of series) for (const [x, y] of s.pts) { if (y < 0) continue; xmin = Math.min(xmin, x); xmax = Math.max(xmax, x); if (!opts.ymax) ymax = Math.max(ymax, y); }
  if (!Number.isFinite(xmin)) { svg.innerHTML = `<text x="${W / 2 - 20}" y="${H / 2}">no data yet</text>`; svg.dataset.points = "0"; return; }
  if (opts.xmin !== undefined) xmin = opts.xmin;
  if (opts.xmax !== undefined) xmax = opts.xmax;
  if (xmax === xmin) xmax = xmin + 1;
  if (ymax <= 0) ymax = 1;
  if (!opts.ymax) ymax = nice(ymax);
  const sx = (x) => PAD_L + (x - xmin) * (W - PAD_L - PAD_R) / (xmax - xmin);
  const sy = (y) => H - PAD_B - y * (H - PAD_B - PAD_T) / ymax;
  let out = "";
  for (const f of [0, 0.5, 1]) {
    const y = sy(f * ymax).toFixed(1);
    out += `<line class="grid" x1="${PAD_L}" x2="${W - PAD_R}" y1="${y}" y2="${y}"/><text x="2" y="${Number(y) + 3}">${esc((opts.yfmt || shortNum)(f * ymax))}</text>`;
  }
  out += `<text x="${PAD_L}" y="${H - 2}">${esc((opts.xfmt || String)(xmin))}</text><text x="${W - PAD_R - 60}" y="${H - 2}">${esc((opts.xfmt || String)(xmax))}</text>`;
  for (const s of series) {
    let d = "", pen = false;
    for (const [x, y] of s.pts) {
      if (y < 0 || x < xmin) { pen = false; continue; }
      d += (pen ? "L" : "M") + sx(x).toFixed(1) + "," + sy(Math.min(y, ymax)).toFixed(1);
      pen = true; drawn++;
    }
    out += `<path d="${d}" class="line s-${s.color}${s.dash ? " dash" : ""}"/>`;
  }
  svg.innerHTML = out;
  svg.dataset.points = String(drawn);
}

function nice(v) { const p = Math.pow(10, Math.floor(Math.log10(v))); for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p; return 10 * p; }
function shortNum(v) { if (v >= 1e6) return (v / 1e6).toFixed(1) + "M"; if (v >= 1e3) return (v / 1e3).toFixed(1) + "k"; return v >= 10 ? v.toFixed(0) : Number(v.toFixed(2)).toString(); }
function clock(ms) { const d = new Date(ms); return d.toTimeString().slice(0, 8); }
function pctAxis(v) { return (100 * v).toFixed(0) + "%"; }

// ---- tiers ----------------------------------------------------------------

async function pollHistory() {
  const h = await api("history" + (lastT ? "?since=" + lastT : ""));
  if (h.points.length) { points = points.concat(h.points); lastT = h.points[h.points.length - 1].t; }
  if (points.length > 5000) points = points.slice(points.length - 5000);
  $("uptime").textContent = "up " + duration((Date.now() - Date.parse(h.started)) / 1000);
  drawTiers();
}

function duration(s) { s = Math.max(0, Math.floor(s)); const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60; return (h ? h + "h " : "") + (h || m ? m + "m " : "") + (s % 60) + "s"; }

function drawTiers() {
  const p = points.length ? points[points.length - 1] : null;
  // The headline figures average the last 10 s, steadier than one second.
  const recent = points.slice(-10);
  const sum = (f) => recent.reduce((a, q) => a + q[f], 0);
  const span = sum("span") || 1;
  const ratio = (a, b) => (b > 0 ? a / b : -1);
  const l1r = sum("l1_reads"), l2r = sum("l2_reads");
  const combined = l1r > 0 ? ratio(sum("l1_hits") + sum("l2_hits"), l1r) : ratio(sum("l2_hits"), l2r);
  const cards = [
    ["combined hit", pct(combined)], ["L1 hit", pct(ratio(sum("l1_hits"), l1r))], ["L2 hit", pct(ratio(sum("l2_hits"), l2r))],
    ["requests/s", num(sum("requests") / span, 0)], ["p50 / p99 ms", p ? num(p.p50_ms, 3) + " / " + num(p.p99_ms, 3) : "–"],
    ["promotions/s", num(sum("promotions") / span)], ["errors/s", num(sum("errors") / span)], ["connections", p ? num(p.conns, 0) : "–"],
    ["N", promotion ? num(promotion.threshold, 0) : "–"],
  ];
  $("cards").innerHTML = cards.map(([k, v]) => `<div class="card" data-card="${esc(k)}"><b>${esc(v)}</b><span>${esc(k)}</span></div>`).join("");
  const xs = { xfmt: clock };
  const pick = (f) => points.map((q) => [q.t, q[f]]);
  chart($("ch-hit"), [{ pts: pick("hit_l1"), color: "c1" }, { pts: pick("hit_l2"), color: "c2" }, { pts: pick("hit"), color: "c0" }], { ...xs, ymax: 1, yfmt: pctAxis });
  chart($("ch-rps"), [{ pts: pick("rps"), color: "c1" }], xs);
  chart($("ch-lat"), [{ pts: pick("p50_ms"), color: "c1" }, { pts: pick("p90_ms"), color: "c2" }, { pts: pick("p99_ms"), color: "c3" }], xs);
  chart($("ch-pe"), [{ pts: pick("promotions_per_sec"), color: "c1" }, { pts: pick("errors_per_sec"), color: "c3" }], xs);
  chart($("ch-conns"), [{ pts: pick("conns"), color: "c1" }], xs);
}

let managedTiers = []; // names of the tiers whose shard map the control plane publishes

async function pollTiers() {
  const t = await api("tiers");
  managedTiers = t.tiers.filter((x) => x.managed).map((x) => x.name);
  let html = "";
  for (const tier of t.tiers) {
    const c = tier.counters || {};
    html += `<h3>${esc(tier.name)} <span class="muted">${esc(tier.kind)}</span></h3>`;
    if (tier.kind === "none") { html += `<div class="notconf">no ${esc(tier.name)} tier configured</div>`; continue; }
    html += `<div class="muted">hits ${num(c.hits, 0)} · misses ${num(c.misses, 0)} · errors ${num(c.errors, 0)}` +
      (tier.managed ? ` · its shard map is the control plane's: see <a href="#s-shards">shard maps</a> for shards, load and drains` : "") + `</div>`;
    if (tier.servers && tier.servers.length) {
      html += `<table class="grid"><tr><th>server</th><th>weight</th><th>state</th><th class="num">errors</th></tr>` + tier.servers.map((s) =>
        `<tr><td>${esc(s.addr)}</td><td class="num">${s.weight}</td><td class="state-${esc(s.state)}">${esc(s.state)}</td><td class="num">${num((s.counters || {}).errors || 0, 0)}</td></tr>`).join("") + "</table>";
    }
  }
  setHTML($("tiers"), html);
}

// ---- controls -------------------------------------------------------------

async function pollPromotion() {
  promotion = await api("promotion");
  if (!edited($("threshold"))) $("threshold").value = promotion.threshold;
  if (!edited($("ttl"))) $("ttl").value = promotion.l1_max_ttl;
  const form = $("frules");
  if (!form.contains(document.activeElement) && !form.dataset.dirty) {
    $("rules").tBodies[0].innerHTML = promotion.rules.length ? promotion.rules.map(ruleRow).join("") : `<tr class="none"><td colspan="3" class="muted">no prefix rules: every key uses the global N</td></tr>`;
  }
}

function ruleRow(r) { return `<tr><td><input class="rp" type="text" value="${esc(r.prefix)}"></td><td><input class="rn" type="number" min="1" value="${esc(r.threshold)}"></td><td><button type="button" class="rm">remove</button></td></tr>`; }

async function pollSampler() {
  const s = await api("sampler");
  if (!edited($("rate"))) $("rate").value = s.rate;
  $("sampler-status").innerHTML = `<span class="muted">one key in ${num(s.rate, 0)} sampled · ${num(s.records, 0)} records · ${num(s.dropped, 0)} dropped</span>`;
}

// ---- sampler analysis -----------------------------------------------------

async function pollReport() {
  report = await api("sampler/report");
  const o = report.overall || {};
  const cdf = ((o.hotness || {}).cdf || []).map((c) => [c.key_share, c.traffic_share]);
  chart($("ch-cdf"), [{ pts: cdf.length ? [[0, 0]].concat(cdf) : [], color: "c1" }], { xmin: 0, xmax: 1, ymax: 1, yfmt: pctAxis, xfmt: pctAxis });
  const fams = report.families || [];
  $("families").innerHTML = `<tr><th>family</th><th class="num">accesses</th><th class="num">unique keys</th><th class="num">working set</th><th class="num">duplication</th><th class="num">L1 / L2 hit</th><th class="num">recommended N</th></tr>` +
    fams.map((f) => `<tr><td>${esc(f.family)}</td><td class="num">${num(f.accesses, 0)}</td><td class="num">${num(f.unique_keys, 0)}</td><td class="num">${bytes(f.region_wss_bytes)}</td><td class="num">${num(f.duplication_factor, 2)}</td><td class="num">${pct(f.hit_ratio.l1)} / ${pct(f.hit_ratio.l2)}</td><td class="num">${f.recommended_threshold || "–"}</td></tr>`).join("");
}

async function pollModel() {
  const m = await api("promotion/model");
  const curve = (arr) => arr.map((p, i) => [i + 1, p]);
  chart($("ch-model"), [{ pts: curve(m.model), color: "c1" }, { pts: curve(m.observed), color: "c3", dash: true }], { xmin: 1, xmax: m.model.length, ymax: 1, yfmt: pctAxis, xfmt: (k) => "k=" + k });
  const rec = report && report.overall ? report.overall.recommended_threshold : 0;
  // The text changes every second with the observed rate; the button
  // sits beside it and is rebuilt only when the recommendation changes, so
  // a click on it is never lost to a redraw.
  const el = $("recommend");
  if (!$("rec-text")) el.innerHTML = `<span id="rec-text"></span> <span id="rec-act"></span>`;
  $("rec-text").innerHTML = `N in force <b>${m.threshold}</b>: a key read ${m.trials_to_90 === 1 ? "once" : m.trials_to_90 + " times"} from L2 is in L1 with 90 % probability · observed ` +
    (m.observed_rate >= 0 ? `<b>${pct(m.observed_rate)}</b> of L2 hits promoted (≈ N ${m.implied_threshold || "∞"})` : "no L2 hits yet") +
    ` · the sampler recommends <b id="rec-n">${rec || "–"}</b>`;
  setHTML($("rec-act"), rec && rec !== m.threshold ? `<button id="use-rec" type="button" data-n="${rec}">use N = ${rec}</button>` : "");
}

// ---- hot keys -------------------------------------------------------------

async function pollHotKeys() {
  const rows = new Map();
  let note = [];
  if (has("hotkeys")) {
    const hk = await api("hotkeys");
    hotkeySplit = new Map(hk.keys.map((k) => [k.key, k]));
    for (const k of hk.keys) rows.set(k.key, { key: k.key, family: k.kind, rate: k.reads_per_sec + k.writes_per_sec, split: k.split ? `split ×${k.k}` : "measured hot" });
  } else {
    note.push("hot-key splitting not configured");
  }
  if (has("topkeys")) {
    const tk = await api("topkeys?n=15");
    for (const k of tk.keys) if (!rows.has(k.key)) rows.set(k.key, { key: k.key, family: k.family, rate: k.per_sec, split: hotkeySplit.has(k.key) ? "split" : "not split", l1: k.reads ? k.l1_hits / k.reads : -1 });
    note.push(`busiest sampled keys of the last ${tk.span_seconds} s`);
  }
  $("hotkeys-note").textContent = note.join(" · ");
  const list = [...rows.values()].sort((a, b) => b.rate - a.rate);
  $("hotkeys").innerHTML = `<tr><th>key</th><th>family / kind</th><th class="num">accesses/s</th><th class="num">L1 hit</th><th>state</th></tr>` +
    (list.length ? list.map((r) => `<tr><td class="hk">${esc(r.key)}</td><td>${esc(r.family)}</td><td class="num">${num(r.rate, 1)}</td><td class="num">${pct(r.l1 === undefined ? -1 : r.l1)}</td><td>${esc(r.split)}</td></tr>`).join("") : `<tr><td colspan="5" class="notconf">no sampled traffic yet</td></tr>`);
}

// ---- shard maps -----------------------------------------------------------

// A drain empties a server of shards: the first click arms the button, a
// second one within ARM_MS sends the call, so one stray click moves nothing.
const ARM_MS = 5000;
let armed = null; // {tier, addr, until} of the drain button waiting for its second click

async function pollShards() {
  if (!has("shardmap")) { notConfigured($("shards"), "shard assignment"); return; }
  let html = "";
  // Only the tiers the control plane manages have a map: asking the
  // others would be a refused request, and a console error, every second.
  const maps = [];
  for (const tier of managedTiers) maps.push([tier, await api("shardmap?tier=" + encodeURIComponent(tier))]);
  // A maintenance walk (strata ctl maintenance): which server, which step.
  const walk = has("servers/maintenance") ? await api("servers/maintenance") : null;
  if (walk && walk.tier) html += maintenanceLine(walk);
  for (const [tier, m] of maps) html += shardTable(tier, m, walk && walk.running && walk.tier === tier ? walk : null);
  setHTML($("shards"), html || `<div class="notconf">no managed tier</div>`);
  // Loads change every second; they are written into the table in place,
  // so the rows and their buttons are rebuilt only when a server, its
  // state, its shards or the moves change.
  for (const [tier, m] of maps) {
    const top = Math.max(1e-9, ...m.servers.map((s) => s.load));
    for (const s of m.servers) {
      const row = $("shards").querySelector(`table[data-tier="${CSS.escape(tier)}"] tr[data-addr="${CSS.escape(s.addr)}"]`);
      if (!row) continue;
      row.querySelector(".bar").dataset.w = (160 * s.load / top).toFixed(0);
      row.querySelector(".lv").textContent = s.load.toFixed(1);
    }
  }
}

// maintenanceLine says where the walk in progress, or the last one, stands.
function maintenanceLine(w) {
  const last = w.notes && w.notes.length ? w.notes[w.notes.length - 1].line : "";
  const where = w.servers.length > 1 ? `server ${w.server + 1} of ${w.servers.length}, ` : "";
  const state = w.running ? `<b class="moving">maintenance of ${esc(w.tier.toUpperCase())}: ${where}${esc(w.addr)} ${esc(w.step)}</b>`
    : w.error ? `<b class="moving">maintenance of ${esc(w.tier.toUpperCase())} stopped: ${esc(w.error)}</b>`
    : `maintenance of ${esc(w.tier.toUpperCase())} done (${w.servers.map(esc).join(", ")})`;
  return `<div class="maint">${state}${last && w.running ? ` <span class="muted">· ${esc(last)}</span>` : ""}</div>`;
}

function shardTable(tier, m, walk) {
  const total = m.servers.reduce((a, s) => a + s.shards, 0) || 1;
  const moves = m.moves_in_flight ? `<b class="moving">${num(m.moves_in_flight, 0)} moves in flight (${esc(m.phase || "")})</b>` : "no move in flight";
  // A compat tier's conversion: the share its old layout still serves.
  const conv = m.on_layout ? ` · <b class="moving">${num(m.on_layout, 0)} shards (${pct(m.layout_share)}) still on the compat layout${m.convert_paused ? ", conversion paused" : ""}</b>` : "";
  const isArmed = (s) => armed && armed.tier === tier && armed.addr === s.addr && armed.until > Date.now();
  const button = (s) => s.state === "draining"
    ? `<button type="button" data-act="undrain" data-tier="${tier}" data-addr="${esc(s.addr)}" title="let ${esc(s.addr)} own shards again">undrain</button>`
    : `<button type="button" data-act="drain" data-tier="${tier}" data-addr="${esc(s.addr)}"${isArmed(s) ? ` class="confirm" title="click again to move every shard off ${esc(s.addr)}">confirm drain` : ` title="move every shard off ${esc(s.addr)}">drain`}</button>`;
  return `<h3>${esc(tier.toUpperCase())} <span class="muted">map version ${num(m.version, 0)} · ${num(total, 0)} shards on ${m.servers.length} servers ·</span> ${moves}${conv}</h3>` +
    `<table class="grid shardmap" data-tier="${esc(tier)}"><tr><th>server</th><th>state</th><th class="num">shards</th><th class="num">share</th><th class="num">replicas</th><th>load (requests/s)</th><th></th></tr>` +
    m.servers.map((s) => `<tr data-addr="${esc(s.addr)}"><td>${esc(s.addr)}</td><td class="state state-${esc(s.state)}">${esc(s.state)}${walk && walk.addr === s.addr ? ` · in maintenance: ${esc(walk.step)}` : ""}</td>` +
      `<td class="num shards">${num(s.shards, 0)}</td><td class="num">${pct(s.shards / total)}</td><td class="num replicas">${num(s.replicas || 0, 0)}</td>` +
      `<td class="load"><span class="bar"></span> <span class="num lv"></span></td><td>${button(s)}</td></tr>`).join("") + "</table>";
}

// setHTML replaces an element's content only when it changed: a table
// rebuilt every second under the pointer would swallow a click whose
// press and release land on different copies of a button.
function setHTML(el, html) { if (el.dataset.html !== html) { el.innerHTML = html; el.dataset.html = html; } }

// The CSP allows no inline style attribute, so a bar's width travels in
// data-w and is applied through the CSSOM, which the CSP permits.
function applyBars() { for (const b of document.querySelectorAll(".bar[data-w]")) b.style.width = b.dataset.w + "px"; }

// ---- locality -------------------------------------------------------------

let lookupId = null;  // the μ-shard shown, refreshed every poll while it is found
let region = "";      // this strata's region, when the API names it

async function pollLocality() {
  if (!hasPrefix("locality/")) { notConfigured($("locality"), "locality routing"); return; }
  if (has("locality/regions")) {
    // A 501 is the API saying locality routing is off here: say so
    // rather than draw empty figures.
    try { await pollRegions(); } catch (e) { if (e.status === 501) { localityOff(e); return; } throw e; }
  }
  $("loc-charts").hidden = false;
  $("flookup").hidden = false;
  drawLocality();
  if (lookupId !== null) await lookUp(lookupId, false);
}

// drawLocality shows this strata's figures from the history: the remote
// fraction of the requests it routed and the migrations it saw finish,
// since the process started.
function drawLocality() {
  // "The last minute" ends at the newest point, by the server's clock:
  // the browser's may be off.
  const last = points.length ? points[points.length - 1] : null;
  const sum = (ps, f) => ps.reduce((a, p) => a + p[f], 0);
  const minute = last ? points.filter((p) => p.t > last.t - 60000) : [];
  const share = (ps) => { const r = sum(ps, "routed"); return r ? sum(ps, "remote") / r : -1; };
  const up = points.length ? (points[points.length - 1].t - points[0].t) / 1000 + points[0].span : 0;
  const all = sum(points, "migrations");
  setHTML($("locality"), `<div class="cards">` +
    card("remote, last minute", pct(share(minute)), "of the requests this strata" + (region ? " (region " + region + ")" : "") + " routed") +
    card("remote since start", pct(share(points)), num(sum(points, "routed"), 0) + " requests routed") +
    card("migrations, last minute", num(sum(minute, "migrations"), 0), up >= 60 ? num(60 * all / up, 2) + " per minute since start" : "") +
    card("migrations since start", num(all, 0), "") +
    card("in flight", last ? num(last.migrations_in_flight, 0) : "–", "started, not settled") + `</div>`);
  const xs = { xfmt: clock };
  chart($("ch-remote"), [{ pts: points.map((q) => [q.t, q.remote_fraction]), color: "c3" }], { ...xs, ymax: 1, yfmt: pctAxis });
  chart($("ch-migrations"), [{ pts: perMinute(points, "migrations"), color: "c1" }, { pts: points.map((q) => [q.t, q.migrations_in_flight]), color: "c2" }], xs);
}

function card(label, value, note) { return `<div class="card"><b>${esc(value)}</b><span>${esc(label)}</span>${note ? `<small>${esc(note)}</small>` : ""}</div>`; }

// perMinute turns per-interval counts into, at each point, the sum over
// the minute that ends there: one migration reads as 1 per minute for a
// minute rather than a one-second spike.
function perMinute(ps, f) {
  const out = [];
  let lo = 0, sum = 0;
  for (let i = 0; i < ps.length; i++) {
    sum += ps[i][f];
    while (ps[lo].t <= ps[i].t - 60000) { sum -= ps[lo][f]; lo++; }
    out.push([ps[i].t, sum]);
  }
  return out;
}

async function pollRegions() {
  const r = await api("locality/regions");
  region = r.self || region;
  const rows = r.regions.slice().sort((a, b) => a.region.localeCompare(b.region));
  const t = $("regions");
  t.hidden = rows.length === 0;
  setHTML(t, `<caption>by region of the clients, from the access counters every strata ships</caption><tr><th>region</th><th class="num">requests</th><th>remote fraction</th><th class="num">μ-shards owned</th></tr>` + rows.map((x) => {
    const f = x.requests > 0 ? x.remote / x.requests : -1;
    return `<tr data-region="${esc(x.region)}"><td>${esc(x.region)}${x.region === r.self ? ` <span class="muted">(this strata)</span>` : ""}</td><td class="num">${num(x.requests, 0)}</td>` +
      `<td><span class="bar remote" data-w="${f > 0 ? (120 * f).toFixed(0) : 0}"></span> <span class="frac">${pct(f)}</span></td><td class="num">${num(x.mushards, 0)}</td></tr>`;
  }).join(""));
  applyBars();
}

// localityOff shows the API's own word that locality routing is off.
function localityOff(e) {
  $("loc-charts").hidden = true;
  $("regions").hidden = true;
  $("flookup").hidden = true;
  setHTML($("lookup"), "");
  setHTML($("locality"), `<div class="notconf">locality routing is off on this strata (${esc(e.message)})</div>`);
}

// lookUp shows the μ-shard named id. fresh: the operator asked (say so on
// failure); otherwise a refresh, which stops on failure.
async function lookUp(id, fresh) {
  const out = $("lookup");
  try {
    const m = await api("locality/mushards/" + encodeURIComponent(id));
    if (!fresh && lookupId !== id) return; // the operator asked for another meanwhile
    lookupId = id;
    setHTML(out, muShardHTML(m));
    applyBars();
  } catch (e) {
    if (!fresh && lookupId !== id) return;
    lookupId = null;
    let why = String(e.message || e);
    if (e.status === 404 && e.field === "id") why = `no μ-shard named "${id}": a μ-shard gets its row on its first request; its name is the rule's prefix, a space, then the field (e.g. "u: 42")`;
    else if (e.status === 404 || e.status === 501) why = "locality routing is off on this strata: " + why;
    setHTML(out, `<div class="lookup-err err" data-status="${esc(e.status || "")}">${esc(why)}</div>`);
    if (!fresh) throw e;
  }
}

function muShardHTML(m) {
  const state = m.state + (m.source ? ` from ${m.source}` : "");
  const regions = Object.keys(m.counters).sort();
  const total = regions.reduce((a, r) => a + m.counters[r], 0);
  let html = `<div class="mushard" data-id="${esc(m.id)}"><div class="cards">` +
    `<div class="card"><b class="ms-id">${esc(m.id)}</b><span>μ-shard</span></div>` +
    `<div class="card"><b class="ms-owner">${esc(m.owner)}</b><span>owner</span></div>` +
    `<div class="card"><b class="ms-epoch">${num(m.epoch, 0)}</b><span>epoch</span></div>` +
    `<div class="card"><b class="ms-state state-${esc(m.state)}">${esc(state)}</b><span>state</span></div>` +
    `<div class="card"><b class="ms-pin">${m.pin ? esc(m.pin) : "–"}</b><span>pinned to</span></div></div>`;
  html += `<h3>accesses by region <span class="muted">(decayed counts the placement service scores)</span></h3>` + (regions.length
    ? `<table class="grid ms-counters"><tr><th>region</th><th class="num">accesses</th><th>share</th></tr>` + regions.map((r) =>
      `<tr data-region="${esc(r)}"><td>${esc(r)}${r === m.owner ? ` <span class="muted">(owner)</span>` : ""}</td><td class="num">${num(m.counters[r], 1)}</td>` +
      `<td><span class="bar" data-w="${total > 0 ? (120 * m.counters[r] / total).toFixed(0) : 0}"></span> ${pct(total > 0 ? m.counters[r] / total : -1)}</td></tr>`).join("") + "</table>"
    : `<div class="muted">no access counted yet</div>`);
  html += `<h3>history</h3>` + (m.history.length
    ? `<table class="grid ms-history"><tr><th class="num">epoch</th><th>when</th><th>move</th><th>reason</th></tr>` + m.history.slice().reverse().map((h) =>
      `<tr><td class="num">${num(h.epoch, 0)}</td><td>${esc(when(h.at))}</td><td>${h.from ? esc(h.from) + " → " : "created in "}${esc(h.to)}</td><td>${esc(h.reason)}</td></tr>`).join("") + "</table>"
    : `<div class="muted">no move remembered</div>`);
  return html + "</div>";
}

// when spells a time as the operator's local date and time with its age.
function when(at) {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return String(at);
  const pad = (n) => String(n).padStart(2, "0");
  const age = (Date.now() - d.getTime()) / 1000;
  const ago = age >= 2 * 86400 ? `${Math.floor(age / 86400)}d ${Math.floor(age / 3600) % 24}h` : duration(age);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${d.toTimeString().slice(0, 8)} (${age >= 0 ? ago + " ago" : "ahead of this browser's clock"})`;
}

// ---- mutations ------------------------------------------------------------

// mutate sends one change and reports whether the server took it.
async function mutate(path, method, body, done) {
  try { await api(path, method, body); }
  catch (e) { say(String(e.message || e), "err"); return false; }
  say(done, "ok");
  await refresh();
  return true;
}

// A setting the operator typed keeps its value until it is applied: the
// press on "apply" moves the focus off the input, and a poll landing
// before the release must not put the value in force back. A refused
// value stays for the operator to correct.
function edited(el) { return document.activeElement === el || el.dataset.dirty === "1"; }
for (const id of ["threshold", "ttl", "rate"]) $(id).addEventListener("input", () => { $(id).dataset.dirty = "1"; });
async function apply(ids, path, body, done) {
  if (await mutate(path, "PUT", body, done)) for (const id of ids) delete $(id).dataset.dirty;
}

$("ftoken").onsubmit = (ev) => { ev.preventDefault(); token = $("token").value.trim(); sessionStorage.setItem("strata-token", token); refresh(); };
$("fpromo").onsubmit = (ev) => { ev.preventDefault(); apply(["threshold", "ttl"], "promotion", { threshold: Number($("threshold").value), l1_max_ttl: $("ttl").value.trim() }, "promotion updated"); };
$("fsampler").onsubmit = (ev) => { ev.preventDefault(); apply(["rate"], "sampler", { rate: Number($("rate").value) }, "sample rate updated"); };
$("addrule").onclick = () => { $("frules").dataset.dirty = "1"; for (const tr of $("rules").querySelectorAll("tr.none")) tr.remove(); $("rules").tBodies[0].insertAdjacentHTML("beforeend", ruleRow({ prefix: "", threshold: promotion ? promotion.threshold : 10 })); };
$("rules").onclick = (ev) => { if (ev.target.classList.contains("rm")) { $("frules").dataset.dirty = "1"; ev.target.closest("tr").remove(); } };
$("frules").oninput = () => { $("frules").dataset.dirty = "1"; };
$("frules").onsubmit = async (ev) => {
  ev.preventDefault();
  const rules = [...$("rules").tBodies[0].rows].filter((tr) => tr.querySelector(".rp")).map((tr) => ({ prefix: tr.querySelector(".rp").value, threshold: Number(tr.querySelector(".rn").value) }));
  delete $("frules").dataset.dirty;
  await mutate("promotion", "PUT", { rules }, "rules updated");
};
$("recommend").onclick = (ev) => {
  const b = ev.target.closest("#use-rec");
  if (b) apply(["threshold"], "promotion", { threshold: Number(b.dataset.n) }, "N set to " + b.dataset.n);
};
$("shards").onclick = async (ev) => {
  const b = ev.target.closest("button[data-act]");
  if (!b) return;
  const { act, tier, addr } = b.dataset;
  if (act === "drain" && !(armed && armed.tier === tier && armed.addr === addr && armed.until > Date.now())) {
    armed = { tier, addr, until: Date.now() + ARM_MS };
    say(`drain ${addr}? click "confirm drain" within ${ARM_MS / 1000} s to move its shards to the other servers`, "");
    await pollShards().then(applyBars).catch(() => {});
    setTimeout(() => {
      if (!armed || armed.until > Date.now()) return;
      armed = null;
      say("drain of " + addr + " not confirmed: nothing changed", "");
      pollShards().then(applyBars).catch(() => {});
    }, ARM_MS + 50);
    return;
  }
  armed = null;
  mutate("servers/" + act, "POST", { tier, addr }, act === "drain" ? `${addr} is draining: its shards move to the other servers` : `${addr} undrained: it takes shards again`);
};
$("flookup").onsubmit = (ev) => {
  ev.preventDefault();
  const id = $("mushard").value.trim();
  if (!id) { setHTML($("lookup"), `<div class="err">type a μ-shard name: the rule's prefix, a space, then the field</div>`); return; }
  lookUp(id, true).catch(() => {});
};

// ---- polling --------------------------------------------------------------

let busy = false;
async function refresh() {
  if (busy) return;
  busy = true;
  try {
    if (endpoints === null) endpoints = new Set((await api("")).endpoints.map((e) => e.path));
    const jobs = [];
    if (has("promotion")) jobs.push(pollPromotion());
    // Locality draws from the history: after it.
    jobs.push((has("history") ? pollHistory() : Promise.resolve()).then(pollLocality));
    if (has("tiers")) jobs.push(pollTiers().then(pollShards).then(applyBars));
    else notConfigured($("shards"), "shard assignment");
    if (has("sampler")) jobs.push(pollSampler(), pollReport().then(() => (has("promotion/model") ? pollModel() : null)));
    else { notConfigured($("sampler-status"), "sampler"); }
    jobs.push(pollHotKeys());
    await Promise.all(jobs);
    $("live").textContent = "updated " + new Date().toTimeString().slice(0, 8);
    if ($("msg").className === "err") say("");
  } catch (e) {
    say(String(e.message || e), "err");
  } finally { busy = false; }
}

refresh();
setInterval(refresh, POLL_MS);
