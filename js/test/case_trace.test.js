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
