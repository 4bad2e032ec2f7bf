"""Pairwise metrics and the predefined pairwise twins (``rl.metrics.pairwise.X``)."""

from __future__ import annotations

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.metrics import PREDEFINED, by_name
from rubriclab.metrics.pairwise import PairwiseRubricMetric


def test_the_pairwise_twins_are_pairwise_metrics_with_their_own_names() -> None:
    twins = [
        rl.metrics.pairwise.GENERAL_QUALITY,
        rl.metrics.pairwise.TEXT_QUALITY,
        rl.metrics.pairwise.INSTRUCTION_FOLLOWING,
        rl.metrics.pairwise.MULTIMODAL_UNDERSTANDING,
    ]
    assert all(isinstance(m, PairwiseRubricMetric) and m.kind == "pairwise" for m in twins)
    assert [m.generator for m in twins] == [
        rl.metrics.GENERAL_QUALITY.generator,
        rl.metrics.TEXT_QUALITY.generator,
        rl.metrics.INSTRUCTION_FOLLOWING.generator,
        rl.metrics.MULTIMODAL_UNDERSTANDING.generator,
    ]
    assert by_name("pairwise_text_quality") is rl.metrics.pairwise.TEXT_QUALITY
    assert len(PREDEFINED) == 8


def test_a_baseline_column_that_is_missing_is_a_clear_error() -> None:
    rubric = rl.Rubric.checklist(["Polite?"])
    metric = rl.metrics.PairwiseRubricMetric(rubric=rubric, name="vs", baseline_column="old")
    df = pd.DataFrame({"prompt": ["p"], "response": ["r"], "baseline_model_response": ["b"]})
    with pytest.raises(ValueError, match="the data has no 'old' column"):
        rl.evaluate(df, [metric], judge="mock")


def test_pairwise_columns_come_from_the_named_baseline_column() -> None:
    rubric = rl.Rubric.checklist(["Polite?"])
    metric = rl.metrics.PairwiseRubricMetric(rubric=rubric, name="vs", baseline_column="old")
    df = pd.DataFrame({"prompt": ["p", "q"], "response": ["r", "s"], "old": ["b", None]})
    t = rl.evaluate(df, [metric], judge="mock").table
    assert {"vs/pairwise_choice", "vs/swap_consistent", "vs/candidate_criteria"} <= set(t.columns)
    assert t.loc[1, "vs/error"] == "no baseline response to compare against"
    assert t.loc[0, "vs/error"] is None and t.loc[0, "vs/score"] in (1.0, 0.5, 0.0, -0.5, -1.0)
