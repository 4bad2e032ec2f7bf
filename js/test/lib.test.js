import { describe, it, expect, vi } from "vitest";
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { h, safeUrl } from "../src/lib/dom.js";
import { fmtScore, fmtRate, fmtCost, fmtCount, verdictClass, pairwiseLabel } from "../src/lib/format.js";
import { visibleRange, scrollTopFor, PageCache, MAX_SCROLL_PX } from "../src/lib/grid.js";
import { createRpc } from "../src/lib/rpc.js";
import { FakeModel, tick } from "./fake_model.js";

describe("dom", () => {
  it("puts strings in as text, never as HTML", () => {
    const el = h("div", {}, "<img src=x onerror=alert(1)>", "<script>alert(1)</script>");
    expect(el.querySelector("img")).toBeNull();
    expect(el.querySelector("script")).toBeNull();
    expect(el.textContent).toBe("<img src=x onerror=alert(1)><script>alert(1)</script>");
  });
  it("drops javascript: and other unsafe URLs from src/href", () => {
    expect(safeUrl("javascript:alert(1)")).toBeNull();
    expect(safeUrl(" JaVaScRiPt:alert(1)")).toBeNull();
    expect(safeUrl("data:text/html;base64,PHNjcmlwdD4=")).toBeNull();
    expect(safeUrl("https://example.com/a.png")).toBe("https://example.com/a.png");
    expect(safeUrl("data:image/png;base64,iVBORw0KGgo=")).toBe("data:image/png;base64,iVBORw0KGgo=");
    const a = h("a", { href: "javascript:alert(1)" }, "x");
    expect(a.hasAttribute("href")).toBe(false);
  });
  it("has no HTML-string path anywhere in the sources", () => {
    const dir = path.resolve(__dirname, "../src");
    const files = [];
    const walk = (d) => readdirSync(d).forEach((f) => (statSync(path.join(d, f)).isDirectory() ? walk(path.join(d, f)) : f.endsWith(".js") && files.push(path.join(d, f))));
    walk(dir);
    expect(files.length).toBeGreaterThan(5);
    for (const f of files) {
      const text = readFileSync(f, "utf8");
      expect(text, f).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|new Function|\beval\(/);
    }
  });
});

describe("format", () => {
  it("shows pointwise scores as a percent and pairwise signed", () => {
    expect(fmtScore(0.75)).toBe("75.0%");
    expect(fmtScore(null)).toBe("—");
    expect(fmtScore(0.5, "pairwise")).toBe("+50.0%");
    expect(fmtScore(-1, "pairwise")).toBe("-100.0%");
    expect(fmtScore(0, "pairwise")).toBe("0.0%");
    expect(fmtScore(-1 / 6, "pairwise")).toBe("-16.7%");
  });
  it("formats rates with their intervals", () => {
    expect(fmtRate(0.62, 0.55, 0.69)).toBe("62% [55–69%]");
    expect(fmtRate(null, 0, 1)).toBe("—");
    expect(fmtCost(0.0012)).toBe("$0.0012");
    expect(fmtCost(12.5)).toBe("$12.50");
  });
  it("puts a count's noun in the right number", () => {
    expect(fmtCount(1, "row")).toBe("1 row");
    expect(fmtCount(0, "row")).toBe("0 rows");
    expect(fmtCount(1234, "error")).toBe("1,234 errors");
  });
  it("maps verdicts and pairwise scores to words", () => {
    expect(verdictClass("fail (accuracy below 2)")).toBe("rl-fail");
    expect(verdictClass("pass")).toBe("rl-pass");
    expect(verdictClass("baseline wins")).toBe("rl-loss");
    expect(pairwiseLabel(-0.5)).toBe("baseline better");
  });
});

describe("grid arithmetic", () => {
  it("draws the rows in view plus one", () => {
    const r = visibleRange({ scrollTop: 300, bodyHeight: 300, rowHeight: 30, total: 100_000 });
    expect(r.first).toBe(10);
    expect(r.last).toBe(21);
    expect(r.offset).toBe(0);
    expect(r.height).toBe(3_000_000);
  });
  it("reaches the very last row even when the scroll height is capped", () => {
    const total = 1_000_000;
    const p = { bodyHeight: 300, rowHeight: 30, total };
    const r = visibleRange({ ...p, scrollTop: 1e12 });
    expect(r.height).toBe(MAX_SCROLL_PX);
    expect(r.last).toBe(total);
    const top = scrollTopFor(total - 10, p);
    const again = visibleRange({ ...p, scrollTop: top });
    expect(again.first).toBe(total - 10);
  });
  it("handles an empty view", () => {
    const r = visibleRange({ scrollTop: 0, bodyHeight: 300, rowHeight: 30, total: 0 });
    expect(r.first).toBe(0);
    expect(r.last).toBe(0);
  });
});

describe("PageCache", () => {
  it("fetches each page once, keeps a bounded number, and ignores answers to an old query", async () => {
    const calls = [];
    let answer;
    const fetch = (start, stop) => {
      calls.push([start, stop]);
      return new Promise((resolve) => (answer = resolve));
    };
    const cache = new PageCache(fetch, { pageSize: 10, maxPages: 2 });
    cache.ensure(0, 5);
    cache.ensure(0, 5);
    expect(calls).toEqual([[0, 10]]);
    answer({ rows: Array.from({ length: 10 }, (_, i) => [i]), total: 100 });
    await tick();
    expect(cache.row(3)).toEqual([3]);
    expect(cache.total).toBe(100);
    cache.reset();
    cache.ensure(0, 5);
    const stale = answer;
    stale({ rows: [[42]], total: 1 });
    await tick();
    expect(cache.total).toBe(1); // this answer belongs to the current query
    cache.reset();
    cache.ensure(0, 1);
    const old = answer;
    cache.reset();
    old({ rows: [[7]], total: 5 });
    await tick();
    expect(cache.total).toBeNull();
    expect(cache.row(0)).toBeUndefined();
  });
  it("evicts the least recently used page", async () => {
    const cache = new PageCache((start) => Promise.resolve({ rows: [[start]], total: 1000 }), { pageSize: 10, maxPages: 2 });
    await cache.load(0);
    await cache.load(1);
    cache.ensure(0, 1); // touch page 0
    await cache.load(2);
    expect(cache.pages.has(0)).toBe(true);
    expect(cache.pages.has(1)).toBe(false);
  });
});

describe("rpc", () => {
  it("matches replies to requests and times out on its own", async () => {
    vi.useFakeTimers();
    const model = new FakeModel();
    const rpc = createRpc(model, { timeout: 1000 });
    const p1 = rpc.request("page", { start: 0 });
    const p2 = rpc.request("page", { start: 10 });
    const [m1, m2] = model.sent;
    expect(m1.type).toBe("rl:request");
    model.reply({ type: "rl:reply", id: m2.id, rows: ["b"] });
    await expect(p2).resolves.toMatchObject({ rows: ["b"] });
    vi.advanceTimersByTime(1001);
    await expect(p1).rejects.toThrow(/did not answer within 1 s/);
    expect(rpc.pending).toBe(0);
    model.reply({ type: "rl:reply", id: m1.id, rows: ["late"] }); // ignored
    const p3 = rpc.request("page", {});
    model.reply({ type: "rl:reply", id: model.sent[2].id, error: "no column 'x'" });
    await expect(p3).rejects.toThrow("no column 'x'");
    const p4 = rpc.request("page", {});
    rpc.dispose();
    await expect(p4).rejects.toThrow("view closed");
    expect(model.listenerCount()).toBe(0);
    vi.useRealTimers();
  });
});
