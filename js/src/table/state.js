// What the ResultTable's parts share: the reader's choices (sort, filters, layout, selection),
// and the query the kernel is asked with.

/**
 * @typedef {{key: string, desc: boolean}} Sort
 * @typedef {{name: string, value: string}} CriterionPick
 * @typedef {object} TableState
 * @property {Sort | null} sort
 * @property {string} search
 * @property {string} metric
 * @property {number | null} scoreMin
 * @property {number | null} scoreMax
 * @property {string} status
 * @property {CriterionPick | null} criterion
 * @property {boolean} errorsOnly
 * @property {boolean} swapOnly
 * @property {boolean} disagree only rows where a person's label differs from the judge
 * @property {boolean} wrap
 * @property {boolean} chartsOpen
 * @property {Map<string, number>} userWidths widths the user dragged
 * @property {number} selectedPos position of the selected row in the current view order
 * @property {boolean} chooserOpen
 */

/** @returns {TableState} */
export function newState() {
  return {
    sort: null,
    search: "",
    metric: "",
    scoreMin: null,
    scoreMax: null,
    status: "",
    criterion: null,
    errorsOnly: false,
    swapOnly: false,
    disagree: false,
    wrap: false,
    chartsOpen: true,
    userWidths: new Map(),
    selectedPos: -1,
    chooserOpen: false,
  };
}

/**
 * The query the kernel filters and sorts with (the Python side's `Query`).
 * @param {TableState} state
 */
export function queryOf(state) {
  return {
    sort: state.sort,
    search: state.search,
    metric: state.metric || null,
    score_min: state.scoreMin,
    score_max: state.scoreMax,
    status: state.status || null,
    criterion: state.criterion,
    errors_only: state.errorsOnly,
    swap_inconsistent_only: state.swapOnly,
    ...(state.disagree ? { disagree: true } : {}),
  };
}

/**
 * What every part of the table is handed.
 * @typedef {object} TableContext
 * @property {any} model the anywidget model
 * @property {ReturnType<typeof import("../lib/rpc.js").createRpc>} rpc
 * @property {TableState} state
 * @property {() => any[]} visibleCols the shown columns, in order
 * @property {() => any} liveRows a live run's rows (the `live` trait) while it runs, else null
 * @property {(text: string, bad?: boolean, retry?: (() => void) | null) => void} setStatus
 */
