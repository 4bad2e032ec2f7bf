"""Rows into cases, read column by column: what each kind of cell becomes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rubriclab.data import DataError, to_cases


def test_text_cells_missing_cells_and_empty_answers_read_as_users_mean_them() -> None:
    frame = pd.DataFrame(
        {
            "prompt": ["q0", "q1", None, "q3"],
            "response": ["a0", "", "a2", np.nan],
            "topic": ["x", "y", "z", "w"],
        }
    )
    cases = to_cases(frame, need_response=False)
    assert [c.prompt for c in cases] == ["q0", "q1", "", "q3"]
    assert [c.response for c in cases] == ["a0", "", "a2", None]  # "" was said; NaN was not
    assert cases[2].error == "no prompt (column 'prompt' is empty in this row)"
    assert [c.extra for c in cases][:2] == [{"topic": "x"}, {"topic": "y"}]
    assert all(c.error is None for i, c in enumerate(cases) if i != 2)


def test_numbers_and_json_cells_become_text_and_extras_stay_python_values() -> None:
    frame = pd.DataFrame(
        {
            "prompt": pd.Series([np.int64(7), 2.5, {"q": 1}], dtype=object),
            "response": ["a", "b", "c"],
            "n": pd.Series([np.int64(1), np.float64(2.0), True], dtype=object),
        }
    )
    cases = to_cases(frame)
    assert [c.prompt for c in cases] == ["7", "2.5", '{"q": 1}']
    assert [type(c.extra["n"]) for c in cases] == [int, float, bool]


def test_a_cell_that_is_not_text_fails_its_row_only_naming_row_and_column() -> None:
    frame = pd.DataFrame({"prompt": ["q0", "q1"], "answer": ["fine", {1, 2}]}, index=[10, 11])
    cases = to_cases(frame, mapping={"response": "answer"})
    assert cases[0].error is None and cases[0].response == "fine"
    assert cases[1].error == "row 1 (index 11), column 'answer': expected text, got set"


def test_two_columns_with_one_name_are_refused_with_the_name() -> None:
    frame = pd.DataFrame([["q", "a", "b"]], columns=["prompt", "response", "response"])
    with pytest.raises(DataError, match="more than one column named 'response'"):
        to_cases(frame)
