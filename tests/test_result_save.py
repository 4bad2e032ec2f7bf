"""Saving results and reports: whole files or none, and errors that name the row and column."""

from __future__ import annotations

from pathlib import Path

import pytest

import rubriclab as rl
from rubriclab.result import ResultSaveError, load_result
from rubriclab.testing import FakeJudgeServer, Faults
from rubriclab.widgets.report import write_report_html
from tests._view_data import pointwise_result


def test_a_run_whose_replies_hold_lone_surrogates_saves_everywhere(tmp_path: Path) -> None:
    metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["Right?"]))
    with FakeJudgeServer(faults=Faults(rate_surrogate=1.0)) as server:
        judge = rl.Judge(server.url, model="m")  # a memory cache
        result = rl.evaluate([{"prompt": "p", "response": "r"}], metrics=[metric], judge=judge)
    raw = result.table["chk/raw_output"].iloc[0]
    assert "\ufffd" in str(raw)
    for name in ("r.jsonl", "r.parquet"):
        path = result.save(tmp_path / name)
        assert load_result(path).table["chk/raw_output"].iloc[0] == raw
    page = write_report_html(tmp_path / "report.html", {"run": result})
    assert page.stat().st_size > 1000


def test_a_parquet_save_error_names_the_row_and_column_and_keeps_the_old_file(
    tmp_path: Path,
) -> None:
    result = pointwise_result(5)
    path = result.save(tmp_path / "r.parquet")
    before = path.read_bytes()
    result.table["response"] = result.table["response"].astype(object)  # arrow strings refuse
    result.table.loc[3, "response"] = "user data with a lone \ud800 surrogate"
    with pytest.raises(ResultSaveError, match=r"row 3, column 'response': .*lone surrogate"):
        result.save(path)
    assert path.read_bytes() == before  # the failed save left the good file as it was
    assert [p.name for p in tmp_path.iterdir()] == ["r.parquet"]  # and no temp file behind


def test_a_report_of_data_with_a_lone_surrogate_is_written_whole(tmp_path: Path) -> None:
    result = pointwise_result(5)
    result.table["response"] = result.table["response"].astype(object)
    result.table.loc[2, "response"] = "odd \udfff text"
    page = write_report_html(tmp_path / "report.html", {"run": result})
    text = page.read_text(encoding="utf-8")
    assert "odd \ufffd text" in text and text.rstrip().endswith("</html>")


def test_a_report_that_fails_to_render_leaves_the_previous_one(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    write_report_html(target, {"run": pointwise_result(3)})
    good = target.read_text(encoding="utf-8")
    with pytest.raises(ValueError):
        write_report_html(target, {})  # nothing to report: report_html refuses
    assert target.read_text(encoding="utf-8") == good
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
