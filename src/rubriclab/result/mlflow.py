"""``result.log_to_mlflow()``: an evaluation into an MLflow run (``pip install 'rubriclab[mlflow]'``).

What lands in the run: the summary numbers as metrics (``support/mean``, ``support/pass_rate``
...), the judge and row count as params, the result table (``mlflow.log_table``, so the MLflow UI
can compare runs row by row), each metric's rubric as YAML, and the static HTML report (no
scripts). A mock judge's run is tagged ``rubriclab.mock=true`` so it is never mistaken for a
real evaluation.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from . import EvalResult

__all__ = ["log_result"]

_NOT_IN_KEY = re.compile(r"[^\w\-./ ]")


def log_result(
    result: EvalResult,
    plain_table: pd.DataFrame,
    *,
    report: Callable[[], str],
    name: str = "rubriclab",
    artifact_dir: str = "rubriclab",
) -> str:
    """Log ``result`` into the active MLflow run (one is started and ended if none is active);
    returns the run id. ``plain_table`` is the table with nested cells as JSON text; ``report``
    makes the HTML report page (the result passes its presentation's, so this module, like every
    module of the results layer, never imports the views)."""
    try:
        import mlflow
    except ImportError:
        raise ImportError("log_to_mlflow needs MLflow: pip install 'rubriclab[mlflow]'") from None
    started = mlflow.active_run() is None
    run = mlflow.start_run(run_name=name) if started else mlflow.active_run()
    assert run is not None
    try:
        mlflow.log_metrics(_numbers(result.summary_metrics))
        mlflow.log_params(
            {
                "rubriclab.judge": result.judge or "unknown",
                "rubriclab.rows": result.row_count,
                "rubriclab.metrics": ", ".join(result.metric_names),
            }
        )
        mlflow.set_tag("rubriclab.mock", str(result.is_mock).lower())
        mlflow.log_table(data=plain_table, artifact_file=f"{artifact_dir}/table.json")
        for info in result.metrics:
            if info.rubric is not None:
                mlflow.log_text(
                    info.rubric.to_yaml(), f"{artifact_dir}/rubrics/{_file_name(info.name)}.yaml"
                )
        mlflow.log_text(report(), f"{artifact_dir}/report.html")
    finally:
        if started:
            mlflow.end_run()
    run_id: str = run.info.run_id
    return run_id


def _numbers(summary: dict[str, Any]) -> dict[str, float]:
    """The summary's finite numbers, under keys MLflow accepts."""
    out: dict[str, float] = {}
    for key, value in summary.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            continue
        number = float(value)
        if math.isfinite(number):
            out[_key(key)] = number
    return out


def _key(name: str) -> str:
    """A key MLflow accepts: its characters, and no segment that moves up a path ('..')."""
    parts = _NOT_IN_KEY.sub("_", name).split("/")
    return "/".join(part.lstrip(".").strip() or "_" for part in parts)


def _file_name(name: str) -> str:
    """A metric name as one artifact file name: never a path (no '/', no leading dots)."""
    return re.sub(r"[^\w\-.]", "_", name).lstrip(".") or "metric"
