"""rl.compare on 100,000 paired cases: the paired bootstrap (10,000 resamples) and the whole call.

Prints medians over runs of: the bootstrap alone on judge-like scores (few distinct values,
exact multinomial resampling), on continuous scores (ROUGE-like, stratified resampling), and a
full ``rl.compare`` of two 100k-row results (one metric with pass flags and two criteria).
Target (issue 15): the bootstrap < 1 s for 100k pairs.

    .venv/bin/python benchmarks/compare.py [--pairs 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

import rubriclab as rl
from rubriclab.comparison import paired_bootstrap
from rubriclab.result import EvalResult, MetricInfo


def _timed(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _result(n: int, seed: int) -> EvalResult:
    rng = np.random.default_rng(seed)
    levels = rng.integers(1, 5, size=(n, 2))
    scores = (levels.sum(axis=1) - 2) / 6
    table = pd.DataFrame({"id": np.arange(n).astype(str)})
    table["m/score"] = scores
    table["m/passed"] = pd.Series(scores >= 0.5, dtype=object)
    table["m/error"] = pd.Series([None] * n, dtype=object)
    table["m/criteria"] = pd.Series(
        [
            [{"name": "accuracy", "level": int(x)}, {"name": "tone", "level": int(y)}]
            for x, y in levels
        ],
        dtype=object,
    )
    return EvalResult(table, [MetricInfo("m")], judge="bench")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    n = args.pairs
    rng = np.random.default_rng(0)
    judge_like = (rng.integers(0, 7, n) - rng.integers(0, 7, n)) / 6
    continuous = rng.random(n) - rng.random(n)
    print(f"paired bootstrap, 10,000 resamples, {n:,} pairs (median of {args.runs}):")
    t = _timed(lambda: paired_bootstrap(judge_like), args.runs)
    print(f"  judge-like scores ({len(np.unique(judge_like))} distinct): {t:.3f} s")
    t = _timed(lambda: paired_bootstrap(continuous), args.runs)
    print(f"  continuous scores ({len(np.unique(continuous)):,} distinct): {t:.3f} s")
    a, b = _result(n, 1), _result(n, 2)
    t = _timed(lambda: rl.compare(a, b), args.runs)
    print(f"rl.compare, {n:,} cases, 1 metric with pass flags and 2 criteria: {t:.3f} s")


if __name__ == "__main__":
    main()
