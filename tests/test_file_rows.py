"""A view of a big result file pages from the file and never loads the table (issue 38, 4)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.result import EvalResult, MetricInfo, open_result
from rubriclab.widgets import ResultTable
from rubriclab.widgets._query import QueryError

from ._view_data import SUPPORT

ROWS = 200_000


def big_table(n: int = ROWS) -> pd.DataFrame:
    """Rows as a judged run writes them, built directly (judging 200k rows would take minutes)."""
    i = np.arange(n)
    score = ((i * 37) % 101) / 100.0
    error = np.where(i % 997 == 0, "judge timed out", None)
    passed = np.where(error == None, score >= 0.7, None)  # noqa: E711 (elementwise)
    verdict = np.where(error == None, np.where(score >= 0.7, "pass", "fail"), None)  # noqa: E711
    criteria = [
        None if e is not None else [{"name": "accuracy", "level": int(k % 3) + 1}]
        for k, e in zip(i.tolist(), error.tolist(), strict=True)
    ]
    return pd.DataFrame(
        {
            "id": [f"case-{k:06d}" for k in i.tolist()],
            "prompt": [f"Question {k}: when is the deadline?" for k in i.tolist()],
            "response": [f"Answer {k}. The deadline is August 15th." for k in i.tolist()],
            "support/score": np.where(error == None, score, np.nan),  # noqa: E711
            "support/verdict": verdict,
            "support/passed": passed,
            "support/criteria": criteria,
            "support/error": error,
        }
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import pyarrow.parquet as pq

    folder = tmp_path_factory.mktemp("big")
    result = EvalResult(big_table(), [MetricInfo("support", "pointwise", SUPPORT)], judge="j")
    one_group = result.save(folder / "one.parquet")
    # a streamed run's layout: one row group per finished chunk of rows
    chunked = folder / "chunked.parquet"
    pq.write_table(pq.read_table(one_group), chunked, row_group_size=7_000)
    assert pq.ParquetFile(chunked).num_row_groups > 20
    plain = result.save(folder / "rows.jsonl")
    gz = folder / "rows.jsonl.gz"
    # the gzipped file: fewer rows (a sequential read), still above the display limit
    EvalResult(big_table(100_500), [MetricInfo("support", "pointwise", SUPPORT)], judge="j").save(
        gz
    )
    return {"one": one_group, "chunked": chunked, "jsonl": plain, "gz": gz}


def expected_rows(positions: list[int], table: pd.DataFrame) -> list[list[object]]:
    return [[p, p, table["id"][p], table["prompt"][p]] for p in positions]


@pytest.mark.parametrize("name", ["one", "chunked", "jsonl"])
def test_pages_come_from_the_file_without_loading_it(files: dict[str, Path], name: str) -> None:
    opened = open_result(files[name])
    view = ResultTable(opened)
    assert not opened.loaded
    assert view.total == ROWS
    table = big_table(ROWS)
    for start in (0, 150_000, ROWS - 50):
        page = view._page({"start": start, "stop": start + 100, "columns": VISIBLE})
        positions = list(range(start, min(start + 100, ROWS)))
        assert [r[:4] for r in page["rows"]] == expected_rows(positions, table)
        assert page["total"] == ROWS
        scores = [r[4] for r in page["rows"]]
        want = table["support/score"][positions].tolist()
        assert [None if np.isnan(w) else w for w in want] == [
            None if s is None else pytest.approx(s) for s in scores
        ]
    assert not opened.loaded


VISIBLE = ["__index__", "id", "prompt", "support/score"]


def test_gzipped_jsonl_pages_by_reading_on(files: dict[str, Path]) -> None:
    opened = open_result(files["gz"])
    view = ResultTable(opened)
    page = view._page({"start": 100_400, "stop": 100_600, "columns": VISIBLE})
    assert [r[2] for r in page["rows"]] == [f"case-{k:06d}" for k in range(100_400, 100_500)]
    assert not opened.loaded


@pytest.mark.parametrize("name", ["one", "chunked"])
def test_sorting_and_filtering_scores_read_only_small_columns(
    files: dict[str, Path], name: str
) -> None:
    opened = open_result(files[name])
    view = ResultTable(opened)
    whole = ResultTable(rl.load_result(files[name]))  # the old way: every row in memory
    for query in (
        {"sort": {"key": "support/score", "desc": True}},
        {"status": "fail", "sort": {"key": "support/passed", "desc": False}},
        {"score_min": 0.2, "score_max": 0.3, "sort": {"key": "__index__", "desc": True}},
        {"errors_only": True},
        {"verdict": "pass"},
    ):
        for start in (0, 1_000):
            request = {"start": start, "stop": start + 120, "columns": VISIBLE, "query": query}
            got = view._page(request)
            want = whole._page(request)
            assert got["total"] == want["total"] and got["total"] > 0
            assert [r[:3] for r in got["rows"]] == [r[:3] for r in want["rows"]], query
    assert (
        view._charts({"query": {"status": "pass"}})["charts"][0]["rows"]
        == (whole._charts({"query": {"status": "pass"}})["charts"][0]["rows"])
    )
    assert not opened.loaded


def test_what_needs_the_whole_table_says_so(files: dict[str, Path]) -> None:
    parquet = open_result(files["chunked"])
    view = ResultTable(parquet)
    for query, what in (
        ({"search": "deadline"}, "searching the text"),
        ({"sort": {"key": "prompt"}}, "sorting by 'prompt'"),
        ({"criterion": {"name": "accuracy", "value": "level 2"}}, "filtering by a criterion"),
    ):
        with pytest.raises(QueryError) as err:
            view.page(0, 50, query)
        assert str(err.value) == (
            f"{what} needs the whole table (200,000 rows in chunked.parquet): result.table loads it"
        )
    with pytest.raises(QueryError, match="exporting the rows needs the whole table"):
        view.export("csv")
    jsonl = open_result(files["jsonl"])
    with pytest.raises(QueryError, match=r"sorting by 'support/score' needs the whole .*\.parquet"):
        ResultTable(jsonl).page(0, 50, {"sort": {"key": "support/score"}})
    assert not parquet.loaded and not jsonl.loaded


def test_the_view_says_beforehand_what_a_big_file_refuses(files: dict[str, Path]) -> None:
    """The browser disables what the kernel would refuse, with the refusal's own words: the
    reasons come from the check every page request goes through (each is tried here)."""
    parquet = ResultTable(open_result(files["chunked"]))
    refused = parquet.refusals
    assert set(refused["sort"]) == {"id", "prompt", "response", "support/criteria"}
    assert refused["sort"]["prompt"] == (
        "sorting by 'prompt' needs the whole table (200,000 rows in chunked.parquet): "
        "result.table loads it"
    )
    assert set(refused["filters"]) == {"search", "criterion", "disagree"}
    assert "exporting the rows needs the whole table" in refused["export"]
    assert "charts" not in refused
    assert refused["note"].startswith("Read from chunked.parquet, a file of 200,000 rows")
    for key, reason in refused["sort"].items():
        with pytest.raises(QueryError) as err:
            parquet.page(0, 10, {"sort": {"key": key}})
        assert str(err.value) == reason
    for key in ("__index__", "support/score", "support/passed", "support/error"):
        assert len(parquet.page(0, 10, {"sort": {"key": key, "desc": True}})["rows"]) == 10
    jsonl = ResultTable(open_result(files["jsonl"])).refusals
    assert set(jsonl["sort"]) == set(big_table(3).columns)  # only the row number sorts
    assert set(jsonl["filters"]) == {
        "search",
        "score",
        "status",
        "errors_only",
        "swap",
        "criterion",
        "disagree",
    }
    assert "drawing charts needs the whole table" in jsonl["charts"]
    small = EvalResult(big_table(50), [MetricInfo("support", "pointwise", SUPPORT)], judge="j")
    assert ResultTable(small).refusals == {}


def test_a_selected_row_is_read_from_the_file(files: dict[str, Path]) -> None:
    opened = open_result(files["jsonl"])
    view = ResultTable(opened)
    view.selected = 150_001
    assert view.detail is not None
    assert view.detail["row"] == 150_001
    assert view.detail["heading"].startswith("case 150002 of 200000")
    assert "case-150001" in json.dumps(view.detail)
    assert not view.labelling
    assert not opened.loaded


def test_display_outside_a_kernel_keeps_the_rows_in_the_file(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    opened = open_result(files["one"])
    rl.display_eval_result(opened)
    assert "result.table loads them" in capsys.readouterr().out
    assert not opened.loaded
