"""ResultTable on a 100,000-row result, measured in a real JupyterLab with Debian's chromium.

Prints, per run and as medians: time from the cell's output appearing to the first rows
visible, time to scroll to the last row, time to sort by score, and the bytes the kernel sent
to the browser (websocket frames) from running the cell to the first screen.
Targets (issue 8): each time < 1 s, first-screen bytes < 1 MB.

    .venv/bin/python benchmarks/views.py [--rows 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playwright.sync_api import sync_playwright  # noqa: E402
from tests._view_data import big_result  # noqa: E402
from tests.browser.lab import launch_args, open_notebook, run_cell, running_lab  # noqa: E402

WATCH = """(n) => {
  // timestamps (performance.now) of: the table's root appearing, its first real row
  const out = document.querySelectorAll('.jp-Notebook .jp-Cell')[n];
  window.__rl_bench = { output: null, rows: null };
  const check = () => {
    const b = window.__rl_bench;
    if (b.output === null && out.querySelector('.rl-table')) b.output = performance.now();
    if (b.rows === null && out.querySelector('.rl-table .rl-tr:not(.rl-loading)')) {
      b.rows = performance.now();
      obs.disconnect();
    }
  };
  const obs = new MutationObserver(check);
  obs.observe(out, { childList: true, subtree: true });
}"""

UNTIL = """([n, selector, action]) => new Promise((resolve, reject) => {
  const out = document.querySelectorAll('.jp-Notebook .jp-Cell')[n];
  const t0 = performance.now();
  const done = () => out.querySelector(selector);
  const step = () => {
    if (done()) return resolve(performance.now() - t0);
    if (performance.now() - t0 > 20000) return reject(new Error('timed out waiting for ' + selector));
    requestAnimationFrame(step);
  };
  if (action === 'scroll-end') { const vp = out.querySelector('.rl-table .rl-viewport'); vp.scrollTop = vp.scrollHeight; }
  if (action === 'scroll-top') { const vp = out.querySelector('.rl-table .rl-viewport'); vp.scrollTop = 0; }
  if (action === 'sort-score') out.querySelector('.rl-table .rl-th[data-key="support/score"]').click();
  step();
})"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    n = args.rows
    scores = big_result(n).table["support/score"]
    lowest = int(scores.reset_index(drop=True).idxmin())  # NaN-aware: the first smallest score

    cells = [
        f"from tests._view_data import big_result\nimport rubriclab as rl\nbig = big_result({n})",
        "rl.ResultTable(big)",
    ]
    received = {"bytes": 0, "counting": False}

    def on_ws(ws: Any) -> None:
        def frame(payload: str | bytes) -> None:
            if received["counting"]:
                received["bytes"] += len(payload.encode() if isinstance(payload, str) else payload)

        ws.on("framereceived", frame)

    rows: list[dict[str, float]] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_lab(Path(tmp)) as lab,
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(**launch_args())
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("websocket", on_ws)
        name = lab.write_notebook("bench.ipynb", cells)
        open_notebook(page, lab, name)
        run_cell(page, 0)
        page.wait_for_function(
            "() => /\\[\\d+\\]/.test(document.querySelectorAll('.jp-InputArea-prompt')[0].textContent)",
            timeout=120_000,
        )
        for _ in range(args.runs):
            page.evaluate(WATCH, 1)
            received["bytes"], received["counting"] = 0, True
            started = time.perf_counter()
            run_cell(page, 1)
            page.wait_for_function("() => window.__rl_bench.rows !== null", timeout=60_000)
            received["counting"] = False
            wall = time.perf_counter() - started
            marks = page.evaluate("() => window.__rl_bench")
            scroll = page.evaluate(
                UNTIL, [1, f'.rl-tr[data-pos="{n - 1}"]:not(.rl-loading)', "scroll-end"]
            )
            page.evaluate(UNTIL, [1, '.rl-tr[data-pos="0"]:not(.rl-loading)', "scroll-top"])
            sort = page.evaluate(
                UNTIL,
                [1, f'.rl-tr[data-pos="0"][data-row="{lowest}"]:not(.rl-loading)', "sort-score"],
            )
            rows.append(
                {
                    "first_rows_s": (marks["rows"] - marks["output"]) / 1000,
                    "run_to_rows_s": wall,
                    "scroll_end_s": scroll / 1000,
                    "sort_s": sort / 1000,
                    "first_screen_kb": received["bytes"] / 1024,
                }
            )
        browser.close()

    print(f"ResultTable, {n:,} rows, JupyterLab + chromium ({args.runs} runs)")
    header = [
        "first rows visible",
        "run cell -> rows",
        "scroll to last row",
        "sort by score",
        "first screen",
    ]
    print(" | ".join(f"{h:>20}" for h in header))
    for r in rows:
        print(
            f"{r['first_rows_s']:>19.3f}s | {r['run_to_rows_s']:>19.3f}s | {r['scroll_end_s']:>19.3f}s | "
            f"{r['sort_s']:>19.3f}s | {r['first_screen_kb']:>17.1f} KB"
        )
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    print(
        f"median: first rows visible {med['first_rows_s']:.3f} s (target < 1 s); "
        f"scroll to last row {med['scroll_end_s']:.3f} s (< 1 s); sort by score {med['sort_s']:.3f} s "
        f"(< 1 s); first screen {med['first_screen_kb']:.1f} KB (< 1024 KB); "
        f"run cell -> rows {med['run_to_rows_s']:.3f} s"
    )


if __name__ == "__main__":
    main()
