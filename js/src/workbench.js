// Workbench: the rubric loop in one view. The rubric grid is RubricEditor's own code and the
// comparison is ComparisonView's (the kernel gives this view the same traits), so both behave
// exactly as they do alone. Re-judge asks the kernel to start the run on its own event loop and
// returns at once; progress, the new version and the comparison arrive as trait changes, and
// Cancel stops the run. Model text only ever enters the page as text (h() builds text nodes).
import { h, append, mountRoot, clear, listen, mockBanner } from "./lib/dom.js";
import { createRpc } from "./lib/rpc.js";
import { verdictClass } from "./lib/format.js";
import editor from "./rubric_editor.js";
import { metricBars, criterionBars, caseList, sideBySide, pct } from "./comparison_view.js";

/** One version's line: what it cost and how well it agrees with people. @param {any} v */
export function versionText(v) {
  const parts = [`${v.calls} call${v.calls === 1 ? "" : "s"}`, `${v.cached} cached`, ...(v.kept ? [`${v.kept} kept`] : []), `${v.changed} changed row${v.changed === 1 ? "" : "s"}`];
  const overall = (v.agreement || []).filter((a) => a.criterion === "overall");
  for (const a of overall) parts.push(`agrees with people ${pct(a.rate)} (${a.agree}/${a.n})`);
  return parts.join(" · ");
}

/** "412 / 1,000 rows · 1 call" while a run is going. @param {any} p */
export function progressText(p) {
  if (!p || !p.total) return "";
  const fmt = (/** @type {number} */ n) => Number(n || 0).toLocaleString("en-US");
  return `${fmt(p.done)} / ${fmt(p.total)} rows · ${fmt(p.calls)} call${p.calls === 1 ? "" : "s"}`;
}

/** "2 of 4 rows judged in this run" while a re-judge fills the table, else "".
 * @param {any[]} rows */
export function liveText(rows) {
  const running = rows.filter((r) => r.state === "waiting" || r.state === "done");
  if (!running.length) return "";
  const done = running.filter((r) => r.state === "done").length;
  return `${done} of ${running.length} shown row${running.length === 1 ? "" : "s"} judged in this run`;
}

/** @param {{ model: any, el: HTMLElement }} ctx */
function render({ model, el }) {
  const root = mountRoot(el, "workbench");
  root.setAttribute("data-lm-suppress-shortcuts", "true"); // Ctrl-Enter re-judges, not runs the cell
  const rpc = createRpc(model, { timeout: Number(model.get("timeout_ms")) || 15000 });
  /** @type {string} a failed request's message, shown until the next action */
  let problem = "";

  const ask = (/** @type {string} */ op, payload = {}) => {
    problem = "";
    rpc.request(op, payload).then(
      () => drawBar(),
      (/** @type {Error} */ e) => {
        problem = e.message;
        drawBar();
      },
    );
  };
  const rejudge = () => {
    const focused = /** @type {HTMLElement|null} */ (root.querySelector(":focus"));
    if (focused && typeof focused.blur === "function") focused.blur(); // commits a pending edit first
    if (!model.get("running")) ask("rejudge");
  };
  root.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      e.stopPropagation();
      rejudge();
    }
  });

  const head = h("div", { class: "rl-wb-head" });
  const templates = h("div", { class: "rl-wb-templates" });
  const bar = h("div", { class: "rl-toolbar rl-wb-bar" });
  const grid = h("div", { class: "rl-wb-grid" });
  const versions = h("div", { class: "rl-wb-versions" });
  const table = h("div", { class: "rl-wb-table" });
  const comparison = h("div", { class: "rl-wb-comparison rl-comparison" });
  append(root, [head, bar, grid, templates, h("div", { class: "rl-wb-lower", style: "display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1.3fr);gap:14px;margin-top:10px" }, h("div", {}, versions, table), comparison)]);
  const stopEditor = editor.render({ model, el: grid });

  const drawHead = () => {
    clear(head);
    append(head, [mockBanner(model.get("is_mock"), model.get("judge")), model.get("title") ? h("div", { class: "rl-title", style: "margin-bottom:4px" }, model.get("title")) : null]);
  };

  const drawBar = () => {
    clear(bar);
    const running = Boolean(model.get("running"));
    const pending = Number(model.get("pending") || 0);
    const count = (model.get("versions_info") || []).length;
    const path = h("input", { type: "text", class: "rl-save-path", value: model.get("save_path") || "", "aria-label": "file to save the rubric to", style: "width:12em" });
    append(bar, [
      h("button", { class: "rl-primary rl-rejudge", disabled: running, title: "judge again (Ctrl-Enter): only rows whose request changed are sent", onclick: rejudge }, count ? "Re-judge" : "Judge (v1)"),
      running ? h("button", { class: "rl-cancel", onclick: () => ask("cancel") }, "Cancel") : null,
      running ? h("span", { class: "rl-progress", role: "status" }, progressText(model.get("progress"))) : null,
      !running && count ? h("span", { class: "rl-muted rl-pending" }, pending ? `${pending} row${pending === 1 ? "" : "s"} changed since the last version` : "no change since the last version") : null,
      h("span", { class: "rl-grow" }),
      path,
      h("button", { class: "rl-save", onclick: () => ask("save", { path: /** @type {HTMLInputElement} */ (path).value }) }, "Save YAML"),
    ]);
    const status = problem || model.get("status");
    if (status) bar.append(h("div", { class: `rl-wb-status ${problem ? "rl-inline-error" : "rl-muted"}`, style: "flex-basis:100%" }, status));
  };

  const drawTemplates = () => {
    clear(templates);
    const all = model.get("templates") || {};
    const names = Object.keys(all);
    if (!names.length) return;
    append(templates, [h(
      "details",
      { class: "rl-wb-template" },
      h("summary", { class: "rl-muted" }, "Critique templates (a built-in name or Jinja text; empty chooses one per rubric)"),
      names.map((name) => {
        const area = h("textarea", { class: "rl-wb-template-text", value: all[name] || "", dataset: { metric: name }, "aria-label": `${name}'s critique template`, placeholder: "critique_checklist / critique_analytic / your template", style: "width:100%;min-height:3em" });
        return h(
          "div",
          { style: "margin:4px 0" },
          h("b", {}, name),
          area,
          h("button", { class: "rl-wb-template-apply", onclick: () => ask("template", { metric: name, template: /** @type {HTMLTextAreaElement} */ (area).value }) }, "Apply"),
        );
      }),
    )]);
  };

  const drawVersions = () => {
    clear(versions);
    const list = model.get("versions_info") || [];
    if (!list.length) return;
    const latest = list[list.length - 1];
    const against = Number(model.get("against") || 0);
    append(versions, [
      h("div", { class: "rl-h" }, "Versions"),
      list.map((v) =>
        h(
          "div",
          { class: `rl-tr rl-version${v.number === latest.number ? " rl-selected" : ""}`, style: "padding:3px 6px;gap:8px;align-items:center", dataset: { version: v.name } },
          h("b", {}, v.name),
          h("span", { class: "rl-muted rl-small" }, versionText(v) + (v.note ? ` · ${v.note}` : "")),
          h("span", { class: "rl-grow" }),
          v.number !== latest.number
            ? h("button", { class: `rl-compare-with${v.number === against ? " rl-on" : ""}`, "aria-pressed": v.number === against ? "true" : "false", title: `compare ${latest.name} with ${v.name}`, onclick: () => { model.set("against", v.number); model.save_changes(); } }, v.number === against ? "compared" : "compare")
            : null,
          v.number !== latest.number ? h("button", { class: "rl-undo", title: `return to ${v.name}'s rubrics (a new version, 0 calls)`, style: "white-space:nowrap", onclick: () => ask("undo", { version: v.number }) }, `Undo to ${v.name}`) : null,
        ),
      ),
    ]);
  };

  const drawTable = () => {
    clear(table);
    const rows = model.get("rows") || [];
    if (!rows.length) return;
    const total = Number(model.get("row_total") || rows.length);
    const live = liveText(rows);
    append(table, [
      h("div", { class: "rl-h" }, `Results${total > rows.length ? ` (first ${rows.length} of ${total} rows)` : ""} · ● sent to the judge in this version`),
      live ? h("div", { class: "rl-muted rl-small rl-wb-live", role: "status" }, live) : null,
      h(
        "div",
        { class: "rl-wb-rows", style: "max-height:320px;overflow:auto" },
        rows.map((r) =>
          h(
            "div",
            { class: `rl-tr rl-wb-row${r.sent ? " rl-sent" : ""}${r.state ? ` rl-${r.state}` : ""}`, style: `padding:3px 6px;gap:8px;align-items:baseline${r.state === "waiting" ? ";opacity:0.55" : ""}`, dataset: { row: String(r.row), ...(r.state ? { state: r.state } : {}) } },
            h("span", { class: "rl-key", style: "min-width:4em" }, r.sent ? "● " : "", r.key),
            r.state === "waiting" ? h("span", { class: "rl-badge rl-muted rl-wb-waiting" }, "judging…") : null,
            r.state === "done" ? h("span", { class: "rl-badge rl-wb-done", title: "judged in this run" }, "✓ new") : null,
            r.state === "waiting" ? [] : r.metrics.map((m) => (m.error ? h("span", { class: "rl-badge rl-err", title: m.error }, "error") : h("span", { class: `rl-badge ${verdictClass(m.verdict)}`, title: m.metric }, `${m.verdict ? m.verdict.split(" (")[0] : ""} ${pct(m.score)}`.trim()))),
            h("span", { class: "rl-muted rl-small", style: "overflow:hidden;text-overflow:ellipsis;white-space:nowrap" }, r.response),
          ),
        ),
      ),
    ]);
  };

  const drawComparison = () => {
    clear(comparison);
    const names = model.get("names") || [];
    if (names.length !== 2) {
      const n = (model.get("versions_info") || []).length;
      comparison.append(h("div", { class: "rl-muted" }, n ? "Edit the rubric and re-judge: the new version is compared with this one here." : "Judge once for v1, then edit and re-judge to compare."));
      return;
    }
    const flipped = Number(model.get("flipped") || 0);
    append(comparison, [
      h("div", { class: "rl-title rl-wb-compare-title" }, `${names[1]} vs ${names[0]}`),
      h("div", { class: `rl-wb-flipped${flipped ? " rl-inline-error" : " rl-muted"}` }, `${flipped} verdict${flipped === 1 ? "" : "s"} flipped (listed first)`),
      metricBars(model),
      criterionBars(model.get("criteria"), names),
      caseList(model),
      sideBySide(model.get("detail")),
    ]);
  };

  const all = () => {
    drawHead();
    drawBar();
    drawVersions();
    drawTable();
    drawComparison();
  };
  all();
  drawTemplates();
  const stops = [
    listen(model, ["templates"], drawTemplates),
    listen(model, ["is_mock", "judge", "title"], drawHead),
    listen(model, ["running", "progress", "status", "pending", "save_path", "versions_info"], drawBar),
    listen(model, ["versions_info", "against"], drawVersions),
    listen(model, ["rows", "row_total"], drawTable),
    listen(model, ["names", "overview", "metrics", "criteria", "metric", "cases", "case_total", "item", "detail", "flipped", "versions_info"], drawComparison),
  ];
  return () => {
    for (const stop of stops) stop();
    if (typeof stopEditor === "function") stopEditor();
    rpc.dispose();
    clear(el);
  };
}

export default { render };
