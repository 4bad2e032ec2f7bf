import { describe, it, expect, beforeEach } from "vitest";
import explanation from "../src/explanation.js";
import pairwise from "../src/pairwise_view.js";
import editor, { applyEdit, numberOrText, errorRow, proposalList } from "../src/rubric_editor.js";
import { FakeModel } from "./fake_model.js";

const XSS = '<iframe srcdoc="<script>parent.__pwned=1</script>"></iframe><a href="javascript:alert(1)">x</a>';

const CASE = {
  heading: "case 2 of 3 · id case-1",
  fields: [
    { name: "prompt", text: `When is the deadline? ${XSS}` },
    { name: "response", text: "August 15th." },
  ],
  images: [
    { name: "image", src: "data:image/png;base64,iVBORw0KGgo=" },
    { name: "image", src: "javascript:alert(1)" },
    { name: "photo", note: "not shown: no image file at 'x.png'" },
  ],
  metrics: [
    {
      name: "support",
      kind: "pointwise",
      score: 0.75,
      verdict: "pass",
      criteria: [
        { name: "accuracy", question: "Are the facts correct?", level: 3, max_level: 3, label: "All facts correct", evidence: `"August 15th" ${XSS}`, reasoning: "matches the reference", weight: 0.5, critical: 2, passed_critical: true },
        { name: "deadline", question: "Does it state the deadline?", level: 0, label: "NO", evidence: "", reasoning: "", weight: 1, critical: null },
      ],
      rationale: `Mostly right. ${XSS}`,
      raw_output: ['{"accuracy": 3}'],
      error: null,
      tokens: 321,
      latency: 0.42,
      attempts: 1,
    },
    { name: "broken", kind: "pointwise", score: null, verdict: null, criteria: [], rationale: null, raw_output: ["not json at all"], error: "could not parse the judge's output", tokens: 10, latency: 1.5, attempts: 3 },
  ],
};

describe("Explanation", () => {
  let el, model, cleanup;
  beforeEach(() => {
    el = document.createElement("div");
    model = new FakeModel({ case: CASE, index: 1, count: 3, is_mock: false, judge: "", title: "" });
    cleanup = explanation.render({ model, el });
  });

  it("shows inputs, levels, evidence, rationale and accounting", () => {
    const text = el.textContent;
    expect(text).toContain("case 2 of 3");
    expect(text).toContain("When is the deadline?");
    expect(text).toContain("75.0");
    expect(el.querySelector('[data-criterion="accuracy"]').textContent).toContain("3/3");
    expect(el.querySelector('[data-criterion="accuracy"]').textContent).toContain("critical (min 2)");
    expect(el.querySelector('[data-criterion="deadline"] .rl-badge').textContent).toBe("NO");
    expect(el.querySelector(".rl-rationale").textContent).toContain("Mostly right.");
    expect(text).toContain("tokens 321");
    expect(text).toContain("latency 420 ms");
  });

  it("keeps raw output collapsed unless the row failed, and shows the error", () => {
    const [ok, bad] = el.querySelectorAll(".rl-metric");
    expect(ok.querySelector("details").open).toBe(false);
    expect(bad.querySelector("details").open).toBe(true);
    expect(bad.querySelector(".rl-error-box").textContent).toContain("could not parse");
    expect(bad.querySelector("pre").textContent).toBe("not json at all");
    expect(bad.textContent).toContain("attempts 3");
  });

  it("renders payloads as text and only safe image sources", () => {
    expect(el.querySelector("iframe, script, a")).toBeNull();
    expect(el.textContent).toContain("<iframe srcdoc=");
    const imgs = el.querySelectorAll("img");
    expect(imgs.length).toBe(2);
    expect(imgs[0].getAttribute("src")).toMatch(/^data:image\/png/);
    expect(imgs[1].hasAttribute("src")).toBe(false);
    expect(el.textContent).toContain("not shown: no image file");
  });

  it("navigates with next/previous through the index trait", () => {
    el.querySelector(".rl-next").click();
    expect(model.get("index")).toBe(2);
    expect(model.saved).toBe(1);
    expect(el.querySelector(".rl-next").disabled).toBe(true);
    el.querySelector(".rl-prev").click();
    expect(model.get("index")).toBe(1);
  });

  it("says MOCK when a mock judged, and cleans up", () => {
    expect(el.querySelector(".rl-mock")).toBeNull();
    model.set("is_mock", true);
    expect(el.querySelector(".rl-mock").textContent).toMatch(/MOCK judge/);
    cleanup();
    expect(model.listenerCount()).toBe(0);
    expect(el.childNodes.length).toBe(0);
  });
});

describe("PairwiseView", () => {
  it("shows both sides, the winners, the 5-point choice and order agreement", () => {
    const el = document.createElement("div");
    const model = new FakeModel({
      index: 0,
      count: 4,
      is_mock: false,
      judge: "",
      title: "",
      totals: [{ metric: "pair", scored: 4, mean: 0.125, wins: 2, ties: 1, losses: 1, win_rate: 0.5, win_rate_low: 0.15, win_rate_high: 0.85, tie_rate: 0.25, loss_rate: 0.25, swap_checked: 4, swap_inconsistent: 1 }],
      case: {
        heading: "case 1 of 4",
        fields: [{ name: "prompt", text: "Explain the refund policy" }],
        candidate: { name: "response", text: `Candidate says ${XSS}` },
        baseline: { name: "baseline_model_response", text: "Baseline says no" },
        metric: {
          name: "pair",
          kind: "pairwise",
          score: 0.5,
          verdict: "candidate wins",
          choice: "candidate better",
          swap_consistent: false,
          pair_rows: [
            { name: "accuracy", question: "Are the facts correct?", winner: "candidate", consistent: true, evidence: "cites policy", candidate: { level: 3, max_level: 3, label: "Good" }, baseline: { level: 1, max_level: 3, label: "Wrong" } },
            { name: "tone", question: "Is it polite?", winner: "tie", consistent: false, evidence: "" },
          ],
          raw_output: ["order 1", "order 2"],
          rationale: "Candidate is more accurate.",
        },
      },
    });
    const cleanup = pairwise.render({ model, el });
    expect(el.querySelector(".rl-cand .rl-text").textContent).toContain("<iframe");
    expect(el.querySelector("iframe")).toBeNull();
    expect(el.querySelector(".rl-base .rl-text").textContent).toBe("Baseline says no");
    expect(el.querySelector(".rl-scale .rl-on").textContent).toBe("candidate better");
    expect(el.querySelector(".rl-swap").textContent).toBe("the two orders disagreed");
    expect(el.querySelector('[data-criterion="accuracy"] .rl-win-cell').textContent).toBe("candidate");
    expect(el.querySelector('[data-criterion="accuracy"]').textContent).toContain("3/3");
    expect(el.querySelector('[data-criterion="tone"]').textContent).toContain("orders disagree");
    // denominators beside every rate, and the mean on the rows' unit (a signed percent)
    expect(el.querySelector(".rl-totals").textContent).toContain("candidate wins 50% (2/4) · ties 25% (1/4) · baseline wins 25% (1/4)");
    expect(el.querySelector(".rl-totals").textContent).toContain("mean preference +12.5% (on -100%..+100%)");
    expect(el.querySelector(".rl-totals").textContent).not.toContain("fail");
    expect(el.querySelector(".rl-totals").textContent).toContain("orders disagreed on 1 of 4");
    expect(el.querySelector(".rl-raw summary").textContent).toBe("Raw judge output (2 calls)");
    el.querySelector(".rl-next").click();
    expect(model.get("index")).toBe(1);
    cleanup();
    expect(model.listenerCount()).toBe(0);
  });
});

const RUBRIC = {
  name: "support",
  description: null,
  pass_mark: 0.7,
  criteria: [
    { name: "accuracy", description: "Are the facts correct?", levels: [{ score: 1, descriptor: "Wrong" }, { score: 2, descriptor: "Minor slips" }, { score: 3, descriptor: "Correct" }], weight: 0.5, critical: 2, category: null },
    { name: "deadline", description: "Does it state the deadline?", levels: [{ score: 0, descriptor: "NO" }, { score: 1, descriptor: "YES" }], weight: 1, critical: null, category: null },
  ],
};

describe("rubric edits (pure)", () => {
  it("sets, adds, deletes and moves without touching the original", () => {
    const set = applyEdit(RUBRIC, { op: "set", path: ["criteria", 1, "weight"], value: 2 });
    expect(set.criteria[1].weight).toBe(2);
    expect(RUBRIC.criteria[1].weight).toBe(1);
    const added = applyEdit(RUBRIC, { op: "add", kind: "yesno" });
    expect(added.criteria[2]).toMatchObject({ name: "q3", levels: [{ score: 0 }, { score: 1 }] });
    const twice = applyEdit(applyEdit(added, { op: "set", path: ["criteria", 0, "name"], value: "q4" }), { op: "add", kind: "levels" });
    expect(twice.criteria[3].name).toBe("q5");
    expect(applyEdit(RUBRIC, { op: "delete", index: 0 }).criteria.map((c) => c.name)).toEqual(["deadline"]);
    expect(applyEdit(RUBRIC, { op: "move", index: 1, to: 0 }).criteria.map((c) => c.name)).toEqual(["deadline", "accuracy"]);
    expect(applyEdit(RUBRIC, { op: "add-level", index: 0 }).criteria[0].levels[3]).toEqual({ score: 4, descriptor: "Level 4" });
    expect(numberOrText("0.5")).toBe(0.5);
    expect(numberOrText("abc")).toBe("abc");
    expect(errorRow({ path: ["criteria", 1, "weight"] })).toBe(1);
    expect(errorRow({ path: [] })).toBe(-1);
  });
});

describe("RubricEditor", () => {
  let el, model, cleanup;
  beforeEach(() => {
    el = document.createElement("div");
    document.body.replaceChildren(el);
    model = new FakeModel({ value: RUBRIC, error: null, index: 0, count: 3, heading: `prompt: ${XSS}`, revision: 0 });
    cleanup = editor.render({ model, el });
  });
  const field = (path) => el.querySelector(`[data-path="${path}"]`);
  const change = (input, value) => {
    input.value = value;
    input.dispatchEvent(new Event("change"));
  };

  it("shows every field of the rubric as an editable cell", () => {
    expect(el.querySelectorAll(".rl-crit-edit").length).toBe(2);
    expect(field("criteria.0.description").value).toBe("Are the facts correct?");
    expect(field("criteria.0.levels.2.descriptor").value).toBe("Correct");
    expect(field("pass_mark").value).toBe("70");
    expect(field("criteria.0.critical").value).toBe("2");
    expect(el.querySelector(".rl-heading").textContent).toContain("<iframe");
    expect(el.querySelector("iframe")).toBeNull();
  });

  it("sends each edit as the whole rubric through the value trait", () => {
    change(field("criteria.1.description"), "Does it give the date <b>?</b>");
    expect(model.get("value").criteria[1].description).toBe("Does it give the date <b>?</b>");
    expect(model.saved).toBe(1);
    change(field("pass_mark"), "80");
    expect(model.get("value").pass_mark).toBeCloseTo(0.8);
    change(field("criteria.0.weight"), "abc");
    expect(model.get("value").criteria[0].weight).toBe("abc"); // the kernel's model says why not
    const crit = field("criteria.0.critical");
    crit.value = "";
    crit.dispatchEvent(new Event("change"));
    expect(model.get("value").criteria[0].critical).toBeNull();
  });

  it("adds, deletes and reorders criteria and levels", () => {
    el.querySelector(".rl-add-yesno").click();
    expect(model.get("value").criteria.length).toBe(3);
    expect(el.querySelectorAll(".rl-crit-edit").length).toBe(3);
    el.querySelectorAll(".rl-down")[0].click();
    expect(model.get("value").criteria.map((c) => c.name)).toEqual(["deadline", "accuracy", "q3"]);
    el.querySelectorAll(".rl-delete")[2].click();
    expect(model.get("value").criteria.map((c) => c.name)).toEqual(["deadline", "accuracy"]);
    el.querySelectorAll(".rl-crit-edit")[1].querySelector(".rl-add-level").click();
    expect(model.get("value").criteria[1].levels.length).toBe(4);
    el.querySelectorAll(".rl-crit-edit")[1].querySelector(".rl-del-level").click();
    expect(model.get("value").criteria[1].levels.map((l) => l.score)).toEqual([2, 3, 4]);
  });

  it("shows a rejected edit's error at the cell and redraws the last good value", () => {
    change(field("criteria.0.weight"), "abc");
    // the kernel rejects: error first, then the last good rubric back
    model.set("error", { message: "criterion 'accuracy' (#1) weight: Input should be a valid number", path: ["criteria", 0, "weight"] });
    model.set("value", RUBRIC);
    const row = el.querySelectorAll(".rl-crit-edit")[0];
    expect(row.querySelector(".rl-inline-error").textContent).toContain("criterion 'accuracy'");
    expect(field("criteria.0.weight").value).toBe("0.5");
    expect(field("criteria.0.weight").classList.contains("rl-invalid")).toBe(true);
    model.set("error", null);
    expect(el.querySelector(".rl-inline-error")).toBeNull();
  });

  it("shows rubric-wide errors on top and moves between rubrics", () => {
    model.set("error", { message: "a rubric needs at least one criterion", path: [] });
    expect(el.querySelector(".rl-error-box").textContent).toContain("at least one criterion");
    el.querySelector(".rl-next").click();
    expect(model.get("index")).toBe(1);
    cleanup();
    expect(model.listenerCount()).toBe(0);
  });
});

describe("RubricEditor proposals", () => {
  const PROPOSALS = [
    { index: 0, kind: "rewrite", criterion: "deadline", before: "Does it state the deadline?", after: `Does it give the date? ${XSS}`, kept: true, note: "validation agreement 60% -> 80%", status: "open", why: "" },
    { index: 1, kind: "pass_mark", criterion: "overall", before: "70%", after: "50%", kept: true, note: "", status: "applied", why: "" },
    { index: 2, kind: "rewrite", criterion: "gone", before: "Old?", after: "New?", kept: true, note: "", status: "not applicable", why: "criterion 'gone' is no longer in the rubric" },
  ];
  it("shows each change as text with Apply and Reject, and sends the decision", () => {
    const el = document.createElement("div");
    document.body.replaceChildren(el);
    const model = new FakeModel({ value: RUBRIC, error: null, index: 0, count: 1, heading: "", revision: 0, proposals: PROPOSALS });
    const cleanup = editor.render({ model, el });
    const cards = el.querySelectorAll(".rl-proposal");
    expect(cards.length).toBe(3);
    expect(el.querySelector(".rl-proposals-head").textContent).toBe("Proposed changes: 1 of 3 open");
    expect(cards[0].querySelector(".rl-new").textContent).toContain("<iframe");
    expect(el.querySelector(".rl-proposals iframe")).toBeNull();
    expect(cards[0].querySelector(".rl-old").textContent).toContain("Does it state the deadline?");
    // only an open change has buttons; a change whose criterion is gone says why
    expect(cards[1].querySelector(".rl-apply")).toBeNull();
    expect(cards[2].querySelector(".rl-apply")).toBeNull();
    expect(cards[2].querySelector(".rl-proposal-why").textContent).toContain("no longer in the rubric");
    cards[0].querySelector(".rl-apply").click();
    expect(model.sent).toEqual([{ type: "rl:proposal", index: 0, action: "apply" }]);
    cards[0].querySelector(".rl-reject").click();
    expect(model.sent[1]).toEqual({ type: "rl:proposal", index: 0, action: "reject" });
    // the kernel's answer redraws the list
    model.set("proposals", PROPOSALS.map((p) => (p.index === 0 ? { ...p, status: "applied" } : p)));
    expect(el.querySelector(".rl-proposals-head").textContent).toBe("Proposed changes: 0 of 3 open");
    expect(el.querySelectorAll(".rl-apply").length).toBe(0);
    cleanup();
  });
  it("draws nothing when there is no proposal", () => {
    expect(proposalList([], () => {}).querySelectorAll(".rl-proposal").length).toBe(0);
  });
});
