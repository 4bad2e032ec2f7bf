// Issue 19: charts, export, filters that mean something, live rows, a sharper table, the
// calibration drill-down, and model text as Markdown. Hostile text stays inert everywhere.
import { describe, it, expect, beforeEach, vi } from "vitest";
import table from "../src/result_table.js";
import calibration from "../src/calibration_view.js";
import pairwise from "../src/pairwise_view.js";
import explanation from "../src/explanation.js";
import { histogram, criteriaBars, wtlBars, axisTicks, chartCard } from "../src/lib/charts.js";
import { markdown, textBlock, looksLikeMarkdown } from "../src/lib/markdown.js";
import { fmtScore, fmtStd, fmtPassRule } from "../src/lib/format.js";
import { metaLine } from "../src/lib/case.js";
import { summaryCard } from "../src/lib/summary.js";
import { mockBanner } from "../src/lib/dom.js";
import { FakeModel, tick, frame } from "./fake_model.js";

const XSS = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>';
const inert = (root) => {
  expect(root.querySelector("script, iframe, img, foreignObject, [onerror], [onload]")).toBeNull();
  for (const a of root.querySelectorAll("a")) expect(a.getAttribute("href") || "").toMatch(/^(https?:|mailto:|blob:)/);
};

describe("one display rule for scores", () => {
  it("shows scores as percents, a labelled std, and the pass rule when counted", () => {
    expect(fmtScore(0.75)).toBe("75.0%");
    expect(fmtStd(0.123)).toBe("± 12.3% std");
    expect(fmtStd(null)).toBe("");
    expect(fmtPassRule({ passed: 31, verdicts: 50, n: 60 })).toBe("31 of 50 with a verdict passed · 10 without a verdict");
    expect(fmtPassRule({ pass_rate: 0.5 })).toBe(""); // before the counts exist: nothing invented
    const card = summaryCard({ metric: "m", kind: "pointwise", mean: 0.5, std: 0.1, pass_rate: 0.62, passed: 31, verdicts: 50, n: 50, scored: 50 });
    expect(card.textContent).toContain("50.0% ± 10.0% std");
    expect(card.querySelector(".rl-pass-rule").textContent).toBe("31 of 50 with a verdict passed");
  });
  it("shows 'no pass mark', never a 0% pass rate, for a metric that cannot pass", () => {
    const card = summaryCard({ metric: "tq", kind: "pointwise", mean: 0.467, n: 10, scored: 10, has_pass_mark: false, critical_fails: 4 });
    expect(card.textContent).toContain("no pass mark · 4 failed a critical item");
    expect(card.textContent).not.toMatch(/pass \d|0%/);
    expect(card.querySelector(".rl-pass-rule")).toBeNull();
  });
  it("gives a pairwise card its mean as a signed percent and a denominator on every rate", () => {
    const card = summaryCard({ metric: "pw", kind: "pairwise", mean: -1 / 6, n: 3, scored: 3, wins: 1, ties: 0, losses: 2, win_rate: 1 / 3, tie_rate: 0, loss_rate: 2 / 3 });
    expect(card.querySelector(".rl-card-big").textContent).toBe("-16.7%");
    expect(card.textContent).toContain("win 33% (1/3)");
    expect(card.textContent).toContain("tie 0% (0/3) · loss 67% (2/3)");
    expect(card.textContent).not.toContain("fail");
  });
  it("says 'cached' instead of attempts 0 · latency 0 ms", () => {
    const line = metaLine({ cached: true, tokens: 120, attempts: 0, latency: 0 });
    expect(line.textContent).toContain("cached");
    expect(line.textContent).not.toMatch(/attempts|latency/);
    expect(metaLine({ tokens: 5, attempts: 2, latency: 0.3 }).textContent).toContain("attempts 2");
  });
  it("keeps the mock banner to one line with the details on hover", () => {
    const b = mockBanner(true, "mock");
    expect(b.textContent).toBe("⚠ MOCK judge · not a real model (hover for details)");
    expect(b.title).toMatch(/offline mock judge \(mock\)/);
  });
});

describe("charts", () => {
  const chart = {
    metric: `m ${XSS}`,
    kind: "pointwise",
    scored: 14,
    errors: 1,
    histogram: Array.from({ length: 10 }, (_, i) => ({ low: i / 10, high: (i + 1) / 10, count: i })),
    criteria: [{ name: `crit ${XSS}`, question: XSS, total: 10, bad_share: 0.3, results: [{ label: "YES", count: 7, good: true }, { label: "NO", count: 3, good: false }] }],
  };
  it("draws a histogram with one bar per bin, an axis, and tooltips", () => {
    const svg = histogram(chart);
    expect(svg.querySelectorAll("rect.rl-bar").length).toBe(10);
    expect(svg.querySelectorAll("rect.rl-bar")[9].querySelector("title").textContent).toBe("90–100%: 9");
    expect([...svg.querySelectorAll("text")].map((t) => t.textContent)).toEqual(expect.arrayContaining(["0%", "50%", "100%", "9"]));
    // axis titles: what is counted against what
    expect([...svg.querySelectorAll("text.rl-axis-title")].map((t) => t.textContent)).toEqual(["score", "rows"]);
    const pair = histogram({ ...chart, kind: "pairwise", choices: [{ label: "candidate better", count: 2 }] });
    expect([...pair.querySelectorAll("text.rl-axis-title")].map((t) => t.textContent)).toEqual(["verdict (both orders)", "rows"]);
  });
  it("gives stacked criterion bars a legend: each result once, in its bar colour", () => {
    const rows = [
      { name: "a", total: 4, results: [{ label: "level 1", count: 1 }, { label: "level 2", count: 3 }] },
      { name: "b", total: 4, results: [{ label: "level 1", count: 2 }, { label: "level 2", count: 1 }, { label: `level 3 ${XSS}`, count: 1 }] },
      // a critical criterion: its levels are coloured fail / pass, and the legend says which
      { name: "c", total: 4, results: [{ label: "level 1", count: 1, good: false }, { label: "level 2", count: 1, good: true }, { label: "level 3", count: 2, good: true }] },
    ];
    const svg = criteriaBars({ metric: "m", criteria: rows });
    const legend = [...svg.querySelectorAll(".rl-legend text")].map((t) => t.getAttribute("data-legend"));
    expect(legend).toEqual(["level 1", "level 2", `level 3 ${XSS}`, "level 1", "level 2, level 3"]);
    expect([...svg.querySelectorAll(".rl-legend rect")].slice(3).map((r) => r.getAttribute("class"))).toEqual(["rl-swatch rl-badc", "rl-swatch rl-good"]);
    const swatches = [...svg.querySelectorAll(".rl-legend rect")].map((r) => r.getAttribute("class"));
    const bars = [...svg.querySelectorAll("rect.rl-seg")].slice(0, 2).map((r) => r.getAttribute("class"));
    expect(swatches.slice(0, 2).map((c) => c.replace("rl-swatch ", ""))).toEqual(bars.map((c) => c.replace("rl-seg ", "")));
    expect(Number(svg.getAttribute("height"))).toBeGreaterThanOrEqual(3 * 20 + 18);
    inert(svg);
  });
  it("draws per-criterion bars where answers fail, with hostile names as text", () => {
    const svg = criteriaBars(chart);
    const segs = svg.querySelectorAll("rect.rl-seg");
    expect(segs.length).toBe(2);
    expect(segs[1].getAttribute("class")).toContain("rl-badc");
    expect(Number(segs[0].getAttribute("width"))).toBeGreaterThan(Number(segs[1].getAttribute("width")));
    expect(svg.textContent).toContain("30% fail");
    expect(svg.textContent).toContain("<img");
    inert(svg);
  });
  it("draws win/tie/loss bars with interval whiskers and a 0-100% axis", () => {
    const svg = wtlBars([
      { label: "candidate wins", rate: 0.5, low: 0.4, high: 0.6 },
      { label: "ties", rate: 0.2, low: 0.1, high: 0.3 },
      { label: XSS, rate: 0.3, low: null, high: null },
    ]);
    expect(svg.querySelectorAll("path.rl-whisker").length).toBe(2);
    expect(svg.querySelector("path.rl-whisker title").textContent).toBe("95% interval 40%–60%");
    expect([...svg.querySelectorAll("text")].map((t) => t.textContent)).toEqual(expect.arrayContaining(["0%", "25%", "50%", "75%", "100%"]));
    inert(svg);
  });
  it("gives forest plots axis ticks", () => {
    const axis = axisTicks(-1, 1, 5);
    expect([...axis.querySelectorAll(".rl-tick")].map((t) => t.textContent)).toEqual(["-1.0", "-0.5", "0.0", "+0.5", "+1.0"]);
    expect(axis.querySelectorAll(".rl-tick")[2].style.left).toBe("50%");
    expect([...axisTicks(-0.5, 0.5, 3).querySelectorAll(".rl-tick")].map((t) => t.textContent)).toEqual(["-0.50", "0.00", "+0.50"]);
  });
  it("puts every chart of a metric in one card", () => {
    const card = chartCard({ ...chart, kind: "pairwise", choices: [{ value: 1, label: "candidate much better", count: 2 }], wtl: [{ label: "candidate wins", rate: 0.5 }] });
    expect(card.querySelectorAll("svg").length).toBe(3);
    inert(card);
  });
});

describe("Markdown from models and judges", () => {
  it("renders CommonMark: bold, lists, code, headings, tables stay out (commonmark preset)", () => {
    const box = markdown("**Primary Damage:** flood\n\n- one\n- two\n\n`x = 1`\n\n## Head");
    expect(box.querySelector("strong").textContent).toBe("Primary Damage:");
    expect(box.querySelectorAll("li").length).toBe(2);
    expect(box.querySelector("code").textContent).toBe("x = 1");
    expect(box.querySelector("h2").textContent).toBe("Head");
  });
  it("keeps raw HTML as visible text and never makes an element of it", () => {
    const box = markdown(`Hello ${XSS}\n\n<div onclick="x()">block</div>`);
    expect(box.textContent).toContain("<script>");
    expect(box.textContent).toContain('<div onclick="x()">');
    inert(box);
  });
  it("keeps only safe links, opened with rel=noopener; images become their alt text", () => {
    const box = markdown("[ok](https://example.com/a) [bad](javascript:alert(1)) [data](data:text/html,x) ![pic](https://evil.example/p.png)");
    const links = box.querySelectorAll("a");
    expect(links.length).toBe(1);
    expect(links[0].getAttribute("href")).toBe("https://example.com/a");
    expect(links[0].getAttribute("rel")).toBe("noopener noreferrer nofollow");
    expect(box.textContent).toContain("[image: pic]");
    expect(box.querySelector("img")).toBeNull();
    inert(box);
  });
  it("falls back to raw text when switched off or when the text is plain", () => {
    expect(looksLikeMarkdown("just words\nand lines")).toBe(false);
    expect(textBlock("**bold**", false).textContent).toBe("**bold**");
    expect(textBlock("**bold**", true).querySelector("strong")).not.toBeNull();
    expect(textBlock("plain", true).className).toBe("rl-text");
  });
  it("toggles back to raw text per view", () => {
    const el = document.createElement("div");
    const model = new FakeModel({ case: { heading: "case 1 of 1", fields: [{ name: "response", text: "**Primary Damage:** flood" }], images: [], metrics: [] }, index: 0, count: 1, markdown: true });
    explanation.render({ model, el });
    expect(el.querySelector(".rl-field strong").textContent).toBe("Primary Damage:");
    el.querySelector(".rl-md-toggle").click();
    expect(model.get("markdown")).toBe(false);
    expect(el.querySelector(".rl-field strong")).toBeNull();
    expect(el.querySelector(".rl-field .rl-text").textContent).toBe("**Primary Damage:** flood");
  });
});

// ---- the table ------------------------------------------------------------------------------
const COLUMNS = [
  { key: "__index__", label: "#", kind: "index", sortable: true },
  { key: "prompt", label: "prompt", kind: "text", sortable: true },
  { key: "a_rather_long_metric_name_for_support/score", label: "a_rather_long_metric_name_for_support/score", kind: "score", metric: "a_rather_long_metric_name_for_support", field: "score", metric_kind: "pointwise", sortable: true },
  { key: "a_rather_long_metric_name_for_support/error", label: "a_rather_long_metric_name_for_support/error", kind: "error", metric: "a_rather_long_metric_name_for_support", field: "error", empty: true, sortable: true },
  { key: "a_rather_long_metric_name_for_support/raw_output", label: "a_rather_long_metric_name_for_support/raw_output", kind: "list", metric: "a_rather_long_metric_name_for_support", field: "raw_output", sortable: false },
];
const M = "a_rather_long_metric_name_for_support";

function tableModel(extra = {}) {
  return new FakeModel({
    columns: COLUMNS,
    visible: ["__index__", "prompt", `${M}/score`],
    summary: [{ metric: M, kind: "pointwise", n: 50, scored: 50, mean: 0.5, std: 0.2, pass_rate: 0.4 }],
    metrics: [{ name: M, kind: "pointwise" }],
    verdicts: { [M]: ["pass", "fail (score below pass mark)", "fail (accuracy below 2)"] },
    criteria: { [M]: [{ name: "accuracy", question: "Facts right?", values: ["level 3", "level 2", "level 1"] }, { name: `dead ${XSS}`, question: "", values: ["YES", "NO"] }] },
    total: 50,
    page_size: 200,
    height: 420,
    selected: -1,
    detail: null,
    is_mock: true,
    judge: "mock",
    title: "",
    markdown: true,
    ...extra,
  });
}

function fakeKernel(model) {
  const requests = [];
  model.onSend = (msg) => {
    requests.push(msg);
    let reply;
    if (msg.op === "charts") reply = { charts: [{ metric: M, kind: "pointwise", scored: 50, errors: 0, histogram: [{ low: 0, high: 0.1, count: 3 }], criteria: [] }] };
    else if (msg.op === "export") reply = { text: msg.format === "csv" ? `index,prompt\n0,'=HYPERLINK("x")\n` : `{"prompt": "${"<script>"}"}\n`, rows: 1, format: msg.format, mime: msg.format === "csv" ? "text/csv" : "application/x-ndjson", filename: `rubriclab-results.${msg.format}` };
    else {
      const rows = Array.from({ length: Math.max(0, Math.min(msg.stop, 50) - msg.start) }, (_, k) => {
        const i = msg.start + k;
        return [i, ...msg.columns.map((c) => (c === "__index__" ? i : c === "prompt" ? `prompt ${i} ${XSS} and a long tail of words that will need wrapping in a narrow column` : c.endsWith("/score") ? i / 50 : null))];
      });
      reply = { rows, start: msg.start, total: 50 };
    }
    queueMicrotask(() => model.reply({ type: "rl:reply", id: msg.id, ...reply }));
  };
  return requests;
}

describe("ResultTable, sharper", () => {
  let el, model, requests;
  beforeEach(async () => {
    document.body.replaceChildren();
    el = document.createElement("div");
    document.body.append(el);
    model = tableModel();
    requests = fakeKernel(model);
    table.render({ model, el });
    await tick();
    await tick();
    await frame();
  });
  const pages = () => requests.filter((r) => r.op === "page");
  const change = async (sel, value) => {
    const node = el.querySelector(sel);
    if (node.type === "checkbox") node.checked = value;
    else node.value = value;
    node.dispatchEvent(new Event("change"));
    await tick();
    await tick();
    await frame();
  };

  it("offers outcome groups, not one option per exact verdict string", async () => {
    const options = [...el.querySelectorAll(".rl-status-filter option")].map((o) => o.textContent);
    expect(options).toEqual(["any outcome", "pass", "fail", "no verdict", "error"]);
    expect(el.querySelector(".rl-verdict")).toBeNull();
    await change(".rl-status-filter", "no_verdict");
    expect(pages().pop().query.status).toBe("no_verdict");
  });

  it("filters by one criterion's result", async () => {
    const sel = el.querySelector(".rl-criterion-filter");
    const labels = [...sel.querySelectorAll("option")].map((o) => o.textContent);
    expect(labels).toContain("accuracy: level 1");
    expect(labels).toContain(`dead ${XSS}: NO`);
    inert(sel);
    const opt = [...sel.querySelectorAll("option")].find((o) => o.textContent === "accuracy: level 1");
    await change(".rl-criterion-filter", opt.value);
    expect(pages().pop().query.criterion).toEqual({ name: "accuracy", value: "level 1" });
  });

  it("draws charts of the filtered rows, and does not re-ask when only the sort changes", async () => {
    expect(el.querySelector(".rl-charts svg.rl-hist")).not.toBeNull();
    const asked = requests.filter((r) => r.op === "charts").length;
    el.querySelector(`.rl-th[data-key="${M}/score"]`).click();
    await tick();
    await tick();
    expect(requests.filter((r) => r.op === "charts").length).toBe(asked);
    await change(".rl-status-filter", "fail");
    expect(requests.filter((r) => r.op === "charts").pop().query.status).toBe("fail");
    el.querySelector(".rl-charts-btn").click();
    expect(el.querySelector(".rl-charts svg")).toBeNull();
  });

  it("downloads the filtered, sorted view as CSV and JSONL", async () => {
    const created = [];
    URL.createObjectURL = vi.fn((blob) => (created.push(blob), "blob:fake"));
    URL.revokeObjectURL = vi.fn();
    const clicks = [];
    const orig = HTMLAnchorElement.prototype.click;
    HTMLAnchorElement.prototype.click = function () {
      clicks.push({ download: this.download, href: this.getAttribute("href") });
    };
    await change(".rl-status-filter", "pass");
    el.querySelector(".rl-export-csv").click();
    await tick();
    await tick();
    el.querySelector(".rl-export-jsonl").click();
    await tick();
    await tick();
    HTMLAnchorElement.prototype.click = orig;
    const asks = requests.filter((r) => r.op === "export");
    expect(asks.map((r) => r.format)).toEqual(["csv", "jsonl"]);
    expect(asks[0].query.status).toBe("pass");
    expect(asks[0].columns).toBe("all"); // every field, not only the columns shown
    expect(el.querySelector(".rl-export-csv").title).toContain("every field");
    expect(clicks).toEqual([
      { download: "rubriclab-results.csv", href: "blob:fake" },
      { download: "rubriclab-results.jsonl", href: "blob:fake" },
    ]);
    const read = (blob) => new Promise((resolve) => {
      const r = new FileReader();
      r.onload = () => resolve(r.result);
      r.readAsText(blob);
    });
    expect(await read(created[0])).toContain(`'=HYPERLINK`);
    expect(created[1].type).toContain("application/x-ndjson");
    expect(el.querySelector(".rl-status").textContent).toContain("saved 1 row as rubriclab-results.jsonl");
  });

  it("shows long metric names on two lines with the full name on hover", () => {
    const th = el.querySelector(`.rl-th[data-key="${M}/score"]`);
    expect(th.querySelector(".rl-th-metric").textContent).toBe(M);
    expect(th.querySelector(".rl-th-field").textContent).toBe("score");
    expect(th.title).toContain(`${M}/score`);
  });

  it("resizes a column by dragging its edge, and resets on double-click", async () => {
    const th = el.querySelector('.rl-th[data-key="prompt"]');
    const before = parseInt(th.style.width, 10);
    const grip = th.querySelector(".rl-resize");
    grip.dispatchEvent(new MouseEvent("pointerdown", { clientX: 100, bubbles: true }));
    window.dispatchEvent(new MouseEvent("pointermove", { clientX: 220 }));
    window.dispatchEvent(new MouseEvent("pointerup", {}));
    await frame();
    const after = parseInt(el.querySelector('.rl-th[data-key="prompt"]').style.width, 10);
    expect(after).toBeGreaterThanOrEqual(120);
    expect(parseInt(el.querySelector('.rl-td[data-key="prompt"]').style.width, 10)).toBe(after);
    expect(before).not.toBe(after);
    el.querySelector('.rl-th[data-key="prompt"] .rl-resize').dispatchEvent(new MouseEvent("dblclick", { bubbles: true }));
    await frame();
    expect(parseInt(el.querySelector('.rl-th[data-key="prompt"]').style.width, 10)).toBe(before);
  });

  it("wraps rows to three lines on one click", async () => {
    expect(el.querySelector(".rl-tr").style.height).toBe("30px");
    await change(".rl-wrap", true);
    expect(el.querySelector(".rl-tr").style.height).toBe("66px");
    expect(el.querySelector(".rl-tr").classList.contains("rl-wrapped")).toBe(true);
  });

  it("hides raw output and empty error columns by default, one click shows raw output", async () => {
    expect(el.querySelector(`.rl-th[data-key="${M}/raw_output"]`)).toBeNull();
    expect(el.querySelector(`.rl-th[data-key="${M}/error"]`)).toBeNull();
    await change(".rl-show-raw", true);
    expect(model.get("visible")).toContain(`${M}/raw_output`);
    el.querySelector(".rl-columns-btn").click();
    expect(el.querySelector(`.rl-popover input[data-key="${M}/error"]`).parentElement.textContent).toContain("(empty)");
  });

  it("copies the open case as JSON from the drill-down", async () => {
    const writes = [];
    Object.defineProperty(navigator, "clipboard", { value: { writeText: (t) => (writes.push(t), Promise.resolve()) }, configurable: true });
    el.querySelectorAll(".rl-tr")[2].click();
    model.set("detail", { heading: "case 3 of 50", fields: [{ name: "response", text: `**bold** ${XSS}` }], images: [], metrics: [{ name: M, kind: "pointwise", score: 0.5, criteria: [], raw_output: ["r"], cached: true, tokens: 10, attempts: 0, latency: 0 }] });
    expect(el.querySelector(".rl-detail strong").textContent).toBe("bold");
    expect(el.querySelector(".rl-detail .rl-cached")).not.toBeNull();
    inert(el.querySelector(".rl-detail"));
    el.querySelector(".rl-copy-json").click();
    await tick();
    await tick();
    expect(JSON.parse(writes[0]).heading).toBe("case 3 of 50");
    expect(el.querySelector(".rl-copy-json").textContent).toBe("Copied ✓");
  });

  it("fills from the live trait while a run holds the kernel, with progress and errors", async () => {
    const n = requests.length;
    model.state.progress = { done: 3, total: 10, errors: 1, state: "running" };
    model.state.live = { rows: [[0, 0, "live row 0", 0.5], [1, 1, "live row 1", 0.25], [2, 2, XSS, null]], columns: ["__index__", "prompt", `${M}/score`], total: 3, charts: [{ metric: M, kind: "pointwise", scored: 2, histogram: [{ low: 0, high: 0.1, count: 2 }], criteria: [] }] };
    model.emit("change:progress");
    model.set("total", 3);
    await tick();
    await frame();
    expect(requests.slice(n).filter((r) => r.op === "page")).toEqual([]); // nothing asked of the busy kernel
    expect(el.querySelector(".rl-progress-text").textContent).toBe("3 of 10 rows · 1 error · running");
    expect(el.querySelector(".rl-export-csv").disabled).toBe(true);
    expect(el.querySelectorAll(".rl-tr").length).toBe(3);
    expect(el.querySelector('.rl-tr[data-pos="1"]').textContent).toContain("live row 1");
    expect(el.querySelector(".rl-charts svg.rl-hist")).not.toBeNull();
    inert(el.querySelector(".rl-rows"));
    // finished: the view pages from the kernel again
    model.state.live = null;
    model.state.progress = { done: 10, total: 10, errors: 1, state: "finished" };
    model.emit("change:progress");
    model.set("total", 50);
    await tick();
    await tick();
    await frame();
    expect(el.querySelector(".rl-progress-line").textContent).toBe("10 of 10 rows · 1 error · finished");
    expect(el.querySelector(".rl-export-csv").disabled).toBe(false);
    expect(requests.slice(n).some((r) => r.op === "page")).toBe(true);
  });
});

describe("calibration drill-down", () => {
  it("lists a cell's comparisons with their texts, a page at a time", () => {
    const el = document.createElement("div");
    const items = Array.from({ length: 8 }, (_, i) => ({ keys: { question_id: i }, first: "x", second: "y", judge: "B", human: "A", rater: "e1", texts: [{ name: "question", side: "human", text: `q${i} ${XSS}` }, { name: "judgment", side: "judge", text: "B is better" }] }));
    const model = new FakeModel({ summary: { pairs: 40, with_ties: { agree: 3, total: 5, rate: 0.6 }, without_ties: { agree: 3, total: 4, rate: 0.75 }, random_with_ties: 0.33, random_without_ties: 0.5 }, labels: ["A", "B", "tie"], sides: ["judge", "human"], confusion: [[2, 0, 0], [20, 1, 0], [0, 1, 0]], cell: ["B", "A"], items, cell_total: 20, item: -1, page: 0, page_size: 8, detail: null, criteria: [{ criterion: "accuracy", mean_diff: 0.25, ci_low: -0.1, ci_high: 0.6, tendency: "over" }] });
    calibration.render({ model, el });
    const listed = el.querySelectorAll(".rl-item");
    expect(listed.length).toBe(8);
    expect(listed[0].querySelector(".rl-item-text").textContent).toContain("q0 <img");
    expect(listed[0].textContent).toContain("judge B");
    expect(listed[0].textContent).toContain("human A");
    expect(el.querySelector(".rl-pager .rl-pos").textContent).toBe("1–8 of 20");
    el.querySelector(".rl-pager .rl-next").click();
    expect(model.get("page")).toBe(1);
    el.querySelector(".rl-pager-bottom .rl-next").click();
    expect(model.get("page")).toBe(2);
    // the forest plot has an axis with ticks
    expect([...el.querySelectorAll(".rl-forest-axis .rl-tick")].length).toBe(5);
    inert(el);
  });
});

describe("pairwise view", () => {
  it("shows win/tie/loss bars with intervals and renders the answers as Markdown", () => {
    const el = document.createElement("div");
    const model = new FakeModel({
      case: { heading: "pair 1 of 3", fields: [], images: [], candidate: { name: "response", text: "**Primary Damage:** roof" }, baseline: { name: "baseline_model_response", text: XSS }, metric: { name: "pw", kind: "pairwise", score: 0.5, pair_rows: [], criteria: [] } },
      index: 0,
      count: 3,
      totals: [{ metric: "pw", scored: 3, win_rate: 0.5, win_rate_low: 0.2, win_rate_high: 0.8, tie_rate: 0.2, tie_rate_low: 0.05, tie_rate_high: 0.5, loss_rate: 0.3, loss_rate_low: 0.1, loss_rate_high: 0.6 }],
      markdown: true,
    });
    pairwise.render({ model, el });
    expect(el.querySelectorAll(".rl-totals svg.rl-wtl path.rl-whisker").length).toBe(3);
    expect(el.querySelector(".rl-cand strong").textContent).toBe("Primary Damage:");
    expect(el.querySelector(".rl-base").textContent).toContain("<script>");
    inert(el);
  });
});

describe("Markdown under hostile input", () => {
  it("treats a wall of brackets as plain text (bounded patterns: no quadratic scan)", () => {
    const nasty = "[".repeat(100_000) + "*".repeat(50_000) + "`".repeat(20_000);
    expect(looksLikeMarkdown(nasty)).toBe(false);
    const box = textBlock(nasty + "\n\n**x**", true);
    expect(box.textContent.length).toBeGreaterThan(100_000);
  });
});
