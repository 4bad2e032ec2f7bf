"""People's labels on a result: kept in memory, saved beside the results, loaded back, appended
safely by several processes, checked against the metric's levels, read safely from a hostile
file."""

from __future__ import annotations

import json
import multiprocessing
import warnings
from pathlib import Path

import pandas as pd
import pytest

from rubriclab.result import LABEL_COLUMNS, LabelError, labels_path, load_result, open_result

from ._view_data import pairwise_result, pointwise_result


def test_labels_start_empty_with_the_contract_columns() -> None:
    result = pointwise_result(5)
    assert list(result.labels.columns) == list(LABEL_COLUMNS)
    assert result.labels.empty


def test_label_in_memory_then_saved_and_loaded(tmp_path: Path) -> None:
    result = pointwise_result(5)
    result.label(0, "pass", reviewer="ana", comment="clear")
    result.label(1, 2, criterion="accuracy", reviewer="ana")
    result.label(1, True, criterion="deadline", reviewer="ana")
    path = result.save(tmp_path / "run.jsonl")
    side = labels_path(path)
    assert side == tmp_path / "run.labels.jsonl"
    lines = [json.loads(line) for line in side.read_text().splitlines()]
    assert [(d["row"], d["criterion"], d["value"]) for d in lines] == [
        (0, "overall", "pass"),
        (1, "accuracy", 2),
        (1, "deadline", "yes"),
    ]
    loaded = load_result(path)
    frame = loaded.labels
    assert list(frame.columns) == list(LABEL_COLUMNS)
    assert frame[
        ["row", "metric", "criterion", "value", "reviewer", "comment"]
    ].values.tolist() == [
        [0, "support", "overall", "pass", "ana", "clear"],
        [1, "support", "accuracy", 2, "ana", ""],
        [1, "support", "deadline", "yes", "ana", ""],
    ]
    assert all(t.endswith("Z") for t in frame["time"])
    # a loaded result appends at once: a second load (another notebook) sees the label
    loaded.label(2, "fail", reviewer="bo")
    assert len(load_result(path).labels) == 4
    # open_result (file-backed) reads them too
    assert len(open_result(path).labels) == 4


def test_saving_twice_does_not_duplicate_and_keeps_others_labels(tmp_path: Path) -> None:
    result = pointwise_result(4)
    result.label(0, "pass", reviewer="ana")
    path = tmp_path / "r.jsonl"
    result.save(path)
    other = load_result(path)
    other.label(1, "fail", reviewer="bo")  # another notebook labels the same file
    result.save(path)
    assert len(labels_path(path).read_text().splitlines()) == 2
    assert sorted(load_result(path).labels["reviewer"]) == ["ana", "bo"]
    # saving to a new place carries every label along
    result.save(tmp_path / "copy.parquet")
    assert len(load_result(tmp_path / "copy.parquet").labels) == 2


def test_latest_label_per_reviewer_wins_and_none_withdraws() -> None:
    result = pointwise_result(3)
    result.label(0, "pass", reviewer="ana")
    result.label(0, "fail", reviewer="bo")
    result.label(0, "fail", reviewer="ana", comment="changed my mind")
    frame = result.labels
    assert frame[["reviewer", "value", "comment"]].values.tolist() == [
        ["ana", "fail", "changed my mind"],
        ["bo", "fail", ""],
    ]
    result.label(0, None, reviewer="bo")
    assert result.labels["reviewer"].tolist() == ["ana"]
    assert len(result.label_history) == 4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"row": 9, "value": "pass"}, "row 9 is out of range: the result has 3 rows"),
        ({"row": 0, "value": "maybe"}, "'maybe' is not one of pass, fail"),
        ({"row": 0, "value": 4, "criterion": "accuracy"}, "4 is not one of 1, 2, 3"),
        ({"row": 0, "value": 2, "criterion": "deadline"}, "2 is not one of yes, no"),
        (
            {"row": 0, "value": 2, "criterion": "tone"},
            "no such criterion (criteria: accuracy, deadline)",
        ),
        ({"row": 0, "value": "pass", "metric": "other"}, "no metric 'other'"),
        ({"row": 0, "value": "pass", "reviewer": "a\nb"}, "reviewer name must be"),
    ],
)
def test_values_are_checked_against_the_metric(kwargs: dict, message: str) -> None:
    result = pointwise_result(3)
    row, value = kwargs.pop("row"), kwargs.pop("value")
    with pytest.raises(LabelError, match=message.replace("(", r"\(").replace(")", r"\)")):
        result.label(row, value, **kwargs)
    assert result.labels.empty


def test_pairwise_labels_take_winners() -> None:
    result = pairwise_result(4)
    result.label(0, "candidate", reviewer="ana")
    result.label(0, "tie", criterion="accuracy", reviewer="ana")
    with pytest.raises(LabelError, match="'pass' is not one of candidate, tie, baseline"):
        result.label(1, "pass")
    assert result.label_choices(0, "pair")["overall"] == ["candidate", "tie", "baseline"]


def test_add_labels_checks_all_before_keeping_any() -> None:
    result = pointwise_result(3)
    frame = pd.DataFrame(
        {"row": [0, 1], "metric": ["support", "support"], "value": ["pass", "nope"]}
    )
    with pytest.raises(LabelError, match=r"label 1: .*'nope'"):
        result.add_labels(frame)
    assert result.labels.empty
    assert result.add_labels(frame.iloc[:1]) == 1


def test_export_labels_csv_and_jsonl(tmp_path: Path) -> None:
    result = pointwise_result(3)
    result.label(0, "pass", reviewer="ana", comment='says "hi", ok')
    csv = pd.read_csv(result.export_labels(tmp_path / "l.csv"))
    assert csv["comment"].tolist() == ['says "hi", ok']
    lines = (result.export_labels(tmp_path / "l.jsonl")).read_text().splitlines()
    assert json.loads(lines[0])["value"] == "pass"


def test_hostile_labels_file_skips_bad_lines_and_keeps_good(tmp_path: Path) -> None:
    path = pointwise_result(3).save(tmp_path / "r.jsonl")
    good = {
        "row": 1,
        "metric": "support",
        "criterion": "overall",
        "value": "pass",
        "reviewer": "<img src=x onerror=alert(1)>",
        "time": "2026-01-01T00:00:00Z",
        "comment": "<script>alert(1)</script>",
    }
    bad_lines = [
        "not json",
        json.dumps({**good, "row": 99}),
        json.dumps({**good, "row": True}),
        json.dumps({**good, "value": {"__class__": "x"}}),
        json.dumps({**good, "extra": 1}),
        json.dumps({**good, "time": "yesterday"}),
        "[" * 100_000,
        "1" * 5000,
        json.dumps({**good, "comment": "x" * 70_000}),
        json.dumps([1, 2]),
        "\udcff",
    ]
    text = "\n".join([*bad_lines[:5], json.dumps(good), *bad_lines[5:]]) + "\n"
    labels_path(path).write_text(text, encoding="utf-8", errors="surrogateescape")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded = load_result(path)
        frame = loaded.labels
    assert frame["comment"].tolist() == ["<script>alert(1)</script>"]  # kept as text
    assert len(loaded.label_problems) == len(bad_lines)
    assert "r.labels.jsonl line 2: row 99 is out of range" in loaded.label_problems[1]
    assert any("label skipped" in str(w.message) for w in caught)


def test_a_half_written_last_line_waits_for_its_end(tmp_path: Path) -> None:
    result = pointwise_result(3)
    path = result.save(tmp_path / "r.jsonl")
    loaded = load_result(path)
    line = json.dumps(
        {
            "row": 0,
            "metric": "support",
            "criterion": "overall",
            "value": "fail",
            "reviewer": "x",
            "time": "2026-01-01T00:00:00Z",
            "comment": "",
        }
    )
    with labels_path(path).open("a") as fh:
        fh.write(line[:20])
    assert loaded.labels.empty and loaded.label_problems == []
    with labels_path(path).open("a") as fh:
        fh.write(line[20:] + "\n")
    assert loaded.labels["value"].tolist() == ["fail"]


def _label_many(path: str, reviewer: str, n: int) -> None:
    result = load_result(path)
    for i in range(n):
        result.label(i % 40, "pass" if i % 2 else "fail", reviewer=reviewer, comment=f"{i}" * 50)


def test_two_processes_appending_at_once_lose_nothing(tmp_path: Path) -> None:
    path = str(pointwise_result(40).save(tmp_path / "r.jsonl"))
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_label_many, args=(path, name, 300)) for name in ("ana", "bo")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    history = load_result(path).label_history
    assert len(history) == 600
    assert sorted(history.groupby("reviewer").size().tolist()) == [300, 300]
    assert load_result(path).label_problems == []


def test_a_labelled_result_still_pickles_and_keeps_its_labels() -> None:
    """Results travel by pickle (Ray, multiprocessing): the label store's lock must not stop
    them, and the labels arrive with the result, still checked against its metrics."""
    import pickle

    result = pointwise_result(3)
    result.label(0, "pass", reviewer="ana")
    again = pickle.loads(pickle.dumps(result))
    assert again.labels[["row", "value", "reviewer"]].values.tolist() == [[0, "pass", "ana"]]
    again.label(1, "fail", reviewer="bo")  # the copy's store works
    with pytest.raises(LabelError):
        again.label(2, "maybe", reviewer="bo")


def test_exported_label_csv_never_runs_a_reviewers_comment_as_a_formula(tmp_path: Path) -> None:
    """Comments and reviewer names come from the review page: someone else's text."""
    import csv

    result = pointwise_result(3)
    result.label(0, "pass", reviewer="=cmd|' /C calc'!A0", comment='=HYPERLINK("evil","x")')
    path = result.export_labels(tmp_path / "labels.csv")
    rows = list(csv.DictReader(path.open(newline="", encoding="utf-8")))
    assert rows[0]["comment"] == '\'=HYPERLINK("evil","x")'
    assert rows[0]["reviewer"].startswith("'=")
