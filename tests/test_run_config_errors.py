"""Validation errors retold as key paths a person wrote, with "did you mean"."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rubriclab import Rubric
from rubriclab.run_config import RunConfig
from rubriclab.run_config.errors import did_you_mean, explain, key_path


def test_key_paths_read_like_yaml() -> None:
    assert key_path(["metrics", 0, "rubric"]) == "metrics[0].rubric"
    assert key_path(["criteria", "2", "levels", 0]) == "criteria[2].levels[0]"


def test_did_you_mean_only_for_close_words() -> None:
    assert did_you_mean("pas_mark", ["pass_mark", "criteria"]) == " (did you mean 'pass_mark'?)"
    assert did_you_mean("zzz", ["pass_mark", "criteria"]) == ""


def test_union_members_and_pydantic_wording_never_show() -> None:
    with pytest.raises(ValidationError) as info:
        RunConfig.model_validate(
            {"data": "d.csv", "metrics": [{"rubric": 3, "samples": 0}], "judeg": "mock"}
        )
    text = explain(info.value, RunConfig)
    assert "metrics[0].samples: must be at least 1, got 0" in text
    assert "unknown key 'judeg' (did you mean 'judge'?)" in text
    assert "metrics[0].rubric: expected text or a mapping (key: value lines) or a list" in text
    assert text.count("metrics[0].rubric") == 1 and "dict[" not in text
    assert "pydantic" not in text and "Input should" not in text


def test_rubric_errors_name_the_criterion_key() -> None:
    with pytest.raises(ValidationError) as info:
        Rubric.model_validate({"criteria": [{"name": "a", "weigth": 1}]})
    assert "unknown key 'weigth' at criteria[0].weigth (did you mean 'weight'?)" in explain(
        info.value, Rubric
    )
