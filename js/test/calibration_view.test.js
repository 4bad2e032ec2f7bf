import { describe, it, expect } from "vitest";
import view from "../src/calibration_view.js";
import { FakeModel } from "./fake_model.js";

const XSS = "<img src=x onerror=alert(1)>";

function model() {
  return new FakeModel({
    title: "GPT-4 vs experts",
    summary: { pairs: 4, with_ties: { agree: 3, total: 5, rate: 0.6 }, without_ties: { agree: 3, total: 4, rate: 0.75 }, random_with_ties: 1 / 3, random_without_ties: 0.5, kappa: 0.33, kappa_without_ties: 0.5, disagreements: 2, human_vs_human: { with_ties: { agree: 1, total: 1, rate: 1 }, without_ties: { agree: 1, total: 1, rate: 1 } } },
    labels: ["A", "B", "tie"],
    sides: ["judge", "human"],
    confusion: [[2, 0, 0], [1, 1, 0], [0, 1, 0]],
    cell: [],
    items: [],
    cell_total: 0,
    item: -1,
    detail: null,
    criteria: [
      { criterion: "accuracy", n: 4, mean_diff: 0, ci_low: -0.5, ci_high: 0.75, tendency: "no clear difference" },
      { criterion: "clarity", n: 4, mean_diff: 0.25, ci_low: 0, ci_high: 0.75, tendency: "over-scores" },
    ],
  });
}

describe("CalibrationView", () => {
  it("shows the figures, a heat map, and per-criterion bars", () => {
    const el = document.createElement("div");
    const m = model();
    const cleanup = view.render({ model: m, el });
    const figures = [...el.querySelectorAll(".rl-figure")].map((f) => f.textContent);
    expect(figures[0]).toContain("60% (3/5)");
    expect(figures[1]).toContain("75% (3/4)");
    expect(figures[3]).toContain("human vs human");
    const cells = el.querySelectorAll(".rl-heat-cell");
    expect(cells.length).toBe(9);
    expect(el.querySelector('.rl-heat-cell[data-row="B"][data-col="A"]').textContent).toBe("1");
    expect(el.querySelectorAll(".rl-bars .rl-cname").length).toBe(2);
    expect(el.querySelector(".rl-bars").textContent).toContain("+0.25 [0.00, 0.75] over-scores");
    cleanup();
    expect(m.listenerCount()).toBe(0);
  });

  it("carries the MOCK banner when its inputs came from a mock judge, and only then", () => {
    const el = document.createElement("div");
    const m = model();
    const cleanup = view.render({ model: m, el });
    expect(el.querySelector(".rl-mock")).toBeNull();
    m.set("judge", "mock judge 'mock'");
    m.set("is_mock", true);
    expect(el.querySelector(".rl-mock").textContent).toContain("MOCK judge");
    expect(el.querySelector(".rl-mock").getAttribute("title")).toContain("mock judge 'mock'");
    cleanup();
  });

  it("lists a cell's comparisons and opens one side by side, as text", () => {
    const el = document.createElement("div");
    const m = model();
    view.render({ model: m, el });
    el.querySelector('.rl-heat-cell[data-row="B"][data-col="A"]').click();
    expect(m.get("cell")).toEqual(["B", "A"]);
    m.set("items", [{ keys: { question_id: 2 }, first: "x", second: "y", judge: "B", human: "A", rater: "e1" }]);
    m.set("cell_total", 1);
    expect(el.querySelector(".rl-listing").textContent).toContain("judge B · human A: 1 comparison");
    el.querySelector(".rl-item").click();
    expect(m.get("item")).toBe(0);
    m.set("detail", {
      item: {},
      sides: [
        { name: "judge", verdict: "B", raw: "model_a", row: 1, fields: [{ name: "judgment", text: `y wins ${XSS}` }] },
        { name: "human", verdict: "A", raw: "model_a", row: 2, fields: [] },
      ],
    });
    const sides = el.querySelectorAll(".rl-side");
    expect(sides[0].textContent).toContain(`y wins ${XSS}`);
    expect(el.querySelector(".rl-side img")).toBeNull();
    expect(sides[1].textContent).toContain("pass the human DataFrame");
    el.querySelector('.rl-heat-cell[data-row="B"][data-col="A"]').click(); // toggles off
    expect(m.get("cell")).toEqual([]);
  });
});
