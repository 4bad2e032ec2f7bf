// ResultTable: the whole result in a virtual grid. Rows arrive in pages over custom messages
// (sorting and filtering happen in the kernel), so 100,000 rows cost no more than 20.
import { h, mountRoot, mockBanner, clear, listen } from "./lib/dom.js";
import { createRpc } from "./lib/rpc.js";
import { PageCache, visibleRange, scrollTopFor } from "./lib/grid.js";
import { summaryCards } from "./lib/summary.js";
import { renderCase } from "./lib/case.js";
import { fmtScore, fmtInt, verdictClass, pairwiseLabel, isNum } from "./lib/format.js";

const ROW_HEIGHT = 30;
const raf = (/** @type {FrameRequestCallback} */ cb) => (globalThis.requestAnimationFrame ? requestAnimationFrame(cb) : setTimeout(cb, 16));
const unraf = (/** @type {number} */ id) => (globalThis.cancelAnimationFrame ? cancelAnimationFrame(id) : clearTimeout(id));
const HEAD_HEIGHT = 31;
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
    verdict: "",
    errorsOnly: false,
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
    verdict: state.verdict || null,
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

  const cache = new PageCache(
    (start, stop) =>
      rpc.request("page", { start, stop, query: query(), columns: visibleCols().map((c) => c.key) }).then((reply) => {
        setStatus("");
        return reply;
      }),
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
  const banner = h("div");
  const titleEl = h("div");
  root.append(banner, titleEl, summary, toolbar, grid, status, detail);

  /** The rows' area: the configured height, or less when few rows match (no empty box). */
  const bodyHeight = () => {
    const max = Number(model.get("height") || 420) - HEAD_HEIGHT;
    return cache.total == null ? max : Math.min(max, Math.max(cache.total, 3) * ROW_HEIGHT + 2);
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
    const base = cols.map(widthOf);
    const total = base.reduce((a, b) => a + b, 0);
    const avail = viewport.clientWidth - 2;
    const isText = cols.map((c) => c.kind === "text" && !c.fixed);
    const room = base.map((w, i) => (isText[i] ? Math.max(w - 110, 0) : 0));
    const roomTotal = room.reduce((a, b) => a + b, 0);
    const textTotal = base.reduce((s, w, i) => s + (isText[i] ? w : 0), 0);
    let delta = 0;
    if (avail > 200 && textTotal > 0) delta = total > avail ? -Math.min(total - avail, roomTotal) : avail - total;
    cols.forEach((c, i) => {
      let w = base[i];
      if (delta < 0 && roomTotal > 0) w += (delta * room[i]) / roomTotal;
      else if (delta > 0 && isText[i]) w += (delta * base[i]) / textTotal;
      widths.set(c.key, Math.floor(w));
    });
    return cols.reduce((s, c) => s + (widths.get(c.key) || 0), 0);
  }
  const colWidth = (col) => widths.get(col.key) || widthOf(col);

  function drawHead() {
    clear(head);
    const cols = visibleCols();
    const width = layout(cols);
    inner.style.width = `${width}px`;
    for (const col of cols) {
      const sorted = state.sort && state.sort.key === col.key;
      head.append(
        h(
          "div",
          {
            class: `rl-th${col.sortable ? " rl-sortable" : ""}`,
            style: `width:${colWidth(col)}px`,
            title: col.sortable ? `sort by ${col.label}` : col.label,
            dataset: { key: col.key },
            onclick: col.sortable ? () => cycleSort(col.key) : null,
          },
          h("span", { class: "rl-txt" }, col.label),
          sorted ? h("span", { class: "rl-arrow" }, state.sort.desc ? "▼" : "▲") : null,
        ),
      );
    }
  }

  function drawRows() {
    const total = cache.total ?? 0;
    viewport.style.height = `${bodyHeight() + HEAD_HEIGHT}px`;
    const range = visibleRange({ scrollTop: viewport.scrollTop, bodyHeight: bodyHeight(), rowHeight: ROW_HEIGHT, total });
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
      const tr = h("div", { class: `rl-tr${row ? "" : " rl-loading"}${i === state.selectedPos ? " rl-selected" : ""}`, style: `height:${ROW_HEIGHT}px`, dataset: { pos: String(i), row: row ? String(row[0]) : "" } });
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

  function drawToolbar() {
    clear(toolbar);
    const metrics = model.get("metrics") || [];
    const verdicts = model.get("verdicts") || {};
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
        state.verdict = "";
        drawToolbar();
        refresh(true);
      });
      toolbar.append(sel);
    }
    const metricKind = (metrics.find((m) => m.name === state.metric) || metrics[0] || {}).kind;
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
    toolbar.append(h("label", {}, "score", lo, "–", hi));
    const vlist = state.metric ? verdicts[state.metric] || [] : [...new Set(Object.values(verdicts).flat())];
    if (vlist.length) {
      const vsel = h("select", { class: "rl-verdict", "aria-label": "verdict" }, h("option", { value: "" }, "any verdict"), vlist.map((v) => h("option", { value: v, selected: v === state.verdict }, v)));
      vsel.addEventListener("change", () => {
        state.verdict = vsel.value;
        refresh(true);
      });
      toolbar.append(vsel);
    }
    const err = h("input", { type: "checkbox", class: "rl-errors-only", checked: state.errorsOnly });
    err.addEventListener("change", () => {
      state.errorsOnly = err.checked;
      refresh(true);
    });
    toolbar.append(h("label", {}, err, "errors only"));
    if (metrics.some((m) => m.kind === "pairwise")) {
      const sw = h("input", { type: "checkbox", class: "rl-swap-only", checked: state.swapOnly });
      sw.addEventListener("change", () => {
        state.swapOnly = sw.checked;
        refresh(true);
      });
      toolbar.append(h("label", {}, sw, "orders disagree"));
    }
    const wrap = h("span", { style: "position:relative" });
    const chooserBtn = h("button", { class: "rl-columns-btn", onclick: () => toggleChooser(wrap) }, "Columns ▾");
    wrap.append(chooserBtn);
    toolbar.append(wrap, count);
    if (state.chooserOpen) toggleChooser(wrap, true);
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
        box.addEventListener("change", () => {
          const now = new Set(model.get("visible") || []);
          if (box.checked) now.add(c.key);
          else now.delete(c.key);
          const order = (model.get("columns") || []).map((x) => x.key).filter((k) => now.has(k));
          model.set("visible", order);
          model.save_changes();
        });
        return h("label", {}, box, c.label);
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
      const range = visibleRange({ scrollTop: viewport.scrollTop, bodyHeight: bodyHeight(), rowHeight: ROW_HEIGHT, total: cache.total ?? 0 });
      cache.ensure(range.first, range.last);
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
      const range = visibleRange({ scrollTop: viewport.scrollTop, bodyHeight: b, rowHeight: ROW_HEIGHT, total: cache.total ?? 0 });
      if (pos < range.first || pos >= range.last - 1) viewport.scrollTop = scrollTopFor(Math.max(pos - 2, 0), { bodyHeight: b, rowHeight: ROW_HEIGHT, total: cache.total ?? 0 });
    };
    if (cache.row(pos)) go();
    else cache.load(Math.floor(pos / cache.pageSize)).then(go);
  }

  function drawDetail() {
    clear(detail);
    const data = model.get("detail");
    if (!data || Number(model.get("selected")) < 0) return;
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
        renderCase(data),
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
  drawToolbar();
  drawHead();
  refresh(false);
  drawDetail();

  const offSummary = listen(model, ["summary", "is_mock", "judge", "title"], drawSummary);
  const offCols = listen(model, ["visible", "columns"], () => {
    drawHead();
    refresh(false);
  });
  const offDetail = listen(model, ["detail", "selected"], drawDetail);
  const offTotal = listen(model, ["total", "metrics", "verdicts"], () => {
    drawToolbar();
    refresh(true);
  });

  return () => {
    offSummary();
    offCols();
    offDetail();
    offTotal();
    if (frame) unraf(frame);
    viewport.removeEventListener("scroll", schedule);
    if (resize) resize.disconnect();
    viewport.removeEventListener("keydown", onKey);
    rpc.dispose();
    clear(el);
  };
}

export default { render };
