// Charts as SVG built with createElementNS: a score histogram per metric, per-criterion result
// bars (where answers fail), win/tie/loss bars with their intervals. Labels (metric and criterion
// names come from users and judges) only ever enter as text nodes; tooltips are <title> text.
import { h } from "./dom.js";
import { isNum, fmtInt, fmtCount } from "./format.js";

const NS = "http://www.w3.org/2000/svg";

/**
 * @param {string} tag
 * @param {Record<string, string|number>} [attrs]
 * @param {...(Node|string|null)} children
 */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) if (c != null) el.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  return el;
}
/** @param {string} text */
const tip = (text) => s("title", {}, text);
const pct = (v, d = 0) => (isNum(v) ? `${(100 * v).toFixed(d)}%` : "—");

/** @param {string} cls @param {number} w @param {number} hgt @param {string} label */
function svgRoot(cls, w, hgt, label) {
  return s("svg", { class: `rl-chart ${cls}`, width: w, height: hgt, viewBox: `0 0 ${w} ${hgt}`, role: "img", "aria-label": label });
}

/**
 * Score distribution: ten 10-point bins (pointwise) or the 5-point scale (pairwise).
 * @param {any} chart one metric's chart data from the kernel
 */
export function histogram(chart, width = 300, height = 146) {
  const pairwise = chart.kind === "pairwise";
  const bars = pairwise
    ? (chart.choices || []).map((c) => ({ label: c.label, count: c.count }))
    : (chart.histogram || []).map((b) => ({ label: `${Math.round(100 * b.low)}–${Math.round(100 * b.high)}%`, count: b.count }));
  if (!bars.length) return null;
  const top = Math.max(1, ...bars.map((b) => b.count));
  const left = 46, bottom = 32, topPad = 6, right = 6;
  const pw = width - left - right, ph = height - bottom - topPad;
  const step = pw / bars.length;
  const svg = svgRoot("rl-hist", width, height, `score distribution of ${chart.metric}`);
  svg.append(s("text", { x: left - 4, y: topPad + 8, "text-anchor": "end", class: "rl-axis" }, fmtInt(top)), s("text", { x: left - 4, y: topPad + ph, "text-anchor": "end", class: "rl-axis" }, "0"));
  svg.append(s("line", { x1: left, y1: topPad + ph, x2: left + pw, y2: topPad + ph, class: "rl-axis-line" }));
  bars.forEach((b, i) => {
    const bh = (ph * b.count) / top;
    svg.append(s("rect", { x: (left + i * step + 1).toFixed(1), y: (topPad + ph - bh).toFixed(1), width: Math.max(step - 2, 1).toFixed(1), height: bh.toFixed(1), class: "rl-bar", "data-label": b.label }, tip(`${b.label}: ${fmtInt(b.count)}`)));
  });
  const tickY = topPad + ph + 12;
  if (pairwise) {
    svg.append(s("text", { x: left, y: tickY, class: "rl-axis" }, "candidate better"), s("text", { x: left + pw, y: tickY, "text-anchor": "end", class: "rl-axis" }, "baseline better"));
  } else {
    for (const t of [0, 50, 100]) svg.append(s("text", { x: left + (pw * t) / 100, y: tickY, "text-anchor": t === 0 ? "start" : t === 100 ? "end" : "middle", class: "rl-axis" }, `${t}%`));
  }
  // axis titles: what is counted (rows) against what (the score, or the pairwise verdict)
  svg.append(s("text", { x: left + pw / 2, y: height - 3, "text-anchor": "middle", class: "rl-axis rl-axis-title" }, pairwise ? "verdict (both orders)" : "score"));
  const yMid = topPad + ph / 2;
  svg.append(s("text", { x: 10, y: yMid, "text-anchor": "middle", transform: `rotate(-90 10 ${yMid})`, class: "rl-axis rl-axis-title" }, "rows"));
  return svg;
}

/**
 * One stacked bar per criterion: rows per result (YES/NO, level, winner); failing share on the right.
 * @param {any} chart
 */
export function criteriaBars(chart, width = 460) {
  const rows = chart.criteria || [];
  if (!rows.length) return null;
  const labelW = 150, rowH = 20, barW = width - labelW - 64;
  const legendY = rowH * rows.length + 6;
  // the legend's items, wrapped onto more lines at the chart's width
  let lx = labelW, line = 0;
  const legend = legendItems(rows).map((item) => {
    const text = item.label.length > 24 ? `${item.label.slice(0, 23)}…` : item.label;
    const itemW = 14 + 6.5 * text.length + 12;
    if (lx + itemW > width && lx > labelW) (lx = labelW), (line += 1);
    const placed = { ...item, text, x: lx, y: legendY + 18 * line };
    lx += itemW;
    return placed;
  });
  const svg = svgRoot("rl-crit-chart", width, legendY + (legend.length ? 18 * (line + 1) : 0), `results per criterion of ${chart.metric}`);
  rows.forEach((row, r) => {
    const y = r * rowH;
    const name = String(row.name ?? "");
    svg.append(s("text", { x: labelW - 6, y: y + 14, "text-anchor": "end", class: "rl-clabel" }, tip(String(row.question || name)), name.length > 24 ? `${name.slice(0, 23)}…` : name));
    let x = labelW;
    const total = row.total || 0;
    const results = row.results || [];
    results.forEach((res, i) => {
      const w = total ? (barW * res.count) / total : 0;
      const cls = segClass(res, i);
      svg.append(s("rect", { x: x.toFixed(1), y: y + 3, width: w.toFixed(1), height: rowH - 6, class: `rl-seg ${cls}`, "data-result": String(res.label) }, tip(`${name}: ${res.label} ${fmtInt(res.count)} of ${fmtInt(total)}`)));
      const short = String(res.label).replace(/^level /, "");
      if (w >= 8 * short.length + 8) svg.append(s("text", { x: (x + w / 2).toFixed(1), y: y + 14, "text-anchor": "middle", class: "rl-seg-label" }, short));
      x += w;
    });
    // pairwise criteria have no pass or fail: their right-hand figure is the baseline's share
    const badWord = chart.kind === "pairwise" ? "baseline" : "fail";
    if (isNum(row.bad_share)) svg.append(s("text", { x: labelW + barW + 6, y: y + 14, class: "rl-axis" }, `${pct(row.bad_share)} ${badWord}`));
  });
  // the legend: each colour once, in the order the bars use them
  const g = s("g", { class: "rl-legend" });
  for (const item of legend) {
    g.append(s("rect", { x: item.x, y: item.y + 3, width: 10, height: 10, class: `rl-swatch ${item.cls}` }), s("text", { x: item.x + 14, y: item.y + 12, class: "rl-axis", "data-legend": item.label }, item.text));
  }
  if (legend.length) svg.append(g);
  return svg;
}

/** The colour class of one result of a stacked bar (shared by the bars and their legend).
 *  @param {any} res @param {number} i */
function segClass(res, i) {
  return res.good === true ? "rl-good" : res.good === false ? "rl-badc" : res.label === "tie" ? "rl-neutral" : `rl-level rl-l${Math.min(i, 4)}`;
}

/** Each colour once with the results it stands for (a critical criterion colours its levels
 *  pass/fail, the others by level), in first-seen order. @param {any[]} rows */
function legendItems(rows) {
  /** @type {Map<string, string[]>} */
  const seen = new Map();
  for (const row of rows) (row.results || []).forEach((/** @type {any} */ res, /** @type {number} */ i) => {
    const cls = segClass(res, i);
    const labels = seen.get(cls) ?? [];
    if (!labels.includes(String(res.label))) labels.push(String(res.label));
    seen.set(cls, labels);
  });
  return [...seen].map(([cls, labels]) => ({ label: labels.join(", "), cls }));
}

/**
 * Win / tie / loss rates as bars with the interval as a whisker, on a 0-100% axis with ticks.
 * @param {any[]} wtl [{label, rate, low, high}]
 */
export function wtlBars(wtl, width = 360, title = "") {
  if (!Array.isArray(wtl) || !wtl.length) return null;
  const labelW = 96, rowH = 22, barW = width - labelW - 48;
  const axisY = rowH * wtl.length + 2;
  const svg = svgRoot("rl-wtl", width, axisY + 16, title || "win tie loss");
  const cls = ["rl-good", "rl-neutral", "rl-badc"];
  wtl.forEach((row, r) => {
    const y = r * rowH;
    svg.append(s("text", { x: labelW - 6, y: y + 15, "text-anchor": "end", class: "rl-clabel" }, String(row.label ?? "")));
    if (isNum(row.rate)) svg.append(s("rect", { x: labelW, y: y + 4, width: (barW * row.rate).toFixed(1), height: rowH - 8, class: `rl-seg ${cls[r % 3]}` }, tip(`${row.label}: ${pct(row.rate, 1)}`)));
    if (isNum(row.low) && isNum(row.high)) {
      const x1 = labelW + barW * row.low, x2 = labelW + barW * row.high, mid = y + rowH / 2;
      svg.append(s("path", { d: `M${x1.toFixed(1)} ${mid - 5}V${mid + 5}M${x1.toFixed(1)} ${mid}H${x2.toFixed(1)}M${x2.toFixed(1)} ${mid - 5}V${mid + 5}`, class: "rl-whisker" }, tip(`95% interval ${pct(row.low)}–${pct(row.high)}`)));
    }
    svg.append(s("text", { x: labelW + barW + 6, y: y + 15, class: "rl-axis" }, pct(row.rate)));
  });
  svg.append(s("line", { x1: labelW, y1: axisY, x2: labelW + barW, y2: axisY, class: "rl-axis-line" }));
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    const x = labelW + barW * t;
    svg.append(s("line", { x1: x, y1: axisY, x2: x, y2: axisY + 3, class: "rl-axis-line" }), s("text", { x, y: axisY + 13, "text-anchor": "middle", class: "rl-axis" }, `${100 * t}%`));
  }
  return svg;
}

/**
 * A horizontal axis with ticks (for forest plots), in HTML so it stretches with the plot
 * without stretching its labels. @param {number} lo @param {number} hi @param {number} [count]
 * @param {((v: number) => string) | null} [format] a tick's label (default: signed, 1-2 decimals)
 */
export function axisTicks(lo, hi, count = 5, format = null) {
  const ticks = [];
  for (let i = 0; i < count; i++) {
    const v = lo + ((hi - lo) * i) / (count - 1);
    const label = format ? format(v) : `${v > 0 ? "+" : ""}${v.toFixed(Math.abs(hi - lo) < 2 ? 2 : 1)}`;
    const pos = (100 * i) / (count - 1);
    const shift = i === 0 ? "0" : i === count - 1 ? "-100%" : "-50%";
    ticks.push(h("span", { class: "rl-tick", style: `left:${pos}%;transform:translateX(${shift})` }, label));
  }
  return h("div", { class: "rl-ticks", role: "img", "aria-label": `axis from ${lo} to ${hi}` }, ticks);
}

/**
 * Every chart of one metric in a card.
 * @param {any} chart
 */
export function chartCard(chart) {
  const parts = [
    histogram(chart),
    chart.kind === "pairwise" ? wtlBars(chart.wtl, 340, `win tie loss of ${chart.metric}`) : null,
    criteriaBars(chart),
    // per-row rubrics name their items q1, q2 ... with other questions on every row: say why
    // their bars are missing rather than add unrelated questions up
    isNum(chart.unshared_criteria) && chart.unshared_criteria > 0
      ? h("div", { class: "rl-muted rl-small rl-unshared" }, `no per-criterion figures for ${fmtInt(chart.unshared_criteria)} criteria: each row's rubric asks its own questions under these names (per-row rubrics), so they are not added up`)
      : null,
  ].filter(Boolean);
  return h(
    "div",
    { class: "rl-chart-card", dataset: { metric: String(chart.metric ?? "") } },
    h("div", { class: "rl-chart-head" }, h("span", { class: "rl-card-name" }, String(chart.metric ?? "")), h("span", { class: "rl-card-kind" }, `${fmtInt(chart.scored)} scored${chart.errors ? ` · ${fmtCount(chart.errors, "error")}` : ""}`)),
    h("div", { class: "rl-chart-row" }, parts),
  );
}
