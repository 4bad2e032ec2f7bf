// Every view rendered from what the Python views really send (js/test/fixtures/*.json, written
// by `python -m tests.js_fixtures`; tests/test_widgets_js_fixtures.py keeps them current). A
// field the JS reads that Python no longer sends, or sends in another shape, fails here.
import { describe, it, expect, beforeEach } from "vitest";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import table from "../src/result_table.js";
import explanation from "../src/explanation.js";
import pairwise from "../src/pairwise_view.js";
import editor from "../src/rubric_editor.js";
import calibration from "../src/calibration_view.js";
import comparison from "../src/comparison_view.js";
import { fmtScore } from "../src/lib/format.js";
import { FakeModel, tick, frame } from "./fake_model.js";

const here = path.dirname(fileURLToPath(import.meta.url));
/** @param {string} name */
const fixture = (name) => JSON.parse(readFileSync(path.join(here, "fixtures", `${name}.json`), "utf8"));

/** Nothing the kernel sent became markup, and nothing shows as a JS placeholder. */
function clean(el) {
  expect(el.querySelector("script, iframe, img[onerror], [onload], a[href^='javascript']")).toBeNull();
  expect(el.textContent).not.toMatch(/undefined|NaN|\[object Object\]/);
  expect(el.querySelector(".rl-status.rl-bad, .rl-error-box.rl-view-error")).toBeNull();
}

/** A model holding a fixture's state, answering requests with the fixture's recorded replies. */
function modelFor(data) {
  const model = new FakeModel(structuredClone(data.state));
  model.onSend = (msg) => {
    if (msg.type !== "rl:request") return;
    const reply = (data.replies || {})[msg.op];
    queueMicrotask(() => model.reply(reply ? { ...reply, id: msg.id } : { type: "rl:reply", id: msg.id, error: `no fixture reply for ${msg.op}` }));
  };
  return model;
}

/** @param {any} view @param {string} name */
async function show(view, name) {
  const data = fixture(name);
  const el = document.createElement("div");
  document.body.replaceChildren(el);
  const model = modelFor(data);
  view.render({ model, el });
  await tick();
  await frame();
  return { el, model, data };
}

describe.each(["result_table", "result_table_pairwise"])("ResultTable from Python's %s payload", (name) => {
  let el, model, data;
  beforeEach(async () => ({ el, model, data } = await show(table, name)));

  it("shows every visible column, the page's rows and the summary of each metric", () => {
    const { state, replies } = data;
    const heads = [...el.querySelectorAll(".rl-th")].map((th) => th.dataset.key);
    expect(heads).toEqual(state.visible);
    const rows = el.querySelectorAll(".rl-tr");
    expect(rows.length).toBe(replies.page.rows.length);
    const prompt = state.visible.indexOf("prompt");
    expect(rows[0].querySelector('.rl-td[data-key="prompt"]').textContent).toBe(replies.page.rows[0][prompt + 1]);
    for (const m of state.metrics) expect(el.querySelector(".rl-summary").textContent).toContain(m.name);
    expect(el.querySelector(".rl-count").textContent).toBe(`${state.total} rows`);
    expect(el.querySelectorAll(".rl-chart-card").length).toBe(replies.charts.charts.length);
    clean(el);
  });

  it("shows the selected case the kernel sends", async () => {
    model.set("selected", 1);
    model.set("detail", data.detail);
    await tick();
    const detail = el.querySelector(".rl-detail");
    expect(detail.textContent).toContain(data.detail.heading);
    for (const m of data.detail.metrics) expect(detail.querySelector(`.rl-metric[data-metric="${m.name}"]`)).not.toBeNull();
    clean(el);
  });

  it("offers the outcome and criterion filters for its metrics", () => {
    const { state } = data;
    expect(el.querySelector(".rl-status-filter")).not.toBeNull();
    const crits = Object.values(state.criteria).flat();
    if (crits.length) expect(el.querySelectorAll(".rl-criterion-filter optgroup").length).toBe(crits.length);
  });
});

describe("Explanation from Python's payload", () => {
  it("shows the case's fields, each metric's score and every criterion", async () => {
    const { el, data } = await show(explanation, "explanation");
    const c = data.state.case;
    expect(el.textContent).toContain(c.heading);
    for (const f of c.fields) expect(el.textContent).toContain(f.text);
    for (const m of c.metrics) {
      const block = el.querySelector(`.rl-metric[data-metric="${m.name}"]`);
      expect(block.textContent).toContain(fmtScore(m.score, m.kind));
      for (const crit of m.criteria) expect(block.querySelector(`[data-criterion="${crit.name}"]`).textContent).toContain(crit.label);
    }
    clean(el);
  });
});

describe("PairwiseView from Python's payload", () => {
  it("shows the totals, both sides and the judge's per-criterion winners", async () => {
    const { el, data } = await show(pairwise, "pairwise_view");
    const { case: c, totals } = data.state;
    for (const t of totals) expect(el.querySelector(`.rl-totals[data-metric="${t.metric}"]`)).not.toBeNull();
    expect(el.textContent).toContain(c.heading);
    expect(el.textContent).toContain(c.candidate.text);
    expect(el.textContent).toContain(c.baseline.text);
    for (const r of c.metric.pair_rows) expect(el.querySelector(`[data-criterion="${r.name}"]`)).not.toBeNull();
    clean(el);
  });
});

describe("RubricEditor from Python's payload", () => {
  it("puts every criterion, level and the pass mark in editable fields", async () => {
    const { el, data } = await show(editor, "rubric_editor");
    const rubric = data.state.value;
    const values = [...el.querySelectorAll("input, textarea")].map((i) => i.value);
    for (const c of rubric.criteria) {
      expect(values).toContain(c.name);
      for (const lv of c.levels) expect(values).toContain(lv.descriptor);
    }
    expect(el.querySelector(".rl-pass-mark").value).toBe(String(Math.round(rubric.pass_mark * 1000) / 10));
    clean(el);
  });
});

describe("CalibrationView from Python's payload", () => {
  it("draws the confusion matrix, the listed comparisons and every criterion's bar", async () => {
    const { el, data } = await show(calibration, "calibration_view");
    const { confusion, criteria, items, labels } = data.state;
    const cells = el.querySelectorAll(".rl-heat-cell");
    expect(cells.length).toBe(labels.length * labels.length);
    expect([...cells].map((td) => Number(td.textContent))).toEqual(confusion.flat());
    expect(el.querySelectorAll(".rl-item").length).toBe(items.length);
    for (const c of criteria) expect(el.querySelector(`.rl-cname[data-criterion="${c.criterion}"]`)).not.toBeNull();
    clean(el);
  });
});

describe("ComparisonView from Python's payload", () => {
  it("lists each metric's change, the cases by change and both sides of the open case", async () => {
    const { el, data } = await show(comparison, "comparison_view");
    const { metrics, cases, detail } = data.state;
    for (const m of metrics) expect(el.querySelector(`[data-metric="${m.metric}"]`)).not.toBeNull();
    for (const c of cases) expect(el.textContent).toContain(c.key);
    for (const side of detail.sides) expect(el.textContent).toContain(side.name);
    clean(el);
  });
});
