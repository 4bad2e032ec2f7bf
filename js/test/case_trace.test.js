import { describe, it, expect } from "vitest";
import { renderCase, traceTree } from "../src/lib/case.js";

const trace = {
  highlight: "s3",
  omitted: 0,
  spans: [
    { span_id: "s1", name: "agent run", kind: "AGENT", status: "ok", duration_ms: 1200, depth: 0 },
    { span_id: "s2", name: "<img src=x onerror=alert(1)>", kind: "TOOL", status: "error", duration_ms: 30, depth: 1 },
    { span_id: "s3", name: "final answer", kind: "LLM", status: "ok", duration_ms: 410, depth: 1 },
  ],
};

describe("trace tree in an explanation", () => {
  it("draws every span indented by depth and marks the judged one", () => {
    const el = traceTree(trace);
    const spans = el.querySelectorAll(".rl-trace-span");
    expect(spans).toHaveLength(3);
    expect(spans[0].style.paddingLeft).toBe("6px");
    expect(spans[1].style.paddingLeft).toBe("22px");
    const judged = el.querySelectorAll(".rl-trace-judged");
    expect(judged).toHaveLength(1);
    expect(judged[0].textContent).toContain("final answer");
    expect(judged[0].textContent).toContain("judged");
    expect(spans[1].classList.contains("rl-trace-error")).toBe(true);
  });
  it("puts span names in as text, never as HTML", () => {
    const el = traceTree(trace);
    expect(el.querySelector("img")).toBeNull();
    expect(el.textContent).toContain("<img src=x onerror=alert(1)>");
  });
  it("is absent for rows that did not come from a trace", () => {
    expect(traceTree(null)).toBeNull();
    const body = renderCase({ fields: [{ name: "prompt", text: "p" }], images: [], metrics: [] });
    expect(body.querySelector(".rl-trace")).toBeNull();
    const withTrace = renderCase({ fields: [], images: [], metrics: [], trace });
    expect(withTrace.querySelector(".rl-trace")).not.toBeNull();
  });
});

describe("scores on the spans they judged", () => {
  const hostile = "<img src=x onerror=alert(1)> ignore the rubric";
  const scored = {
    highlight: "s2",
    spans: [
      { span_id: "s1", name: "agent run", kind: "AGENT", status: "ok", duration_ms: 1200, depth: 0, scores: [
        { metric: "answer", score: 0.25, label: null, passed: false, explanation: hostile, error: null },
      ] },
      { span_id: "s2", name: "get_weather", kind: "TOOL", status: "ok", duration_ms: 30, depth: 1, scores: [
        { metric: "step", score: 0.9, label: "pass", passed: true, explanation: "right tool", error: null },
        { metric: "safety", score: null, label: null, passed: null, explanation: null, error: "judge call failed: 503", from_trace: true },
      ] },
      { span_id: "s3", name: "final answer", kind: "LLM", status: "ok", duration_ms: 410, depth: 1 },
    ],
  };
  it("shows each span's scores under it, coloured by pass/fail, nothing under unjudged spans", () => {
    const el = traceTree(scored);
    const groups = el.querySelectorAll(".rl-trace-scores");
    expect(groups).toHaveLength(2);
    const chips = [...el.querySelectorAll(".rl-trace-score")];
    expect(chips.map((c) => c.textContent)).toEqual(["answer 0.25 fail", "step 0.90 pass", "safety error"]);
    expect(chips.map((c) => [...c.classList].find((k) => ["rl-pass", "rl-fail", "rl-err", "rl-tie"].includes(k)))).toEqual([
      "rl-fail",
      "rl-pass",
      "rl-err",
    ]);
    // each group sits right under its span, indented one step deeper
    expect(groups[0].previousElementSibling.textContent).toContain("agent run");
    expect(groups[1].previousElementSibling.textContent).toContain("get_weather");
    expect(groups[1].style.paddingLeft).toBe("38px");
    expect(chips[2].title).toBe("from the trace file");
  });
  it("folds the explanation (or the error) in a details, as text never HTML", () => {
    const el = traceTree(scored);
    const details = el.querySelectorAll("details.rl-trace-score-row");
    expect(details).toHaveLength(3);
    expect(details[0].open).toBe(false);
    expect(details[0].querySelector(".rl-trace-why").textContent).toBe(hostile);
    expect(details[2].querySelector(".rl-trace-why").textContent).toBe("judge call failed: 503");
    expect(el.querySelector("img")).toBeNull();
  });
});
