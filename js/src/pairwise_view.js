// PairwiseView: candidate and baseline side by side, who won each criterion, the 5-point choice,
// whether both presentation orders agreed, and the run's win/tie/loss bar.
import { h, append, mountRoot, mockBanner, clear, listen } from "./lib/dom.js";
import { pairCriteria, rawOutput, metaLine, imageStrip, field, markdownToggle } from "./lib/case.js";
import { textBlock } from "./lib/markdown.js";
import { wtlBars } from "./lib/charts.js";
import { winTieLossBar } from "./lib/summary.js";
import { navBar } from "./lib/nav.js";
import { fmtRate, fmtInt, fmtCount, PAIRWISE_SCALE, pairwiseLabel, isNum } from "./lib/format.js";

/** @param {any} t totals for one pairwise metric */
function totalsBlock(t) {
  return h(
    "div",
    { class: "rl-card rl-totals", dataset: { metric: String(t.metric ?? "") } },
    h("div", {}, h("span", { class: "rl-card-name" }, t.metric ?? ""), h("span", { class: "rl-card-kind" }, `${fmtInt(t.scored)} compared`)),
    winTieLossBar(t),
    wtlBars([
      { label: "candidate wins", rate: t.win_rate, low: t.win_rate_low, high: t.win_rate_high },
      { label: "ties", rate: t.tie_rate, low: t.tie_rate_low, high: t.tie_rate_high },
      { label: "baseline wins", rate: t.loss_rate, low: t.loss_rate_low, high: t.loss_rate_high },
    ], 360, `win tie loss of ${t.metric ?? ""}`),
    h("div", { class: "rl-card-line" }, `candidate wins ${fmtRate(t.win_rate, t.win_rate_low, t.win_rate_high)} · ties ${fmtRate(t.tie_rate, t.tie_rate_low, t.tie_rate_high)} · baseline wins ${fmtRate(t.loss_rate, t.loss_rate_low, t.loss_rate_high)}`),
    isNum(t.swap_inconsistent) ? h("div", { class: "rl-card-line" }, `orders disagreed on ${fmtInt(t.swap_inconsistent)} of ${fmtInt(t.swap_checked)}`) : null,
    isNum(t.errors) && t.errors > 0 ? h("div", { class: "rl-card-line" }, fmtCount(t.errors, "error")) : null,
  );
}

/** The 5-point scale with the judge's choice highlighted. @param {unknown} score */
export function scaleStrip(score) {
  return h(
    "div",
    { class: "rl-scale", role: "img", "aria-label": `choice: ${pairwiseLabel(score)}` },
    PAIRWISE_SCALE.map((v) => h("span", { class: v === score ? "rl-on" : "", dataset: { value: String(v) } }, pairwiseLabel(v))),
  );
}

/** @param {any} side {name, text} */
function sideBlock(title, side, cls, md = true) {
  return h("div", { class: `rl-side ${cls}` }, h("div", { class: "rl-side-title" }, title, side && side.name ? h("span", { class: "rl-muted rl-small" }, side.name) : null), textBlock(side && side.text != null ? String(side.text) : "", md));
}

/** @param {{ model: any, el: HTMLElement }} ctx */
function render({ model, el }) {
  const root = mountRoot(el, "pairwise");
  const draw = () => {
    clear(root);
    const data = model.get("case") || {};
    const m = data.metric || {};
    const totals = model.get("totals") || [];
    const md = model.get("markdown") !== false;
    append(root, [
        mockBanner(model.get("is_mock"), model.get("judge")),
        model.get("title") ? h("div", { class: "rl-title", style: "margin-bottom:6px" }, model.get("title")) : null,
        totals.length ? h("div", { class: "rl-cards" }, totals.map(totalsBlock)) : null,
        h(
          "div",
          { class: "rl-case" },
          h("div", { class: "rl-row" }, navBar(model, "pair", data.heading), h("span", { class: "rl-grow" }), markdownToggle(model)),
          (data.fields || []).map((f) => field(f.name, f.text, md)),
          imageStrip(data.images),
          h("div", { class: "rl-sides" }, sideBlock("Candidate", data.candidate, "rl-cand", md), sideBlock("Baseline", data.baseline, "rl-base", md)),
          h(
            "div",
            { class: "rl-metric", dataset: { metric: String(m.name ?? "") } },
            h(
              "div",
              { class: "rl-metric-head" },
              h("span", { class: "rl-metric-name" }, m.name ?? ""),
              m.verdict ? h("span", { class: `rl-badge ${String(m.verdict).startsWith("candidate") ? "rl-win" : String(m.verdict).startsWith("baseline") ? "rl-loss" : "rl-tie"}` }, m.verdict) : null,
              m.swap_consistent === false ? h("span", { class: "rl-badge rl-warnb rl-swap" }, "the two orders disagreed") : m.swap_consistent === true ? h("span", { class: "rl-badge rl-swap" }, "both orders agree") : null,
              m.error ? h("span", { class: "rl-badge rl-err" }, "error") : null,
            ),
            scaleStrip(m.score),
            m.choice ? h("div", { class: "rl-muted rl-small" }, `judge's choice: ${m.choice}`) : null,
            m.error ? h("div", { class: "rl-error-box" }, `Judge error: ${m.error}`) : null,
            pairCriteria(m),
            m.rationale ? [h("div", { class: "rl-h" }, "Rationale"), textBlock(m.rationale, md, "rl-rationale")] : null,
            rawOutput(m.raw_output, Boolean(m.error)),
            metaLine(m),
          ),
        ),
    ]);
  };
  draw();
  const unlisten = listen(model, ["case", "index", "count", "totals", "is_mock", "judge", "title", "markdown"], draw);
  return () => {
    unlisten();
    clear(el);
  };
}

export default { render };
