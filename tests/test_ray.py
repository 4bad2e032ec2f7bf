"""Ray Data executor on a local ``ray.init(num_cpus=2)``: same rows, same results as local."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.result import load_result

ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'rubriclab[ray]'")
import rubriclab.ray as rl_ray  # noqa: E402

# A local Ray is a dozen processes: GCS, raylet, agents, and ~8 workers (three Ray Data
# bookkeeping actors, one per judging actor, task workers), each paying ~4 s of CPU to import
# ray and ray.data before it does anything. Idle, this module takes about a minute; on two cores
# under `stress --cpu 2` that start-up alone takes minutes. Nothing here waits on a race or a
# sleep: the time is CPU-bound process start-up, so the limit is sized to that work.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

RUBRIC = rl.Rubric.analytic(
    {
        "accuracy": {"levels": {1: "wrong", 2: "partly right", 3: "right"}},
        "clarity": {"levels": {1: "unclear", 2: "clear enough", 3: "clear"}},
        "brevity": {"levels": {1: "rambling", 2: "fine", 3: "crisp"}},
    },
    pass_mark=0.5,
)
CHECK = rl.Rubric.checklist(["Is it correct?", "Is it short?", "Is it polite?"])
METRICS = [
    rl.metrics.RubricMetric(rubric=RUBRIC, name="quality"),
    rl.metrics.RubricMetric(rubric=CHECK, name="check"),
]
COLUMNS = [
    f"{m}/{f}"
    for m in ("quality", "check")
    for f in ("score", "verdict", "passed", "criteria", "error")
]


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    from rubriclab.testing.ray_local import start_local_ray

    start_local_ray(num_cpus=2)
    yield
    ray.shutdown()


def frame(rows: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": list(range(rows)),
            "prompt": [f"Question {i}: what is {i} + {i}?" for i in range(rows)],
            "response": [f"It is {2 * i}." if i % 4 else f"Perhaps {i}." for i in range(rows)],
        }
    )


def cells(table: pd.DataFrame) -> list[list[str]]:
    cols = ["id", "prompt", "response", *COLUMNS]
    return [[json.dumps(v, sort_keys=True, default=str) for v in row] for row in table[cols].values]


def test_ray_rows_and_summary_equal_a_local_run(local_ray: None, tmp_path: Path) -> None:
    data = frame(40)
    judge = rl.Judge("mock")
    local = rl.evaluate(data, METRICS, judge=judge)

    ds = ray.data.from_pandas(data).repartition(4)
    # materialised once: writing and summing a lazy dataset would each judge every row again
    results = rl_ray.evaluate(ds, METRICS, judge=judge, concurrency=2, batch_size=7).materialize()
    results.write_parquet(str(tmp_path / "out"))

    # the rows written by the actors, read back as a local result reads them
    parts = sorted((tmp_path / "out").glob("*.parquet"))
    assert parts
    got = pd.concat([pd.read_parquet(p) for p in parts]).sort_values("id").reset_index(drop=True)
    saved = tmp_path / "local.parquet"
    local.save(saved)
    flat_local = pd.read_parquet(saved)
    assert cells(got) == cells(flat_local)

    # Ray aggregations give the summary a local run shows
    summary = rl_ray.summary(results, METRICS)
    want = local.summary
    for col in ("n", "scored", "errors", "mean", "std", "pass_rate", "pass_rate_low", "tokens"):
        for name in ("quality", "check"):
            got, expected = summary.loc[name, col], want.loc[name, col]
            assert got == pytest.approx(expected, nan_ok=True), (name, col)
    assert load_result(saved).row_count == 40


def test_ray_evaluate_takes_only_datasets(local_ray: None) -> None:
    with pytest.raises(TypeError, match=r"takes a ray\.data\.Dataset"):
        rl_ray.evaluate(frame(3), METRICS, judge="mock")


def test_per_actor_concurrency_reaches_the_judge(local_ray: None, fake_judge: Any) -> None:
    fake_judge.latency = 0.02
    judge = rl.Judge(fake_judge.url, model="m", max_concurrency=16)
    ds = ray.data.from_pandas(frame(24))
    rows = rl_ray.evaluate(
        ds, METRICS[:1], judge=judge, concurrency=1, max_concurrency=3, batch_size=24
    ).take_all()
    assert len(rows) == 24
    assert all(r["quality/error"] is None for r in rows)
    assert fake_judge.peak_in_flight <= 3


def test_ray_summary_of_a_pairwise_metric_counts_flips_like_a_local_run(local_ray: None) -> None:
    rubric = rl.Rubric.checklist(["Is it correct?", "Is it polite?"])
    metric = rl.metrics.PairwiseRubricMetric(rubric=rubric, name="vs")
    data = frame(12).assign(baseline_model_response=[f"Maybe {i}." for i in range(12)])
    local = rl.evaluate(data, [metric], judge="mock")
    ds = ray.data.from_pandas(data).repartition(3)
    results = rl_ray.evaluate(ds, [metric], judge="mock", concurrency=1, batch_size=5)
    summary = rl_ray.summary(results.materialize(), [metric])
    want = local.summary
    for col in ("n", "scored", "mean", "win_rate", "tie_rate", "swap_inconsistent"):
        assert summary.loc["vs", col] == pytest.approx(want.loc["vs", col]), col
