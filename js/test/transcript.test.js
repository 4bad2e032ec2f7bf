import { describe, it, expect } from "vitest";
import { renderCase, transcript } from "../src/lib/case.js";

const conversation = {
  omitted: 0,
  messages: [
    { role: "system", content: "You are a support agent.", tool_calls: [] },
    { role: "user", content: "<img src=x onerror=alert(1)>", tool_calls: [] },
    { role: "assistant", turn: 1, content: "", tool_calls: [{ name: "lookup_order", arguments: '{"id": "A1"}' }] },
    { role: "tool", tool_call_id: "call_1", content: "| a | b |\n|---|---|\n| 1 | 2 |", tool_calls: [] },
    { role: "assistant", turn: 2, content: "**Shipped** <b>today</b>", tool_calls: [] },
  ],
};
const perTurn = {
  name: "task_completion",
  kind: "pointwise",
  turns: [
    { turn: 2, score: 0.25, passed: false, verdict: "fail", error: null },
    { turn: 1, score: 1, passed: true, verdict: "pass", error: null },
  ],
};

describe("conversation transcript", () => {
  it("draws every message in order with its role", () => {
    const el = transcript(conversation, []);
    const msgs = [...el.querySelectorAll(".rl-msg")];
    expect(msgs.map((m) => m.dataset.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
    expect(msgs.map((m) => m.querySelector(".rl-msg-role").textContent)).toEqual([
      "system",
      "user",
      "assistant · turn 1",
      "tool · result for call_1",
      "assistant · turn 2",
    ]);
    expect(msgs[2].querySelector(".rl-msg-call").textContent).toBe('→ lookup_order({"id": "A1"})');
  });
  it("puts message text in as text: no HTML, no Markdown table, no bold", () => {
    const el = transcript(conversation, []);
    expect(el.querySelector("img")).toBeNull();
    expect(el.querySelector("table")).toBeNull();
    expect(el.querySelector("b")).toBeNull();
    expect(el.querySelector("strong")).toBeNull();
    const texts = [...el.querySelectorAll(".rl-msg-text")].map((t) => t.textContent);
    expect(texts).toContain("<img src=x onerror=alert(1)>");
    expect(texts).toContain("| a | b |\n|---|---|\n| 1 | 2 |");
    expect(texts).toContain("**Shipped** <b>today</b>");
  });
  it("shows per-turn scores beside the assistant turns and marks the worst", () => {
    const el = transcript(conversation, [perTurn]);
    const msgs = el.querySelectorAll(".rl-msg");
    const first = msgs[2].querySelector(".rl-turn-score");
    const second = msgs[4].querySelector(".rl-turn-score");
    expect(first.dataset.turn).toBe("1");
    expect(first.textContent).toContain("100.0%");
    expect(first.classList.contains("rl-worst")).toBe(false);
    expect(second.dataset.turn).toBe("2");
    expect(second.textContent).toContain("25.0%");
    expect(second.textContent).toContain("worst turn");
    expect(msgs[4].classList.contains("rl-msg-worst")).toBe(true);
    expect(el.querySelectorAll(".rl-worst")).toHaveLength(1);
    // no scores on user, system or tool messages
    expect(msgs[1].querySelector(".rl-turn-score")).toBeNull();
    expect(msgs[3].querySelector(".rl-turn-score")).toBeNull();
  });
  it("a whole-conversation metric puts no score on a turn", () => {
    const el = transcript(conversation, [{ name: "conversation_quality", kind: "pointwise", score: 0.8 }]);
    expect(el.querySelector(".rl-turn-score")).toBeNull();
  });
  it("is part of a rendered case, and absent without a conversation", () => {
    const withConv = renderCase({ fields: [{ name: "prompt", text: "hi" }], conversation, metrics: [perTurn] });
    expect(withConv.querySelectorAll(".rl-transcript .rl-msg")).toHaveLength(5);
    const without = renderCase({ fields: [{ name: "prompt", text: "hi" }], metrics: [] });
    expect(without.querySelector(".rl-transcript")).toBeNull();
    expect(transcript({ messages: [] }, [])).toBeNull();
  });
});
