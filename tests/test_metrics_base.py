"""The Metric protocol: every kind implements it, and evaluate needs nothing else."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.critique import Outcome
from rubriclab.metrics import Judged, Metric, Rows
from rubriclab.metrics.base import judged, outcome_columns
from rubriclab.rubric import Rubric

RUBRIC = Rubric.checklist(["Says hello?"])


@pytest.mark.parametrize(
    "metric",
    [
        rl.metrics.RubricMetric(rubric=RUBRIC, name="r"),
        rl.metrics.PairwiseRubricMetric(rubric=RUBRIC, name="p"),
        rl.metrics.RubricMetric(rubric=RUBRIC, name="panel", judges=["mock", "mock"]),
        rl.metrics.TemplateMetric(),
        rl.metrics.exact_match,
        rl.metrics.bleu,
        rl.metrics.TEXT_QUALITY,
        rl.metrics.pairwise.TEXT_QUALITY,
    ],
    ids=lambda m: m.name,
)
def test_every_kind_of_metric_is_a_metric(metric: object) -> None:
    assert isinstance(metric, Metric)


@pytest.mark.parametrize("thing", ["text_quality", object(), RUBRIC])
def test_anything_else_is_refused_before_any_call(thing: object) -> None:
    df = pd.DataFrame({"prompt": ["p"], "response": ["r"]})
    with pytest.raises(TypeError, match="not a metric"):
        rl.evaluate(df, [thing], judge="mock")  # type: ignore[list-item]


@dataclass(frozen=True)
class Shouting:
    """A metric evaluate has never heard of: the share of upper-case letters in the response."""

    name: str = "shouting"
    description: str = "share of upper-case letters"
    kind: ClassVar[Literal["computation"]] = "computation"
    rubric: ClassVar[Rubric | None] = None

    async def judge_rows(self, rows: Rows) -> Judged:
        outcomes = []
        for case in rows.cases:
            letters = [c for c in case.response or "" if c.isalpha()]
            if not letters:
                outcomes.append(Outcome(error="no letters to judge"))
            else:
                share = sum(c.isupper() for c in letters) / len(letters)
                outcomes.append(Outcome(score=share, rationale=f"{share:.0%} upper case"))
        return judged(self.name, outcomes)


def test_a_new_kind_of_metric_runs_through_evaluate_beside_the_built_in_ones() -> None:
    df = pd.DataFrame(
        {
            "prompt": ["a", "b", "c"],
            "response": ["HELLO", "Hello", "123"],
            "reference": ["HELLO"] * 3,
        }
    )
    assert isinstance(Shouting(), Metric)
    result = rl.evaluate(df, [Shouting(), rl.metrics.exact_match])
    t = result.table
    assert t["shouting/score"].tolist()[:2] == [1.0, 0.2]
    assert t.loc[2, "shouting/error"] == "no letters to judge"
    assert pd.isna(t.loc[2, "shouting/score"])  # an error row is never scored 0
    assert t["exact_match/score"].tolist() == [1.0, 0.0, 0.0]
    assert result.judge == "no judge (computation metrics)" and not result.is_mock
    assert result.summary.loc["shouting", "errors"] == 1


def test_outcome_columns_follow_the_column_contract_in_table_order() -> None:
    outcomes = [Outcome(score=1.0, verdict="pass"), Outcome(error="boom")]
    cols = outcome_columns(
        "m", outcomes, before={"m/rubric": [None, None]}, after={"m/judges": [[], []]}
    )
    assert list(cols) == [
        "m/rubric",
        "m/score",
        "m/verdict",
        "m/passed",
        "m/criteria",
        "m/rationale",
        "m/raw_output",
        "m/error",
        "m/tokens",
        "m/latency",
        "m/attempts",
        "m/judges",
    ]
    pair = outcome_columns("p", outcomes, pairwise=True)
    assert "p/pairwise_choice" in pair and "p/baseline_score" in pair
    assert cols["m/error"] == [None, "boom"]
