// PairwiseView: candidate and baseline side by side, who won each criterion, the 5-point choice,
// whether both presentation orders agreed, and the run's win/tie/loss bar.
import { h, append, mountRoot, mockBanner, clear, listen } from "./lib/dom.js";
import { pairCriteria, rawOutput, metaLine, imageStrip, field, markdownToggle } from "./lib/case.js";
import { textBlock } from "./lib/markdown.js";
import { wtlBars } from "./lib/charts.js";
import { winTieLossBar } from "./lib/summary.js";
import { navBar } from "./lib/nav.js";
import { fmtRate, fmtRateOf, fmtInt, fmtCount, fmtScore, PAIRWISE_SCALE, pairwiseLabel, isNum } from "./lib/format.js";
import { createRpc } from "./lib/rpc.js";
import { createLabelForm } from "./lib/labels.js";

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
    h("div", { class: "rl-card-line" }, `candidate wins ${fmtRateOf(t.win_rate, t.wins, t.scored)} · ties ${fmtRateOf(t.tie_rate, t.ties, t.scored)} · baseline wins ${fmtRateOf(t.loss_rate, t.losses, t.scored)}`),
    isNum(t.mean) ? h("div", { class: "rl-card-line", title: "+100% candidate much better … -100% baseline much better" }, `mean preference ${fmtScore(t.mean, "pairwise")} (on -100%..+100%)`) : null,
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
  const rpc = createRpc(model, { timeout: Number(model.get("timeout_ms") || 15000) });
  /** @type {ReturnType<typeof createLabelForm> | null} */
  let form = null;
  let formSeq = 0;
  // the labelling pane: JupyterLab's own keys stay out of it
  const labelPane = h("div", { class: "rl-label-slot", tabIndex: 0, "data-lm-suppress-shortcuts": "true", "data-p-suppress-shortcuts": "true" });
  /** @param {number} step */
  const go = (step) => {
    const i = Number(model.get("index") || 0) + step;
    if (i < 0 || i >= Number(model.get("count") || 0)) return;
    model.set("index", i);
    model.save_changes();
  };
  labelPane.addEventListener("keydown", (e) => {
    const target = /** @type {HTMLElement} */ (e.target);
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "j" || e.key === "k") return void (e.preventDefault(), go(e.key === "j" ? 1 : -1));
    if (!form) return;
    if (e.key === "Enter") {
      e.preventDefault();
      form.submit().then(() => go(1), () => {});
      return;
    }
    if (form.onKey(e)) e.preventDefault();
  });
  const loadForm = () => {
    const seq = ++formSeq;
    form = null;
    labelPane.replaceChildren();
    if (!model.get("labelling")) return;
    const row = Number((model.get("case") || {}).row ?? model.get("index"));
    rpc.request("label_form", { row }).then(
      (/** @type {any} */ reply) => {
        if (seq !== formSeq) return;
        form = createLabelForm(reply.form, String(model.get("reviewer") || ""), async (labels) => {
          await rpc.request("save_labels", { labels: labels.map((l) => ({ row, ...l })) });
        });
        labelPane.replaceChildren(form.el);
      },
      (/** @type {Error} */ err) => {
        if (seq === formSeq) labelPane.replaceChildren(h("div", { class: "rl-muted rl-small" }, `labels not available: ${err.message}`));
      },
    );
  };
  const draw = () => {
    const hadFocus = labelPane.contains(document.activeElement);
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
          labelPane,
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
    if (hadFocus) labelPane.focus({ preventScroll: true });
  };
  draw();
  loadForm();
  const unlisten = listen(model, ["case", "index", "count", "totals", "is_mock", "judge", "title", "markdown"], draw);
  const unlistenForm = listen(model, ["case", "labelling", "reviewer"], loadForm);
  return () => {
    unlisten();
    unlistenForm();
    rpc.dispose();
    clear(el);
  };
}

export default { render };
