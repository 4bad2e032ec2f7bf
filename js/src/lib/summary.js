// Summary cards: one per metric (mean and pass rate, or win/tie/loss with intervals).
import { h } from "./dom.js";
import { fmtScore, fmtRate, fmtRateOf, fmtInt, fmtCost, fmtPct, fmtStd, fmtPassRule, fmtCount, isNum } from "./format.js";

/** A win/tie/loss bar. @param {any} s */
export function winTieLossBar(s) {
  const parts = [
    ["rl-win", s.win_rate, "candidate wins"],
    ["rl-tie", s.tie_rate, "ties"],
    ["rl-loss", s.loss_rate, "baseline wins"],
  ];
  return h(
    "div",
    { class: "rl-stack", role: "img", "aria-label": parts.map(([, r, n]) => `${n} ${fmtPct(r)}`).join(", ") },
    parts.map(([cls, rate, name]) => (isNum(rate) && rate > 0 ? h("span", { class: cls, style: `width:${(100 * rate).toFixed(2)}%`, title: `${name}: ${fmtPct(rate, 1)}` }) : null)),
  );
}

/** @param {any} s one row of EvalResult.summary */
export function summaryCard(s) {
  const pairwise = s.kind === "pairwise";
  const lines = [];
  if (pairwise) {
    // one unit with the rows' scores: a signed percent on -100%..+100% (never "fail")
    lines.push(h("div", { class: "rl-card-big", title: "mean preference: +100% candidate much better … -100% baseline much better" }, fmtScore(s.mean, "pairwise")));
    lines.push(winTieLossBar(s));
    const iv = (/** @type {string} */ key) => (isNum(s[`${key}_low`]) && isNum(s[`${key}_high`]) ? `95% interval ${fmtPct(s[`${key}_low`])}–${fmtPct(s[`${key}_high`])}` : "");
    lines.push(h("div", { class: "rl-card-line", title: iv("win_rate") }, `win ${fmtRateOf(s.win_rate, s.wins, s.scored)}`));
    lines.push(h("div", { class: "rl-card-line", title: `${iv("tie_rate")} · ${iv("loss_rate")}` }, `tie ${fmtRateOf(s.tie_rate, s.ties, s.scored)} · loss ${fmtRateOf(s.loss_rate, s.losses, s.scored)}`));
  } else {
    lines.push(h("div", { class: "rl-card-big" }, fmtScore(s.mean), isNum(s.std) ? h("span", { class: "rl-card-std", title: "standard deviation of the scores" }, ` ${fmtStd(s.std)}`) : null));
    if (s.has_pass_mark === false) {
      // a metric whose rubrics have no pass mark cannot pass: no pass rate, never "0% pass"
      const fails = isNum(s.critical_fails) && s.critical_fails > 0 ? ` · ${fmtInt(s.critical_fails)} failed a critical item` : "";
      lines.push(h("div", { class: "rl-card-line rl-no-pass-mark", title: "its rubrics have no pass mark, so no row can pass: the mean score is the figure to read" }, `no pass mark${fails}`));
    } else if (isNum(s.pass_rate)) {
      const rule = fmtPassRule(s);
      lines.push(h("div", { class: "rl-card-line", title: rule || "share of scored rows that passed" }, `pass ${fmtRate(s.pass_rate, s.pass_rate_low, s.pass_rate_high)}`));
      if (rule) lines.push(h("div", { class: "rl-card-line rl-pass-rule" }, rule));
    }
  }
  const counts = [`${fmtInt(s.scored)} scored`];
  if (isNum(s.errors) && s.errors > 0) counts.push(fmtCount(s.errors, "error"));
  lines.push(h("div", { class: `rl-card-line${isNum(s.errors) && s.errors > 0 ? " rl-has-errors" : ""}` }, counts.join(" · ")));
  const cost = [];
  if (isNum(s.calls) && s.calls > 0) cost.push(`${fmtInt(s.calls)} calls`);
  if (isNum(s.tokens) && s.tokens > 0) cost.push(`${fmtInt(s.tokens)} tokens`);
  if (isNum(s.cost)) cost.push(fmtCost(s.cost));
  if (cost.length) lines.push(h("div", { class: "rl-card-line" }, cost.join(" · ")));
  return h("div", { class: "rl-card", dataset: { metric: String(s.metric ?? "") } }, h("div", {}, h("span", { class: "rl-card-name" }, s.metric ?? ""), h("span", { class: "rl-card-kind" }, s.kind ?? "")), lines);
}

/** @param {any[]} summary */
export function summaryCards(summary) {
  if (!Array.isArray(summary) || summary.length === 0) return null;
  return h("div", { class: "rl-cards" }, summary.map(summaryCard));
}
