// The review page (`rubriclab review RESULTS`): a list of rows, the selected case as the
// notebook views show it, and the labelling form. j/k move between rows; the form's keys label;
// Enter saves and moves on. Talks to the server with the token from the page.
import { h, mockBanner } from "./lib/dom.js";
import { renderCase } from "./lib/case.js";
import { createLabelForm } from "./lib/labels.js";

const root = /** @type {HTMLElement} */ (document.getElementById("rl-review"));
const token = root.dataset.token || "";
const state = { rows: /** @type {number[]} */ ([]), labelled: new Set(), pos: 0, filter: "all", reviewer: localStorage.getItem("rl-reviewer") || "", total: 0 };
/** @type {ReturnType<typeof createLabelForm> | null} */
let form = null;

/** @param {string} path @param {any} [body] */
async function api(path, body) {
  /** @type {RequestInit} */
  const init = body === undefined ? { headers: { "X-Rubriclab-Token": token } } : { method: "POST", headers: { "X-Rubriclab-Token": token, "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const res = await fetch(path, init);
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
  return data;
}

const page = h("div", { class: "rl rl-review" });
const header = h("div", { class: "rl-review-head" });
const list = h("div", { class: "rl-review-list", role: "listbox", "aria-label": "rows" });
const main = h("div", { class: "rl-review-main" });
const status = h("div", { class: "rl-status", role: "status" });
page.append(header, h("div", { class: "rl-review-body" }, list, main), status);
root.append(page);

async function start() {
  const info = await api("/api/info");
  if (!state.reviewer) state.reviewer = info.reviewer;
  const who = h("input", { class: "rl-reviewer", value: state.reviewer, "aria-label": "reviewer", title: "your name: each label keeps its reviewer" });
  who.addEventListener("change", () => {
    state.reviewer = who.value.trim() || info.reviewer;
    localStorage.setItem("rl-reviewer", state.reviewer);
    loadRows();
  });
  who.addEventListener("keydown", (e) => e.stopPropagation());
  const filter = h("select", { class: "rl-review-filter", "aria-label": "show" }, [["all", "all rows"], ["unlabelled", "not labelled by me"], ["disagree", "judge and person disagree"]].map(([v, t]) => h("option", { value: v }, t)));
  filter.addEventListener("change", () => {
    state.filter = filter.value;
    state.pos = 0;
    loadRows();
  });
  header.append(
    mockBanner(info.is_mock, info.judge) || "",
    h("div", { class: "rl-row" }, h("span", { class: "rl-title" }, `Review: ${info.title}`), h("span", { class: "rl-grow" }), h("label", {}, "reviewer ", who), filter),
    h("div", { class: "rl-muted rl-small" }, "j / k: next / previous row · p / f (c / t / b): verdict · digits, y / n: level of the highlighted criterion · Enter: save and next"),
  );
  await loadRows();
}

async function loadRows() {
  const data = await api(`/api/rows?filter=${encodeURIComponent(state.filter)}&reviewer=${encodeURIComponent(state.reviewer)}`);
  state.rows = data.rows;
  state.labelled = new Set(data.labelled);
  state.total = data.total;
  state.pos = Math.min(state.pos, Math.max(0, state.rows.length - 1));
  drawList();
  await showCase();
}

function drawList() {
  list.replaceChildren(
    h("div", { class: "rl-muted rl-small rl-review-count" }, `${state.labelled.size} of ${state.total} labelled by you · ${state.rows.length} shown`),
    ...state.rows.map((row, i) =>
      h("button", { class: `rl-review-row${i === state.pos ? " rl-on" : ""}${state.labelled.has(row) ? " rl-done" : ""}`, dataset: { row: String(row) }, onclick: () => go(i) }, `${state.labelled.has(row) ? "✓" : "·"} row ${row}`),
    ),
  );
}

/** @param {number} i */
async function go(i) {
  if (i < 0 || i >= state.rows.length) return;
  state.pos = i;
  drawList();
  await showCase();
}

async function showCase() {
  main.replaceChildren();
  form = null;
  if (!state.rows.length) {
    main.append(h("div", { class: "rl-muted" }, "No rows here."));
    return;
  }
  const row = state.rows[state.pos];
  const data = await api(`/api/case/${row}`);
  if (state.rows[state.pos] !== row) return;
  form = createLabelForm(data.form, state.reviewer, async (labels) => {
    try {
      await api("/api/labels", { reviewer: state.reviewer, labels: labels.map((l) => ({ row, ...l })) });
      state.labelled.add(row);
      status.textContent = `saved ${labels.length} label(s) on row ${row}`;
      drawList();
    } catch (err) {
      status.textContent = `Could not save: ${/** @type {Error} */ (err).message}`;
      throw err;
    }
  });
  main.append(h("div", { class: "rl-case", dataset: { row: String(row) } }, form.el, renderCase(data, true)));
}

document.addEventListener("keydown", async (e) => {
  const target = /** @type {HTMLElement} */ (e.target);
  if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT")) return;
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === "j") return void (e.preventDefault(), go(state.pos + 1));
  if (e.key === "k") return void (e.preventDefault(), go(state.pos - 1));
  if (!form) return;
  if (e.key === "Enter") {
    e.preventDefault();
    try {
      await form.submit();
      await go(state.pos + 1);
    } catch {
      /* the status line says why */
    }
    return;
  }
  if (form.onKey(e)) e.preventDefault();
});

start().catch((err) => {
  status.textContent = `Could not load: ${err.message}`;
});
