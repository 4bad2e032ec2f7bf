// The ResultTable's virtual grid: column layout and resizing, the sticky header with sorting,
// the rows in view (fetched in pages; sorting and filtering happen in the kernel), selection and
// keyboard moves. 100,000 rows cost no more DOM than 20.
import { h, clear } from "../lib/dom.js";
import { PageCache, visibleRange, scrollTopFor } from "../lib/grid.js";
import { fmtScore, fmtInt, fmtCount, verdictClass, pairwiseLabel, isNum } from "../lib/format.js";
import { queryOf } from "./state.js";

const LINE_HEIGHT = 30;
const WRAP_HEIGHT = 66;
const MIN_WIDTH = 48;
const HEAD_HEIGHT = 38;
const WIDTHS = { index: 56, text: 260, score: 120, verdict: 210, error: 200, number: 90, bool: 90, list: 240 };
const raf = (/** @type {FrameRequestCallback} */ cb) => (typeof requestAnimationFrame === "function" ? requestAnimationFrame(cb) : setTimeout(cb, 16));
const unraf = (/** @type {any} */ id) => (typeof cancelAnimationFrame === "function" ? cancelAnimationFrame(id) : clearTimeout(id));

/** @param {any} col */
const widthOf = (col) => col.width || WIDTHS[/** @type {keyof typeof WIDTHS} */ (col.kind)] || 160;

/**
 * One cell's content by column kind. Values are text (or numbers) from the kernel.
 * @param {any} col
 * @param {any} value
 * @returns {string | Node | Node[]}
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

/** A column's header: `metric/field` on two lines (metric small above), full name on hover.
 * @param {any} col */
function headLabel(col) {
  if (col.metric && col.field) return h("span", { class: "rl-th-two" }, h("span", { class: "rl-th-metric" }, col.metric), h("span", { class: "rl-th-field" }, col.field));
  return h("span", { class: "rl-txt" }, col.label);
}

/**
 * The grid and its page cache.
 * @param {import("./state.js").TableContext} ctx
 * @param {{ onLoaded: () => void }} hooks `onLoaded` runs when a new query's first page is in
 */
export function createGrid(ctx, { onLoaded }) {
  const { model, rpc, state, visibleCols, liveRows, setStatus } = ctx;

  /** @param {any} live @param {number} start @param {number} stop */
  const livePage = (live, start, stop) => {
    const wanted = visibleCols().map((c) => c.key);
    const at = wanted.map((k) => (live.columns || []).indexOf(k));
    const rows = (live.rows || []).slice(start, stop).map((/** @type {any[]} */ r) => [r[0], ...at.map((j) => (j < 0 ? null : r[j + 1]))]);
    return Promise.resolve({ rows, start, total: Math.min(live.total, (live.rows || []).length) });
  };
  const cache = new PageCache(
    (start, stop) => {
      const live = liveRows();
      if (live) return livePage(live, start, stop);
      return rpc.request("page", { start, stop, query: queryOf(state), columns: visibleCols().map((c) => c.key) }).then((/** @type {any} */ reply) => {
        setStatus("");
        return reply;
      });
    },
    {
      pageSize: Number(model.get("page_size") || 200),
      onUpdate: () => schedule(),
      onError: (err) => {
        // nothing shown yet: the rows' area says why (once) instead of waiting forever
        if (cache.total == null) failure = err.message;
        else setStatus(`Could not load rows: ${err.message}`, true, () => refresh(false));
        schedule();
      },
    },
  );

  /** Why the first page of the current query could not load (a big file's refusal, a dead
   *  kernel), or null. @type {string | null} */
  let failure = null;

  const head = h("div", { class: "rl-grid-head", style: `height:${HEAD_HEIGHT}px;position:sticky;top:0;z-index:2` });
  const rows = h("div", { class: "rl-rows" });
  const spacer = h("div", { class: "rl-spacer" });
  const inner = h("div", { style: "position:relative" }, head, spacer, rows);
  const viewport = h("div", { class: "rl-viewport", tabIndex: 0 }, inner);
  const el = h("div", { class: "rl-grid" }, viewport);
  const count = h("span", { class: "rl-count" });
  const rowHeight = () => (state.wrap ? WRAP_HEIGHT : LINE_HEIGHT);

  /** The rows' area: the configured height, or less when few rows match (no empty box). */
  const bodyHeight = () => {
    const max = Number(model.get("height") || 420) - HEAD_HEIGHT;
    if (cache.total == null) return failure ? Math.min(max, 3 * rowHeight() + 2) : max;
    return Math.min(max, Math.max(cache.total, 3) * rowHeight() + 2);
  };
  viewport.style.height = `${bodyHeight() + HEAD_HEIGHT}px`;

  /** @type {any} */
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
  const colWidth = (/** @type {any} */ col) => widths.get(col.key) || widthOf(col);

  /** A handle on a header's right edge to drag its width. @param {any} col @param {HTMLElement} th */
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
    /** @type {Record<string, string>} a big file's sorts that need the whole table */
    const refusedSorts = (model.get("refusals") || {}).sort || {};
    for (const col of cols) {
      const sort = state.sort && state.sort.key === col.key ? state.sort : null;
      const refused = col.sortable ? refusedSorts[col.key] : undefined;
      const sortable = col.sortable && !refused;
      const th = h(
        "div",
        {
          class: `rl-th${sortable ? " rl-sortable" : ""}${refused ? " rl-sort-refused" : ""}`,
          style: `width:${colWidth(col)}px`,
          title: refused ? `${col.label}: ${refused}` : sortable ? `${col.label} (click to sort)` : col.label,
          dataset: { key: col.key },
          onclick: sortable ? () => cycleSort(col.key) : null,
        },
        headLabel(col),
        sort ? h("span", { class: "rl-arrow" }, sort.desc ? "▼" : "▲") : null,
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
    } else if (cache.total == null && failure) {
      rows.append(h("div", { class: "rl-empty rl-refusal", role: "alert" }, `Rows not shown: ${failure} `, h("button", { class: "rl-retry", onclick: () => refresh(false) }, "Retry")));
    }
    for (let i = range.first; i < (failure && cache.total == null ? range.first : range.last); i++) {
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
    count.append(cache.total == null ? (failure ? "rows not shown" : "loading…") : cache.total === all ? fmtCount(all, "row") : `${fmtInt(cache.total)} of ${fmtCount(all, "row")}`);
  }

  /** @param {string} key */
  function cycleSort(key) {
    if (!state.sort || state.sort.key !== key) state.sort = { key, desc: false };
    else if (!state.sort.desc) state.sort = { key, desc: true };
    else state.sort = null;
    drawHead();
    refresh(true);
  }

  /** A new query: drop cached pages, go back to the top. @param {boolean} resetScroll */
  function refresh(resetScroll) {
    setStatus("");
    failure = null;
    cache.reset();
    state.selectedPos = -1;
    if (resetScroll) viewport.scrollTop = 0;
    cache.load(0).then(() => {
      drawRows();
      const range = visibleRange({ scrollTop: viewport.scrollTop, bodyHeight: bodyHeight(), rowHeight: rowHeight(), total: cache.total ?? 0 });
      cache.ensure(range.first, range.last);
      onLoaded();
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

  const onKey = (/** @type {KeyboardEvent} */ e) => {
    if (e.key === "ArrowDown" && state.selectedPos >= 0) (move(1), e.preventDefault());
    else if (e.key === "ArrowUp" && state.selectedPos > 0) (move(-1), e.preventDefault());
  };
  viewport.addEventListener("scroll", schedule, { passive: true });
  let lastWidth = 0;
  const resize =
    typeof ResizeObserver === "function"
      ? new ResizeObserver(() => {
          if (viewport.clientWidth === lastWidth) return;
          lastWidth = viewport.clientWidth;
          drawHead();
          schedule();
        })
      : null;
  if (resize) resize.observe(viewport);
  viewport.addEventListener("keydown", onKey);

  return {
    el,
    /** the "N of M rows" line (shown in the toolbar) */
    count,
    cache,
    drawHead,
    schedule,
    refresh,
    move,
    /** Back to the top of the rows (e.g. when their height changes). */
    toTop() {
      viewport.scrollTop = 0;
    },
    dispose() {
      if (frame) unraf(frame);
      viewport.removeEventListener("scroll", schedule);
      if (resize) resize.disconnect();
      viewport.removeEventListener("keydown", onKey);
    },
  };
}
