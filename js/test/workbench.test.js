import { describe, it, expect } from "vitest";
import view, { versionText, progressText, liveText } from "../src/workbench.js";
import { FakeModel, tick } from "./fake_model.js";

const XSS = "<img src=x onerror=alert(1)>";
const rubric = {
  name: "notes",
  pass_mark: 1,
  criteria: [
    { name: "q1", description: "Deadline?", levels: [{ score: 0, descriptor: "NO" }, { score: 1, descriptor: "YES" }], weight: 1, critical: null, category: null },
  ],
};

function model(extra = {}) {
  return new FakeModel(
    {
      title: "Workbench",
      is_mock: true,
      judge: "mock",
      value: rubric,
      error: null,
      index: 0,
      count: 1,
      heading: "notes: the rubric of every row",
      revision: 0,
      versions_info: [
        { name: "v1", number: 1, calls: 4, cached: 0, changed: 4, note: "", agreement: [{ metric: "notes", criterion: "overall", n: 4, agree: 3, rate: 0.75 }] },
        { name: "v2", number: 2, calls: 1, cached: 3, changed: 1, note: "", agreement: [] },
      ],
      against: 1,
      running: false,
      progress: {},
      status: "v2: 1 call(s), 3 from the cache",
      pending: 0,
      rows: [{ row: 0, key: "c0", response: XSS, sent: true, metrics: [{ metric: "notes", score: 0.5, verdict: "fail (score below pass mark)", error: null }] }],
      row_total: 1,
      flipped: 1,
      names: ["v1", "v2"],
      overview: { cases: 1, confidence: 0.95 },
      metrics: [{ metric: "notes", pairs: 1, errored: 0, mean_a: 1, mean_b: 0.5, diff: -0.5, ci_low: -0.5, ci_high: -0.5, better: 0, same: 0, worse: 1 }],
      criteria: [],
      metric: "notes",
      cases: [{ key: "c0", score_a: 1, score_b: 0.5, diff: -0.5, verdict_a: "pass", verdict_b: "fail" }],
      case_total: 1,
      item: -1,
      detail: null,
      save_path: "rubric.yaml",
      templates: { notes: "" },
      timeout_ms: 1000,
      ...extra,
    },
    { onSend: (msg, m) => m.reply({ type: "rl:reply", id: msg.id, ok: true }) },
  );
}

describe("Workbench", () => {
  it("says what each version cost and how it agrees with people", () => {
    expect(versionText({ calls: 1, cached: 3, changed: 1, agreement: [] })).toBe("1 call · 3 cached · 1 changed row");
    expect(versionText({ calls: 1, cached: 0, kept: 999, changed: 1, agreement: [] })).toBe("1 call · 0 cached · 999 kept · 1 changed row");
    expect(versionText({ calls: 4, cached: 0, changed: 4, agreement: [{ criterion: "overall", rate: 0.75, agree: 3, n: 4 }] })).toContain("agrees with people 75.0% (3/4)");
    expect(progressText({ done: 412, total: 1000, calls: 1 })).toBe("412 / 1,000 rows · 1 call");
  });

  it("draws the grid, the versions, the results and the comparison, model text as text", () => {
    const el = document.createElement("div");
    view.render({ model: model(), el });
    expect(el.querySelector('textarea[data-path="criteria.0.description"]').value).toBe("Deadline?");
    expect([...el.querySelectorAll(".rl-version")].map((v) => v.dataset.version)).toEqual(["v1", "v2"]);
    expect(el.querySelector(".rl-undo").textContent).toBe("Undo to v1");
    expect(el.querySelector(".rl-wb-flipped").textContent).toBe("1 verdict flipped (listed first)");
    expect(el.querySelector(".rl-item").textContent).toContain("pass → fail");
    expect(el.querySelector(".rl-wb-row").textContent).toContain(XSS);
    expect(el.querySelector("img")).toBeNull();
  });

  it("asks the kernel to re-judge, undo and save, and shows Cancel with progress while running", async () => {
    const m = model();
    const el = document.createElement("div");
    view.render({ model: m, el });
    el.querySelector(".rl-rejudge").click();
    el.querySelector(".rl-undo").click();
    el.querySelector(".rl-save").click();
    el.querySelector('.rl-wb-template-text[data-metric="notes"]').value = "critique_checklist";
    el.querySelector(".rl-wb-template-apply").click();
    await tick();
    expect(m.sent.map((s) => s.op)).toEqual(["rejudge", "undo", "save", "template"]);
    expect(m.sent[3]).toMatchObject({ metric: "notes", template: "critique_checklist" });
    expect(m.sent[1].version).toBe(1);
    expect(m.sent[2].path).toBe("rubric.yaml");
    m.set("running", true);
    m.set("progress", { done: 2, total: 4, calls: 1 });
    expect(el.querySelector(".rl-rejudge").disabled).toBe(true);
    expect(el.querySelector(".rl-progress").textContent).toBe("2 / 4 rows · 1 call");
    el.querySelector(".rl-cancel").click();
    expect(m.sent.at(-1).op).toBe("cancel");
  });

  it("re-judges on Ctrl-Enter", () => {
    const m = model();
    const el = document.createElement("div");
    view.render({ model: m, el });
    const area = el.querySelector("textarea");
    area.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, bubbles: true }));
    expect(m.sent.map((s) => s.op)).toEqual(["rejudge"]);
  });

  it("cleans up its listeners", () => {
    const m = model();
    const el = document.createElement("div");
    const before = m.listenerCount();
    const cleanup = view.render({ model: m, el });
    cleanup();
    expect(m.listenerCount()).toBe(before);
  });

  it("fills the result rows live: waiting rows say so, finished rows show their verdicts", () => {
    const row = (/** @type {number} */ i, /** @type {string} */ state) => ({ row: i, key: `c${i}`, response: XSS, sent: true, state, metrics: [{ metric: "notes", score: state === "done" ? 1 : null, verdict: state === "done" ? "pass" : null, error: null }] });
    const rows = [row(0, "done"), row(1, "waiting"), row(2, "waiting")];
    expect(liveText(rows)).toBe("1 of 3 shown rows judged in this run");
    expect(liveText([{ row: 0, metrics: [] }])).toBe("");
    const el = document.createElement("div");
    const m = model({ running: true, rows, row_total: 3 });
    view.render({ model: m, el });
    expect([...el.querySelectorAll(".rl-wb-row")].map((r) => r.dataset.state)).toEqual(["done", "waiting", "waiting"]);
    expect(el.querySelectorAll(".rl-wb-waiting").length).toBe(2);
    expect(el.querySelector('.rl-wb-row[data-row="0"]').textContent).toContain("pass");
    expect(el.querySelector(".rl-wb-live").textContent).toBe("1 of 3 shown rows judged in this run");
    m.set("rows", [row(0, "done"), row(1, "done"), row(2, "waiting")]);
    expect(el.querySelector(".rl-wb-live").textContent).toBe("2 of 3 shown rows judged in this run");
    m.set("rows", [{ ...row(0, "done"), state: undefined }]);
    expect(el.querySelector(".rl-wb-live")).toBeNull();
    expect(el.textContent).not.toContain("judging…");
    expect(el.querySelector("img")).toBeNull();
  });
});
