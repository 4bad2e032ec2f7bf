"""Saved results are plain files: JSONL that jq and pandas read, loading back exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl


def _support_result() -> rl.EvalResult:
    support = rl.Rubric.analytic(
        {
            "accuracy": {
                "weight": 0.6,
                "critical": 2,
                "levels": {1: "wrong", 2: "vague", 3: "right"},
            },
            "tone": {"weight": 0.4, "levels": {1: "cold", 2: "stiff", 3: "warm"}},
        },
        pass_mark=0.7,
    )
    frame = pd.DataFrame(
        {
            "prompt": ["Where is my refund?", "Can I change my address?"],
            "response": ["Refunds take 5 days.", "Yes, in Settings."],
        }
    )
    metrics = [
        rl.metrics.RubricMetric(name="support", rubric=support),
        rl.metrics.TEXT_QUALITY,
    ]
    return rl.evaluate(frame, metrics, judge="mock")


def test_jsonl_rows_hold_real_nested_json_and_load_back_exactly(tmp_path: Path) -> None:
    result = _support_result()
    path = result.save(tmp_path / "results.jsonl")
    text = path.read_text(encoding="utf-8")
    assert "\\u0000json:" not in text and "\x00" not in text
    header, *rows = [json.loads(line) for line in text.splitlines()]
    assert "__rubriclab__" in header
    first = rows[0]
    # criteria and rubrics are JSON arrays/objects, not strings holding JSON
    assert isinstance(first["support/criteria"], list)
    assert first["support/criteria"][0]["name"] == "accuracy"
    assert isinstance(first["text_quality/rubric"], dict)
    # the judge's raw answer is its text, encoded once (a JSON object inside one string)
    raw = first["support/raw_output"]
    assert isinstance(raw, str) and isinstance(json.loads(raw), dict)
    # pandas reads it too (the header is the first line)
    frame = pd.read_json(path, lines=True).iloc[1:]
    assert isinstance(frame["support/criteria"].iloc[0], list)
    # and nothing is lost on the way back
    again = rl.load_result(path)
    assert again.table["support/criteria"].tolist() == result.table["support/criteria"].tolist()
    assert again.table["support/raw_output"].tolist() == result.table["support/raw_output"].tolist()
    assert again.table["text_quality/rubric"].iloc[0] == result.table["text_quality/rubric"].iloc[0]
    assert again.is_mock and again.metric("support").rubric == result.metric("support").rubric
    pd.testing.assert_frame_equal(again.summary, result.summary)


def test_a_string_that_looks_like_json_stays_a_string(tmp_path: Path) -> None:
    result = _support_result()
    result.table["note"] = ['["not", "a list"]', "{}"]
    again = rl.load_result(result.save(tmp_path / "r.jsonl"))
    assert again.table["note"].tolist() == ['["not", "a list"]', "{}"]


def test_parquet_stores_json_text_without_tags_and_loads_back(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    result = _support_result()
    path = result.save(tmp_path / "results.parquet")
    plain = pd.read_parquet(path)
    cell = plain["support/criteria"].iloc[0]
    assert isinstance(cell, str) and not cell.startswith("\x00")
    assert json.loads(cell)[0]["name"] == "accuracy"
    again = rl.load_result(path)
    assert again.table["support/criteria"].tolist() == result.table["support/criteria"].tolist()


def test_results_written_in_the_first_format_still_load(tmp_path: Path) -> None:
    """Version 1 stored nested values as NUL-tagged JSON strings and raw_output twice encoded."""
    result = _support_result()
    tag = "\x00json:"
    header = {
        "version": 1,
        "metrics": [m.to_dict() for m in result.metrics],
        "judge": result.judge,
        "is_mock": True,
        "stats": result.stats.to_dict(),
        "meta": {},
        "columns": list(result.table.columns),
    }
    lines = [json.dumps({"__rubriclab__": header})]
    for record in result.table.to_dict(orient="records"):
        row = {}
        for key, value in record.items():
            if key.endswith(("/criteria", "/raw_output", "/rubric")) and value is not None:
                plain = value.to_dict() if isinstance(value, rl.Rubric) else value
                row[key] = tag + json.dumps(plain)
            else:
                row[key] = None if isinstance(value, float) and value != value else value
        lines.append(json.dumps(row))
    path = tmp_path / "old.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    again = rl.load_result(path)
    assert again.table["support/criteria"].tolist() == result.table["support/criteria"].tolist()
    assert again.table["support/raw_output"].tolist() == result.table["support/raw_output"].tolist()
    assert isinstance(again.table["text_quality/rubric"].iloc[0], rl.Rubric)


def test_results_reach_the_views_only_through_the_presentation_hook(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A result's display and a comparison's HTML come from the module PRESENTATION names, so
    an app can draw results its own way, and the results layer never imports the views."""
    import subprocess
    import sys
    import types

    import rubriclab.result as result_module

    fake = types.ModuleType("fake_presentation")
    fake.result_mimebundle = lambda r: {"text/plain": f"drawn: {r.row_count} rows"}  # type: ignore[attr-defined]
    fake.comparison_mimebundle = lambda c: {"text/plain": f"compared {c.names}"}  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_presentation", fake)
    monkeypatch.setattr(result_module, "PRESENTATION", "fake_presentation")
    result = _support_result()
    assert result._repr_mimebundle_() == {"text/plain": "drawn: 2 rows"}
    assert rl.compare(result, result)._repr_mimebundle_() == {"text/plain": "compared ('A', 'B')"}
    # importing and using the results layer loads no view module
    code = (
        "import sys, rubriclab.result, rubriclab.comparison, rubriclab.result.mlflow, rubriclab.evaluation\n"
        "print(sorted(m for m in sys.modules if m.startswith('rubriclab.widgets')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_metric_without_a_pass_mark_has_no_pass_rate_anywhere(tmp_path: Any) -> None:
    import pandas as pd

    import rubriclab as rl
    from rubriclab.widgets._static.table import summary_text

    # critical items but no pass mark: rows can fail a critical item, none can pass
    checklist = rl.Rubric.checklist(
        [{"question": "Is it right?", "critical": True}, "Is it short?"]
    )
    frame = pd.DataFrame(
        {"prompt": ["a", "b", "c"], "response": ["right and short", "short", "right"]}
    )
    metric = rl.metrics.RubricMetric(rubric=checklist, name="chk")
    result = rl.evaluate(frame, metrics=[metric], judge="mock")
    s = result.metric_summary("chk")
    assert s.has_pass_mark is False and s.pass_rate is None and s.verdicts is None
    fails = s.critical_fails
    assert fails is not None
    text = result.summary_text("chk")
    assert "no pass mark" in text and "0.0% (0/" not in text
    assert "chk/pass_rate" not in result.summary_metrics
    assert result.summary_metrics["chk/has_pass_mark"] is False
    assert "no pass mark" in s.text()
    rows = result.summary.reset_index().to_dict("records")
    assert "no pass mark" in summary_text(rows)
    # the same rule for a streamed run (summary from the chunks) and a saved one
    streamed = rl.evaluate(
        frame, metrics=[metric], judge="mock", output=tmp_path / "s.jsonl", chunk_rows=2
    )
    assert streamed.metric_summary("chk").has_pass_mark is False
    assert streamed.metric_summary("chk").critical_fails == fails
    assert rl.load_result(tmp_path / "s.jsonl").metric_summary("chk").pass_rate is None
    # negative control: the same rubric with a pass mark has a pass rate
    marked = rl.metrics.RubricMetric(
        rubric=checklist.model_copy(update={"pass_mark": 0.5}), name="chk"
    )
    s2 = rl.evaluate(frame, metrics=[marked], judge="mock").metric_summary("chk")
    assert s2.has_pass_mark is True and s2.pass_rate is not None


def test_generated_checklists_show_no_pass_rate_in_the_demo() -> None:
    import io

    from rubriclab.demo import run_demo

    out = io.StringIO()
    run_demo("mock", report=None, out=out, progress=False)
    text = out.getvalue()
    line = next(x for x in text.splitlines() if x.startswith("text_quality "))
    assert "no pass mark" in line and "%" in line
    assert "0.0% (0/" not in line


def test_one_row_is_one_row_everywhere_people_read_the_count() -> None:
    """'(1 rows)' read as a typo in the summary, the repr and the report."""
    import pandas as pd

    import rubriclab as rl
    from rubriclab.widgets.report import report_html

    one = rl.evaluate(
        pd.DataFrame({"prompt": ["How long is shipping?"], "response": ["3-5 days."]}),
        metrics=[rl.metrics.RubricMetric(rubric=rl.Rubric.checklist(["Days?"]), name="c")],
        judge="mock",
    )
    assert "(1 row)" in one.summary_text() and "1 rows" not in one.summary_text()
    assert repr(one).startswith("<EvalResult 1 row (MOCK judge); c: mean ")
    assert "0 errors" in repr(one)
    assert "(1 row;" in report_html({"one": one}) and "1 rows" not in report_html({"one": one})
    assert rl.format_percent(0.5) == "50.0%"
    from rubriclab.scale import format_count

    assert [format_count(n, "row") for n in (0, 1, 2, 1234)] == [
        "0 rows",
        "1 row",
        "2 rows",
        "1,234 rows",
    ]
