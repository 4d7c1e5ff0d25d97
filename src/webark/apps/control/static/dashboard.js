// webark crawl dashboard: polls /dashboard/data every second and drives the control
// API with the token cookie (plus the X-Requested-With header the API asks of
// cookie-authenticated changes). No build step, no library.
"use strict";
const $ = (id) => document.getElementById(id);
const fmt = (n) => Number(n).toLocaleString("en");

function message(text, error) {
  const m = $("message");
  m.textContent = text;
  m.className = error ? "error" : "";
}

async function call(method, path, body) {
  const init = { method, headers: { "X-Requested-With": "webark" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

function cell(row, text, cls) {
  const td = row.insertCell();
  td.textContent = text === null || text === undefined ? "-" : String(text);
  if (cls) td.className = cls;
}

function chart(id, points, key) {
  const svg = $(id), line = svg.querySelector("polyline");
  const w = svg.width.baseVal.value, h = svg.height.baseVal.value;
  if (points.length < 2) { line.setAttribute("points", ""); return; }
  const t0 = points[0].t, t1 = points[points.length - 1].t;
  const max = Math.max(...points.map((p) => p[key]), 1e-9);
  line.setAttribute("points", points.map((p) =>
    `${((p.t - t0) / Math.max(t1 - t0, 1e-9) * (w - 4) + 2).toFixed(1)},` +
    `${(h - 2 - p[key] / max * (h - 4)).toFixed(1)}`).join(" "));
  svg.dataset.max = String(max);
}

function render(d) {
  const s = d.status, u = s.uris;
  $("state").textContent = s.state;
  $("processed").textContent = fmt(u.processed);
  $("succeeded").textContent = fmt(u.succeeded);
  $("failed").textContent = fmt(u.failed);
  $("queued").textContent = fmt(u.queued);
  $("in-flight").textContent = fmt(u.in_flight);
  $("uris-per-s").textContent = s.uris_per_s;
  $("bytes").textContent = fmt(s.bytes);
  $("warc-bytes").textContent = fmt(s.warc_bytes);
  $("elapsed").textContent = s.elapsed_s.toFixed(0);
  const rules = Object.entries(d.rules).flatMap(([k, vs]) => vs.map((v) => `${k}: ${v}`));
  $("rules").textContent = rules.length ? rules.join(" · ") : "none";
  const qb = $("queues").tBodies[0];
  qb.replaceChildren();
  for (const q of d.queues) {
    const r = qb.insertRow();
    r.dataset.host = q.host;
    cell(r, q.host); cell(r, fmt(q.queued), "n"); cell(r, q.in_flight ? "yes" : "");
    cell(r, fmt(q.finished), "n"); cell(r, fmt(q.bytes), "n");
    cell(r, q.queued ? `${q.next_wake} (${q.wait_s} s)` : ""); cell(r, q.errors, "n");
    cell(r, q.blocked ? "quota" : "");
  }
  const lb = $("log").tBodies[0];
  lb.replaceChildren();
  for (const l of d.log) {
    const r = lb.insertRow();
    cell(r, l.time.slice(11, 23)); cell(r, l.status, "n"); cell(r, l.size, "n");
    cell(r, l.uri, "uri"); cell(r, l.hops || "-"); cell(r, l.mime); cell(r, l.annotations.join(","));
  }
  const now = Date.now() / 1000;
  const live = { t: now, uris_per_s: s.uris_per_s, bytes_per_s: 0 };
  const pts = d.rates.length ? d.rates : [live];
  chart("chart-uris", pts, "uris_per_s");
  chart("chart-bytes", pts, "bytes_per_s");
}

async function refresh() {
  const q = new URLSearchParams({ status: $("log-status").value, q: $("log-q").value });
  try {
    const r = await fetch(`/dashboard/data?${q}`);
    if (r.status === 401) { location.reload(); return; }
    if (r.ok) render(await r.json());
  } catch (e) { /* the crawl ended: its API is gone */ $("state").textContent = "ENDED"; }
}

function on(id, event, fn) {
  $(id).addEventListener(event, async (ev) => {
    ev.preventDefault();
    try { message(await fn()); } catch (e) { message(e.message, true); }
    refresh();
  });
}

const num = (id) => ($(id).value.trim() === "" ? undefined : Number($(id).value));
on("pause", "click", async () => `state: ${(await call("POST", "/pause")).state}`);
on("resume", "click", async () => `state: ${(await call("POST", "/resume")).state}`);
on("stop", "click", async () => `state: ${(await call("POST", "/stop")).state}`);
on("seeds-form", "submit", async () => {
  const seeds = $("seeds").value.split("\n").map((x) => x.trim()).filter(Boolean);
  const r = await call("POST", "/seeds", { seeds });
  return `seeds added: ${r.added.length}, already seen: ${r.already_seen.length}, ` +
    `rejected: ${r.rejected.map((x) => `${x.seed} (${x.reason})`).join(", ") || 0}`;
});
on("delays-form", "submit", async () => {
  const r = await call("POST", "/delays", { min_delay: num("min-delay"), max_delay: num("max-delay") });
  return `delays now ${r.min_delay}–${r.max_delay} s`;
});
on("host-form", "submit", async () => {
  const body = { host: $("host").value.trim() };
  for (const [id, key] of [["host-min", "min_delay"], ["host-max", "max_delay"], ["host-quota", "max_uris"]]) {
    if (num(id) !== undefined) body[key] = num(id);
  }
  const r = await call("POST", "/hosts", body);
  return `${r.host}: ${JSON.stringify(r.settings)}; ${r.blocked} queued URIs blocked by quota`;
});
const rule = () => ({ kind: $("reject-kind").value, value: $("reject-value").value.trim() });
on("reject-form", "submit", async () => {
  const r = await call("POST", "/scope/reject", rule());
  return `rule added: ${r.purged} queued URIs purged`;
});
on("reject-remove", "click", async () => {
  const r = await call("DELETE", "/scope/reject", rule());
  return `rule ${r.kind} ${r.value} removed`;
});
on("delete-form", "submit", async () => {
  const r = await call("POST", "/frontier/delete", { uri_regex: $("delete-regex").value.trim() });
  return `${r.deleted} queued URIs deleted`;
});
$("log-filter").addEventListener("input", refresh);
$("log-filter").addEventListener("submit", (ev) => { ev.preventDefault(); refresh(); });
refresh();
setInterval(refresh, 1000);
