"""rl.Workbench on a 1,000-row run against the fake judge server (real HTTP on 127.0.0.1).

Prints, each with the calls the server really received:
  * v1 with a rubric generated per row (1,000 generations + 1,000 critiques);
  * an unchanged re-judge (goal: 0 calls);
  * one criterion of one row's generated checklist edited (goal: exactly 1 call, and the view's
    state, i.e. the new verdict and the comparison, within 1 s after that answer arrived);
  * a shared rubric edited (goal: exactly N calls, the table filling live: progress updates);
  * control: the same edited table through rl.evaluate with a judge without a cache (what
    the cache saves: every row is sent again).

    .venv/bin/python benchmarks/workbench.py [--rows 1000]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import pandas as pd

import rubriclab as rl
from rubriclab.testing import FakeJudgeServer


def _cases(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": [f"c{i:04d}" for i in range(n)],
            "prompt": [f"Summarise meeting {i}: the deadline is August 15th." for i in range(n)],
            "response": [
                "The deadline is August 15th." if i % 2 else "We met and talked." for i in range(n)
            ],
        }
    )


def _judge(server: FakeJudgeServer, **kw: Any) -> rl.Judge:
    return rl.Judge(server.url, model="judge-model", max_retries=0, max_concurrency=64, **kw)


def _line(label: str, calls: int, seconds: float, extra: str = "") -> None:
    print(f"{label:<58} {calls:>6,} calls  {seconds:7.2f} s  {extra}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    n = parser.parse_args().rows
    print(f"rl.Workbench, {n:,} rows, fake judge server on 127.0.0.1 (calls counted by the server)")
    with FakeJudgeServer() as server:
        # -- a rubric generated per row --------------------------------------------------------
        wb = rl.Workbench(_cases(n), [rl.metrics.GENERAL_QUALITY], judge=_judge(server))
        start = time.perf_counter()
        v1 = wb.rejudge()
        _line("v1: generate + judge every row", server.calls, time.perf_counter() - start)
        print(f"{'':<58} (the reused rows of later versions are v1's answers)")
        assert v1.calls + v1.cached > 0

        server.reset()
        start = time.perf_counter()
        wb.rejudge()
        _line("unchanged re-judge (goal 0 calls)", server.calls, time.perf_counter() - start)

        server.reset()
        row = n // 2
        rubric = wb.loop.rubric_of(rl.evaluation.loop.Slot("general_quality", row))
        data = rubric.to_dict()
        data["criteria"][0]["description"] = "Does the response give the exact date?"
        wb.edit(rl.Rubric.from_dict(data), metric="general_quality", row=row)
        start = time.perf_counter()
        v3 = wb.rejudge()
        shown = time.perf_counter()  # the view's traits (verdicts, comparison) are set by now
        answered = max((r.finished or 0.0) for r in server.log) if server.log else float("nan")
        _line(
            "one row's generated checklist edited (goal exactly 1 call)",
            server.calls,
            shown - start,
            f"answer -> view state {1000 * (shown - answered):.0f} ms (goal < 1,000 ms); "
            f"changed rows {len(v3.changed)}; compared {wb.names}",
        )

        # -- a shared rubric -------------------------------------------------------------------
        server.reset()
        rubric = rl.Rubric.checklist(
            ["Does the response mention the deadline?", "Is it a summary?"], pass_mark=1.0
        )
        metric = rl.metrics.RubricMetric(name="notes", rubric=rubric)
        shared = rl.Workbench(_cases(n), [metric], judge=_judge(server))
        shared.rejudge()
        server.reset()
        updates: list[int] = []
        shared.observe(lambda c: updates.append(int(c["new"].get("done", 0))), "progress")
        filled: list[tuple[float, int]] = []  # (when, rows shown done) per push of the list

        def on_rows(change: Any) -> None:
            done = sum(1 for r in change["new"] if r.get("state") == "done")
            if done:
                filled.append((time.perf_counter(), done))

        shared.observe(on_rows, "rows")
        shared.edit(
            rl.Rubric.checklist(["Does the response give the exact date?", "Is it a summary?"]),
            metric="notes",
        )
        start = time.perf_counter()
        shared.rejudge()
        _line(
            f"shared rubric edited (goal exactly {n:,} calls)",
            server.calls,
            time.perf_counter() - start,
            f"table filled live in {len(updates) - 1} progress updates",
        )
        first_answer = min((r.finished or float("inf")) for r in server.log)
        print(
            f"{'':<58} result list: first rows shown {1000 * (filled[0][0] - first_answer):.0f} ms"
            f" after the first answer; {len(filled)} live push(es) of the list"
            if filled
            else f"{'':<58} result list: no rows shown before the version (not live)"
        )
        server.reset()
        start = time.perf_counter()
        shared.rejudge()
        _line("unchanged re-judge (goal 0 calls)", server.calls, time.perf_counter() - start)

        # -- control: no cache -----------------------------------------------------------------
        server.reset()
        edited = metric.with_options(rubric=shared.loop.rubric_of(rl.evaluation.loop.Slot("notes")))
        start = time.perf_counter()
        rl.evaluate(_cases(n), [edited], judge=_judge(server, cache=False))
        _line(
            "control: same rubric, rl.evaluate, judge cache=False",
            server.calls,
            time.perf_counter() - start,
        )


if __name__ == "__main__":
    main()
