"""The ``{metric}/field`` column contract, ``to_plain`` and ``preview``."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.columns import (
    FIELDS,
    NESTED_FIELDS,
    PAIRWISE_FIELDS,
    SCORE,
    col,
    field_of,
    metric_of,
    preview,
    split_col,
    to_plain,
)


def test_col_and_split_col_are_inverse() -> None:
    assert col("support", SCORE) == "support/score"
    assert split_col("support/score") == ("support", "score")
    assert split_col(col("support", "candidate_criteria")) == ("support", "candidate_criteria")
    assert metric_of("support/error") == "support" and field_of("support/error") == "error"


@pytest.mark.parametrize("column", ["prompt", "response", "/score", "support/", ""])
def test_a_data_column_is_no_metric_column(column: str) -> None:
    assert split_col(column) is None
    assert metric_of(column) is None and field_of(column) is None


def test_a_real_result_table_uses_exactly_the_contract_fields() -> None:
    rubric = rl.Rubric.checklist(["Says hello?", "Is polite?"])
    df = pd.DataFrame({"prompt": ["Greet me"], "response": ["Hello!"]})
    result = rl.evaluate(df, [rl.metrics.RubricMetric(rubric=rubric, name="greet")], judge="mock")
    fields = [field_of(c) for c in result.table.columns if metric_of(c) == "greet"]
    assert fields[: len(FIELDS)] == list(FIELDS)
    assert set(fields) <= {*FIELDS, *PAIRWISE_FIELDS, "tokens", "latency", "attempts"}
    assert set(NESTED_FIELDS) >= {"criteria", "raw_output"}


def test_to_plain_gives_values_json_can_write_and_read_back() -> None:
    rubric = rl.Rubric.checklist(["Says hello?"])
    value = {
        1: np.int64(3),
        "f": np.float32(0.5),
        "nan": float("nan"),
        "inf": math.inf,
        "na": pd.NA,
        "nat": pd.NaT,
        "b": np.bool_(True),
        "arr": np.array([1, 2]),
        "tuple": (1, "x"),
        "when": pd.Timestamp("2026-01-02T03:04:05Z"),
        "dt": datetime(2026, 1, 2, tzinfo=UTC),
        "bytes": b"\x00\x01",
        "rubric": rubric,
        "series": pd.Series([1.0, math.nan]),
    }
    out = to_plain(value)
    assert json.loads(json.dumps(out, allow_nan=False)) == out
    assert out["1"] == 3 and type(out["1"]) is int
    assert out["f"] == 0.5 and out["b"] is True
    assert out["nan"] is None and out["inf"] is None and out["na"] is None and out["nat"] is None
    assert out["arr"] == [1, 2] and out["tuple"] == [1, "x"] and out["series"] == [1.0, None]
    assert out["when"] == "2026-01-02T03:04:05+00:00"
    assert out["bytes"] == "<2 bytes>"
    assert rl.Rubric.from_dict(out["rubric"]) == rubric


def test_to_plain_leaves_unknown_objects_to_the_caller() -> None:
    class Opaque:
        def __str__(self) -> str:
            return "opaque"

    thing = Opaque()
    assert to_plain([thing]) == [thing]  # json.dumps then names it
    assert to_plain([thing], default=str) == ["opaque"]


def test_old_names_still_import() -> None:
    from rubriclab.calibration.measures import to_python
    from rubriclab.result import plain

    assert plain is to_plain and to_python is to_plain


def test_preview_is_one_line_and_never_longer_than_the_limit() -> None:
    assert preview("  a\n\tb   c ", 10) == "a b c"
    cut = preview("word " * 50, 20)
    assert len(cut) == 20 and cut.endswith("…") and "\n" not in cut
    assert preview("abc", 3) == "abc"
    assert preview("abcd", 0) == ""
