"""``result.log_to_mlflow()`` into a local MLflow file store: metrics, table, rubric, report."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import rubriclab as rl

mlflow = pytest.importorskip("mlflow")


@pytest.fixture
def tracking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps file stores opt-in
    store = tmp_path / "mlruns"
    mlflow.set_tracking_uri(store.as_uri())
    yield store
    if mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.set_tracking_uri(None)


def _result() -> rl.EvalResult:
    support = rl.Rubric.analytic(
        {
            "accuracy": {"weight": 0.6, "critical": 2, "levels": {1: "wrong", 2: "vague", 3: "ok"}},
            "tone": {"weight": 0.4, "levels": {1: "cold", 2: "stiff", 3: "warm"}},
        },
        pass_mark=0.7,
        name="support",
    )
    frame = pd.DataFrame(
        {
            "prompt": ["Refund?", "Shipping?", "<script>alert(1)</script>"],
            "response": ["Within 30 days.", "3-5 days.", "<img src=x onerror=alert(1)>"],
        }
    )
    return rl.evaluate(
        frame, [rl.metrics.RubricMetric(name="support", rubric=support)], judge="mock"
    )


def test_logs_metrics_table_rubric_and_report_into_the_active_run(
    tracking: Path, tmp_path: Path
) -> None:
    result = _result()
    with mlflow.start_run() as run:
        assert result.log_to_mlflow("support-eval") == run.info.run_id
    client = mlflow.tracking.MlflowClient()
    logged = client.get_run(run.info.run_id)
    summary = result.summary_metrics
    assert logged.data.metrics["support/mean"] == pytest.approx(summary["support/mean"])
    assert logged.data.metrics["row_count"] == 3
    assert logged.data.params["rubriclab.rows"] == "3"
    assert logged.data.tags["rubriclab.mock"] == "true"
    files = {a.path for a in client.list_artifacts(run.info.run_id, "rubriclab")}
    assert {"rubriclab/table.json", "rubriclab/report.html", "rubriclab/rubrics"} <= files
    local = Path(client.download_artifacts(run.info.run_id, "rubriclab", str(tmp_path / "dl")))
    table = json.loads((local / "table.json").read_text())
    assert len(table["data"]) == 3 and "support/score" in table["columns"]
    rubric = rl.Rubric.from_yaml(local / "rubrics" / "support.yaml")
    assert rubric.names == ["accuracy", "tone"] and rubric.pass_mark == 0.7
    page = (local / "report.html").read_text()
    assert "support" in page and "<script" not in page.lower()  # model text stays text
    # the table MLflow shows is the one rubriclab loads: same scores
    loaded = mlflow.load_table("rubriclab/table.json", run_ids=[run.info.run_id])
    assert loaded["support/score"].tolist() == pytest.approx(result.table["support/score"].tolist())


def test_without_an_active_run_one_is_started_and_ended(tracking: Path) -> None:
    run_id = _result().log_to_mlflow()
    assert mlflow.active_run() is None
    assert mlflow.tracking.MlflowClient().get_run(run_id).info.status == "FINISHED"


def test_a_metric_name_never_becomes_an_artifact_path(tracking: Path) -> None:
    frame = pd.DataFrame({"prompt": ["p"], "response": ["r"]})
    metric = rl.metrics.RubricMetric(name="..\\..\\evil", rubric=rl.Rubric.checklist(["ok?"]))
    run_id = rl.evaluate(frame, [metric], judge="mock").log_to_mlflow()
    client = mlflow.tracking.MlflowClient()
    names = [a.path for a in client.list_artifacts(run_id, "rubriclab/rubrics")]
    assert names == ["rubriclab/rubrics/_.._evil.yaml"]
