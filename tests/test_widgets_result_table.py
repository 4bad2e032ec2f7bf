"""ResultTable: the traits the browser reads, and pages over custom messages."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from rubriclab.widgets import ResultTable
from tests._view_data import big_result, pairwise_result, pointwise_result, record_comms


def test_first_screen_is_summary_columns_and_no_rows() -> None:
    result = pointwise_result(30, is_mock=True)
    table = ResultTable(result, title="Support")
    assert table.total == 30
    assert table.is_mock and table.judge == "mock"
    assert table.summary[0]["metric"] == "support"
    assert table.summary[0]["errors"] == 4  # rows 6, 13, 20, 27
    assert table.visible[0] == "__index__"
    assert {"prompt", "response", "support/score", "support/verdict", "support/error"} <= set(
        table.visible
    )
    assert "support/criteria" not in table.visible  # in the chooser, not on screen
    keys = {c["key"]: c for c in table.columns}
    assert keys["support/score"]["kind"] == "score" and keys["support/score"]["sortable"]
    assert keys["support/criteria"]["kind"] == "list" and not keys["support/criteria"]["sortable"]
    assert table.verdicts["support"][0] in {
        "pass",
        "fail (score below pass mark)",
        "fail (accuracy below 2)",
    }
    state = json.dumps(
        table.get_state(["columns", "visible", "summary", "metrics", "verdicts", "total"])
    )
    assert "Question 0" not in state  # rows travel in pages, never in the traits


def test_pages_arrive_over_custom_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    comms = record_comms(monkeypatch)
    table = ResultTable(big_result(100_000))
    comm = comms[-1]
    comm.custom(
        {
            "type": "rl:request",
            "id": "a-1",
            "op": "page",
            "start": 0,
            "stop": 200,
            "query": {},
            "columns": ["__index__", "id", "support/score"],
        }
    )
    reply = comm.replies()[-1]
    assert reply["type"] == "rl:reply" and reply["id"] == "a-1"
    assert reply["total"] == 100_000
    assert len(reply["rows"]) == 200
    assert reply["rows"][0][:3] == [0, 0, "case-000000"]
    assert len(json.dumps(reply)) < 50_000
    comm.custom(
        {
            "type": "rl:request",
            "id": "a-2",
            "op": "page",
            "start": 99_900,
            "stop": 100_000,
            "query": {},
            "columns": ["id"],
        }
    )
    last = comm.replies()[-1]
    assert last["rows"][-1] == [99_999, "case-099999"]
    assert table.total == 100_000


def test_sort_by_score_puts_best_first_and_missing_scores_last() -> None:
    result = pointwise_result(30)
    table = ResultTable(result, columns=["support/score"])
    desc = table.page(0, 30, {"sort": {"key": "support/score", "desc": True}})["rows"]
    scores = [r[2] for r in desc]
    scored = [s for s in scores if s is not None]
    assert scored == sorted(scored, reverse=True)
    assert scores[-4:] == [None] * 4
    asc = table.page(0, 30, {"sort": {"key": "support/score", "desc": False}})["rows"]
    assert [r[2] for r in asc][-4:] == [None] * 4
    assert asc[0][2] == min(scored)


def test_sort_by_text_column_is_stable_and_reversible() -> None:
    frame = pd.DataFrame(
        {"prompt": ["b", "a", None, "b", "A"], "m/score": [0.1, 0.2, 0.3, 0.4, 0.5]}
    )
    table = ResultTable(frame, columns=["prompt"])
    asc = [r[0] for r in table.page(0, 5, {"sort": {"key": "prompt"}})["rows"]]
    assert asc == [1, 4, 0, 3, 2]  # case-insensitive, ties in table order, missing last
    desc = [r[0] for r in table.page(0, 5, {"sort": {"key": "prompt", "desc": True}})["rows"]]
    assert desc == [0, 3, 1, 4, 2]


def test_filters_search_range_verdict_errors_and_swap() -> None:
    table = ResultTable(pointwise_result(30), columns=["support/verdict", "support/error"])
    assert table.page(0, 100, {"search": "QUESTION 12:"})["total"] == 1
    errors = table.page(0, 100, {"errors_only": True})
    assert errors["total"] == 4
    assert all(r[3] for r in errors["rows"])
    passing = table.page(0, 100, {"verdict": "pass"})
    assert passing["total"] > 0 and all(r[2] == "pass" for r in passing["rows"])
    ranged = table.page(0, 100, {"score_min": 0.5, "score_max": 0.7})
    result = pointwise_result(30)
    expected = result.table["support/score"].between(0.5, 0.7).sum()
    assert ranged["total"] == expected
    pair = ResultTable(pairwise_result(12))
    assert pair.page(0, 100, {"swap_inconsistent_only": True})["total"] == 3  # rows 3, 7, 11


def test_bad_requests_answer_with_an_error_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    comms = record_comms(monkeypatch)
    ResultTable(pointwise_result(5))
    comm = comms[-1]
    comm.custom(
        {
            "type": "rl:request",
            "id": "x",
            "op": "page",
            "start": 0,
            "stop": 10,
            "query": {"sort": {"key": "nope"}},
            "columns": [],
        }
    )
    assert "cannot sort by 'nope'" in comm.replies()[-1]["error"]
    comm.custom(
        {
            "type": "rl:request",
            "id": "y",
            "op": "page",
            "start": 0,
            "stop": 10,
            "query": {"bogus": 1},
            "columns": [],
        }
    )
    assert "unknown query keys: bogus" in comm.replies()[-1]["error"]
    comm.custom({"type": "rl:request", "id": "z", "op": "explode"})
    assert comm.replies()[-1] == {
        "type": "rl:reply",
        "id": "z",
        "error": "unknown request 'explode'",
    }


def test_selecting_a_row_fills_its_explanation() -> None:
    table = ResultTable(pointwise_result(10))
    assert table.detail is None
    table.set_state({"selected": 6})
    assert table.detail is not None
    assert table.detail["heading"].startswith("case 7 of 10")
    support = table.detail["metrics"][0]
    assert support["error"] == "HTTP 503 from judge after 3 attempts"
    assert support["raw_output"] and support["attempts"] == 3
    table.set_state({"selected": -1})
    assert table.detail is None


def test_column_chooser_keeps_only_known_columns() -> None:
    table = ResultTable(pointwise_result(5))
    table.set_state({"visible": ["__index__", "support/criteria", "not-a-column"]})
    assert table.visible == ["__index__", "support/criteria"]
    row = table.page(0, 1)["rows"][0]
    assert row[2] == "accuracy 1 · deadline YES"


def test_unknown_metric_or_column_names_the_choices() -> None:
    with pytest.raises(KeyError, match=r"no metric 'nope'.*support"):
        ResultTable(pointwise_result(3), metrics=["nope"])
    with pytest.raises(KeyError, match="no column 'zzz'"):
        ResultTable(pointwise_result(3), columns=["zzz"])
    with pytest.raises(TypeError, match="EvalResult or a pandas DataFrame"):
        ResultTable([1, 2, 3])


def test_static_forms_are_deterministic_and_escaped() -> None:
    result = pointwise_result(25, xss=True, is_mock=True)
    a, b = ResultTable(result), ResultTable(result)
    bundle, _ = a._repr_mimebundle_()
    assert bundle["text/plain"] == b._repr_mimebundle_()[0]["text/plain"]
    assert bundle["text/plain"].startswith("MOCK judge")
    assert "application/vnd.jupyter.widget-view+json" in bundle
    html = bundle["text/html"]
    assert "MOCK judge" in html
    assert "<script>" not in html and "<iframe" not in html and 'onerror="' not in html
    assert "&lt;script&gt;" in html
    assert "… 5 more rows" in html
    assert not math.isnan(result.table["support/score"].iloc[0])


# -- issue 19: outcome groups, criterion filter, export, charts, sharper columns ---------------
def test_outcome_groups_replace_one_option_per_verdict_string() -> None:
    table = ResultTable(pointwise_result(30))
    frame = table.result_table
    errors = frame["support/error"].notna()
    for status, expected in (
        ("pass", (frame["support/passed"] == True) & ~errors),  # noqa: E712
        ("fail", (frame["support/passed"] == False) & ~errors),  # noqa: E712
        ("error", errors),
    ):
        rows = table.page(0, 100, {"status": status})["rows"]
        assert [r[0] for r in rows] == [i for i, hit in enumerate(expected) if hit], status
    assert table.page(0, 100, {"status": "no_verdict"})["total"] == 0
    with pytest.raises(ValueError, match="status must be one of"):
        table.page(0, 10, {"status": "passed-ish"})


def test_no_verdict_group_holds_rows_without_a_pass_rule() -> None:
    result = pointwise_result(6)
    result.table["support/passed"] = [None, True, None, False, None, None]
    result.table["support/error"] = None
    table = ResultTable(result)
    assert table.page(0, 10, {"status": "no_verdict"})["total"] == 4


def test_pairwise_groups_are_win_tie_loss() -> None:
    table = ResultTable(pairwise_result(10))
    scores = table.result_table["pair/score"]
    wins = table.page(0, 20, {"status": "win"})["rows"]
    assert [r[0] for r in wins] == [i for i, s in enumerate(scores) if s > 0]
    assert table.page(0, 20, {"status": "tie"})["total"] == int((scores == 0).sum())


def test_filter_by_one_criterions_result() -> None:
    table = ResultTable(pointwise_result(30))
    options = {c["name"]: c["values"] for c in table.criteria["support"]}
    assert options == {"accuracy": ["level 1", "level 2", "level 3"], "deadline": ["NO", "YES"]}
    low = table.page(0, 100, {"criterion": {"name": "accuracy", "value": "level 1"}})["rows"]
    expected = [i for i in range(30) if i % 7 != 6 and i % 3 == 0]
    assert [r[0] for r in low] == expected
    no = table.page(0, 100, {"criterion": {"name": "deadline", "value": "NO"}})["rows"]
    assert [r[0] for r in no] == [i for i in range(30) if i % 7 != 6 and i % 2 == 1]
    with pytest.raises(ValueError, match="criterion must be"):
        table.page(0, 10, {"criterion": {"name": "accuracy"}})


def test_export_is_the_filtered_sorted_view_with_full_values() -> None:
    import csv
    import io
    import json

    table = ResultTable(pointwise_result(30, xss=True), columns=["prompt", "support/score"])
    query = {"status": "fail", "sort": {"key": "support/score", "desc": True}}
    view = [r[0] for r in table.page(0, 100, query)["rows"]]
    rows = list(csv.reader(io.StringIO(table.export("csv", query, columns="visible"))))
    assert rows[0] == ["index", "prompt", "support/score"]
    assert [int(r[0]) for r in rows[1:]] == view
    assert float(rows[1][2]) == table.result_table["support/score"].iloc[view[0]]
    lines = [json.loads(line) for line in table.export("jsonl", query).splitlines()]
    assert [line["index"] for line in lines] == view
    # the download buttons' export: every field of the result, hidden columns too
    assert list(lines[0]) == ["index", *table.result_table.columns]
    assert "support/raw_output" in lines[0] and "support/raw_output" not in table.visible
    assert lines[0]["prompt"] == table.result_table["prompt"].iloc[view[0]]  # not capped or HTML
    with pytest.raises(ValueError, match="'csv' or 'jsonl'"):
        table.export("xlsx")


def test_csv_export_defuses_spreadsheet_formulas() -> None:
    import pandas as pd

    frame = pd.DataFrame(
        {
            "prompt": ['=HYPERLINK("http://evil.example","x")', "+1", "plain"],
            "m/score": [0.5, -0.25, 1.0],
            "m/criteria": [[{"name": "a", "level": 1}], None, None],
        }
    )
    table = ResultTable(frame, columns=["prompt", "m/score", "m/criteria"])
    text = table.export("csv")
    assert "'=HYPERLINK" in text and "\n1,'+1," in text
    assert ",-0.25," in text  # numbers stay numbers
    assert '"[{""name"": ""a"", ""level"": 1}]"' in text


def test_csv_export_defuses_formulas_in_the_header_row() -> None:
    """Column names are the data's and metric names a config's: someone else's text too."""
    import csv
    import io

    import pandas as pd

    names = ['=HYPERLINK("evil.example","x")', "@SUM(A1)", "+1", "-2", "\tx", "\rx"]
    frame = pd.DataFrame({name: ["v"] for name in names})
    frame["=cmd|' -C calc'!A0/score"] = [0.5]  # a metric named like a formula
    frame["prompt"] = ["plain"]
    columns = [*names, "=cmd|' -C calc'!A0/score", "prompt"]
    header = next(csv.reader(io.StringIO(ResultTable(frame, columns=columns).export("csv"))))
    assert header[1:] == ["'" + name for name in columns[:-1]] + ["prompt"]
    assert header[0] == "index"


def test_csv_export_quotes_line_breaks_so_no_cell_starts_a_row() -> None:
    """A CR inside a cell must not end the row: the text after it would be a new row's first
    cell, undefused, in a spreadsheet that splits rows on CR."""
    import pandas as pd

    frame = pd.DataFrame({"prompt": ['ok\r=HYPERLINK("evil.example","x")', "a\nb"]})
    text = ResultTable(frame, columns=["prompt"]).export("csv")
    rows = text.split("\r\n")
    assert rows[1] == '0,"ok\r=HYPERLINK(""evil.example"",""x"")"'
    assert rows[2] == '1,"a\nb"'


def test_charts_count_scores_and_criteria_of_the_filtered_rows() -> None:
    table = ResultTable(pointwise_result(30))
    (chart,) = table.charts()
    scores = table.result_table["support/score"].dropna()
    assert sum(b["count"] for b in chart["histogram"]) == len(scores) == chart["scored"]
    assert chart["histogram"][-1]["count"] == int((scores >= 0.9).sum())
    assert chart["errors"] == 4
    acc = next(c for c in chart["criteria"] if c["name"] == "accuracy")
    assert [r["label"] for r in acc["results"]] == ["level 3", "level 2", "level 1"]
    assert acc["results"][2]["good"] is False  # below the critical minimum
    (failing,) = table.charts({"status": "fail"})
    assert failing["scored"] == table.page(0, 100, {"status": "fail"})["total"]


def test_pairwise_charts_carry_the_choice_scale_and_win_tie_loss_intervals() -> None:
    (chart,) = ResultTable(pairwise_result(10)).charts()
    assert [c["value"] for c in chart["choices"]] == [1.0, 0.5, 0.0, -0.5, -1.0]
    assert [w["label"] for w in chart["wtl"]] == ["candidate wins", "ties", "baseline wins"]
    assert all(w["low"] <= w["rate"] <= w["high"] for w in chart["wtl"])


def test_empty_error_and_raw_output_columns_start_hidden() -> None:
    clean = pointwise_result(5)
    clean.table["support/error"] = None
    table = ResultTable(clean)
    cols = {c["key"]: c for c in table.columns}
    assert cols["support/error"]["empty"] is True
    assert "support/error" not in table.visible and "support/raw_output" not in table.visible
    assert "support/error" in ResultTable(pointwise_result(10)).visible  # errors happened: shown
    assert (
        cols["support/score"]["metric"] == "support" and cols["support/score"]["field"] == "score"
    )


def test_a_text_column_named_image_description_is_text() -> None:
    import pandas as pd

    frame = pd.DataFrame(
        {
            "prompt": ["Describe it"],
            "image_description": ["A red barn at dusk, roof damaged by the storm."],
            "image": ["https://example.com/barn.png"],
            "m/score": [0.5],
        }
    )
    table = ResultTable(frame)
    assert table.page(0, 1)["rows"][0]
    table.selected = 0
    assert [img["name"] for img in table.detail["images"]] == ["image"]
    assert {"name": "image_description", "text": frame.at[0, "image_description"]} in table.detail[
        "fields"
    ]


def test_a_cached_row_says_cached() -> None:
    result = pointwise_result(3)
    result.table["support/attempts"] = [0, 1, 0]
    result.table.loc[2, "support/error"] = "HTTP 503"
    table = ResultTable(result)
    table.selected = 0
    assert table.detail["metrics"][0]["cached"] is True
    table.selected = 1
    assert table.detail["metrics"][0]["cached"] is False


def test_update_keeps_the_readers_columns_and_carries_live_rows() -> None:
    result = pointwise_result(20)
    table = ResultTable(result.table.iloc[:5])
    table.visible = [v for v in table.visible if v != "response"]
    table.update(result.table.iloc[:12], {"done": 12, "total": 20, "errors": 1, "state": "running"})
    assert table.total == 12 and "response" not in table.visible
    assert [r[0] for r in table.live["rows"]] == list(range(12))
    assert table.live["columns"] == table.visible and table.live["charts"][0]["scored"] == 11
    table.update(result, {"done": 20, "total": 20, "errors": 2, "state": "finished"})
    assert table.live is None and table.total == 20 and table.progress["state"] == "finished"


def test_per_row_rubrics_questions_are_never_added_up_by_name() -> None:
    import pandas as pd

    import rubriclab as rl
    from rubriclab.widgets._charts import chart_data
    from rubriclab.widgets._query import TableQuery
    from rubriclab.widgets._source import as_source
    from rubriclab.widgets.report import report_html

    rows = pd.DataFrame({"prompt": ["a", "b", "c"], "response": ["x", "y", "z"]})
    rows["rubric"] = [
        rl.Rubric.checklist(["Is the date right?", "Is it short?"]).to_dict(),
        rl.Rubric.checklist(["Is the dose safe?", "Is it short?"]).to_dict(),
        rl.Rubric.checklist(["Does it cite the policy?", "Is it short?"]).to_dict(),
    ]
    result = rl.evaluate(rows, metrics=[rl.metrics.RubricMetric(name="gen")], judge="mock")
    chart = chart_data(as_source(result))[0]
    # q1 asks three different things: no bar adds them; q2 asks the same everywhere: kept
    assert [c["name"] for c in chart["criteria"]] == ["q2"]
    assert chart["criteria"][0]["total"] == 3 and chart["unshared_criteria"] == 1
    options = TableQuery(as_source(result)).criteria_options()["gen"]
    assert [o["name"] for o in options] == ["q2"]
    assert "no per-criterion figures for 1 criteria" in report_html({"run": result}, "r")
    # negative control: one rubric for every row keeps every criterion
    fixed = rl.Rubric.checklist(["Is the date right?", "Is it short?"])
    same = rl.evaluate(
        rows.drop(columns="rubric"),
        metrics=[rl.metrics.RubricMetric(rubric=fixed, name="f")],
        judge="mock",
    )
    assert [c["name"] for c in chart_data(as_source(same))[0]["criteria"]] == ["q1", "q2"]


def test_drill_down_labels_land_in_result_labels_and_disagree_filter() -> None:
    from tests._view_data import pointwise_result

    result = pointwise_result(10)
    view = ResultTable(result)
    view.reviewer = "ana"
    assert view.labelling
    form = view._label_form({"row": 1})["form"][0]
    assert [q["criterion"] for q in form["questions"]] == ["overall", "accuracy", "deadline"]
    assert form["questions"][0]["judge"] == "fail"
    labels = [
        {"metric": "support", "criterion": "overall", "value": "pass", "row": 1},
        {"metric": "support", "criterion": "deadline", "value": "no", "row": 2},
        {"metric": "support", "criterion": "overall", "value": "fail", "row": 3},
    ]
    assert view._save_labels({"labels": labels}) == {"saved": 3}
    assert result.labels[["row", "value", "reviewer"]].values.tolist() == [
        [1, "pass", "ana"],
        [2, "no", "ana"],
        [3, "fail", "ana"],
    ]
    # row 1: judge fail, person pass; row 2: judge yes on deadline, person no; row 3 agrees
    page = view.page(0, 50, {"disagree": True})
    assert [r[0] for r in page["rows"]] == [1, 2]
    assert view.page(0, 50, {})["total"] == 10
    with pytest.raises(ValueError, match="labels need an EvalResult"):
        ResultTable(result.table)._label_form({"row": 0})
