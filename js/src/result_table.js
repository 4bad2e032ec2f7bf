// ResultTable: the whole result in a virtual grid. Rows arrive in pages over custom messages
// (sorting and filtering happen in the kernel), so 100,000 rows cost no more than 20.
// This module lays the view out and wires its parts: the grid (table/grid.js), the toolbar of
// filters (table/filters.js) and the selected case (table/detail.js); the header (mock banner,
// title, live-run progress, summary cards) is drawn here.
import { h, append, mountRoot, mockBanner, clear, listen } from "./lib/dom.js";
import { createRpc } from "./lib/rpc.js";
import { summaryCards } from "./lib/summary.js";
import { fmtInt, fmtCount, isNum } from "./lib/format.js";
import { newState } from "./table/state.js";
import { createGrid } from "./table/grid.js";
import { createFilters } from "./table/filters.js";
import { createDetail } from "./table/detail.js";

export { cellContent } from "./table/grid.js";
export { STATUS_GROUPS } from "./table/filters.js";

/** @param {{ model: any, el: HTMLElement }} ctx */
function render({ model, el }) {
  const root = mountRoot(el, "table");
  const rpc = createRpc(model, { timeout: Number(model.get("timeout_ms") || 15000) });
  const state = newState();

  const status = h("div", { class: "rl-status", role: "status" });
  /** @type {import("./table/state.js").TableContext["setStatus"]} */
  const setStatus = (text, bad = false, retry = null) => {
    clear(status);
    status.className = `rl-status${bad ? " rl-bad" : ""}`;
    if (text) status.append(text);
    if (retry) status.append(" ", h("button", { class: "rl-retry", onclick: retry }, "Retry"));
  };
  /** @returns {any[]} */
  const visibleCols = () => {
    const all = model.get("columns") || [];
    const shown = new Set(model.get("visible") || []);
    return all.filter((/** @type {any} */ c) => shown.has(c.key));
  };
  /** While a live run holds the kernel, rows come in the `live` trait (in run order). */
  const liveRows = () => {
    const live = model.get("live");
    const p = model.get("progress");
    return live && p && p.state === "running" ? live : null;
  };
  const ctx = { model, rpc, state, visibleCols, liveRows, setStatus };

  const grid = createGrid(ctx, { onLoaded: () => filters.loadCharts() });
  const filters = createFilters(ctx, grid, { afterDraw: () => drawProgress() });
  const detail = createDetail(ctx, grid);

  const progress = h("div", { class: "rl-progress-line" });
  const summary = h("div", { class: "rl-summary" });
  const banner = h("div");
  const titleEl = h("div");
  root.append(banner, titleEl, progress, summary, filters.charts, filters.el, filters.note, grid.el, status, detail.el);

  function drawSummary() {
    clear(banner);
    const b = mockBanner(model.get("is_mock"), model.get("judge"));
    if (b) banner.append(b);
    clear(titleEl);
    if (model.get("title")) titleEl.append(h("div", { class: "rl-title", style: "margin-bottom:6px" }, model.get("title")));
    clear(summary);
    const cards = summaryCards(model.get("summary"));
    if (cards) summary.append(cards);
  }

  /** The live-run line: rows finished of total, errors, and whether the run is still going. */
  function drawProgress() {
    clear(progress);
    const p = model.get("progress");
    // the kernel cannot answer an export while the run holds it
    filters.setExportEnabled(!(p && p.state === "running"));
    if (!p || !isNum(p.total)) return;
    const pct = p.total ? Math.round((100 * p.done) / p.total) : 100;
    const word = p.state === "running" ? "running" : p.state === "interrupted" ? "interrupted: the finished rows are kept" : p.state === "failed" ? `failed: ${p.message || "see the cell's error"}` : "finished";
    progress.className = `rl-progress-line rl-${p.state || "done"}`;
    append(progress, [
      h("span", { class: "rl-progress-bar", role: "progressbar", "aria-valuenow": String(pct), "aria-valuemin": "0", "aria-valuemax": "100" }, h("span", { style: `width:${pct}%` })),
      h("span", { class: "rl-progress-text" }, `${fmtInt(p.done)} of ${fmtCount(p.total, "row")} · ${fmtCount(p.errors || 0, "error")} · ${word}`),
      p.state === "running" ? h("span", { class: "rl-muted rl-small rl-live-hint" }, "rows in run order; sorting, filters and export work when the run ends") : null,
    ]);
  }

  drawSummary();
  drawProgress();
  filters.draw();
  grid.drawHead();
  grid.refresh(false);
  detail.draw();

  const offSummary = listen(model, ["summary", "is_mock", "judge", "title"], drawSummary);
  const offCols = listen(model, ["visible", "columns", "refusals"], () => {
    filters.draw();
    grid.drawHead();
    grid.refresh(false);
  });
  const offDetail = listen(model, ["detail", "selected", "markdown"], detail.draw);
  const offProgress = listen(model, ["progress"], drawProgress);
  const offTotal = listen(model, ["total", "metrics", "criteria"], () => {
    // a live run adds rows: keep the reader's place; anything else starts from the top
    const live = (model.get("progress") || {}).state === "running";
    if (!live) filters.draw();
    const keep = state.selectedPos;
    grid.refresh(!live);
    filters.forgetCharts();
    if (live) state.selectedPos = keep;
  });

  return () => {
    offSummary();
    offCols();
    offDetail();
    offTotal();
    offProgress();
    grid.dispose();
    rpc.dispose();
    clear(el);
  };
}

export default { render };
