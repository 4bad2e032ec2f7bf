// RubricEditor: the rubric as an editable grid. Every edit sends the whole rubric back to the
// kernel, where the same pydantic models validate it; a rejected edit comes back as an error
// (shown at the edited cell) together with the last good rubric, which the grid redraws.
import { h, mountRoot, clear, listen } from "./lib/dom.js";

/** @param {any} v */
const clone = (v) => JSON.parse(JSON.stringify(v));

/** A number if the text is one, else the text itself (so the model's own error names it). */
export function numberOrText(text) {
  const s = String(text).trim();
  if (s === "") return null;
  const n = Number(s);
  return Number.isNaN(n) ? s : n;
}

/**
 * Apply one edit to a rubric (pure: returns a new object).
 * @param {any} rubric
 * @param {{op: string, path?: (string|number)[], value?: any, index?: number, to?: number, kind?: string}} edit
 */
export function applyEdit(rubric, edit) {
  const r = clone(rubric);
  const crits = r.criteria;
  switch (edit.op) {
    case "set": {
      let target = r;
      const path = edit.path || [];
      for (const key of path.slice(0, -1)) target = target[key];
      target[path[path.length - 1]] = edit.value;
      return r;
    }
    case "add": {
      const names = new Set(crits.map((c) => c.name));
      let i = crits.length + 1;
      while (names.has(`q${i}`)) i++;
      const levels =
        edit.kind === "levels"
          ? [
              { score: 1, descriptor: "Poor" },
              { score: 2, descriptor: "Adequate" },
              { score: 3, descriptor: "Good" },
            ]
          : [
              { score: 0, descriptor: "NO" },
              { score: 1, descriptor: "YES" },
            ];
      crits.push({ name: `q${i}`, description: edit.kind === "levels" ? "Describe what this criterion judges" : "New yes/no question?", levels, weight: 1, critical: null, category: null });
      return r;
    }
    case "delete":
      crits.splice(/** @type {number} */ (edit.index), 1);
      return r;
    case "move": {
      const from = /** @type {number} */ (edit.index);
      const to = /** @type {number} */ (edit.to);
      if (to < 0 || to >= crits.length) return r;
      const [c] = crits.splice(from, 1);
      crits.splice(to, 0, c);
      return r;
    }
    case "add-level": {
      const levels = crits[/** @type {number} */ (edit.index)].levels;
      const top = levels.reduce((m, l) => Math.max(m, Number(l.score) || 0), 0);
      levels.push({ score: top + 1, descriptor: `Level ${top + 1}` });
      return r;
    }
    case "delete-level":
      crits[/** @type {number} */ (edit.index)].levels.splice(/** @type {number} */ (edit.to), 1);
      return r;
    default:
      throw new Error(`unknown edit ${edit.op}`);
  }
}

/** @param {string} s a data-path, quoted for an attribute selector */
const attr = (s) => s.replace(/["\\]/g, "\\$&");

/** Where an error from the kernel belongs: a criterion index, or -1 for the whole rubric. */
export function errorRow(error) {
  if (!error || !Array.isArray(error.path)) return -1;
  return error.path[0] === "criteria" && Number.isInteger(error.path[1]) ? error.path[1] : -1;
}

const KIND = { rewrite: "rewrite", pass_mark: "pass mark", example: "example", cut_points: "cut points" };

/**
 * Proposed changes (rl.align's), each with its old and new wording as text and Apply / Reject.
 * @param {any[]} proposals @param {(index: number, action: string) => void} decide
 */
export function proposalList(proposals, decide) {
  const open = proposals.filter((p) => p.status === "open").length;
  return h(
    "div",
    { class: "rl-proposals" },
    h("div", { class: "rl-proposals-head" }, `Proposed changes: ${open} of ${proposals.length} open`),
    proposals.map((p) =>
      h(
        "div",
        { class: `rl-proposal rl-proposal-${String(p.status).replace(/[^a-z]/g, "-")}`, dataset: { index: String(p.index) } },
        h(
          "div",
          { class: "rl-proposal-title" },
          h("b", {}, KIND[p.kind] || String(p.kind)),
          p.criterion ? h("span", {}, ` · ${p.criterion}`) : null,
          h("span", { class: "rl-muted" }, p.kept ? " · kept by align" : " · not kept by align"),
          h("span", { class: "rl-proposal-status" }, ` · ${p.status}`),
        ),
        h(
          "div",
          { class: "rl-proposal-diff" },
          p.before ? h("div", { class: "rl-old" }, h("span", { class: "rl-muted" }, "old: "), p.before) : null,
          h("div", { class: "rl-new" }, h("span", { class: "rl-muted" }, "new: "), p.after),
        ),
        p.note ? h("div", { class: "rl-muted rl-proposal-note" }, p.note) : null,
        p.why ? h("div", { class: "rl-muted rl-proposal-why" }, `not applicable: ${p.why}`) : null,
        p.status === "open"
          ? h(
              "div",
              { class: "rl-actions" },
              h("button", { class: "rl-apply", onclick: () => decide(p.index, "apply") }, "Apply"),
              h("button", { class: "rl-reject", onclick: () => decide(p.index, "reject") }, "Reject"),
            )
          : null,
      ),
    ),
  );
}

/** @param {{ model: any, el: HTMLElement }} ctx */
function render({ model, el }) {
  const root = mountRoot(el, "editor");
  /** @type {string} the data-path of the cell last edited, to mark it when the kernel says no */
  let lastPath = "";

  /** @param {any} edit */
  const commit = (edit, pathKey = "") => {
    lastPath = pathKey;
    let next;
    try {
      next = applyEdit(model.get("value"), edit);
    } catch (e) {
      return;
    }
    model.set("value", next);
    model.save_changes();
  };

  /** An input bound to one field. @param {(string|number)[]} path @param {any} value */
  const input = (path, value, opts = {}) => {
    const key = path.join(".");
    const tag = opts.multiline ? "textarea" : "input";
    const el = h(tag, { class: opts.class || "", value: value == null ? "" : String(value), dataset: { path: key }, "aria-label": opts.label || key, placeholder: opts.placeholder || "" });
    el.addEventListener("change", () => {
      const raw = /** @type {HTMLInputElement} */ (el).value;
      commit({ op: "set", path, value: opts.numeric ? numberOrText(raw) : raw }, key);
    });
    return el;
  };

  const draw = () => {
    const focused = /** @type {HTMLElement|null} */ (root.querySelector(":focus"));
    const focusKey = focused && focused.dataset ? focused.dataset.path : null;
    clear(root);
    const rubric = model.get("value");
    const error = model.get("error");
    const count = Number(model.get("count") || 1);
    const index = Number(model.get("index") || 0);

    if (count > 1 || model.get("heading")) {
      const go = (i) => {
        if (i < 0 || i >= count) return;
        model.set("index", i);
        model.save_changes();
      };
      root.append(
        h(
          "div",
          { class: "rl-nav" },
          h("button", { class: "rl-prev", disabled: index <= 0, onclick: () => go(index - 1) }, "‹ Prev"),
          h("span", { class: "rl-pos" }, `rubric ${index + 1} of ${count}`),
          h("button", { class: "rl-next", disabled: index >= count - 1, onclick: () => go(index + 1) }, "Next ›"),
          model.get("heading") ? h("span", { class: "rl-muted rl-heading", style: "margin-left:8px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;max-width:60%" }, model.get("heading")) : null,
        ),
      );
    }
    if (!rubric || !Array.isArray(rubric.criteria)) {
      root.append(h("div", { class: "rl-empty" }, "No rubric."));
      return;
    }
    const passMark = rubric.pass_mark == null ? "" : String(Math.round(rubric.pass_mark * 1000) / 10);
    const pm = h("input", { type: "text", class: "rl-w rl-pass-mark", value: passMark, dataset: { path: "pass_mark" }, "aria-label": "pass mark (%)", placeholder: "none" });
    pm.addEventListener("change", () => {
      const v = numberOrText(pm.value);
      commit({ op: "set", path: ["pass_mark"], value: typeof v === "number" ? v / 100 : v }, "pass_mark");
    });
    root.append(
      h(
        "div",
        { class: "rl-toolbar" },
        h("label", {}, "name", input(["name"], rubric.name, { class: "rl-name", placeholder: "rubric name", label: "rubric name" })),
        h("label", {}, "pass mark (%)", pm),
        h("span", { class: "rl-grow" }),
        h("button", { class: "rl-add-yesno", onclick: () => commit({ op: "add", kind: "yesno" }) }, "+ yes/no question"),
        h("button", { class: "rl-add-levels", onclick: () => commit({ op: "add", kind: "levels" }) }, "+ criterion with levels"),
      ),
    );
    const proposals = model.get("proposals") || [];
    if (proposals.length) root.append(proposalList(proposals, (index, action) => model.send({ type: "rl:proposal", index, action })));
    const errRow = errorRow(error);
    if (error && errRow < 0) root.append(h("div", { class: "rl-error-box rl-inline-error" }, error.message));

    const body = h("tbody");
    rubric.criteria.forEach((c, i) => {
      const yesNo = c.levels.length === 2 && c.levels[0].score === 0 && c.levels[1].score === 1;
      const levels = h(
        "div",
        { class: "rl-levels" },
        c.levels.map((lv, j) =>
          h(
            "div",
            { class: "rl-level" },
            input(["criteria", i, "levels", j, "score"], lv.score, { class: "rl-ls", numeric: true, label: `level ${j + 1} score` }),
            input(["criteria", i, "levels", j, "descriptor"], lv.descriptor, { class: "rl-ld", label: `level ${j + 1} descriptor` }),
            h("button", { class: "rl-del-level", title: "remove this level", onclick: () => commit({ op: "delete-level", index: i, to: j }) }, "✕"),
          ),
        ),
        h("div", {}, h("button", { class: "rl-add-level", onclick: () => commit({ op: "add-level", index: i }) }, "+ level")),
      );
      const crit = h("select", { class: "rl-critical-select", dataset: { path: `criteria.${i}.critical` }, "aria-label": "critical level" }, h("option", { value: "" }, "—"), c.levels.map((lv) => h("option", { value: String(lv.score), selected: c.critical === lv.score }, yesNo ? (lv.score === 1 ? "must be YES" : "≥ NO") : `≥ ${lv.score}`)));
      crit.addEventListener("change", () => commit({ op: "set", path: ["criteria", i, "critical"], value: crit.value === "" ? null : Number(crit.value) }, `criteria.${i}.critical`));
      const row = h(
        "tr",
        { class: `rl-crit-edit${errRow === i ? " rl-has-error" : ""}`, dataset: { index: String(i) } },
        h("td", { class: "rl-muted" }, String(i + 1)),
        h("td", {}, input(["criteria", i, "name"], c.name, { class: "rl-name", label: "criterion name" })),
        h("td", { style: "min-width:220px" }, input(["criteria", i, "description"], c.description, { multiline: true, label: "question or description" }), errRow === i ? h("div", { class: "rl-inline-error", role: "alert" }, error.message) : null),
        h("td", {}, levels),
        h("td", {}, input(["criteria", i, "weight"], c.weight, { class: "rl-w", numeric: true, label: "weight" })),
        h("td", {}, crit),
        h(
          "td",
          {},
          h(
            "div",
            { class: "rl-actions" },
            h("button", { class: "rl-up", title: "move up", disabled: i === 0, onclick: () => commit({ op: "move", index: i, to: i - 1 }) }, "↑"),
            h("button", { class: "rl-down", title: "move down", disabled: i === rubric.criteria.length - 1, onclick: () => commit({ op: "move", index: i, to: i + 1 }) }, "↓"),
            h("button", { class: "rl-delete", title: "delete criterion", onclick: () => commit({ op: "delete", index: i }) }, "✕"),
          ),
        ),
      );
      body.append(row);
    });
    root.append(
      h(
        "table",
        {},
        h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "Name"), h("th", {}, "Question / description"), h("th", {}, "Levels (score · descriptor)"), h("th", {}, "Weight"), h("th", {}, "Critical"), h("th", {}, ""))),
        body,
      ),
    );
    const saved = model.get("revision");
    root.append(h("div", { class: "rl-status" }, error ? "" : saved ? h("span", { class: "rl-saved" }, `✓ valid · ${saved} edit${saved === 1 ? "" : "s"} saved`) : ""));
    if (error && lastPath) {
      const bad = root.querySelector(`[data-path="${attr(lastPath)}"]`);
      if (bad) bad.classList.add("rl-invalid");
    }
    if (focusKey) {
      const again = /** @type {HTMLElement|null} */ (root.querySelector(`[data-path="${attr(focusKey)}"]`));
      if (again) again.focus();
    }
  };
  draw();
  const unlisten = listen(model, ["value", "error", "index", "count", "heading", "revision", "proposals"], draw);
  return () => {
    unlisten();
    clear(el);
  };
}

export default { render };
