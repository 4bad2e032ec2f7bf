import { describe, it, expect } from "vitest";
import view, { pct, levels, tickPct } from "../src/comparison_view.js";
import { FakeModel } from "./fake_model.js";

const XSS = "<img src=x onerror=alert(1)>";

function model() {
  return new FakeModel({
    title: "v2 vs v1",
    names: ["v1", "v2"],
    is_mock: true,
    judge: "mock",
    overview: { cases: 4, only_a: 1, only_b: 0, errored: 1, confidence: 0.95 },
    metrics: [
      { metric: "rouge_l", pairs: 3, errored: 0, mean_a: 0.5, mean_b: 0.62, diff: 0.12, ci_low: 0.05, ci_high: 0.2, better: 3, same: 0, worse: 0, pass_a: null },
      { metric: "support", pairs: 3, errored: 1, mean_a: 0.7, mean_b: 0.65, diff: -0.05, ci_low: -0.2, ci_high: 0.1, better: 1, same: 1, worse: 1, pass_a: 0.5, pass_b: 0.75, mcnemar_p: 0.625 },
    ],
    criteria: [{ metric: "support", criterion: "accuracy", pairs: 3, diff: 0.5, ci_low: 0, ci_high: 1, better: 2, same: 1, worse: 0 }],
    metric: "rouge_l",
    cases: [
      { key: "c1", score_a: 0.4, score_b: 0.7, diff: 0.3, verdict_a: null, verdict_b: null },
      { key: `c2 ${XSS}`, score_a: null, score_b: 0.5, diff: null, error_a: "judge call failed" },
    ],
    case_total: 2,
    item: -1,
    detail: null,
  });
}

describe("ComparisonView", () => {
  it("formats percents and level differences", () => {
    expect(pct(0.125, true)).toBe("+12.5%");
    expect(pct(-0.05, true)).toBe("-5.0%");
    expect(pct(0)).toBe("0.0%");
    expect(pct(-0.0001, true)).toBe("0.0%");
    expect(pct(null)).toBe("n/a");
    expect(levels(0.5)).toBe("+0.50");
  });

  it("shows per-metric and per-criterion deltas with intervals", () => {
    const el = document.createElement("div");
    const m = model();
    const cleanup = view.render({ model: m, el });
    expect(el.querySelector(".rl-mock").textContent).toContain("MOCK");
    expect(el.querySelector(".rl-overview").textContent).toBe("4 cases paired · only in v1: 1 · only in v2: 0 · errored rows left out: 1");
    const metrics = [...el.querySelectorAll(".rl-metric")].map((b) => b.textContent);
    expect(metrics).toEqual(["rouge_l", "support"]);
    const text = el.querySelector(".rl-metric-bars").textContent;
    expect(text).toContain("+12.0% [+5.0%, +20.0%] · 50.0% → 62.0% · better 3 / same 0 / worse 0");
    expect(text).toContain("pass 50.0% → 75.0% (McNemar p = 0.63)");
    expect(text).toContain("1 errored");
    expect(el.querySelectorAll(".rl-metric-bars .rl-hbar").length).toBe(2);
    expect(el.querySelector(".rl-criterion-bars").textContent).toContain("support · accuracy+0.50 [0.00, +1.00]");
    cleanup();
    expect(m.listenerCount()).toBe(0);
  });

  it("names the runs on both charts' axes, with ticks from -span to +span", () => {
    const el = document.createElement("div");
    const cleanup = view.render({ model: model(), el });
    const ticks = (sel) => [...el.querySelectorAll(`${sel} .rl-cmp-axis .rl-tick`)].map((t) => t.textContent);
    expect(ticks(".rl-metric-bars")).toEqual(["-20%", "-10%", "0%", "+10%", "+20%"]);
    expect(["-0.05", "-0.025", "0", "0.025", "0.05"].map(Number).map(tickPct(0.05))).toEqual(["-5.0%", "-2.5%", "0.0%", "+2.5%", "+5.0%"]);
    expect(ticks(".rl-criterion-bars")).toEqual(["-1.00", "-0.50", "0.00", "+0.50", "+1.00"]);
    expect(el.querySelector(".rl-metric-bars .rl-axis-title").textContent).toBe("v2 − v1");
    expect(el.querySelector(".rl-metric-bars .rl-axis-sides").textContent).toBe("◀ v1 better · v2 better ▶");
    expect(el.querySelector(".rl-criterion-bars").previousSibling.textContent).toContain("v2 − v1");
    cleanup();
  });

  it("selects a metric and a case, and shows both critiques as text", () => {
    const el = document.createElement("div");
    const m = model();
    view.render({ model: m, el });
    el.querySelector('.rl-metric[data-metric="support"]').click();
    expect(m.get("metric")).toBe("support");
    expect(m.saved).toBe(1);
    const items = el.querySelectorAll(".rl-item");
    expect(items.length).toBe(2);
    expect(items[1].textContent).toContain("not paired");
    expect(items[1].textContent).toContain("v1 error");
    expect(el.querySelector("img")).toBeNull();
    items[0].click();
    expect(m.get("item")).toBe(0);
    m.set("detail", {
      key: "c1",
      metric: "support",
      sides: [
        { name: "v1", score: 0.4, verdict: "fail (score below pass mark)", rationale: `bad ${XSS}`, criteria: [{ name: "accuracy", label: "partly", level: 2, evidence: XSS }], fields: [{ name: "response", text: XSS }] },
        { name: "v2", missing: true },
      ],
    });
    const sides = el.querySelectorAll(".rl-side");
    expect(sides.length).toBe(2);
    expect(sides[0].textContent).toContain("40.0%");
    expect(sides[0].textContent).toContain(`evidence: ${XSS}`);
    expect(sides[0].querySelector(".rl-fail")).not.toBeNull();
    expect(sides[1].textContent).toContain("not in this run");
    expect(el.querySelector("img")).toBeNull();
  });
});
