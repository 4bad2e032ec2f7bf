// Virtual-scroll arithmetic and the page cache for the result table (no DOM: unit-tested).

/** Browsers cap element heights (~16M px in some); past this the scrollbar is scaled. */
export const MAX_SCROLL_PX = 8_000_000;

/**
 * Which rows to draw for a scroll position.
 * @param {{ scrollTop: number, bodyHeight: number, rowHeight: number, total: number }} p
 * @returns {{ first: number, last: number, offset: number, height: number }}
 *   rows [first, last) and `offset`: the px of the first drawn row above the viewport top;
 *   `height` is the spacer height to give the scroll area.
 */
export function visibleRange({ scrollTop, bodyHeight, rowHeight, total }) {
  const full = total * rowHeight;
  const height = Math.min(full, MAX_SCROLL_PX);
  const realRange = Math.max(full - bodyHeight, 0);
  const scaledRange = Math.max(height - bodyHeight, 0);
  const top = Math.min(Math.max(scrollTop, 0), scaledRange);
  const v = scaledRange > 0 ? (top * realRange) / scaledRange : 0;
  const first = Math.min(Math.floor(v / rowHeight), Math.max(total - 1, 0));
  const offset = v - first * rowHeight;
  const count = Math.ceil((bodyHeight + offset) / rowHeight) + 1;
  return { first, last: Math.min(total, first + count), offset, height };
}

/** The scrollTop that shows row `i` at the top. */
export function scrollTopFor(i, { bodyHeight, rowHeight, total }) {
  const full = total * rowHeight;
  const height = Math.min(full, MAX_SCROLL_PX);
  const realRange = Math.max(full - bodyHeight, 0);
  const scaledRange = Math.max(height - bodyHeight, 0);
  if (realRange === 0) return 0;
  return (Math.min(i * rowHeight, realRange) * scaledRange) / realRange;
}

/**
 * Pages of rows, fetched on demand, with a bound on how many are kept.
 * `fetch(start, stop)` resolves to `{rows, total}`; a new query (`reset`) drops everything and
 * ignores late answers to the old one.
 */
export class PageCache {
  /**
   * @param {(start: number, stop: number) => Promise<{rows: any[][], total: number}>} fetch
   * @param {{ pageSize?: number, maxPages?: number, onUpdate?: () => void, onError?: (e: Error) => void }} [opts]
   */
  constructor(fetch, { pageSize = 200, maxPages = 40, onUpdate = () => {}, onError = () => {} } = {}) {
    this.fetch = fetch;
    this.pageSize = pageSize;
    this.maxPages = maxPages;
    this.onUpdate = onUpdate;
    this.onError = onError;
    /** @type {Map<number, any[][]>} */
    this.pages = new Map();
    /** @type {Set<number>} */
    this.inflight = new Set();
    /** @type {number | null} */
    this.total = null;
    this.version = 0;
  }

  reset() {
    this.pages.clear();
    this.inflight.clear();
    this.total = null;
    this.version += 1;
  }

  /** @param {number} i */
  row(i) {
    const page = this.pages.get(Math.floor(i / this.pageSize));
    if (!page) return undefined;
    // keep recently used pages at the end of the Map (LRU order)
    return page[i % this.pageSize];
  }

  /** Make sure rows [first, last) are loaded or on their way. @param {number} first @param {number} last */
  ensure(first, last) {
    const p0 = Math.floor(first / this.pageSize);
    const p1 = Math.floor(Math.max(last - 1, first) / this.pageSize);
    const wanted = [];
    for (let p = p0; p <= p1; p++) wanted.push(p);
    for (const p of wanted) {
      const page = this.pages.get(p);
      if (page) {
        this.pages.delete(p);
        this.pages.set(p, page);
      } else this.load(p);
    }
  }

  /** @param {number} p */
  load(p) {
    if (this.inflight.has(p) || this.pages.has(p)) return Promise.resolve();
    if (this.total != null && p * this.pageSize >= this.total && p > 0) return Promise.resolve();
    const version = this.version;
    this.inflight.add(p);
    const start = p * this.pageSize;
    return this.fetch(start, start + this.pageSize).then(
      (reply) => {
        if (version !== this.version) return; // answer to an old query
        this.inflight.delete(p);
        this.total = reply.total;
        this.pages.set(p, reply.rows);
        while (this.pages.size > this.maxPages) {
          const oldest = this.pages.keys().next().value;
          if (oldest === undefined) break;
          this.pages.delete(oldest);
        }
        this.onUpdate();
      },
      (err) => {
        if (version !== this.version) return;
        this.inflight.delete(p);
        this.onError(err);
      },
    );
  }
}
