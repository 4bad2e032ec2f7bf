// The labelling form shared by the review page: per metric, the overall verdict and each
// criterion, the judge's answer beside the person's, and a comment. Keyboard first: p/f
// (pass/fail), c/t/b (candidate/tie/baseline), digits for the level of the active criterion,
// y/n for yes/no, Enter saves. All text goes in as text nodes (see dom.js).
import { h } from "./dom.js";

/** @type {Record<string, string>} */
const VERDICT_KEYS = { p: "pass", f: "fail", c: "candidate", t: "tie", b: "baseline" };

/**
 * @param {any[]} form the `form` of a case (widgets/labelling.py)
 * @param {string} reviewer
 * @param {(labels: any[]) => Promise<void>} save
 */
export function createLabelForm(form, reviewer, save) {
  /** @type {Map<string, any>} metric\u0000criterion -> value */
  const draft = new Map();
  /** @type {Map<string, string>} metric -> comment */
  const comments = new Map();
  const questions = form.flatMap((m) => m.questions.map((/** @type {any} */ q) => ({ metric: m.metric, kind: m.kind, ...q })));
  let active = questions.findIndex((q) => q.criterion !== "overall");
  const key = (/** @type {any} */ q) => `${q.metric}\u0000${q.criterion}`;
  const mine = (/** @type {any} */ q) => (q.labels || []).find((/** @type {any} */ l) => l.reviewer === reviewer);
  for (const m of form) {
    const own = (m.comments || []).find((/** @type {any} */ c) => c.reviewer === reviewer);
    if (own) comments.set(m.metric, own.comment);
  }
  const el = h("div", { class: "rl-label-form" });
  const status = h("span", { class: "rl-muted rl-small rl-label-status" });

  function draw() {
    el.replaceChildren();
    for (const m of form) {
      const rows = questions.filter((q) => q.metric === m.metric);
      const box = h("textarea", { class: "rl-label-comment", rows: 2, placeholder: "comment (optional)", value: comments.get(m.metric) || "" });
      box.addEventListener("input", () => comments.set(m.metric, box.value));
      box.addEventListener("keydown", (e) => e.stopPropagation());
      el.append(
        h(
          "div",
          { class: "rl-label-metric", dataset: { metric: m.metric } },
          h("div", { class: "rl-h" }, `Your labels: ${m.metric}`, h("span", { class: "rl-muted rl-small" }, `  as ${reviewer}`)),
          h(
            "table",
            { class: "rl-crit rl-label-table" },
            h("thead", {}, h("tr", {}, h("th", {}, "question"), h("th", {}, "judge"), h("th", {}, "you"), h("th", {}, "others"))),
            h("tbody", {}, rows.map((q) => questionRow(q))),
          ),
          box,
        ),
      );
    }
    el.append(h("div", { class: "rl-row" }, h("button", { class: "rl-label-save", onclick: () => submit() }, "Save (Enter)"), status));
  }

  /** @param {any} q */
  function questionRow(q) {
    const i = questions.indexOf(q);
    const current = draft.has(key(q)) ? draft.get(key(q)) : mine(q)?.value;
    const judge = q.judge == null ? "—" : String(q.judge);
    const differs = current != null && q.judge != null && String(current) !== String(q.judge);
    const allowed = q.allowed && q.allowed.length ? q.allowed : ["yes", "no"];
    const others = (q.labels || []).filter((/** @type {any} */ l) => l.reviewer !== reviewer).map((/** @type {any} */ l) => `${l.reviewer}: ${l.value}`).join(", ");
    return h(
      "tr",
      { class: `rl-label-q${i === active ? " rl-active" : ""}${differs ? " rl-differs" : ""}`, dataset: { criterion: q.criterion, metric: q.metric } },
      h("td", { class: "rl-cname", onclick: () => ((active = i), draw()) }, q.criterion),
      h("td", {}, h("span", { class: "rl-badge rl-judge-answer" }, judge)),
      h(
        "td",
        {},
        allowed.map((/** @type {any} */ v) =>
          h("button", { class: `rl-choice${String(v) === String(current) ? " rl-on" : ""}`, dataset: { value: String(v) }, onclick: () => set(q, v) }, String(v)),
        ),
        differs ? h("span", { class: "rl-badge rl-warnb" }, "differs from judge") : null,
      ),
      h("td", { class: "rl-muted rl-small" }, others),
    );
  }

  /** @param {any} q @param {any} value */
  function set(q, value) {
    draft.set(key(q), value);
    status.textContent = "not saved";
    draw();
  }

  async function submit() {
    /** @type {any[]} */
    const labels = [];
    for (const q of questions) {
      if (draft.has(key(q))) labels.push({ metric: q.metric, criterion: q.criterion, value: draft.get(key(q)), comment: q.criterion === "overall" ? comments.get(q.metric) || "" : "" });
    }
    for (const m of form) {
      const overall = questions.find((q) => q.metric === m.metric && q.criterion === "overall");
      const prev = (m.comments || []).find((/** @type {any} */ c) => c.reviewer === reviewer)?.comment || "";
      const now = comments.get(m.metric) || "";
      if (overall && now !== prev && !draft.has(key(overall))) {
        const value = mine(overall)?.value;
        if (value != null) labels.push({ metric: m.metric, criterion: "overall", value, comment: now });
      }
    }
    if (!labels.length) return false;
    status.textContent = "saving…";
    await save(labels);
    draft.clear();
    status.textContent = "saved";
    return true;
  }

  /**
   * Keys: p/f/c/t/b set the overall verdict of the first metric that takes it; digits and
   * y/n the active criterion (which then moves on); Enter saves. Returns whether it was used.
   * @param {KeyboardEvent} e
   */
  function onKey(e) {
    const k = e.key.toLowerCase();
    if (k in VERDICT_KEYS) {
      const q = questions.find((q) => q.criterion === "overall" && q.allowed.includes(VERDICT_KEYS[k]));
      if (q) return set(q, VERDICT_KEYS[k]), true;
    }
    const q = questions[active];
    if (q && /^[0-9]$/.test(k)) {
      const yesNo = q.allowed.includes("yes");
      const v = yesNo ? (k === "1" ? "yes" : k === "0" ? "no" : null) : Number(k);
      if (v != null && (!q.allowed.length || q.allowed.includes(v))) {
        set(q, v);
        active = Math.min(active + 1, questions.length - 1);
        draw();
        return true;
      }
    }
    if (q && (k === "y" || k === "n") && q.allowed.includes("yes")) {
      set(q, k === "y" ? "yes" : "no");
      active = Math.min(active + 1, questions.length - 1);
      draw();
      return true;
    }
    return false;
  }

  draw();
  return { el, onKey, submit };
}
