// The ResultTable's toolbar: search, metric, score range, outcome and criterion filters, the
// column chooser, row wrapping, charts of the filtered rows, and export of the rows shown.
import { h, clear } from "../lib/dom.js";
import { chartCard } from "../lib/charts.js";
import { download } from "../lib/export.js";
import { fmtCount } from "../lib/format.js";
import { queryOf } from "./state.js";

/** Outcome groups offered by the status filter, by metric kind. */
export const STATUS_GROUPS = {
  pointwise: [["pass", "pass"], ["fail", "fail"], ["no_verdict", "no verdict"], ["error", "error"]],
  pairwise: [["win", "candidate wins"], ["tie", "tie"], ["loss", "baseline wins"], ["error", "error"]],
};

/**
 * A labelled checkbox in the toolbar.
 * @param {string} cls @param {string} label @param {boolean} checked
 * @param {(on: boolean) => void} onChange @param {string} [title]
 */
function checkbox(cls, label, checked, onChange, title = "", refused = "") {
  const box = h("input", { type: "checkbox", class: cls, checked, disabled: Boolean(refused) });
  box.addEventListener("change", () => onChange(box.checked));
  return h("label", { title: refused || title, class: refused ? "rl-refused" : null }, box, label);
}

/** A control a big result file refuses: disabled, its reason as its tooltip.
 * @template {HTMLElement} T @param {T} control @param {string | undefined} reason @returns {T} */
function refuse(control, reason) {
  if (!reason) return control;
  /** @type {any} */ (control).disabled = true;
  control.title = reason;
  control.classList.add("rl-refused");
  return control;
}

/**
 * @param {import("./state.js").TableContext} ctx
 * @param {ReturnType<typeof import("./grid.js").createGrid>} grid
 * @param {{ afterDraw: () => void }} hooks `afterDraw` runs after every redraw of the toolbar
 */
export function createFilters(ctx, grid, { afterDraw }) {
  const { model, rpc, state, visibleCols, liveRows, setStatus } = ctx;
  const el = h("div", { class: "rl-toolbar" });
  /** A big result file's line: what its view refuses, and why. */
  const note = h("div", { class: "rl-file-note rl-muted rl-small" });
  /** @returns {{ sort?: Record<string, string>, filters?: Record<string, string>, export?: string, charts?: string, note?: string }} */
  const refusals = () => model.get("refusals") || {};
  /** @param {string} name @returns {string | undefined} */
  const refusedFilter = (name) => (refusals().filters || {})[name];
  const charts = h("div", { class: "rl-charts" });

  let chartsKey = "";
  let chartsSeq = 0;
  /** Charts of the rows the filters select (not re-asked when only the sort changes). */
  function loadCharts(force = false) {
    if (!state.chartsOpen) {
      clear(charts);
      return;
    }
    const live = liveRows();
    if (refusals().charts) {
      chartsKey = "";
      clear(charts);
      charts.append(h("div", { class: "rl-muted rl-small rl-refusal" }, `charts not available: ${refusals().charts}`));
      return;
    }
    if (live) {
      chartsKey = "";
      clear(charts);
      charts.append(h("div", { class: "rl-chart-cards" }, (live.charts || []).map(chartCard)));
      return;
    }
    const q = { ...queryOf(state), sort: null };
    const key = JSON.stringify(q);
    if (key === chartsKey && !force) return;
    chartsKey = key;
    const seq = ++chartsSeq;
    rpc.request("charts", { query: q }).then(
      (/** @type {any} */ reply) => {
        if (seq !== chartsSeq) return;
        clear(charts);
        charts.append(h("div", { class: "rl-chart-cards" }, (reply.charts || []).map(chartCard)));
      },
      (/** @type {Error} */ err) => {
        if (seq !== chartsSeq) return;
        clear(charts);
        charts.append(h("div", { class: "rl-muted rl-small" }, `charts not available: ${err.message}`));
      },
    );
  }

  /** Download the current view (filters and sort applied, visible columns) as CSV or JSONL.
   * @param {string} format */
  function exportAs(format) {
    setStatus(`preparing ${format.toUpperCase()}…`);
    rpc.request("export", { query: queryOf(state), columns: "all", format }, { timeout: 120_000 }).then(
      (/** @type {any} */ reply) => {
        download(String(reply.text), String(reply.filename), String(reply.mime));
        setStatus(`saved ${fmtCount(reply.rows, "row")} as ${String(reply.filename)}`);
      },
      (/** @type {Error} */ err) => setStatus(`Could not export: ${err.message}`, true),
    );
  }

  /** Show or hide some columns (keeping the result's column order). @param {string[]} keys @param {boolean} on */
  function setShown(keys, on) {
    const now = new Set(model.get("visible") || []);
    for (const k of keys) on ? now.add(k) : now.delete(k);
    model.set("visible", (model.get("columns") || []).map((/** @type {any} */ x) => x.key).filter((/** @type {string} */ k) => now.has(k)));
    model.save_changes();
  }

  /** @param {HTMLElement} wrap */
  function toggleChooser(wrap, keepOpen = false) {
    const existing = wrap.querySelector(".rl-popover");
    if (existing && !keepOpen) {
      existing.remove();
      makeRoom(wrap, null);
      state.chooserOpen = false;
      return;
    }
    if (existing) existing.remove();
    state.chooserOpen = true;
    const shown = new Set(model.get("visible") || []);
    const pop = h(
      "div",
      { class: "rl-popover", style: "top:26px;left:0" },
      (model.get("columns") || []).map((/** @type {any} */ c) => {
        const box = h("input", { type: "checkbox", checked: shown.has(c.key), dataset: { key: c.key } });
        box.addEventListener("change", () => setShown([c.key], box.checked));
        return h("label", { title: c.empty ? "no row has a value here" : "" }, box, c.label, c.empty ? h("span", { class: "rl-muted rl-small" }, " (empty)") : null);
      }),
    );
    wrap.append(pop);
    makeRoom(wrap, pop);
  }

  /** A notebook output clips what hangs below it, so a menu taller than a short table was cut
   *  off: while the menu is open the view grows (padding at its bottom) until the menu fits.
   *  @param {HTMLElement} wrap @param {HTMLElement | null} pop the open menu, or null when closed */
  function makeRoom(wrap, pop) {
    const root = /** @type {HTMLElement | null} */ (wrap.closest(".rl"));
    if (!root) return;
    root.style.paddingBottom = "";
    if (!pop) return;
    const need = pop.getBoundingClientRect().bottom - root.getBoundingClientRect().bottom + 8;
    if (need > 0) root.style.paddingBottom = `${Math.ceil(need)}px`;
  }

  function draw() {
    clear(el);
    clear(note);
    if (refusals().note) note.append(String(refusals().note));
    /** @type {any[]} */
    const metrics = model.get("metrics") || [];
    const search = h("input", { type: "search", placeholder: "Search text…", value: state.search, "aria-label": "search" });
    /** @type {any} */
    let timer = 0;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        state.search = search.value;
        grid.refresh(true);
      }, 250);
    });
    el.append(refuse(search, refusedFilter("search")));
    if (metrics.length > 1) {
      const sel = h("select", { class: "rl-metric-select", "aria-label": "metric" }, h("option", { value: "" }, "any metric"), metrics.map((m) => h("option", { value: m.name, selected: m.name === state.metric }, m.name)));
      sel.addEventListener("change", () => {
        state.metric = sel.value;
        state.criterion = null;
        draw();
        grid.refresh(true);
      });
      el.append(sel);
    }
    const chosen = metrics.filter((m) => !state.metric || m.name === state.metric);
    // the score range is per metric kind, on the unit the rows show: pointwise 0..100%, pairwise
    // -100..+100% (a preference); over metrics of both kinds there is no one range to apply
    const rangeKinds = new Set(chosen.map((m) => (m.kind === "pairwise" ? "pairwise" : "pointwise")));
    if (rangeKinds.size === 1) {
      const pairwise = rangeKinds.has("pairwise");
      const asShown = (/** @type {number | null} */ v) => (v == null ? "" : String(Math.round(v * 1000) / 10));
      const parse = (/** @type {string} */ s) => (s.trim() === "" || Number.isNaN(Number(s)) ? null : Number(s) / 100);
      const lo = h("input", { type: "number", class: "rl-min", placeholder: pairwise ? "-100" : "min", value: asShown(state.scoreMin), step: pairwise ? 50 : 1, "aria-label": "minimum score" });
      const hi = h("input", { type: "number", class: "rl-max", placeholder: pairwise ? "+100" : "max", value: asShown(state.scoreMax), step: pairwise ? 50 : 1, "aria-label": "maximum score" });
      const onRange = () => {
        state.scoreMin = parse(lo.value);
        state.scoreMax = parse(hi.value);
        grid.refresh(true);
      };
      lo.addEventListener("change", onRange);
      hi.addEventListener("change", onRange);
      refuse(lo, refusedFilter("score"));
      refuse(hi, refusedFilter("score"));
      el.append(h("label", { title: pairwise ? "pairwise scores: +100% candidate much better … -100% baseline much better" : "scores on 0-100%" }, pairwise ? "preference" : "score", lo, "–", hi, "%"));
    } else {
      state.scoreMin = null;
      state.scoreMax = null;
      el.append(h("span", { class: "rl-muted rl-small rl-score-hint", title: "pointwise scores (0..100%) and pairwise preferences (-100..+100%) are on different scales" }, "pick a metric to filter by score"));
    }
    // outcome groups, not one option per exact verdict string
    const kinds = new Set(chosen.map((m) => (m.kind === "pairwise" ? "pairwise" : "pointwise")));
    /** @type {string[][]} */
    const groups = [];
    for (const k of /** @type {const} */ (["pointwise", "pairwise"])) if (kinds.has(k)) for (const g of STATUS_GROUPS[k]) if (!groups.some(([v]) => v === g[0])) groups.push(g);
    if (groups.length) {
      const ssel = h("select", { class: "rl-status-filter", "aria-label": "outcome" }, h("option", { value: "" }, "any outcome"), groups.map(([v, label]) => h("option", { value: v, selected: v === state.status }, label)));
      ssel.addEventListener("change", () => {
        state.status = ssel.value;
        grid.refresh(true);
      });
      el.append(refuse(ssel, refusedFilter("status")));
    }
    // one criterion's result: "accuracy: level 1", "deadline: NO"
    const crits = model.get("criteria") || {};
    const options = chosen.flatMap((m) => (crits[m.name] || []).map((/** @type {any} */ c) => ({ metric: m.name, ...c })));
    if (options.length) {
      const current = state.criterion ? JSON.stringify([state.criterion.name, state.criterion.value]) : "";
      const csel = (
        h(
          "select",
          { class: "rl-criterion-filter", "aria-label": "criterion result" },
          h("option", { value: "" }, "any criterion result"),
          options.map((c) =>
            h(
              "optgroup",
              { label: chosen.length > 1 ? `${c.metric}: ${c.name}` : c.name },
              (c.values || []).map((/** @type {unknown} */ v) => {
                const value = JSON.stringify([c.name, v]);
                return h("option", { value, selected: value === current, title: c.question || c.name }, `${c.name}: ${v}`);
              }),
            ),
          ),
        )
      );
      csel.addEventListener("change", () => {
        const pick = csel.value ? JSON.parse(csel.value) : null;
        state.criterion = pick ? { name: String(pick[0]), value: String(pick[1]) } : null;
        grid.refresh(true);
      });
      el.append(refuse(csel, refusedFilter("criterion")));
    }
    el.append(checkbox("rl-errors-only", "errors only", state.errorsOnly, (on) => ((state.errorsOnly = on), grid.refresh(true)), "", refusedFilter("errors_only")));
    if (model.get("labelling")) el.append(checkbox("rl-disagree-only", "judge and person disagree", state.disagree, (on) => ((state.disagree = on), grid.refresh(true)), "rows where someone's label differs from the judge's answer", refusedFilter("disagree")));
    if (metrics.some((m) => m.kind === "pairwise")) el.append(checkbox("rl-swap-only", "orders disagree", state.swapOnly, (on) => ((state.swapOnly = on), grid.refresh(true)), "", refusedFilter("swap")));
    el.append(
      checkbox(
        "rl-wrap",
        "wrap rows",
        state.wrap,
        (on) => {
          state.wrap = on;
          grid.toTop();
          grid.drawHead();
          grid.schedule();
        },
        "show up to three lines of each cell",
      ),
    );
    const rawKeys = (model.get("columns") || []).filter((/** @type {any} */ c) => c.field === "raw_output").map((/** @type {any} */ c) => c.key);
    if (rawKeys.length) {
      const shown = new Set(model.get("visible") || []);
      el.append(checkbox("rl-show-raw", "raw output", rawKeys.every((/** @type {string} */ k) => shown.has(k)), (on) => setShown(rawKeys, on), "show the judge's raw output columns"));
    }
    const wrap = h("span", { style: "position:relative" });
    const chooserBtn = h("button", { class: "rl-columns-btn", onclick: () => toggleChooser(wrap) }, "Columns ▾");
    wrap.append(chooserBtn);
    const chartsBtn = h(
      "button",
      {
        class: "rl-charts-btn",
        "aria-pressed": state.chartsOpen ? "true" : "false",
        onclick: () => {
          state.chartsOpen = !state.chartsOpen;
          chartsKey = "";
          draw();
          loadCharts();
        },
      },
      state.chartsOpen ? "Charts ✓" : "Charts",
    );
    const exportBox = h(
      "span",
      { class: "rl-export" },
      h("button", { class: "rl-export-csv", title: "download the rows shown (filters and sort applied) as CSV, with every field of the result, hidden columns too", onclick: () => exportAs("csv") }, "⤓ CSV"),
      h("button", { class: "rl-export-jsonl", title: "download the rows shown (filters and sort applied) as JSON Lines, with every field of the result, hidden columns too", onclick: () => exportAs("jsonl") }, "⤓ JSONL"),
    );
    for (const b of exportBox.querySelectorAll("button")) refuse(/** @type {HTMLElement} */ (b), refusals().export);
    el.append(wrap, chartsBtn, exportBox, grid.count);
    if (state.chooserOpen) toggleChooser(wrap, true);
    afterDraw();
  }

  return {
    el,
    note,
    charts,
    draw,
    loadCharts,
    /** Charts are asked again at the next load (the rows changed under the same filters). */
    forgetCharts() {
      chartsKey = "";
    },
    /** Export works only while the kernel is free (not during a live run). @param {boolean} on */
    setExportEnabled(on) {
      for (const b of el.querySelectorAll(".rl-export button")) /** @type {HTMLButtonElement} */ (b).disabled = !on || Boolean(refusals().export);
    },
  };
}
