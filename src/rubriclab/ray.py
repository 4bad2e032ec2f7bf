"""Ray Data executor: ``rubriclab.ray.evaluate(dataset, metrics, judge=j)`` -> a Dataset of rows.

Every actor of a pool holds one judge (one engine: one connection pool, one cache, one
concurrency limit) and judges whole batches with the ordinary ``evaluate``, so a row comes out
exactly as a local run makes it; ``max_concurrency`` bounds each actor's calls in flight and
``concurrency`` the number of actors. Nested fields come back as the same JSON text a saved
result holds, so the blocks are plain Arrow columns and ``write_parquet`` just works.
``summary`` summarises each block on the workers and merges the partial summaries into the
summary a local run shows.

The executor is one function from a pandas frame to a pandas frame (``judge_frame``) plus a
mergeable running summary (``RunningSummary``); a Spark ``mapInPandas`` executor would reuse both. Needs the optional
extra: ``pip install 'rubriclab[ray]'``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from .columns import TOKENS, col
from .evaluation.run import check_metrics
from .evaluation.stream import RunningSummary, judge_frame
from .judges import get_judge

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
        # a fixed pool (``map_batches(concurrency=)`` is deprecated since Ray 2.60)
        compute=ray.data.ActorPoolStrategy(size=concurrency),
        num_cpus=num_cpus,
    )


def summary(results: Any, metrics: Sequence[Metric]) -> pd.DataFrame:
    """Per metric, what ``EvalResult.summary`` shows (n, errors, mean, std, rates with Wilson
    intervals, tokens), computed where the rows are rather than by collecting them.

    Each block is summarised on the workers (counts, mean and M2 per metric: one small row per
    block) and the driver merges those partial summaries with Chan's parallel update, the way a
    streamed local run merges its chunks; only one row per block crosses to the driver. (Ray's
    hash ``aggregate`` would give the same sums but starts a shuffle with its own worker
    processes, which costs more than it saves here.)

    Ray datasets are lazy: summing a dataset that ``evaluate`` returned runs its judging again.
    When the rows are also written or used elsewhere, pass ``results.materialize()``."""
    _ray()
    names = [m.name for m in metrics]
    kinds = {m.name: m.kind for m in metrics}  # how each metric's scores summarise
    pairwise = [name for name in names if kinds[name] == "pairwise"]
    partials = results.map_batches(
        _partial_summaries,
        fn_kwargs={"names": names, "pairwise": pairwise},
        batch_format="pandas",
        batch_size=None,
    ).take_all()
    rows = []
    for name in names:
        running = RunningSummary(pairwise=name in pairwise)
        tokens = 0
        for part in partials:
            running.merge(RunningSummary.from_dict(json.loads(part[f"{name}|summary"])))
            tokens += int(part[f"{name}|tokens"])
        flat = running.summary().as_flat_dict()
        found = running.agreement()
        if found is not None:  # a judge panel: how far its judges agree, as EvalResult.summary
            flat.update({k: v for k, v in found.items() if k not in ("judges", "units")})
        flat["kind"] = kinds[name]
        flat["tokens"] = tokens
        rows.append(pd.Series(flat, name=name))
    frame = pd.DataFrame(rows)
    frame.index.name = "metric"
    return frame


def _partial_summaries(
    batch: pd.DataFrame, names: Sequence[str], pairwise: Sequence[str]
) -> pd.DataFrame:
    """One row for a block: each metric's running summary (as JSON) and its token total."""
    row: dict[str, Any] = {}
    for name in names:
        running = RunningSummary(pairwise=name in pairwise)
        running.add_frame(batch, name)
        row[f"{name}|summary"] = json.dumps(running.to_dict())
        has_tokens = col(name, TOKENS) in batch
        tokens = batch[col(name, TOKENS)] if has_tokens else pd.Series(0, batch.index)
        row[f"{name}|tokens"] = int(pd.to_numeric(tokens).fillna(0).sum())
    return pd.DataFrame([row])
