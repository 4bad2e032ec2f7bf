// ResultTable: the whole result in a virtual grid. Rows arrive in pages over custom messages
// (sorting and filtering happen in the kernel), so 100,000 rows cost no more than 20.
import { h, append, mountRoot, mockBanner, clear, listen } from "./lib/dom.js";
import { createRpc } from "./lib/rpc.js";
import { PageCache, visibleRange, scrollTopFor } from "./lib/grid.js";
import { summaryCards } from "./lib/summary.js";
import { renderCase, markdownToggle } from "./lib/case.js";
import { chartCard } from "./lib/charts.js";
import { download, copyText } from "./lib/export.js";
import { fmtScore, fmtInt, verdictClass, pairwiseLabel, isNum } from "./lib/format.js";

const LINE_HEIGHT = 30;
const WRAP_HEIGHT = 66;
const MIN_WIDTH = 48;
/** Outcome groups offered by the status filter, by metric kind. */
export const STATUS_GROUPS = {
  pointwise: [["pass", "pass"], ["fail", "fail"], ["no_verdict", "no verdict"], ["error", "error"]],
  pairwise: [["win", "candidate wins"], ["tie", "tie"], ["loss", "baseline wins"], ["error", "error"]],
};
const raf = (/** @type {FrameRequestCallback} */ cb) => (globalThis.requestAnimationFrame ? requestAnimationFrame(cb) : setTimeout(cb, 16));
const unraf = (/** @type {number} */ id) => (globalThis.cancelAnimationFrame ? cancelAnimationFrame(id) : clearTimeout(id));
const HEAD_HEIGHT = 38;
const WIDTHS = { index: 56, text: 260, score: 120, verdict: 210, error: 200, number: 90, bool: 90, list: 240 };

/** @param {any} col */
const widthOf = (col) => col.width || WIDTHS[/** @type {keyof WIDTHS} */ (col.kind)] || 160;

/**
 * One cell's content by column kind. Values are text (or numbers) from the kernel.
 * @param {any} col
 * @param {any} value
 */
export function cellContent(col, value) {
  if (value == null || value === "") return "";
  switch (col.kind) {
    case "score": {
      if (!isNum(value)) return "";
      if (col.metric_kind === "pairwise") return h("span", { class: "rl-txt", title: pairwiseLabel(value) }, `${fmtScore(value, "pairwise")} ${pairwiseLabel(value)}`);
      const pct = Math.max(0, Math.min(1, value)) * 100;
      return [h("span", { class: "rl-scorebar" }, h("span", { style: `width:${pct.toFixed(1)}%` })), h("span", {}, fmtScore(value))];
    }
    case "verdict":
      return h("span", { class: `rl-badge ${verdictClass(value)}`, title: String(value) }, String(value));
    case "error":
      return h("span", { class: "rl-txt rl-badge rl-err", title: String(value) }, String(value));
    case "bool":
      if (col.key.endsWith("/swap_consistent")) return value ? h("span", { class: "rl-muted" }, "agree") : h("span", { class: "rl-badge rl-warnb" }, "disagree");
      return value ? "✓" : "✗";
    case "number":
      return isNum(value) ? (Number.isInteger(value) ? fmtInt(value) : value.toFixed(3)) : String(value);
    default:
      return h("span", { class: "rl-txt", title: String(value) }, String(value));
  }
}

/** @param {{ model: any, el: HTMLElement }} ctx */
function render({ model, el }) {
  const root = mountRoot(el, "table");
  const rpc = createRpc(model, { timeout: Number(model.get("timeout_ms") || 15000) });
  const state = {
    /** @type {{key: string, desc: boolean} | null} */
    sort: null,
    search: "",
    metric: "",
    scoreMin: /** @type {number|null} */ (null),
    scoreMax: /** @type {number|null} */ (null),
    status: "",
    /** @type {{name: string, value: string} | null} */
    criterion: null,
    errorsOnly: false,
    wrap: false,
    chartsOpen: true,
    /** @type {Map<string, number>} widths the user dragged */
    userWidths: new Map(),
    swapOnly: false,
    /** position of the selected row in the current view order */
    selectedPos: -1,
    chooserOpen: false,
  };

  const query = () => ({
    sort: state.sort,
    search: state.search,
    metric: state.metric || null,
    score_min: state.scoreMin,
    score_max: state.scoreMax,
    status: state.status || null,
    criterion: state.criterion,
    errors_only: state.errorsOnly,
    swap_inconsistent_only: state.swapOnly,
  });
  const visibleCols = () => {
    const all = model.get("columns") || [];
    const shown = new Set(model.get("visible") || []);
    return all.filter((c) => shown.has(c.key));
  };

  const status = h("div", { class: "rl-status", role: "status" });
  const setStatus = (text, bad = false, retry = null) => {
    clear(status);
    status.className = `rl-status${bad ? " rl-bad" : ""}`;
    if (text) status.append(text);
    if (retry) status.append(" ", h("button", { class: "rl-retry", onclick: retry }, "Retry"));
  };

  /** While a live run holds the kernel, rows come in the `live` trait (in run order). */
  const liveRows = () => {
    const live = model.get("live");
    const p = model.get("progress");
    return live && p && p.state === "running" ? live : null;
  };
  /** @param {any} live @param {number} start @param {number} stop */
  const livePage = (live, start, stop) => {
    const wanted = visibleCols().map((c) => c.key);
    const at = wanted.map((k) => (live.columns || []).indexOf(k));
    const rows = (live.rows || []).slice(start, stop).map((r) => [r[0], ...at.map((j) => (j < 0 ? null : r[j + 1]))]);
    return Promise.resolve({ rows, start, total: Math.min(live.total, (live.rows || []).length) });
  };
  const cache = new PageCache(
    (start, stop) => {
      const live = liveRows();
      if (live) return livePage(live, start, stop);
      return rpc.request("page", { start, stop, query: query(), columns: visibleCols().map((c) => c.key) }).then((reply) => {
        setStatus("");
        return reply;
      });
    },
    {
      pageSize: Number(model.get("page_size") || 200),
      onUpdate: () => schedule(),
      onError: (err) => setStatus(`Could not load rows: ${err.message}`, true, () => refresh(false)),
    },
  );

  // ---- layout --------------------------------------------------------------------------------
  const head = h("div", { class: "rl-grid-head", style: `height:${HEAD_HEIGHT}px;position:sticky;top:0;z-index:2` });
  const rows = h("div", { class: "rl-rows" });
  const spacer = h("div", { class: "rl-spacer" });
  const inner = h("div", { style: "position:relative" }, head, spacer, rows);
  const viewport = h("div", { class: "rl-viewport", tabIndex: 0 }, inner);
  const grid = h("div", { class: "rl-grid" }, viewport);
  const count = h("span", { class: "rl-count" });
  const detail = h("div", { class: "rl-detail" });
  const toolbar = h("div", { class: "rl-toolbar" });
  const summary = h("div", { class: "rl-summary" });
  const charts = h("div", { class: "rl-charts" });
  const progress = h("div", { class: "rl-progress-line" });
  const banner = h("div");
  const titleEl = h("div");
  root.append(banner, titleEl, progress, summary, charts, toolbar, grid, status, detail);
  const rowHeight = () => (state.wrap ? WRAP_HEIGHT : LINE_HEIGHT);

  /** The rows' area: the configured height, or less when few rows match (no empty box). */
  const bodyHeight = () => {
    const max = Number(model.get("height") || 420) - HEAD_HEIGHT;
    return cache.total == null ? max : Math.min(max, Math.max(cache.total, 3) * rowHeight() + 2);
  };
  viewport.style.height = `${bodyHeight() + HEAD_HEIGHT}px`;

  // ---- drawing -------------------------------------------------------------------------------
  let frame = 0;
  const schedule = () => {
    if (frame) return;
    frame = raf(() => {
      frame = 0;
      drawRows();
    });
  };

  /** @type {Map<string, number>} */
  const widths = new Map();
  /** Fit the columns to the output's width: text columns give (down to 110px) or take the
   *  difference. @param {any[]} cols @returns {number} the total width */
  function layout(cols) {
    widths.clear();
    const base = cols.map((c) => state.userWidths.get(c.key) ?? widthOf(c));
    const total = base.reduce((a, b) => a + b, 0);
    const avail = viewport.clientWidth - 2;
    const isText = cols.map((c) => c.kind === "text" && !c.fixed && !state.userWidths.has(c.key));
    const room = base.map((w, i) => (isText[i] ? Math.max(w - 110, 0) : 0));
    const roomTotal = room.reduce((a, b) => a + b, 0);
    const textTotal = base.reduce((s, w, i) => s + (isText[i] ? w : 0), 0);
    let delta = 0;
    if (avail > 200 && textTotal > 0) delta = total > avail ? -Math.min(total - avail, roomTotal) : avail - total;
    cols.forEach((c, i) => {
      let w = base[i];
      if (delta < 0 && roomTotal > 0) w += (delta * room[i]) / roomTotal;
      else if (delta > 0 && isText[i]) w += (delta * base[i]) / textTotal;
      widths.set(c.key, Math.floor(state.userWidths.get(c.key) ?? w));
    });
    return cols.reduce((s, c) => s + (widths.get(c.key) || 0), 0);
  }
  const colWidth = (col) => widths.get(col.key) || widthOf(col);

  /** A column's header: `metric/field` on two lines (metric small above), full name on hover,
   * and a handle on the right edge to drag its width. @param {any} col */
  function headLabel(col) {
    if (col.metric && col.field) return h("span", { class: "rl-th-two" }, h("span", { class: "rl-th-metric" }, col.metric), h("span", { class: "rl-th-field" }, col.field));
    return h("span", { class: "rl-txt" }, col.label);
  }

  /** @param {any} col @param {HTMLElement} th */
  function resizeHandle(col, th) {
    const grip = h("span", { class: "rl-resize", title: "drag to resize; double-click to reset", dataset: { key: col.key } });
    grip.addEventListener("click", (e) => e.stopPropagation());
    grip.addEventListener("dblclick", (e) => {
      e.stopPropagation();
      state.userWidths.delete(col.key);
      drawHead();
      schedule();
    });
    grip.addEventListener("pointerdown", (/** @type {PointerEvent} */ e) => {
      e.preventDefault();
      e.stopPropagation();
      const x0 = e.clientX;
      const w0 = th.getBoundingClientRect().width;
      const move = (/** @type {PointerEvent} */ ev) => {
        const w = Math.max(MIN_WIDTH, Math.round(w0 + ev.clientX - x0));
        state.userWidths.set(col.key, w);
        th.style.width = `${w}px`;
        widths.set(col.key, w);
        inner.style.width = `${[...widths.values()].reduce((a, b) => a + b, 0)}px`;
        schedule();
      };
      const up = () => {
        window.removeEventListener("pointermove", move);
        window.removeEventListener("pointerup", up);
        drawHead();
        schedule();
      };
      window.addEventListener("pointermove", move);
      window.addEventListener("pointerup", up);
    });
    return grip;
  }

  function drawHead() {
    clear(head);
    const cols = visibleCols();
    const width = layout(cols);
    inner.style.width = `${width}px`;
    for (const col of cols) {
      const sorted = state.sort && state.sort.key === col.key;
      const th = h(
        "div",
        {
          class: `rl-th${col.sortable ? " rl-sortable" : ""}`,
          style: `width:${colWidth(col)}px`,
          title: col.sortable ? `${col.label} (click to sort)` : col.label,
          dataset: { key: col.key },
          onclick: col.sortable ? () => cycleSort(col.key) : null,
        },
        headLabel(col),
        sorted ? h("span", { class: "rl-arrow" }, state.sort.desc ? "▼" : "▲") : null,
      );
      th.append(resizeHandle(col, th));
      head.append(th);
    }
  }

  function drawRows() {
    const total = cache.total ?? 0;
    viewport.style.height = `${bodyHeight() + HEAD_HEIGHT}px`;
    const range = visibleRange({ scrollTop: viewport.scrollTop, bodyHeight: bodyHeight(), rowHeight: rowHeight(), total });
    spacer.style.height = `${range.height + HEAD_HEIGHT}px`;
    rows.style.top = `${viewport.scrollTop + HEAD_HEIGHT - range.offset}px`;
    if (cache.total != null) cache.ensure(range.first, Math.min(range.last + 20, total));
    const cols = visibleCols();
    clear(rows);
    if (cache.total === 0) {
      rows.append(h("div", { class: "rl-empty" }, "No rows match these filters."));
    }
    for (let i = range.first; i < range.last; i++) {
      const row = cache.row(i);
      const tr = h("div", { class: `rl-tr${row ? "" : " rl-loading"}${i === state.selectedPos ? " rl-selected" : ""}${state.wrap ? " rl-wrapped" : ""}`, style: `height:${rowHeight()}px`, dataset: { pos: String(i), row: row ? String(row[0]) : "" } });
      cols.forEach((col, j) => {
        const value = row ? row[j + 1] : j === 0 ? "…" : "";
        const cls = `rl-td${col.kind === "score" || col.kind === "number" ? " rl-num" : ""}`;
        tr.append(h("div", { class: cls, style: `width:${colWidth(col)}px`, dataset: { key: col.key } }, row ? cellContent(col, value) : value));
      });
      if (row) tr.addEventListener("click", () => select(i));
      rows.append(tr);
    }
    const all = Number(model.get("total") || 0);
    clear(count);
    count.append(cache.total == null ? "loading…" : cache.total === all ? `${fmtInt(all)} rows` : `${fmtInt(cache.total)} of ${fmtInt(all)} rows`);
  }

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
    for (const b of toolbar.querySelectorAll(".rl-export button")) /** @type {HTMLButtonElement} */ (b).disabled = Boolean(p && p.state === "running");
    if (!p || !isNum(p.total)) return;
    const pct = p.total ? Math.round((100 * p.done) / p.total) : 100;
    const word = p.state === "running" ? "running" : p.state === "interrupted" ? "interrupted: the finished rows are kept" : p.state === "failed" ? `failed: ${p.message || "see the cell's error"}` : "finished";
    progress.className = `rl-progress-line rl-${p.state || "done"}`;
    append(
      progress,
      [h("span", { class: "rl-progress-bar", role: "progressbar", "aria-valuenow": String(pct), "aria-valuemin": "0", "aria-valuemax": "100" }, h("span", { style: `width:${pct}%` })),
      h("span", { class: "rl-progress-text" }, `${fmtInt(p.done)} of ${fmtInt(p.total)} rows · ${fmtInt(p.errors || 0)} errors · ${word}`),
      p.state === "running" ? h("span", { class: "rl-muted rl-small rl-live-hint" }, "rows in run order; sorting, filters and export work when the run ends") : null],
    );
  }

  let chartsKey = "";
  let chartsSeq = 0;
  /** Charts of the rows the filters select (not re-asked when only the sort changes). */
  function loadCharts(force = false) {
    if (!state.chartsOpen) {
      clear(charts);
      return;
    }
    const live = liveRows();
    if (live) {
      chartsKey = "";
      clear(charts);
      charts.append(h("div", { class: "rl-chart-cards" }, (live.charts || []).map(chartCard)));
      return;
    }
    const q = { ...query(), sort: null };
    const key = JSON.stringify(q);
    if (key === chartsKey && !force) return;
    chartsKey = key;
    const seq = ++chartsSeq;
    rpc.request("charts", { query: q }).then(
      (reply) => {
        if (seq !== chartsSeq) return;
        clear(charts);
        charts.append(h("div", { class: "rl-chart-cards" }, (reply.charts || []).map(chartCard)));
      },
      (err) => {
        if (seq !== chartsSeq) return;
        clear(charts);
        charts.append(h("div", { class: "rl-muted rl-small" }, `charts not available: ${err.message}`));
      },
    );
  }

  /** Download the current view (filters and sort applied, visible columns) as CSV or JSONL. */
  function exportAs(format) {
    setStatus(`preparing ${format.toUpperCase()}…`);
    rpc.request("export", { query: query(), columns: visibleCols().map((c) => c.key), format }, { timeout: 120_000 }).then(
      (reply) => {
        download(String(reply.text), String(reply.filename), String(reply.mime));
        setStatus(`saved ${fmtInt(reply.rows)} rows as ${String(reply.filename)}`);
      },
      (err) => setStatus(`Could not export: ${err.message}`, true),
    );
  }

  /** A labelled checkbox in the toolbar. */
  function checkbox(cls, label, checked, onChange, title = "") {
    const box = h("input", { type: "checkbox", class: cls, checked });
    box.addEventListener("change", () => onChange(box.checked));
    return h("label", { title }, box, label);
  }

  function drawToolbar() {
    clear(toolbar);
    const metrics = model.get("metrics") || [];
    const search = h("input", { type: "search", placeholder: "Search text…", value: state.search, "aria-label": "search" });
    let timer = 0;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        state.search = search.value;
        refresh(true);
      }, 250);
    });
    toolbar.append(search);
    if (metrics.length > 1) {
      const sel = h("select", { class: "rl-metric-select", "aria-label": "metric" }, h("option", { value: "" }, "any metric"), metrics.map((m) => h("option", { value: m.name, selected: m.name === state.metric }, m.name)));
      sel.addEventListener("change", () => {
        state.metric = sel.value;
        state.criterion = null;
        drawToolbar();
        refresh(true);
      });
      toolbar.append(sel);
    }
    const chosen = metrics.filter((m) => !state.metric || m.name === state.metric);
    const metricKind = (chosen[0] || metrics[0] || {}).kind;
    const asShown = (v) => (v == null ? "" : metricKind === "pairwise" ? String(v) : String(Math.round(v * 1000) / 10));
    const parse = (s) => (s.trim() === "" || Number.isNaN(Number(s)) ? null : metricKind === "pairwise" ? Number(s) : Number(s) / 100);
    const lo = h("input", { type: "number", class: "rl-min", placeholder: "min", value: asShown(state.scoreMin), step: metricKind === "pairwise" ? 0.5 : 1, "aria-label": "minimum score" });
    const hi = h("input", { type: "number", class: "rl-max", placeholder: "max", value: asShown(state.scoreMax), step: metricKind === "pairwise" ? 0.5 : 1, "aria-label": "maximum score" });
    const onRange = () => {
      state.scoreMin = parse(lo.value);
      state.scoreMax = parse(hi.value);
      refresh(true);
    };
    lo.addEventListener("change", onRange);
    hi.addEventListener("change", onRange);
    toolbar.append(h("label", {}, "score", lo, "–", hi, metricKind === "pairwise" ? "" : "%"));
    // outcome groups, not one option per exact verdict string
    const kinds = new Set(chosen.map((m) => (m.kind === "pairwise" ? "pairwise" : "pointwise")));
    const groups = [];
    for (const k of ["pointwise", "pairwise"]) if (kinds.has(k)) for (const g of STATUS_GROUPS[k]) if (!groups.some(([v]) => v === g[0])) groups.push(g);
    if (groups.length) {
      const ssel = h("select", { class: "rl-status-filter", "aria-label": "outcome" }, h("option", { value: "" }, "any outcome"), groups.map(([v, label]) => h("option", { value: v, selected: v === state.status }, label)));
      ssel.addEventListener("change", () => {
        state.status = ssel.value;
        refresh(true);
      });
      toolbar.append(ssel);
    }
    // one criterion's result: "accuracy: level 1", "deadline: NO"
    const crits = model.get("criteria") || {};
    const options = chosen.flatMap((m) => (crits[m.name] || []).map((c) => ({ metric: m.name, ...c })));
    if (options.length) {
      const current = state.criterion ? JSON.stringify([state.criterion.name, state.criterion.value]) : "";
      const csel = h(
        "select",
        { class: "rl-criterion-filter", "aria-label": "criterion result" },
        h("option", { value: "" }, "any criterion result"),
        options.map((c) =>
          h(
            "optgroup",
            { label: chosen.length > 1 ? `${c.metric}: ${c.name}` : c.name },
            (c.values || []).map((v) => {
              const value = JSON.stringify([c.name, v]);
              return h("option", { value, selected: value === current, title: c.question || c.name }, `${c.name}: ${v}`);
            }),
          ),
        ),
      );
      csel.addEventListener("change", () => {
        const pick = csel.value ? JSON.parse(csel.value) : null;
        state.criterion = pick ? { name: String(pick[0]), value: String(pick[1]) } : null;
        refresh(true);
      });
      toolbar.append(csel);
    }
    toolbar.append(checkbox("rl-errors-only", "errors only", state.errorsOnly, (on) => ((state.errorsOnly = on), refresh(true))));
    if (metrics.some((m) => m.kind === "pairwise")) toolbar.append(checkbox("rl-swap-only", "orders disagree", state.swapOnly, (on) => ((state.swapOnly = on), refresh(true))));
    toolbar.append(checkbox("rl-wrap", "wrap rows", state.wrap, (on) => {
      state.wrap = on;
      viewport.scrollTop = 0;
      drawHead();
      schedule();
    }, "show up to three lines of each cell"));
    const rawKeys = (model.get("columns") || []).filter((c) => c.field === "raw_output").map((c) => c.key);
    if (rawKeys.length) {
      const shown = new Set(model.get("visible") || []);
      toolbar.append(checkbox("rl-show-raw", "raw output", rawKeys.every((k) => shown.has(k)), (on) => setShown(rawKeys, on), "show the judge's raw output columns"));
    }
    const wrap = h("span", { style: "position:relative" });
    const chooserBtn = h("button", { class: "rl-columns-btn", onclick: () => toggleChooser(wrap) }, "Columns ▾");
    wrap.append(chooserBtn);
    const chartsBtn = h("button", { class: "rl-charts-btn", "aria-pressed": state.chartsOpen ? "true" : "false", onclick: () => {
      state.chartsOpen = !state.chartsOpen;
      chartsKey = "";
      drawToolbar();
      loadCharts();
    } }, state.chartsOpen ? "Charts ✓" : "Charts");
    const exportBox = h(
      "span",
      { class: "rl-export" },
      h("button", { class: "rl-export-csv", title: "download the rows shown (filters and sort applied) as CSV", onclick: () => exportAs("csv") }, "⤓ CSV"),
      h("button", { class: "rl-export-jsonl", title: "download the rows shown (filters and sort applied) as JSON Lines", onclick: () => exportAs("jsonl") }, "⤓ JSONL"),
    );
    toolbar.append(wrap, chartsBtn, exportBox, count);
    if (state.chooserOpen) toggleChooser(wrap, true);
    drawProgress();
  }

  /** Show or hide some columns (keeping the result's column order). @param {string[]} keys @param {boolean} on */
  function setShown(keys, on) {
    const now = new Set(model.get("visible") || []);
    for (const k of keys) (on ? now.add(k) : now.delete(k));
    model.set("visible", (model.get("columns") || []).map((x) => x.key).filter((k) => now.has(k)));
    model.save_changes();
  }

  /** @param {HTMLElement} wrap */
  function toggleChooser(wrap, keepOpen = false) {
    const existing = wrap.querySelector(".rl-popover");
    if (existing && !keepOpen) {
      existing.remove();
      state.chooserOpen = false;
      return;
    }
    if (existing) existing.remove();
    state.chooserOpen = true;
    const shown = new Set(model.get("visible") || []);
    const pop = h(
      "div",
      { class: "rl-popover", style: "top:26px;left:0" },
      (model.get("columns") || []).map((c) => {
        const box = h("input", { type: "checkbox", checked: shown.has(c.key), dataset: { key: c.key } });
        box.addEventListener("change", () => setShown([c.key], box.checked));
        return h("label", { title: c.empty ? "no row has a value here" : "" }, box, c.label, c.empty ? h("span", { class: "rl-muted rl-small" }, " (empty)") : null);
      }),
    );
    wrap.append(pop);
  }

  /** @param {string} key */
  function cycleSort(key) {
    if (!state.sort || state.sort.key !== key) state.sort = { key, desc: false };
    else if (!state.sort.desc) state.sort = { key, desc: true };
    else state.sort = null;
    drawHead();
    refresh(true);
  }

  /** A new query: drop cached pages, go back to the top. */
  function refresh(resetScroll) {
    setStatus("");
    cache.reset();
    state.selectedPos = -1;
    if (resetScroll) viewport.scrollTop = 0;
    cache.load(0).then(() => {
      drawRows();
      const range = visibleRange({ scrollTop: viewport.scrollTop, bodyHeight: bodyHeight(), rowHeight: rowHeight(), total: cache.total ?? 0 });
      cache.ensure(range.first, range.last);
      loadCharts();
    });
    drawRows();
  }

  /** @param {number} pos position in the current view */
  function select(pos) {
    const row = cache.row(pos);
    if (!row) return;
    state.selectedPos = pos;
    model.set("selected", row[0]);
    model.save_changes();
    schedule();
  }

  /** @param {number} step */
  function move(step) {
    const pos = state.selectedPos + step;
    if (pos < 0 || cache.total == null || pos >= cache.total) return;
    const go = () => {
      select(pos);
      const b = bodyHeight();
      const range = visibleRange({ scrollTop: viewport.scrollTop, bodyHeight: b, rowHeight: rowHeight(), total: cache.total ?? 0 });
      if (pos < range.first || pos >= range.last - 1) viewport.scrollTop = scrollTopFor(Math.max(pos - 2, 0), { bodyHeight: b, rowHeight: rowHeight(), total: cache.total ?? 0 });
    };
    if (cache.row(pos)) go();
    else cache.load(Math.floor(pos / cache.pageSize)).then(go);
  }

  function drawDetail() {
    clear(detail);
    const data = model.get("detail");
    if (!data || Number(model.get("selected")) < 0) return;
    const copyBtn = h("button", { class: "rl-copy-json", title: "copy this case (inputs, scores, criteria, judge output) as JSON" }, "Copy JSON");
    copyBtn.addEventListener("click", () => {
      copyText(JSON.stringify(data, null, 2), copyBtn.parentElement || copyBtn).then((how) => {
        copyBtn.textContent = how === "copied" ? "Copied ✓" : "Select and copy ↓";
      });
    });
    detail.append(
      h(
        "div",
        { class: "rl-case" },
        h(
          "div",
          { class: "rl-nav" },
          h("button", { class: "rl-prev", disabled: state.selectedPos <= 0, onclick: () => move(-1) }, "‹ Prev"),
          h("span", { class: "rl-pos rl-card-name" }, data.heading || ""),
          h("button", { class: "rl-next", disabled: state.selectedPos < 0 || state.selectedPos >= (cache.total ?? 0) - 1, onclick: () => move(1) }, "Next ›"),
          h("span", { class: "rl-grow" }),
          markdownToggle(model),
          copyBtn,
          h(
            "button",
            {
              class: "rl-close",
              onclick: () => {
                state.selectedPos = -1;
                model.set("selected", -1);
                model.save_changes();
                schedule();
              },
            },
            "Close ✕",
          ),
        ),
        renderCase(data, model.get("markdown") !== false),
      ),
    );
  }

  const onKey = (/** @type {KeyboardEvent} */ e) => {
    if (e.key === "ArrowDown" && state.selectedPos >= 0) (move(1), e.preventDefault());
    else if (e.key === "ArrowUp" && state.selectedPos > 0) (move(-1), e.preventDefault());
  };
  viewport.addEventListener("scroll", schedule, { passive: true });
  let lastWidth = 0;
  const resize = typeof ResizeObserver === "function"
    ? new ResizeObserver(() => {
        if (viewport.clientWidth === lastWidth) return;
        lastWidth = viewport.clientWidth;
        drawHead();
        schedule();
      })
    : null;
  if (resize) resize.observe(viewport);
  viewport.addEventListener("keydown", onKey);

  drawSummary();
  drawProgress();
  drawToolbar();
  drawHead();
  refresh(false);
  drawDetail();

  const offSummary = listen(model, ["summary", "is_mock", "judge", "title"], drawSummary);
  const offCols = listen(model, ["visible", "columns"], () => {
    drawToolbar();
    drawHead();
    refresh(false);
  });
  const offDetail = listen(model, ["detail", "selected", "markdown"], drawDetail);
  const offProgress = listen(model, ["progress"], drawProgress);
  const offTotal = listen(model, ["total", "metrics", "criteria"], () => {
    // a live run adds rows: keep the reader's place; anything else starts from the top
    const live = (model.get("progress") || {}).state === "running";
    if (!live) drawToolbar();
    const keep = state.selectedPos;
    refresh(!live);
    chartsKey = "";
    if (live) state.selectedPos = keep;
  });

  return () => {
    offSummary();
    offCols();
    offDetail();
    offTotal();
    offProgress();
    if (frame) unraf(frame);
    viewport.removeEventListener("scroll", schedule);
    if (resize) resize.disconnect();
    viewport.removeEventListener("keydown", onKey);
    rpc.dispose();
    clear(el);
  };
}

export default { render };
