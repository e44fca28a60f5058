/* The results explorer (helpers/explore): sortable tables over the page's data, and the item
   view, whose per-paradigm files are loaded by <script> tags (which work from file:// as well).
   No library, no network. */
"use strict";

const DATA = JSON.parse(document.getElementById("explorer-data").textContent);
const GOOD = "#3b75af", BAD = "#e1812c", HIGHLIGHT = "#fff2b3";
const loaded = {}, waiting = {};

window.explorerItems = function (path, payload) {
  loaded[path] = payload;
  (waiting[path] || []).forEach((done) => done(payload));
  delete waiting[path];
};

function el(tag, attrs, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
  return node;
}

const pct = (v) => (v === null || v === undefined ? "–" : (100 * v).toFixed(1));
const num = (v, digits) => (v === null || v === undefined ? "–" : Number(v).toFixed(digits));
const shade = (v) => (v === null || v === undefined ? null : `background:hsl(${Math.round(120 * v)},55%,86%)`);

/* ------------------------------------------------------------ sortable tables */
function compare(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined || a === "") return 1;   // missing values last, either way
  if (b === null || b === undefined || b === "") return -1;
  return typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b));
}

/* columns: [{key, label, num, format(row), value(row), style(row), cls(row), title}]; state keeps the sort */
function renderTable(holder, id, columns, rows, state, onRow) {
  const value = (c, r) => (c.value ? c.value(r) : r[c.key]);
  if (state.key) {
    const c = columns.find((col) => col.key === state.key);
    if (c) {
      const sign = state.dir === "ascending" ? 1 : -1;
      rows = rows.slice().sort((x, y) => {
        const a = value(c, x), b = value(c, y);
        const missing = (v) => v === null || v === undefined || v === "";
        if (missing(a) || missing(b)) return compare(a, b);
        return sign * compare(a, b);
      });
    }
  }
  const head = el("tr", {}, columns.map((c) => el("th", {
    "data-key": c.key, class: c.num ? "num" : null, title: c.title || null,
    "aria-sort": state.key === c.key ? state.dir : null,
    onclick: () => {
      state.dir = state.key === c.key ? (state.dir === "ascending" ? "descending" : "ascending")
        : (c.num ? "descending" : "ascending");
      state.key = c.key;
      renderTable(holder, id, columns, rows, state, onRow);
    },
  }, c.label)));
  const body = el("tbody", {}, rows.map((r, k) => el("tr", {
    class: onRow ? "clickable" : null, "data-row": r.i ?? k, onclick: onRow ? () => onRow(r) : null,
  }, columns.map((c) => el("td", {
    class: [c.num ? "num" : "", c.cls ? c.cls(r) : ""].join(" ").trim() || null,
    style: c.style ? c.style(r) : null, title: c.tip ? c.tip(r) : null,
    "data-value": c.num ? value(c, r) : null,
  }, c.format ? c.format(r) : (value(c, r) ?? "–"))))));
  holder.replaceChildren(el("div", { class: "table-wrap" }, el("table", { class: "ex", id }, el("thead", {}, head), body)));
}

function select(id, options, value, onchange) {
  const box = el("select", { id, onchange: (e) => onchange(e.target.value) },
    options.map(([v, label]) => el("option", { value: v }, label)));
  box.value = value;
  return box;
}

/* ------------------------------------------------------------ overview */
const overviewState = { dataset: "", filter: "", sort: { key: "best_accuracy", dir: "descending" } };

function showOverview() {
  const s = overviewState;
  const rows = DATA.overview.filter((r) => (!s.dataset || r.dataset === s.dataset) &&
    (!s.filter || `${r.dataset} ${r.model} ${r.method}`.toLowerCase().includes(s.filter.toLowerCase())));
  const controls = el("div", { class: "controls" },
    el("label", {}, "dataset", select("overview-dataset", [["", "all datasets"], ...DATA.datasets.map((d) => [d, d])],
      s.dataset, (v) => { s.dataset = v; showOverview(); })),
    el("label", {}, "filter", el("input", { id: "overview-filter", value: s.filter, placeholder: "model or method",
      onchange: (e) => { s.filter = e.target.value; showOverview(); } })));
  const columns = [
    { key: "dataset", label: "dataset" }, { key: "model", label: "model" },
    { key: "method", label: "method", tip: (r) => DATA.methods[r.method] || null },
    { key: "templates", label: "templates", num: true },
    { key: "accuracy_mean", label: "mean (%)", num: true, format: (r) => pct(r.accuracy_mean), style: (r) => shade(r.accuracy_mean),
      title: "accuracy averaged over the method's templates" },
    { key: "accuracy_sd", label: "sd", num: true, format: (r) => pct(r.accuracy_sd), title: "sd over templates" },
    { key: "best_template", label: "best template" },
    { key: "best_accuracy", label: "best (%)", num: true, format: (r) => pct(r.best_accuracy), style: (r) => shade(r.best_accuracy),
      title: "accuracy at the method's best template" },
    { key: "pairs", label: "pairs", num: true }, { key: "ties", label: "ties", num: true },
    { key: "expected_accuracy_mean", label: "ties half (%)", num: true, format: (r) => pct(r.expected_accuracy_mean),
      title: "expected accuracy, a tie counted half, averaged over templates" },
    { key: "accuracy_ties_right_mean", label: "ties right (%)", num: true, format: (r) => pct(r.accuracy_ties_right_mean),
      title: "accuracy with every tie counted right, averaged over templates (the mean counts every tie wrong)" },
  ];
  const holder = el("div");
  renderTable(holder, "overview-table", columns, rows, s.sort,
    (r) => go(`paradigms/${enc(r.dataset)}/${enc(r.model)}`));
  const figures = el("div", { class: "figures" }, (s.dataset ? [s.dataset] : DATA.datasets)
    .map((d) => el("img", { src: DATA.figures[d].accuracy, alt: `accuracy per method on ${d}`, loading: "lazy" })));
  document.getElementById("overview").replaceChildren(controls,
    el("p", { class: "hint" }, "Click a column to sort; click a row for its paradigms."), holder, figures);
}

/* ------------------------------------------------------------ paradigms */
const paradigmState = { dataset: "", model: "", value: "accuracy_best", filter: "", sort: { key: "paradigm", dir: "ascending" } };

function showParadigms() {
  const s = paradigmState;
  s.dataset = s.dataset || DATA.datasets[0];
  const models = DATA.models[s.dataset];
  if (s.model && !models.includes(s.model)) s.model = "";
  const methods = DATA.method_order.filter((m) => DATA.paradigms.some((r) => r.dataset === s.dataset && r.method === m));
  const wide = {};
  for (const r of DATA.paradigms) {
    if (r.dataset !== s.dataset || (s.model && r.model !== s.model)) continue;
    if (s.filter && !`${r.paradigm} ${r.phenomenon}`.toLowerCase().includes(s.filter.toLowerCase())) continue;
    const key = `${r.model}\u0000${r.paradigm}`;
    wide[key] = wide[key] || { paradigm: r.paradigm, phenomenon: r.phenomenon, model: r.model, pairs: r.pairs };
    wide[key][`m:${r.method}`] = r[s.value];
    wide[key].pairs = Math.max(wide[key].pairs, r.pairs);
  }
  const controls = el("div", { class: "controls" },
    el("label", {}, "dataset", select("paradigm-dataset", DATA.datasets.map((d) => [d, d]), s.dataset,
      (v) => { s.dataset = v; showParadigms(); })),
    el("label", {}, "model", select("paradigm-model", [["", "all models"], ...models.map((m) => [m, m])], s.model,
      (v) => { s.model = v; showParadigms(); })),
    el("label", {}, "templates", select("paradigm-value", [["accuracy_best", "best template"], ["accuracy_mean", "mean over templates"],
      ["expected_accuracy_best", "best template, ties half"], ["expected_accuracy_mean", "mean over templates, ties half"],
      ["accuracy_ties_right_best", "best template, ties right"], ["accuracy_ties_right_mean", "mean over templates, ties right"]],
      s.value, (v) => { s.value = v; showParadigms(); })),
    el("label", {}, "filter", el("input", { id: "paradigm-filter", value: s.filter, placeholder: "paradigm or phenomenon",
      onchange: (e) => { s.filter = e.target.value; showParadigms(); } })));
  const columns = [{ key: "paradigm", label: "paradigm" }, { key: "phenomenon", label: "phenomenon" },
    { key: "model", label: "model" }, { key: "pairs", label: "pairs", num: true },
    ...methods.map((m) => ({ key: `m:${m}`, label: m, num: true, title: DATA.methods[m] || null,
      format: (r) => pct(r[`m:${m}`]), style: (r) => shade(r[`m:${m}`]) }))];
  const holder = el("div");
  renderTable(holder, "paradigm-table", columns, Object.values(wide), s.sort,
    (r) => go(`items/${enc(s.dataset)}/${enc(r.model)}/${enc(r.paradigm)}`));
  document.getElementById("paradigms").replaceChildren(controls,
    el("p", { class: "hint" }, "Accuracy (%) of each method per paradigm (a tie wrong, unless the choice above says half or right). Click a column to sort; click a row for its items."),
    holder, el("div", { class: "figures" }, el("img", { src: DATA.figures[s.dataset].paradigms,
      alt: `accuracy per paradigm on ${s.dataset}`, loading: "lazy" })));
}

/* ------------------------------------------------------------ items */
const itemState = { dataset: "", model: "", paradigm: "", item: null, sort: { key: "id", dir: "ascending" } };

function loadItems(path, done) {
  if (loaded[path]) return done(loaded[path]);
  if (waiting[path]) return waiting[path].push(done);
  waiting[path] = [done];
  const tag = el("script", { src: path, charset: "utf-8" });
  tag.onerror = () => {
    delete waiting[path];
    document.getElementById("item-table").replaceChildren(
      el("div", { class: "message error" }, `Could not load ${path}: rebuild the explorer (python -m helpers explore).`));
  };
  document.head.append(tag);
}

function verdict(decision, k) {
  if (decision.c[k] === null || decision.c[k] === undefined) return null;
  return decision.t[k] ? "tie" : decision.c[k] >= 1 ? "right" : decision.c[k] <= 0 ? "wrong" : "partly";
}

function showItems() {
  const s = itemState;
  s.dataset = s.dataset || DATA.datasets[0];
  const models = Object.keys(DATA.items[s.dataset] || {});
  if (!models.includes(s.model)) s.model = models[0] || "";
  const paradigms = Object.keys((DATA.items[s.dataset] || {})[s.model] || {});
  if (!paradigms.includes(s.paradigm)) s.paradigm = paradigms[0] || "";
  const controls = el("div", { class: "controls" },
    el("label", {}, "dataset", select("item-dataset", DATA.datasets.map((d) => [d, d]), s.dataset,
      (v) => go(`items/${enc(v)}`))),
    el("label", {}, "model", select("item-model", models.map((m) => [m, m]), s.model,
      (v) => go(`items/${enc(s.dataset)}/${enc(v)}`))),
    el("label", {}, "paradigm", select("item-paradigm", paradigms.map((p) => [p, p]), s.paradigm,
      (v) => go(`items/${enc(s.dataset)}/${enc(s.model)}/${enc(v)}`))));
  const view = el("div", { id: "item-view" }, el("p", { class: "hint" }, "Click a pair below to see it here."));
  const table = el("div", { id: "item-table" }, el("div", { class: "message" }, "loading the pairs ..."));
  document.getElementById("items").replaceChildren(controls, view, table);
  const path = ((DATA.items[s.dataset] || {})[s.model] || {})[s.paradigm];
  if (!path) return table.replaceChildren(el("div", { class: "message" }, "No pairs stored for this choice."));
  loadItems(path, (payload) => {
    if (payload.path !== path || s.paradigm !== payload.paradigm) return;
    itemTable(payload, table);
    if (s.item !== null && payload.pairs[s.item]) itemView(payload, s.item);
  });
}

function itemTable(payload, holder) {
  const byMethod = {};
  payload.columns.forEach((c, k) => (byMethod[c.method] = byMethod[c.method] || []).push(k));
  const rows = payload.pairs.map((p, i) => {
    const row = { i, id: p.id, good: p.good, bad: p.bad };
    for (const [method, ks] of Object.entries(byMethod)) {
      const seen = ks.map((k) => verdict(payload.decisions[k], i)).filter((v) => v !== null);
      row[`m:${method}`] = seen.length ? seen.filter((v) => v === "right").length / seen.length : null;
      row[`n:${method}`] = seen;
    }
    const lp = payload.columns.findIndex((c) => c.method === "lp");
    row.margin = lp >= 0 && payload.decisions[lp].g[i] !== null ? payload.decisions[lp].g[i] - payload.decisions[lp].b[i] : null;
    return row;
  });
  const mark = (seen) => (seen.length === 1 ? { right: "✓", wrong: "✗", tie: "tie", partly: "½" }[seen[0]]
    : `${seen.filter((v) => v === "right").length}/${seen.length}`);
  const columns = [{ key: "id", label: "pair", num: true },
    { key: "good", label: "acceptable", cls: () => "sentence" }, { key: "bad", label: "unacceptable", cls: () => "sentence" },
    ...Object.keys(byMethod).map((m) => ({ key: `m:${m}`, label: m, num: true, title: DATA.methods[m] || null,
      format: (r) => (r[`n:${m}`].length ? mark(r[`n:${m}`]) : "–"),
      cls: (r) => (r[`m:${m}`] === null ? "" : r[`m:${m}`] >= 1 ? "right" : r[`m:${m}`] <= 0 ? "wrong" : "partly"),
      tip: (r) => r[`n:${m}`].join(", ") })),
    { key: "margin", label: "LP margin", num: true, format: (r) => (r.margin === null ? "–" : (r.margin >= 0 ? "+" : "") + r.margin.toFixed(2)),
      title: "LP (acceptable) − LP (unacceptable), nats: the lowest is the hardest pair" }];
  renderTable(holder, "pairs-table", columns, rows, itemState.sort,
    (r) => go(`items/${enc(payload.dataset)}/${enc(payload.model)}/${enc(payload.paradigm)}/${r.i}`));
}

/* ------------------------------------------------------------ one pair */
function prefers(decision, k) {
  const v = verdict(decision, k);
  return v === null ? "–" : { right: "acceptable ✓", wrong: "unacceptable ✗", tie: "tie (counts as wrong)",
    partly: `credit ${decision.c[k]}` }[v];
}

function itemView(payload, i) {
  const p = payload.pairs[i];
  document.querySelectorAll("#pairs-table tbody tr").forEach((tr) => tr.classList.toggle("selected", Number(tr.dataset.row) === i));
  const rows = payload.columns.map((c, k) => ({ method: c.method, template: c.template, g: payload.decisions[k].g[i],
    b: payload.decisions[k].b[i], prefers: prefers(payload.decisions[k], i), v: verdict(payload.decisions[k], i) }))
    .filter((r) => r.v !== null);
  const decisions = el("div");
  renderTable(decisions, "decision-table", [
    { key: "method", label: "method", tip: (r) => DATA.methods[r.method] || null }, { key: "template", label: "template" },
    { key: "g", label: "score (acceptable)", num: true, format: (r) => num(r.g, 4) },
    { key: "b", label: "score (unacceptable)", num: true, format: (r) => num(r.b, 4) },
    { key: "prefers", label: "prefers", cls: (r) => r.v }], rows, {}, null);
  const view = document.getElementById("item-view");
  view.replaceChildren(
    el("h3", {}, `${payload.dataset} · ${payload.paradigm}${payload.phenomenon ? ` (${payload.phenomenon})` : ""} · pair ${p.id} · ${payload.model}`),
    el("div", { class: "sentences" },
      el("div", {}, el("span", { class: "label" }, "acceptable"), el("span", { id: "item-good" }, p.good ?? "(sentence not stored)")),
      el("div", {}, el("span", { class: "label" }, "unacceptable"), el("span", { id: "item-bad" }, p.bad ?? "(sentence not stored)"))),
    decisions, bars(p.tokens, payload),
    ...(payload.notes || []).map((n) => el("p", { class: "hint" }, n)));
  view.scrollIntoView({ block: "nearest" });
}

function panel(title, labels, values, colors, shaded, top, cls, tips) {
  /* bars of ``values`` (one list per column) over ``labels`` (a line break: two lines), on a 0..top bits axis */
  const h = 130, left = 44, rotate = labels.length > 14;
  const lines = labels.map((l) => String(l).split("\n"));
  const widths = lines.map((ls) => (rotate ? 30 : Math.max(34, 7 * Math.max(...ls.map((x) => x.length)) + 10)));
  const xs = widths.reduce((acc, w) => [...acc, acc[acc.length - 1] + w], [left]);
  const base = rotate ? 14 + 6.5 * Math.max(...lines.map((ls) => ls.join(" / ").length)) : 16 + 13 * Math.max(...lines.map((ls) => ls.length));
  const width = xs[xs.length - 1] + 10, y = (v) => h - (h * (v ?? 0)) / top;
  const svg = el("svg:svg", { width, height: h + Math.min(base, 120) + 8, class: `bars-${cls}` });
  svg.append(el("svg:text", { x: 10, y: h / 2 + 4, "font-size": 10, fill: "#444", transform: `rotate(-90 10 ${h / 2 + 4})`,
    "text-anchor": "middle" }, "bits"));
  for (let t = 0; t <= top; t += Math.max(1, Math.round(top / 4))) {
    svg.append(el("svg:line", { x1: left - 3, x2: width, y1: y(t) + 4, y2: y(t) + 4, stroke: "#eee" }),
      el("svg:text", { x: left - 6, y: y(t) + 8, "text-anchor": "end", "font-size": 9, fill: "#666" }, String(t)));
  }
  lines.forEach((ls, k) => {
    const x = xs[k], w = widths[k];
    if (shaded[k]) svg.append(el("svg:rect", { x, y: 4, width: w, height: h, fill: HIGHLIGHT }));
    values[k].forEach((v, j) => {
      const bw = (w * 0.7) / values[k].length;
      const bar = el("svg:rect", { class: `bar ${cls}`, x: x + w * 0.15 + j * bw, y: y(v) + 4, width: bw - 1,
        height: Math.max(0, h - y(v)), fill: colors[j], "data-surprisal": v === null ? "" : String(v) });
      bar.append(el("svg:title", {}, `${tips[k]}: ${v === null ? "–" : v.toFixed(2)} bits`));
      svg.append(bar);
    });
    const tx = x + w / 2, ty = h + 18;
    const label = el("svg:text", { class: `label ${cls}-label`, x: tx, y: ty, "font-size": 11, "font-weight": shaded[k] ? "bold" : null,
      "text-anchor": rotate ? "end" : "middle", transform: rotate ? `rotate(-45 ${tx} ${ty})` : null });
    if (rotate) label.textContent = ls.join(" / ");
    else ls.forEach((line, j) => label.append(el("svg:tspan", { x: tx, dy: j ? 13 : 0 }, line)));
    svg.append(label);
  });
  return el("div", {}, el("div", { class: "panel-title" }, title), svg);
}

function bars(tokens, payload) {
  if (!tokens) return el("p", { class: "hint" }, payload.tokens_from ? "No token log-probs stored for this pair."
    : "No score file of the LP pass (lp, meanlp, ...) with token log-probs for this model: no token view.");
  const sides = { good: tokens.good, bad: tokens.bad };
  const wordSums = {}, differs = { good: new Set(), bad: new Set() };
  for (const [side, t] of Object.entries(sides)) {
    if (!t.words) continue;
    wordSums[side] = t.words.map(() => 0);
    t.s.forEach((v, k) => { wordSums[side][t.w[k]] += v ?? 0; });
  }
  (tokens.columns || []).forEach(([g, b, d]) => { if (d) { if (g !== null) differs.good.add(g); if (b !== null) differs.bad.add(b); } });
  const all = [...tokens.good.s, ...tokens.bad.s, ...Object.values(wordSums).flat()].filter((v) => v !== null);
  const top = Math.max(1, Math.ceil(Math.max(...all) * 1.05));
  const out = el("div", { class: "bars" });
  if (tokens.columns) {
    const labels = tokens.columns.map(([g, b, d]) => (d ? `${g === null ? "–" : tokens.good.words[g]}\n${b === null ? "–" : tokens.bad.words[b]}`
      : tokens.good.words[g]));
    out.append(panel("per word (shaded: the words that differ; blue acceptable, orange unacceptable)", labels,
      tokens.columns.map(([g, b]) => [g === null ? 0 : wordSums.good[g], b === null ? 0 : wordSums.bad[b]]),
      [GOOD, BAD], tokens.columns.map(([, , d]) => d), top, "word", labels.map((l) => l.replace("\n", " / "))));
  }
  for (const [side, name, color] of [["good", "acceptable", GOOD], ["bad", "unacceptable", BAD]]) {
    const t = sides[side], total = t.s.reduce((a, v) => a + (v ?? 0), 0);
    const shaded = t.w ? t.w.map((w) => differs[side].has(w)) : t.s.map(() => false);
    out.append(panel(`per token, ${name}: ${total.toFixed(1)} bits in ${t.s.length} tokens (from ${payload.tokens_from})`,
      t.t.map((x, k) => (x.trim() || "␣") + (t.part && t.part[k][1] > 1 ? ` ${t.part[k][0]}/${t.part[k][1]}` : "")),
      t.s.map((v) => [v]), [color], shaded, top, `tok-${side}`, t.t.map((x) => JSON.stringify(x))));
  }
  return out;
}

/* ------------------------------------------------------------ tabs and addresses */
const enc = encodeURIComponent;

function go(hash) {
  if (location.hash.slice(1) === hash) route(); else location.hash = hash;
}

function route() {
  const parts = location.hash.slice(1).split("/").map(decodeURIComponent);
  const tab = ["overview", "paradigms", "items"].includes(parts[0]) ? parts[0] : "overview";
  document.querySelectorAll("nav.tabs button").forEach((b) => b.classList.toggle("active", b.dataset.tab === tab));
  document.querySelectorAll("section.tab").forEach((s) => s.classList.toggle("active", s.id === tab));
  if (tab === "overview") return showOverview();
  if (tab === "paradigms") {
    if (parts[1]) { paradigmState.dataset = parts[1]; paradigmState.model = parts[2] || ""; }
    return showParadigms();
  }
  const s = itemState, same = parts[1] === s.dataset && parts[2] === s.model && parts[3] === s.paradigm;
  const item = parts[4] !== undefined && parts[4] !== "" ? Number(parts[4]) : null;
  const path = ((DATA.items[s.dataset] || {})[s.model] || {})[s.paradigm];
  if (same && item !== null && loaded[path] && document.getElementById("pairs-table")) {
    s.item = item;
    return itemView(loaded[path], item);
  }
  if (parts.length > 1) Object.assign(s, { dataset: parts[1], model: parts[2] || "", paradigm: parts[3] || "", item });
  showItems();
}

document.getElementById("tabs").replaceChildren(...["overview", "paradigms", "items"].map((t) =>
  el("button", { "data-tab": t, id: `tab-${t}`, onclick: () => go(t) }, t[0].toUpperCase() + t.slice(1))));
document.getElementById("notes").replaceChildren(...DATA.notes.map((n) => el("li", {}, n)));
window.addEventListener("hashchange", route);
route();
