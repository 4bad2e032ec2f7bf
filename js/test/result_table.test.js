import { describe, it, expect, beforeEach } from "vitest";
import view from "../src/result_table.js";
import { FakeModel, tick, frame } from "./fake_model.js";

const XSS = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>';
const N = 100_000;
const COLUMNS = [
  { key: "__index__", label: "#", kind: "index", sortable: true },
  { key: "prompt", label: "prompt", kind: "text", sortable: true },
  { key: "support/score", label: "support/score", kind: "score", metric: "support", metric_kind: "pointwise", sortable: true },
  { key: "support/verdict", label: "support/verdict", kind: "verdict", metric: "support", sortable: true },
  { key: "support/error", label: "support/error", kind: "error", metric: "support", sortable: true },
  { key: "support/criteria", label: "support/criteria", kind: "list", metric: "support", sortable: false },
];

/** A fake kernel: answers page requests over N synthetic rows, sorting by score when asked. */
function kernel(model) {
  const score = (i) => ((i * 7919) % 1000) / 1000;
  const requests = [];
  model.onSend = (msg) => {
    if (msg.type !== "rl:request") return;
    requests.push(msg);
    if (msg.op === "charts") return queueMicrotask(() => model.reply({ type: "rl:reply", id: msg.id, charts: [{ metric: "support", kind: "pointwise", scored: 99000, errors: 1000, histogram: [{ low: 0, high: 0.1, count: 5 }, { low: 0.1, high: 0.2, count: 9 }], criteria: [] }] }));
    if (msg.op === "export") return queueMicrotask(() => model.reply({ type: "rl:reply", id: msg.id, text: "index,prompt\n0,x\n", rows: 1, format: msg.format, mime: "text/csv", filename: `rubriclab-results.${msg.format}` }));
    let order = Array.from({ length: N }, (_, i) => i);
    if (msg.query.errors_only) order = order.filter((i) => i % 100 === 0);
    if (msg.query.sort?.key === "support/score") order.sort((a, b) => (msg.query.sort.desc ? score(b) - score(a) : score(a) - score(b)));
    const rows = order.slice(msg.start, msg.stop).map((i) => [i, ...msg.columns.map((c) => (c === "__index__" ? i : c === "prompt" ? `prompt ${i} ${XSS}` : c === "support/score" ? score(i) : c === "support/verdict" ? (score(i) >= 0.7 ? "pass" : "fail (score below pass mark)") : c === "support/error" ? (i % 100 === 0 ? "HTTP 503" : null) : "accuracy 3 · deadline YES"))]);
    queueMicrotask(() => model.reply({ type: "rl:reply", id: msg.id, rows, start: msg.start, total: order.length }));
  };
  return requests;
}

function makeModel(extra = {}) {
  return new FakeModel({
    columns: COLUMNS,
    visible: ["__index__", "prompt", "support/score", "support/verdict", "support/error"],
    summary: [{ metric: "support", kind: "pointwise", n: N, scored: 99000, errors: 1000, mean: 0.5, std: 0.29, pass_rate: 0.3, pass_rate_low: 0.29, pass_rate_high: 0.31, tokens: 123456, cost: 1.5 }],
    metrics: [{ name: "support", kind: "pointwise" }],
    verdicts: { support: ["fail (score below pass mark)", "pass"] },
    total: N,
    page_size: 200,
    height: 420,
    selected: -1,
    detail: null,
    is_mock: true,
    judge: "mock",
    title: "Support eval",
    ...extra,
  });
}

describe("ResultTable", () => {
  let el, model, requests, cleanup;
  beforeEach(async () => {
    document.body.replaceChildren();
    el = document.createElement("div");
    document.body.append(el);
    model = makeModel();
    requests = kernel(model);
    cleanup = view.render({ model, el });
    await tick();
    await frame();
  });

  it("asks for one page, shows the first rows, and never all 100,000", () => {
    expect(requests[0]).toMatchObject({ op: "page", start: 0, stop: 200 });
    expect(requests.filter((r) => r.op === "page").every((r) => r.stop - r.start <= 200)).toBe(true);
    const rows = el.querySelectorAll(".rl-tr");
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.length).toBeLessThan(40);
    expect(rows[0].textContent).toContain("prompt 0");
    expect(el.querySelector(".rl-count").textContent).toBe("100,000 rows");
  });

  it("shows the summary and says loudly that a mock judged", () => {
    expect(el.querySelector(".rl-mock").textContent).toMatch(/MOCK judge/);
    const card = el.querySelector(".rl-card");
    expect(card.textContent).toContain("50.0% ± 29.0% std");
    expect(card.textContent).toContain("pass 30% [29–31%]");
    expect(card.textContent).toContain("1,000 errors");
  });

  it("puts model text in as text: payloads are visible and inert", () => {
    const cell = el.querySelector('.rl-td[data-key="prompt"]');
    expect(cell.textContent).toContain("<script>");
    expect(el.querySelector(".rl-rows img, .rl-rows script")).toBeNull();
  });

  it("sorts by a column in the kernel and resets to the top", async () => {
    el.querySelector('.rl-th[data-key="support/score"]').click();
    await tick();
    await frame();
    const last = requests.filter((r) => r.op === "page").pop();
    expect(last.query.sort).toEqual({ key: "support/score", desc: false });
    expect(last.start).toBe(0);
    expect(el.querySelector('.rl-th[data-key="support/score"] .rl-arrow').textContent).toBe("▲");
    el.querySelector('.rl-th[data-key="support/score"]').click();
    await tick();
    expect(requests.filter((r) => r.op === "page").pop().query.sort).toEqual({ key: "support/score", desc: true });
    // lists cannot be sorted: their header has no handler
    model.set("visible", [...model.get("visible"), "support/criteria"]);
    await tick();
    const n = requests.length;
    el.querySelector('.rl-th[data-key="support/criteria"]').click();
    await tick();
    expect(requests.length).toBe(n);
  });

  it("filters to errors only, and shows the filtered count", async () => {
    const box = el.querySelector(".rl-errors-only");
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    await tick();
    await frame();
    expect(requests.filter((r) => r.op === "page").pop().query.errors_only).toBe(true);
    expect(el.querySelector(".rl-count").textContent).toBe("1,000 of 100,000 rows");
  });

  it("pages further rows in when scrolled to the end", async () => {
    const vp = el.querySelector(".rl-viewport");
    let top = 0;
    Object.defineProperty(vp, "scrollTop", { get: () => top, set: (v) => (top = v), configurable: true });
    top = N * 30; // past the end: clamped to the last row
    vp.dispatchEvent(new Event("scroll"));
    await frame();
    await tick();
    await frame();
    expect(requests.some((r) => r.start === 99_800)).toBe(true);
    const positions = [...el.querySelectorAll(".rl-tr")].map((r) => Number(r.dataset.pos));
    expect(Math.max(...positions)).toBe(N - 1);
    expect(el.querySelector('.rl-tr[data-pos="99999"]').textContent).toContain("prompt 99999");
  });

  it("opens a row's explanation by setting `selected`, and closes it", async () => {
    el.querySelectorAll(".rl-tr")[3].click();
    expect(model.get("selected")).toBe(3);
    expect(model.saved).toBeGreaterThan(0);
    model.set("detail", { heading: "case 4 of 100000", fields: [{ name: "prompt", text: XSS }], images: [], metrics: [{ name: "support", kind: "pointwise", score: 0.5, verdict: "fail (score below pass mark)", criteria: [], raw_output: ["raw"], rationale: "why" }] });
    expect(el.querySelector(".rl-detail .rl-text").textContent).toBe(XSS);
    expect(el.querySelector(".rl-detail img")).toBeNull();
    el.querySelector(".rl-detail .rl-next").click();
    expect(model.get("selected")).toBe(4);
    el.querySelector(".rl-close").click();
    expect(model.get("selected")).toBe(-1);
  });

  it("hides and shows columns from the chooser", async () => {
    el.querySelector(".rl-columns-btn").click();
    const box = el.querySelector('.rl-popover input[data-key="prompt"]');
    expect(box.checked).toBe(true);
    box.checked = false;
    box.dispatchEvent(new Event("change"));
    await tick();
    await frame();
    expect(model.get("visible")).not.toContain("prompt");
    expect(el.querySelector('.rl-th[data-key="prompt"]')).toBeNull();
    expect(requests.filter((r) => r.op === "page").pop().columns).not.toContain("prompt");
  });

  it("shows a kernel error with a retry button", async () => {
    model.onSend = (msg) => queueMicrotask(() => model.reply({ type: "rl:reply", id: msg.id, error: "no column 'x'" }));
    el.querySelector('.rl-th[data-key="prompt"]').click();
    await tick();
    await tick();
    await frame();
    // the first page failed: said once, where the rows go (not also in the status line)
    expect(el.querySelector(".rl-refusal[role=alert]").textContent).toContain("no column 'x'");
    expect(el.querySelector(".rl-status").textContent).toBe("");
    expect(el.querySelector(".rl-retry")).not.toBeNull();
  });

  it("cleans up its listeners and DOM", () => {
    expect(model.listenerCount()).toBeGreaterThan(0);
    cleanup();
    expect(model.listenerCount()).toBe(0);
    expect(el.childNodes.length).toBe(0);
  });
});

describe("ResultTable score filter", () => {
  it("is per metric kind: no one range over pointwise and pairwise, percents for both", async () => {
    document.body.replaceChildren();
    const el = document.createElement("div");
    document.body.append(el);
    const model = makeModel({ metrics: [{ name: "support", kind: "pointwise" }, { name: "vs", kind: "pairwise" }] });
    kernel(model);
    const cleanup = view.render({ model, el });
    await tick();
    await frame();
    expect(el.querySelector(".rl-min")).toBeNull(); // "any metric" mixes the scales
    expect(el.querySelector(".rl-score-hint").textContent).toBe("pick a metric to filter by score");
    const sel = el.querySelector(".rl-metric-select");
    sel.value = "vs";
    sel.dispatchEvent(new Event("change"));
    await tick();
    const lo = el.querySelector(".rl-min");
    expect(lo.getAttribute("step")).toBe("50");
    expect(lo.parentElement.textContent).toContain("preference");
    expect(lo.parentElement.textContent).toContain("%");
    sel.value = "support";
    sel.dispatchEvent(new Event("change"));
    await tick();
    expect(el.querySelector(".rl-min").getAttribute("step")).toBe("1");
    cleanup();
  });
});

describe("ResultTable over a big result file", () => {
  const WHOLE = (what) => `${what} needs the whole table (100,000 rows in big.jsonl): result.table loads it; or save the result as .parquet`;
  const REFUSALS = {
    sort: { prompt: WHOLE("sorting by 'prompt'"), "support/score": WHOLE("sorting by 'support/score'") },
    filters: { search: WHOLE("searching the text"), score: WHOLE("filtering"), status: WHOLE("filtering"), errors_only: WHOLE("filtering") },
    export: WHOLE("exporting the rows"),
    charts: WHOLE("drawing charts"),
    note: "Read from big.jsonl, a file of 100,000 rows, page by page: sorting, filtering and charts need the whole table",
  };

  /** A kernel that refuses, as FileQuery does, any sort but the row number. */
  function fileKernel(model) {
    const requests = kernel(model);
    const answer = model.onSend;
    model.onSend = (msg, m) => {
      if (msg.type === "rl:request" && msg.op === "page" && msg.query.sort && msg.query.sort.key !== "__index__") {
        requests.push(msg);
        return queueMicrotask(() => model.reply({ type: "rl:reply", id: msg.id, error: REFUSALS.sort[msg.query.sort.key] }));
      }
      return answer(msg, m);
    };
    return requests;
  }

  async function mount(extra) {
    document.body.replaceChildren();
    const el = document.createElement("div");
    document.body.append(el);
    const model = makeModel({ refusals: REFUSALS, ...extra });
    const requests = fileKernel(model);
    const cleanup = view.render({ model, el });
    await tick();
    await frame();
    return { el, model, requests, cleanup };
  }

  it("disables the sorts and filters the file refuses, each saying why, and says it once in a line", async () => {
    const { el, requests, cleanup } = await mount();
    const prompt = el.querySelector('.rl-th[data-key="prompt"]');
    expect(prompt.classList.contains("rl-sortable")).toBe(false);
    expect(prompt.title).toBe(`prompt: ${REFUSALS.sort.prompt}`);
    const asked = requests.length;
    prompt.click();
    await tick();
    expect(requests.length).toBe(asked); // never asked: it would only be refused
    expect(el.querySelector('.rl-th[data-key="__index__"]').classList.contains("rl-sortable")).toBe(true);
    const search = el.querySelector('input[type="search"]');
    expect(search.disabled).toBe(true);
    expect(search.title).toContain("searching the text needs the whole table");
    expect(el.querySelector(".rl-min").disabled).toBe(true);
    expect(el.querySelector(".rl-status-filter").disabled).toBe(true);
    const errorsOnly = el.querySelector(".rl-errors-only");
    expect(errorsOnly.disabled).toBe(true);
    expect(errorsOnly.parentElement.title).toBe(WHOLE("filtering"));
    for (const b of el.querySelectorAll(".rl-export button")) {
      expect(b.disabled).toBe(true);
      expect(b.title).toBe(REFUSALS.export);
    }
    expect(el.querySelector(".rl-file-note").textContent).toBe(REFUSALS.note);
    expect(el.querySelector(".rl-charts").textContent).toContain("charts not available: drawing charts needs the whole table");
    expect(requests.some((r) => r.op === "charts")).toBe(false);
    expect(el.querySelector(".rl-count").textContent).toBe("100,000 rows");
    cleanup();
  });

  it("a table in memory refuses nothing: no line, every sort and filter enabled", async () => {
    const { el, cleanup } = await mount({ refusals: {} });
    expect(el.querySelector('.rl-th[data-key="prompt"]').classList.contains("rl-sortable")).toBe(true);
    expect(el.querySelector('input[type="search"]').disabled).toBe(false);
    expect(el.querySelector(".rl-errors-only").disabled).toBe(false);
    expect(el.querySelector(".rl-file-note").textContent).toBe("");
    cleanup();
  });

  it("shows a refused page's reason where the rows go, never an endless 'loading…'", async () => {
    // a sort chosen on the table in memory, then the view switched to the big file (a run's
    // final result): the kernel refuses the page
    const { el, model, cleanup } = await mount({ refusals: {} });
    el.querySelector('.rl-th[data-key="prompt"]').click();
    await tick();
    await frame();
    model.set("refusals", REFUSALS);
    await tick();
    await frame();
    const refusal = el.querySelector(".rl-refusal[role=alert]");
    expect(refusal.textContent).toBe(`Rows not shown: ${REFUSALS.sort.prompt} Retry`);
    expect(el.querySelector(".rl-count").textContent).toBe("rows not shown");
    expect(el.querySelectorAll(".rl-refusal").length).toBe(2); // the rows' area and the charts
    expect(el.textContent).not.toContain("Could not load rows"); // said once
    expect(el.textContent).not.toContain("loading…");
    refusal.querySelector(".rl-retry").click(); // asked again, refused again: still said
    await tick();
    await frame();
    expect(el.querySelector(".rl-refusal[role=alert]").textContent).toContain(REFUSALS.sort.prompt);
    cleanup();
  });
});
