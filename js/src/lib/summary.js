// Summary cards: one per metric (mean and pass rate, or win/tie/loss with intervals).
import { h } from "./dom.js";
import { fmtScore, fmtRate, fmtInt, fmtCount, fmtCost, fmtPct, fmtStd, fmtPassRule, isNum } from "./format.js";

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
    lines.push(winTieLossBar(s));
    lines.push(h("div", { class: "rl-card-line" }, `win ${fmtRate(s.win_rate, s.win_rate_low, s.win_rate_high)}`));
    lines.push(h("div", { class: "rl-card-line" }, `tie ${fmtRate(s.tie_rate, s.tie_rate_low, s.tie_rate_high)} · loss ${fmtRate(s.loss_rate, s.loss_rate_low, s.loss_rate_high)}`));
  } else {
    lines.push(h("div", { class: "rl-card-big" }, fmtScore(s.mean), isNum(s.std) ? h("span", { class: "rl-card-std", title: "standard deviation of the scores" }, ` ${fmtStd(s.std)}`) : null));
    if (isNum(s.pass_rate)) {
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
