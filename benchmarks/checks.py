"""A rubric of code checks only on 10,000 rows: no judge call, and how long ``evaluate`` takes.

The rubric has the six built-in kinds (regex, contains, not_contains, is_json, json_schema,
max_words) plus a Python function; ``evaluate`` runs with a fake judge server on 127.0.0.1
so any call that leaked would be counted. Prints the median wall time over runs (whole
``evaluate``: data to cases, checks, scoring, the result table) and the calls made, for that
rubric and for a typical one of three cheap checks (regex, contains, max_words); beside them,
the same rows through ``exact_match`` (a computation metric that existed before), the
pipeline's floor on this machine at this load. Target (issue 33): 0 calls, under 2 s for
10,000 rows.

    .venv/bin/python benchmarks/checks.py [--rows 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import warnings

import pandas as pd

import rubriclab as rl
from rubriclab.testing import FakeJudgeServer


def rubric() -> rl.Rubric:
    def no_shouting(response: str) -> tuple[bool, str]:
        caps = sum(w.isupper() and len(w) > 2 for w in response.split())
        return caps == 0, f"{caps} shouted words"

    schema = {"type": "object", "required": ["days"], "properties": {"days": {"type": "integer"}}}
    return rl.Rubric(
        criteria=[
            rl.Criterion.check("regex", r"\b30 days\b", name="window", weight=2, critical=True),
            rl.Criterion.check("contains", "refund", name="refund"),
            rl.Criterion.check("not_contains", "guarantee", name="no_promise"),
            rl.Criterion.check("is_json", name="json"),
            rl.Criterion.check("json_schema", schema, name="shape"),
            rl.Criterion.check("max_words", 40, name="short"),
            rl.Criterion.check(no_shouting, name="calm"),
        ],
        pass_mark=0.7,
    )


def frame(n: int) -> pd.DataFrame:
    answers = [
        json.dumps({"days": 30, "note": "refund within 30 days"}),
        json.dumps({"days": "thirty", "note": "we guarantee a refund"}),
        "You can get a refund within 30 days.",
        "NO REFUNDS EVER, we guarantee it " + "really " * 50,
    ]
    return pd.DataFrame(
        {
            "prompt": ["What is the refund window?"] * n,
            "response": [answers[i % 4] for i in range(n)],
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    df = frame(args.rows).assign(reference="x")
    three = rl.Rubric(
        criteria=[
            rl.Criterion.check("regex", r"\b30 days\b", name="window", critical=True),
            rl.Criterion.check("contains", "refund", name="refund"),
            rl.Criterion.check("max_words", 40, name="short"),
        ],
        pass_mark=0.7,
    )
    runs = {
        "7 code checks (all kinds + a function)": rl.metrics.RubricMetric(
            rubric=rubric(), name="p"
        ),
        "3 code checks (regex, contains, max_words)": rl.metrics.RubricMetric(
            rubric=three, name="p"
        ),
        "exact_match (floor: no checks)": rl.metrics.exact_match,
    }
    print(f"rows: {args.rows:,}")
    with FakeJudgeServer() as server:
        judge = rl.Judge(server.url, model="judge-model", cache=False)
        for label, metric in runs.items():
            times = []
            for _ in range(args.runs):
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = rl.evaluate(df, [metric], judge=judge)
                times.append(time.perf_counter() - start)
            scores = result.table[f"{metric.name}/score"]
            print(
                f"{label}: median {statistics.median(times):.2f} s over {args.runs} runs "
                f"({', '.join(f'{t:.2f}' for t in times)}); scored {int(scores.notna().sum()):,}; "
                f"judge calls so far: {len(server.requests)}"
            )
    print(f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())} (target < 2 s, 0 calls)")


if __name__ == "__main__":
    main()
