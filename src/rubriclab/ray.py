"""Ray Data executor: ``rubriclab.ray.evaluate(dataset, metrics, judge=j)`` -> a Dataset of rows.

Every actor of a pool holds one judge (one engine: one connection pool, one cache, one
concurrency limit) and judges whole batches with the ordinary ``evaluate``, so a row comes out
exactly as a local run makes it; ``max_concurrency`` bounds each actor's calls in flight and
``concurrency`` the number of actors. Nested fields come back as the same JSON text a saved
result holds, so the blocks are plain Arrow columns and ``write_parquet`` just works.
``summary`` folds the result columns with Ray aggregations into the summary a local run shows.

The executor is one function from a pandas frame to a pandas frame (``judge_frame``) plus a
summary over aggregates; a Spark ``mapInPandas`` executor would reuse both. Needs the optional
extra: ``pip install 'rubriclab[ray]'``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from .columns import PASSED, SCORE, TOKENS, col
from .evaluation.run import check_metrics
from .evaluation.stream import RunningSummary, judge_frame

if TYPE_CHECKING:
    from .judges import Judge
    from .metrics import Metric

__all__ = ["evaluate", "summary"]


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise ImportError("rubriclab.ray needs Ray Data: pip install 'rubriclab[ray]'") from None
    return ray


class _Evaluator:
    """One per actor: the judge is rebuilt here (its key stays a reference to its env var)."""

    def __init__(self, metrics: Sequence[Any], judge: Judge, options: Mapping[str, Any]) -> None:
        self.metrics = list(metrics)
        self.judge = judge
        self.options = dict(options)

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        return judge_frame(batch, self.metrics, self.judge, **self.options)


def evaluate(
    dataset: Any,
    metrics: Sequence[Metric],
    *,
    judge: Judge | str | None = None,
    concurrency: int = 2,
    max_concurrency: int | None = None,
    batch_size: int = 1000,
    num_cpus: float = 0.5,
    **options: Any,
) -> Any:
    """Judge every row of a Ray ``Dataset``; returns a lazy ``Dataset`` of result rows.

    ``concurrency``: actors in the pool; ``max_concurrency``: judge calls in flight per actor
    (default: the judge's own); ``num_cpus`` per actor (judging waits on the network, so a
    fraction of a core is enough). ``options`` go to ``evaluate`` (``mapping``, ``model``).
    """
    ray = _ray()
    from .judges import get_judge

    if not isinstance(dataset, ray.data.Dataset):
        raise TypeError(
            f"rubriclab.ray.evaluate takes a ray.data.Dataset, got {type(dataset).__name__}; "
            "use rl.evaluate for DataFrames and files"
        )
    check_metrics(metrics)
    if not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be an integer >= 1, got {concurrency!r}")
    judge_obj = get_judge(judge)
    if max_concurrency is not None:
        judge_obj = judge_obj.with_options(max_concurrency=max_concurrency)
    return dataset.map_batches(
        _Evaluator,
        fn_constructor_args=(list(metrics), judge_obj, options),
        batch_format="pandas",
        batch_size=batch_size,
        concurrency=concurrency,
        num_cpus=num_cpus,
    )


def summary(results: Any, metrics: Sequence[Metric]) -> pd.DataFrame:
    """Per metric, what ``EvalResult.summary`` shows (n, errors, mean, std, rates with Wilson
    intervals, tokens), computed with Ray aggregations rather than by collecting the rows.

    Ray datasets are lazy: summing a dataset that ``evaluate`` returned runs its judging again.
    When the rows are also written or used elsewhere, pass ``results.materialize()``."""
    _ray()
    from ray.data.aggregate import Count, Mean, Std, Sum

    names = [m.name for m in metrics]
    kinds = {m.name: m.kind for m in metrics}  # how each metric's scores summarise
    marked = results.map_batches(_indicators, fn_kwargs={"names": names}, batch_format="pandas")
    aggs: list[Any] = [Count()]
    for name in names:
        aggs += [
            Count(on=col(name, SCORE), ignore_nulls=True, alias_name=f"{name}|scored"),
            Mean(on=col(name, SCORE), ignore_nulls=True, alias_name=f"{name}|mean"),
            Std(on=col(name, SCORE), ddof=1, ignore_nulls=True, alias_name=f"{name}|std"),
            Sum(on=f"{name}|pass_k", alias_name=f"{name}|pass_k"),
            Sum(on=f"{name}|pass_n", alias_name=f"{name}|pass_n"),
            Sum(on=f"{name}|win", alias_name=f"{name}|win"),
            Sum(on=f"{name}|tie", alias_name=f"{name}|tie"),
            Sum(on=f"{name}|loss", alias_name=f"{name}|loss"),
            Sum(on=col(name, TOKENS), alias_name=f"{name}|tokens"),
        ]
    totals = marked.aggregate(*aggs)
    n = int(totals["count()"])
    rows = []
    for name in names:
        scored = int(totals[f"{name}|scored"] or 0)
        std = totals[f"{name}|std"]
        running = RunningSummary(
            n=n,
            scored=scored,
            mean=float(totals[f"{name}|mean"] or 0.0),
            m2=float(std) ** 2 * (scored - 1) if std is not None and scored >= 2 else 0.0,
            pass_k=0 if kinds[name] == "pairwise" else int(totals[f"{name}|pass_k"] or 0),
            pass_n=0 if kinds[name] == "pairwise" else int(totals[f"{name}|pass_n"] or 0),
            pairwise=kinds[name] == "pairwise",
            win=int(totals[f"{name}|win"] or 0),
            tie=int(totals[f"{name}|tie"] or 0),
            loss=int(totals[f"{name}|loss"] or 0),
        )
        flat = running.summary().as_flat_dict()
        flat["kind"] = kinds[name]
        flat["tokens"] = int(totals[f"{name}|tokens"] or 0)
        rows.append(pd.Series(flat, name=name))
    frame = pd.DataFrame(rows)
    frame.index.name = "metric"
    return frame


def _indicators(batch: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    """Per-row 0/1 columns the sums need: pass flags (scored rows only) and pairwise choices."""
    out = pd.DataFrame(index=batch.index)
    for name in names:
        score = pd.to_numeric(batch[col(name, SCORE)], errors="coerce")
        scored = score.notna()
        passed = batch.get(col(name, PASSED))
        if passed is None:
            flags = pd.Series([None] * len(batch), index=batch.index, dtype=object)
        else:
            flags = passed.astype(object)
        has_flag = scored & flags.notna()
        out[f"{name}|pass_n"] = has_flag.astype("int64")
        out[f"{name}|pass_k"] = (has_flag & flags.fillna(False).astype(bool)).astype("int64")
        out[f"{name}|win"] = (score > 0).astype("int64")
        out[f"{name}|tie"] = (score == 0).astype("int64")
        out[f"{name}|loss"] = (score < 0).astype("int64")
        out[col(name, SCORE)] = score
        tokens = (
            batch[col(name, TOKENS)] if col(name, TOKENS) in batch else pd.Series(0, batch.index)
        )
        out[col(name, TOKENS)] = pd.to_numeric(tokens).fillna(0)
    return out
