// CalibrationView: judge vs people. A heat map of verdicts (click a cell to list those
// comparisons, open one to read both sides), the headline agreement figures, and per-criterion
// bars of judge-minus-human with bootstrap intervals.
import { h, append, mountRoot, clear, listen, field, mockBanner } from "./lib/dom.js";
import { isNum } from "./lib/format.js";
import { axisTicks } from "./lib/charts.js";

/** @param {any} r {agree, total, rate} */
const pct = (r) => (r && isNum(r.rate) ? `${Math.round(100 * r.rate)}% (${r.agree}/${r.total})` : "n/a");

/** @param {any} s the summary trait */
export function figures(s) {
  if (!s || !s.with_ties) return null;
  const items = [
    ["with ties", pct(s.with_ties), `random ${Math.round(100 * s.random_with_ties)}%`],
    ["without ties", pct(s.without_ties), `random ${Math.round(100 * s.random_without_ties)}%`],
    ["Cohen's kappa", isNum(s.kappa) ? s.kappa.toFixed(2) : "n/a", isNum(s.kappa_without_ties) ? `without ties ${s.kappa_without_ties.toFixed(2)}` : ""],
  ];
  if (s.human_vs_human) items.push(["human vs human", pct(s.human_vs_human.with_ties), `without ties ${pct(s.human_vs_human.without_ties)}`]);
  if (s.judge_inconsistent) items.push(["swap-inconsistent", pct(s.judge_inconsistent), "judge rows"]);
  return h(
    "div",
    { class: "rl-cards" },
    items.map(([name, big, small]) => h("div", { class: "rl-card rl-figure", style: "min-width:150px" }, h("div", { class: "rl-card-line" }, name), h("div", { class: "rl-card-big" }, big), small ? h("div", { class: "rl-card-line" }, small) : null)),
  );
}

/**
 * The confusion matrix as a heat map; diagonal = agreement.
 * @param {any} model
 */
export function heatMap(model) {
  const labels = model.get("labels") || [];
  const sides = model.get("sides") || ["judge", "human"];
  const conf = model.get("confusion") || [];
  const selected = model.get("cell") || [];
  const top = Math.max(1, ...conf.flat());
  return h(
    "table",
    { class: "rl-heat", "aria-label": `confusion matrix: rows ${sides[0]}, columns ${sides[1]}` },
    h("tr", {}, h("th", {}, `${sides[0]} ↓  ${sides[1]} →`), labels.map((l) => h("th", {}, l))),
    labels.map((row, i) =>
      h(
        "tr",
        {},
        h("th", { style: "text-align:right" }, row),
        labels.map((col, j) => {
          const n = conf[i]?.[j] ?? 0;
          const strength = Math.round((85 * n) / top);
          const tint = i === j ? "var(--rl-good)" : "var(--rl-bad)";
          const on = selected[0] === row && selected[1] === col;
          return h(
            "td",
            {
              class: `rl-heat-cell${on ? " rl-on" : ""}`,
              style: `background: color-mix(in srgb, ${tint} ${strength}%, transparent)`,
              title: `${sides[0]} ${row}, ${sides[1]} ${col}: ${n}`,
              dataset: { row, col },
              onclick: () => {
                model.set("cell", on ? [] : [row, col]);
                model.save_changes();
              },
            },
            String(n),
          );
        }),
      ),
    ),
  );
}

/** Per-criterion bars: judge − human with the interval, on a shared symmetric axis. @param {any[]} rows */
export function criterionBars(rows) {
  if (!Array.isArray(rows) || rows.length === 0) return null;
  const span = Math.max(0.5, ...rows.flatMap((r) => [r.ci_low, r.ci_high, r.mean_diff].filter(isNum).map(Math.abs)));
  const x = (v) => `${(50 + (50 * v) / span).toFixed(2)}%`;
  return h(
    "div",
    {},
    h("div", { class: "rl-h" }, "Per criterion: judge − human (bootstrap interval)"),
    h(
      "div",
      { class: "rl-bars rl-forest" },
      rows.map((r) => {
        const d = r.mean_diff;
        const bar = h("div", { class: "rl-hbar", title: `${r.criterion}: ${isNum(d) ? d.toFixed(2) : "n/a"}` }, h("i", { style: "left:50%" }));
        if (isNum(r.ci_low) && isNum(r.ci_high)) bar.append(h("span", { class: "rl-ci", style: `left:${x(r.ci_low)};width:calc(${x(r.ci_high)} - ${x(r.ci_low)});opacity:0.35` }));
        if (isNum(d)) bar.append(h("span", { class: "rl-diff", style: `left:calc(${x(d)} - 2px);width:4px` }));
        const label = isNum(d) ? `${d > 0 ? "+" : ""}${d.toFixed(2)}${isNum(r.ci_low) ? ` [${r.ci_low.toFixed(2)}, ${r.ci_high.toFixed(2)}]` : ""}` : "n/a";
        return [h("span", { class: "rl-cname", dataset: { criterion: r.criterion } }, r.criterion), bar, h("span", { class: "rl-muted rl-small" }, `${label} ${r.tendency ?? ""}`)];
      }),
      // the shared axis: ticks from -span to +span (0 = judge agrees with people on average)
      h("span", { class: "rl-muted rl-small", style: "text-align:right" }, "judge − human"),
      h("div", { class: "rl-forest-axis" }, axisTicks(-span, span, 5)),
      h("span", {}),
    ),
  );
}

/** @param {any} model */
function listing(model) {
  const cell = model.get("cell") || [];
  if (cell.length !== 2) return h("div", { class: "rl-muted rl-small" }, "Click a cell to list its comparisons.");
  const sides = model.get("sides") || ["judge", "human"];
  const items = model.get("items") || [];
  const total = Number(model.get("cell_total") || 0);
  const current = Number(model.get("item"));
  const page = Number(model.get("page") || 0);
  const size = Number(model.get("page_size") || 8);
  const pages = Math.max(1, Math.ceil(total / size));
  const go = (p) => {
    model.set("page", p);
    model.save_changes();
  };
  const pager = h(
    "div",
    { class: "rl-nav rl-pager" },
    h("button", { class: "rl-prev", disabled: page <= 0, onclick: () => go(page - 1) }, "‹ Prev"),
    h("span", { class: "rl-pos" }, total ? `${page * size + 1}–${Math.min(total, (page + 1) * size)} of ${total}` : "none"),
    h("button", { class: "rl-next", disabled: page >= pages - 1, onclick: () => go(page + 1) }, "Next ›"),
  );
  return h(
    "div",
    { class: "rl-listing" },
    h("div", { class: "rl-h" }, `${sides[0]} ${cell[0]} · ${sides[1]} ${cell[1]}: ${total} comparison${total === 1 ? "" : "s"}`),
    total > size ? pager : null,
    items.map((it, i) => {
      const keys = Object.entries(it.keys || {})
        .filter(([k]) => !sides.includes(k))
        .map(([k, v]) => `${k} ${v}`)
        .join(" · ");
      return h(
        "div",
        {
          class: `rl-item${i === current ? " rl-selected" : ""}`,
          dataset: { index: String(i) },
          onclick: () => {
            model.set("item", i === current ? -1 : i);
            model.save_changes();
          },
        },
        h(
          "div",
          { class: "rl-item-head" },
          h("span", { class: "rl-card-name" }, keys),
          h("span", { class: "rl-muted" }, `${it.first ?? ""} vs ${it.second ?? ""}`),
          sides.map((sd) => h("span", { class: "rl-badge" }, `${sd} ${it[sd] ?? "?"}`)),
          it.rater ? h("span", { class: "rl-muted rl-small" }, `rater ${it.rater}`) : null,
        ),
        (it.texts || []).map((t) => h("div", { class: "rl-item-text" }, h("span", { class: "rl-field-name" }, `${t.name} `), h("span", { class: "rl-clamp" }, String(t.text ?? "")))),
      );
    }),
    total > size ? pagerCopy(pager) : null,
  );
}

/** The same pager again under the list (its buttons wired like the first). @param {HTMLElement} pager */
function pagerCopy(pager) {
  const copy = h("div", { class: "rl-nav rl-pager rl-pager-bottom" });
  for (const child of Array.from(pager.children)) {
    if (child instanceof HTMLButtonElement) {
      const b = h("button", { class: child.className, disabled: child.disabled }, child.textContent);
      b.addEventListener("click", () => child.click());
      copy.append(b);
    } else copy.append(h("span", { class: "rl-pos" }, child.textContent));
  }
  return copy;
}

/** Short values as a compact key/value list, long ones as text blocks. @param {any[]} fields */
function fieldsBlock(fields) {
  const short = fields.filter((f) => String(f.text ?? "").length <= 60 && !String(f.text ?? "").includes("\n"));
  const long = fields.filter((f) => !short.includes(f));
  return [
    short.length ? h("div", { class: "rl-bars rl-kv", style: "grid-template-columns:max-content 1fr;margin:4px 0 8px" }, short.map((f) => [h("span", { class: "rl-field-name" }, f.name), h("span", {}, String(f.text ?? ""))])) : null,
    long.map((f) => field(f.name, f.text)),
  ];
}

/** @param {any} detail */
function sideBySide(detail) {
  if (!detail) return null;
  return h(
    "div",
    { class: "rl-case rl-sides" },
    detail.sides.map((s) =>
      h(
        "div",
        { class: "rl-side" },
        h("div", { class: "rl-side-title" }, s.name, h("span", { class: "rl-badge" }, `verdict ${s.verdict}`), s.raw && s.raw !== s.verdict ? h("span", { class: "rl-muted rl-small" }, `(${s.raw})`) : null),
        s.fields.length ? fieldsBlock(s.fields) : h("div", { class: "rl-muted rl-small" }, `row ${s.row ?? "?"}: pass the ${s.name} DataFrame to show its text`),
      ),
    ),
  );
}

/** @param {number | null | undefined} v */
const pct0 = (v) => (isNum(v) ? `${Math.round(100 * Number(v))}%` : "n/a");
/** @param {number | null | undefined} v */
const k2 = (v) => (isNum(v) ? Number(v).toFixed(2) : "n/a");

/**
 * rl.calibrate(result): per metric and criterion, agreement and kappa with their intervals, the
 * people's own agreement, and the rows where judge and people disagree (texts as text).
 * @param {any} p the `people` trait
 */
export function peopleBlock(p) {
  if (!p || !Array.isArray(p.items)) return null;
  return h(
    "div",
    { class: "rl-people" },
    h("div", { class: "rl-h" }, `Judge vs people · ${p.labels} labels by ${(p.reviewers || []).length} reviewer(s)`),
    h(
      "table",
      { class: "rl-crit rl-people-table" },
      h("thead", {}, h("tr", {}, ["metric", "criterion", "agreement [95%]", "Cohen's kappa [95%]", "people split", "reviewers agree"].map((t) => h("th", {}, t)))),
      h(
        "tbody",
        {},
        p.items.map((/** @type {any} */ it) =>
          h(
            "tr",
            { dataset: { metric: String(it.metric), criterion: String(it.criterion) } },
            h("td", {}, String(it.metric)),
            h("td", { class: "rl-cname" }, String(it.criterion)),
            h("td", {}, `${pct0(it.rate)} (${it.agree}/${it.n}) [${pct0(it.rate_low)}–${pct0(it.rate_high)}]`),
            h("td", {}, `${k2(it.kappa)} [${k2(it.kappa_low)} to ${k2(it.kappa_high)}]`),
            h("td", {}, String(it.split || 0)),
            h("td", {}, it.reviewers ? `${it.reviewers.agree}/${it.reviewers.units} · α ${k2(it.reviewers.krippendorff_alpha)}` : "—"),
          ),
        ),
      ),
    ),
    h("div", { class: "rl-h" }, `Disagreements (${p.disagreement_total})`),
    (p.disagreements || []).map((/** @type {any} */ d) =>
      h(
        "div",
        { class: "rl-card rl-people-disagreement", dataset: { row: String(d.row) } },
        h("div", {}, h("b", {}, `row ${d.row}`), ` · ${d.metric} / ${d.criterion} · judge `, h("span", { class: "rl-badge" }, String(d.judge)), " people ", h("span", { class: "rl-badge rl-warnb" }, String(d.people)), h("span", { class: "rl-muted rl-small" }, ` ${d.reviewers || ""}`)),
        d.comment ? h("div", { class: "rl-muted rl-small" }, `comment: ${d.comment}`) : null,
        (d.texts || []).map((/** @type {any} */ t) => field(String(t.name), t.text)),
      ),
    ),
  );
}

/** @param {{ model: any, el: HTMLElement }} ctx */
function render({ model, el }) {
  const root = mountRoot(el, "calibration");
  const draw = () => {
    clear(root);
    const summary = model.get("summary") || {};
    const hasPairs = (model.get("labels") || []).length > 0;
    append(root, [
        mockBanner(model.get("is_mock"), model.get("judge")),
        model.get("title") ? h("div", { class: "rl-title", style: "margin-bottom:6px" }, model.get("title")) : null,
        hasPairs ? h("div", { class: "rl-muted" }, `${(model.get("sides") || []).join(" vs ")} on ${summary.pairs ?? 0} pairs · ${summary.disagreements ?? 0} disagreements`) : null,
        figures(summary),
        hasPairs ? h("div", { class: "rl-row", style: "align-items:flex-start;gap:24px" }, heatMap(model), h("div", { class: "rl-grow" }, listing(model))) : null,
        sideBySide(model.get("detail")),
        criterionBars(model.get("criteria")),
        peopleBlock(model.get("people")),
    ]);
  };
  draw();
  const unlisten = listen(model, ["summary", "labels", "sides", "confusion", "cell", "items", "cell_total", "item", "detail", "criteria", "title", "page", "people", "is_mock", "judge"], draw);
  return () => {
    unlisten();
    clear(el);
  };
}

export default { render };
