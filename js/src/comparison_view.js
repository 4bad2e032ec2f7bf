// ComparisonView: run B against run A. Per-metric and per-criterion differences (B − A) as bars
// with their bootstrap intervals, largest change first; click a metric to list its cases by the
// size of their change, and a case to read both runs' critiques side by side. Model text only
// ever enters the page as text (h() builds text nodes).
import { h, append, mountRoot, clear, listen, field, mockBanner } from "./lib/dom.js";
import { isNum, fmtCount, verdictClass } from "./lib/format.js";
import { axisTicks } from "./lib/charts.js";

/** 0.75 -> "75.0%"; signed adds "+" to gains. @param {unknown} v @param {boolean} [signed] */
export function pct(v, signed = false) {
  if (!isNum(v)) return "n/a";
  const n = Math.round(1000 * v) / 10 + 0;
  return `${signed && n > 0 ? "+" : ""}${n.toFixed(1)}%`;
}

/** A level difference: "+0.50". @param {unknown} v */
export function levels(v) {
  return isNum(v) ? `${v > 0 ? "+" : ""}${v.toFixed(2)}` : "n/a";
}

/**
 * One bar on a symmetric axis: the interval as a band, the difference as a tick.
 * @param {any} r a row with diff, ci_low, ci_high
 * @param {number} span half-width of the axis
 */
function bar(r, span) {
  const x = (/** @type {number} */ v) => `${(50 + (50 * Math.max(-span, Math.min(span, v))) / span).toFixed(2)}%`;
  const el = h("div", { class: "rl-hbar" }, h("i", { style: "left:50%" }));
  if (isNum(r.ci_low) && isNum(r.ci_high)) el.append(h("span", { class: "rl-ci", style: `left:${x(r.ci_low)};width:calc(${x(r.ci_high)} - ${x(r.ci_low)});opacity:0.35` }));
  if (isNum(r.diff)) {
    const tint = r.diff > 0 ? "var(--rl-good)" : r.diff < 0 ? "var(--rl-bad)" : "var(--rl-fg2)";
    el.append(h("span", { class: "rl-diff", style: `left:calc(${x(r.diff)} - 2px);width:4px;background:${tint}` }));
  }
  return el;
}

// the bar keeps a readable width; the figures beside it wrap instead of squeezing it
const GRID = "grid-template-columns:max-content minmax(160px,1fr) minmax(0,2fr)";

/**
 * The bars' shared axis, as the grid's last row: what is measured, ticks from -span to +span
 * (0 = no change), and which side is whose gain.
 * @param {number} span @param {string[]} names @param {string} what @param {(v: number) => string} format
 */
function axisRow(span, names, what, format) {
  return [
    h("span", { class: "rl-muted rl-small rl-axis-title", style: "text-align:right" }, what),
    h("div", { class: "rl-forest-axis rl-cmp-axis" }, axisTicks(-span, span, 5, format)),
    h("span", { class: "rl-muted rl-small rl-axis-sides" }, `◀ ${names[0]} better · ${names[1]} better ▶`),
  ];
}

/**
 * Tick labels in percent, whole when every tick is (short labels fit a narrow axis).
 * @param {number} span @returns {(v: number) => string}
 */
export function tickPct(span) {
  const whole = [0.5, 1].every((f) => Math.abs(Math.round(1000 * span * f) / 10 - Math.round(100 * span * f)) < 1e-9);
  return (v) => {
    const n = Math.round(1000 * v) / 10 + 0;
    return `${n > 0 ? "+" : ""}${whole ? n.toFixed(0) : n.toFixed(1)}%`;
  };
}

/** @param {any[]} rows */
const spanOf = (rows, floor) => Math.max(floor, ...rows.flatMap((r) => [r.ci_low, r.ci_high, r.diff].filter(isNum).map(Math.abs)));

/** Per-metric bars, largest change first; a click lists that metric's cases. @param {any} model */
export function metricBars(model) {
  const rows = model.get("metrics") || [];
  if (!rows.length) return null;
  const names = model.get("names") || ["A", "B"];
  const chosen = model.get("metric");
  const conf = Math.round(100 * ((model.get("overview") || {}).confidence ?? 0.95));
  const span = spanOf(rows, 0.05);
  return h(
    "div",
    {},
    h("div", { class: "rl-h" }, `Per metric: ${names[1]} − ${names[0]} (mean, ${conf}% bootstrap interval)`),
    h(
      "div",
      { class: "rl-bars rl-metric-bars", style: GRID },
      rows.map((r) => {
        const pass = isNum(r.pass_a) ? ` · pass ${pct(r.pass_a)} → ${pct(r.pass_b)} (McNemar p = ${isNum(r.mcnemar_p) ? r.mcnemar_p.toPrecision(2) : "n/a"})` : "";
        const errs = r.errored ? ` · ${r.errored} errored` : "";
        return [
          h(
            "button",
            {
              class: `rl-cname rl-metric${r.metric === chosen ? " rl-on" : ""}`,
              type: "button",
              style: `text-align:left;cursor:pointer;border:1px solid var(--rl-border, #ccc);border-radius:4px;padding:1px 8px;background:${r.metric === chosen ? "var(--rl-accent-soft, #e3f0fd)" : "transparent"};color:inherit;font:inherit`,
              "aria-pressed": r.metric === chosen ? "true" : "false",
              dataset: { metric: r.metric },
              title: `list ${r.metric}'s cases by change`,
              onclick: () => {
                model.set("metric", r.metric);
                model.save_changes();
              },
            },
            r.metric,
          ),
          bar(r, span),
          h(
            "span",
            { class: "rl-small rl-delta" },
            h("b", {}, pct(r.diff, true)),
            ` [${pct(r.ci_low, true)}, ${pct(r.ci_high, true)}] · ${pct(r.mean_a)} → ${pct(r.mean_b)} · better ${r.better} / same ${r.same} / worse ${r.worse}${pass}${errs}`,
          ),
        ];
      }),
      axisRow(span, names, `${names[1]} − ${names[0]}`, tickPct(span)),
    ),
  );
}

/** Per-criterion bars (level differences), largest change first. @param {any[]} rows */
export function criterionBars(rows, names = ["A", "B"]) {
  if (!Array.isArray(rows) || rows.length === 0) return null;
  const span = spanOf(rows, 0.5);
  return h(
    "div",
    {},
    h("div", { class: "rl-h" }, `Per criterion: ${names[1]} − ${names[0]}, mean level difference (interval), largest change first`),
    h(
      "div",
      { class: "rl-bars rl-criterion-bars", style: GRID },
      rows.map((r) => [
        h("span", { class: "rl-cname", dataset: { criterion: r.criterion } }, `${r.metric} · ${r.criterion}`),
        bar(r, span),
        h("span", { class: "rl-small" }, h("b", {}, levels(r.diff)), ` [${levels(r.ci_low)}, ${levels(r.ci_high)}] · better ${r.better} / same ${r.same} / worse ${r.worse}`),
      ]),
      axisRow(span, names, "levels", levels),
    ),
  );
}

/** @param {any} model */
export function caseList(model) {
  const metric = model.get("metric");
  if (!metric) return null;
  const names = model.get("names") || ["A", "B"];
  const cases = model.get("cases") || [];
  const total = Number(model.get("case_total") || 0);
  const current = Number(model.get("item"));
  return h(
    "div",
    { class: "rl-listing" },
    h("div", { class: "rl-h" }, `${metric}: ${total} case${total === 1 ? "" : "s"} by size of change${total > cases.length ? ` (first ${cases.length} listed)` : ""}`),
    cases.map((c, i) =>
      h(
        "div",
        {
          class: `rl-tr rl-item${i === current ? " rl-selected" : ""}`,
          style: "padding:4px 8px;gap:10px;align-items:center;cursor:pointer",
          dataset: { index: String(i) },
          onclick: () => {
            model.set("item", i === current ? -1 : i);
            model.save_changes();
          },
        },
        h("span", { class: "rl-key", style: "min-width:6em" }, c.key ?? ""),
        h("span", { class: "rl-muted" }, `${names[0]} ${c.error_a ? "error" : pct(c.score_a)} → ${names[1]} ${c.error_b ? "error" : pct(c.score_b)}`),
        h("b", { style: isNum(c.diff) && c.diff !== 0 ? `color:${c.diff > 0 ? "var(--rl-good)" : "var(--rl-bad)"}` : "" }, isNum(c.diff) ? pct(c.diff, true) : "not paired"),
        c.verdict_a || c.verdict_b ? h("span", { class: "rl-muted rl-small" }, `${c.verdict_a ?? "—"} → ${c.verdict_b ?? "—"}`) : null,
      ),
    ),
  );
}

/** One run's critique of the case. @param {any} s */
function side(s) {
  if (s.missing) return h("div", { class: "rl-side" }, h("div", { class: "rl-side-title" }, s.name), h("div", { class: "rl-muted" }, "this case is not in this run"));
  return h(
    "div",
    { class: "rl-side" },
    h("div", { class: "rl-side-title" }, s.name, h("span", { class: "rl-badge" }, pct(s.score)), s.verdict ? h("span", { class: `rl-badge ${verdictClass(s.verdict)}` }, s.verdict) : null),
    s.error ? h("div", { class: "rl-badge rl-err", style: "white-space:normal" }, s.error) : null,
    (s.criteria || []).length
      ? h(
          "div",
          { class: "rl-crit-list" },
          s.criteria.map((c) =>
            h(
              "div",
              { class: "rl-crit-item", style: "margin:4px 0" },
              h("div", {}, h("b", {}, c.name ?? ""), " ", h("span", { class: "rl-badge" }, c.label ?? (isNum(c.level) ? String(c.level) : "")), c.question ? h("span", { class: "rl-muted rl-small" }, ` ${c.question}`) : null),
              c.evidence ? h("div", { class: "rl-muted rl-small" }, `evidence: ${c.evidence}`) : null,
              c.reasoning ? h("div", { class: "rl-muted rl-small" }, c.reasoning) : null,
            ),
          ),
        )
      : null,
    s.rationale ? field("rationale", s.rationale) : null,
    (s.fields || []).map((f) => field(f.name, f.text)),
  );
}

/** @param {any} detail */
export function sideBySide(detail) {
  if (!detail || !Array.isArray(detail.sides)) return null;
  return h("div", { class: "rl-case" }, h("div", { class: "rl-h" }, `case ${detail.key ?? ""} · ${detail.metric ?? ""}`), h("div", { class: "rl-sides" }, detail.sides.map(side)));
}

/** @param {{ model: any, el: HTMLElement }} ctx */
function render({ model, el }) {
  const root = mountRoot(el, "comparison");
  const draw = () => {
    clear(root);
    const names = model.get("names") || ["A", "B"];
    const o = model.get("overview") || {};
    append(root, [
        mockBanner(model.get("is_mock"), model.get("judge")),
        model.get("title") ? h("div", { class: "rl-title", style: "margin-bottom:6px" }, model.get("title")) : null,
        h("div", { class: "rl-muted rl-overview" }, `${fmtCount(o.cases ?? 0, "case")} paired · only in ${names[0]}: ${o.only_a ?? 0} · only in ${names[1]}: ${o.only_b ?? 0} · errored rows left out: ${o.errored ?? 0}`),
        metricBars(model),
        criterionBars(model.get("criteria"), names),
        caseList(model),
        sideBySide(model.get("detail")),
    ]);
  };
  draw();
  const unlisten = listen(model, ["names", "overview", "metrics", "criteria", "metric", "cases", "case_total", "item", "detail", "title", "is_mock"], draw);
  return () => {
    unlisten();
    clear(el);
  };
}

export default { render };
