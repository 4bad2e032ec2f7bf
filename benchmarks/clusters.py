"""Failure clusters on 1,000 failing rows, and an arena's ranking on 10 candidates.

Prints medians over runs of ``result.failure_clusters`` on a result whose 1,000 failing rows
carry judge-like reasons (8 causes worded several ways, over 2 criteria), and of the
Bradley-Terry ranking with 1,000 bootstrap refits on 10 candidates x 500 cases (all pairs, the
judging itself excluded). Target (issue 34): 1,000 failing rows cluster in under 2 s.

    .venv/bin/python benchmarks/clusters.py [--rows 1000] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

import rubriclab as rl
from rubriclab.ranking.arena import _rank
from rubriclab.result import EvalResult, MetricInfo

CAUSES = {
    "accuracy": [
        "says the refund window is {n} days instead of 30",
        "invents a restocking fee of {n} percent",
        "quotes the wrong shipping time of {n} days",
        "names a warranty of {n} years that does not exist",
    ],
    "tone": [
        "rude and dismissive toward the customer in sentence {n}",
        "blames the customer for the problem, line {n}",
        "uses jargon the customer will not follow, term {n}",
        "ends abruptly without offering help, turn {n}",
    ],
}
TAILS = ["", " This is wrong.", " The policy says otherwise.", " Clearly a mistake here."]


def _failing(n: int, seed: int) -> EvalResult:
    rng = np.random.default_rng(seed)
    rubric = rl.Rubric.analytic(
        {
            "accuracy": {"weight": 0.6, "levels": {1: "wrong", 2: "vague", 3: "precise"}},
            "tone": {"weight": 0.4, "levels": {1: "rude", 2: "stiff", 3: "warm"}},
        },
        pass_mark=0.7,
    )
    rows = []
    for i in range(n):
        criterion = "accuracy" if rng.random() < 0.6 else "tone"
        cause = CAUSES[criterion][int(rng.integers(4))].format(n=int(rng.integers(2, 90)))
        reason = cause + TAILS[int(rng.integers(4))]
        levels = {"accuracy": 3, "tone": 3, criterion: 1}
        rows.append(
            {
                "prompt": f"question {i}",
                "response": f"answer {i}",
                "m/score": 0.3,
                "m/passed": False,
                "m/criteria": [
                    {"name": c, "level": lv, "evidence": reason if c == criterion else "fine"}
                    for c, lv in levels.items()
                ],
                "m/rationale": "Levels applied.",
                "m/error": None,
            }
        )
    return EvalResult(pd.DataFrame(rows), [MetricInfo("m", "pointwise", rubric)], judge="synthetic")


def _pairs(k: int, cases: int, seed: int) -> EvalResult:
    rng = np.random.default_rng(seed)
    strength = np.linspace(1.5, -1.5, k)
    rows = []
    names = [f"model_{i}" for i in range(k)]
    for case in range(cases):
        for a in range(k):
            for b in range(a + 1, k):
                p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
                u = rng.random()
                score = 0.0 if u < 0.15 else (0.5 if rng.random() < p else -0.5)
                rows.append(
                    {
                        "arena/case": case,
                        "arena/a": names[a],
                        "arena/b": names[b],
                        "m/score": score,
                        "m/swap_consistent": True,
                        "m/criteria": [],
                    }
                )
    return EvalResult(pd.DataFrame(rows), [MetricInfo("m", "pairwise")], judge="synthetic")


def _timed(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    result = _failing(args.rows, seed=0)
    fc = result.failure_clusters("m")
    took = _timed(lambda: result.failure_clusters("m"), args.runs)
    print(
        f"failure_clusters: {args.rows} failing rows -> {len(fc.clusters)} clusters "
        f"(8 causes planted), median {took:.3f} s (goal < 2 s: {'met' if took < 2 else 'NOT met'})"
    )
    print(fc.clusters[["criterion", "name", "size"]].head(10).to_string(index=False))

    k, cases = 10, 500
    pairs = _pairs(k, cases, seed=1)
    names = [f"model_{i}" for i in range(k)]
    took = _timed(lambda: _rank(pairs, "m", names, cases, 1000, 0.95, 0.01, 0), args.runs)
    print(
        f"arena ranking: {k} candidates x {cases} cases ({len(pairs.table)} comparisons), "
        f"1,000 bootstrap refits: median {took:.3f} s"
    )


if __name__ == "__main__":
    main()
