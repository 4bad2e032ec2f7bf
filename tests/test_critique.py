"""Critique over real HTTP: which of a judge's answers is scored, and when a pairwise answer
argues against itself (the fake judge answers the texts reasoning judges really write)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.testing import FakeJudgeServer

_ROW = pd.DataFrame({"prompt": ["p"], "response": ["r"], "baseline_model_response": ["b"]})


def _verdicts(word: str) -> str:
    return json.dumps({"verdicts": {f"q{i}": {"verdict": word} for i in (1, 2, 3)}})


def _run(responder: Callable[[dict[str, Any]], str], metric: Any) -> tuple[pd.DataFrame, int]:
    with FakeJudgeServer(responder) as server:
        judge = rl.Judge(server.url, model="m", cache=False)
        table = rl.evaluate(_ROW, [metric], judge=judge).table
        return table, len(server.requests)


_CHECKLIST = rl.Rubric.checklist(["Is it right?", "Is it complete?", "Is it kind?"])


@pytest.mark.parametrize(
    "text",
    [
        f"Draft:\n```json\n{_verdicts('YES')}\n```\nRe-reading the response, all three fail."
        f"\n```json\n{_verdicts('NO')}\n```",
        f"<think>At first {_verdicts('YES')}; no, wrong.</think>\n{_verdicts('NO')}",
    ],
)
def test_a_reasoning_judges_final_verdict_is_scored_not_its_draft(text: str) -> None:
    table, calls = _run(lambda body: text, rl.metrics.RubricMetric(rubric=_CHECKLIST, name="c"))
    assert table.loc[0, "c/error"] is None and calls == 1
    assert [c["label"] for c in table.loc[0, "c/criteria"]] == ["NO", "NO", "NO"]
    assert table.loc[0, "c/score"] == 0.0


def test_a_single_answer_is_scored_as_it_always_was() -> None:
    # negative control: one answer with prose around it
    text = f"All good.\n```json\n{_verdicts('YES')}\n```\nDone {{a, b}}."
    table, calls = _run(lambda body: text, rl.metrics.RubricMetric(rubric=_CHECKLIST, name="c"))
    assert table.loc[0, "c/score"] == 1.0 and calls == 1


def test_a_cut_off_final_answer_is_asked_again_then_the_rows_error_never_the_draft() -> None:
    text = f"Draft {_verdicts('YES')}\nFinal: " + _verdicts("NO")[:40]
    metric = rl.metrics.RubricMetric(rubric=_CHECKLIST, name="c", reask=1)
    table, calls = _run(lambda body: text, metric)
    assert calls == 2
    assert table.loc[0, "c/score"] is None or pd.isna(table.loc[0, "c/score"])
    assert "earlier draft is never taken" in table.loc[0, "c/error"]
    assert table.loc[0, "c/raw_output"] == text


# -- pairwise: an overall choice that contradicts the criteria ---------------------------------

_PAIR = rl.Rubric.checklist(["Is it right?", "Is it complete?"])


def _pairwise(choice: str, winner: str, a: str, b: str) -> str:
    crit = {"evidence": "e", "a": a, "b": b, "winner": winner}
    return json.dumps(
        {
            "criteria": {c.name: crit for c in _PAIR.criteria},
            "overall": {"reasoning": "r", "choice": choice},
        }
    )


def _by_order(first: str, swapped: str) -> Callable[[dict[str, Any]], str]:
    """Answers the candidate-first prompt with ``first``, the swapped one with ``swapped``."""

    def answer(body: dict[str, Any]) -> str:
        prompt = json.dumps(body["messages"])
        a_is_candidate = prompt.find("CANDIDATE") < prompt.find("BASELINE")
        return first if a_is_candidate else swapped

    return answer


def _pair_row() -> pd.DataFrame:
    return pd.DataFrame(
        {"prompt": ["p"], "response": ["CANDIDATE"], "baseline_model_response": ["BASELINE"]}
    )


def _run_pair(responder: Callable[[dict[str, Any]], str], reask: int = 1) -> tuple[Any, int]:
    metric = rl.metrics.PairwiseRubricMetric(rubric=_PAIR, name="pw", reask=reask)
    with FakeJudgeServer(responder) as server:
        judge = rl.Judge(server.url, model="m", cache=False)
        table = rl.evaluate(_pair_row(), [metric], judge=judge).table
        return table.loc[0], len(server.requests)


@pytest.mark.parametrize(
    ("first", "swapped"),
    [
        # A chosen overall in both orders (so a swap-consistent candidate win, before), while
        # the criteria say the other side wins everything / has the better levels
        (
            _pairwise("A much better", "B", "NO", "YES"),
            _pairwise("B much better", "A", "YES", "NO"),
        ),
        (_pairwise("A better", "tie", "NO", "YES"), _pairwise("B better", "tie", "YES", "NO")),
    ],
)
def test_an_overall_choice_against_its_own_criteria_is_asked_again_then_inconsistent(
    first: str, swapped: str
) -> None:
    row, calls = _run_pair(_by_order(first, swapped))
    assert calls == 4  # both orders, each asked once more
    assert row["pw/error"] is None
    assert row["pw/swap_consistent"] is False or row["pw/swap_consistent"] == False  # noqa: E712
    assert row["pw/score"] == 0.0 and row["pw/pairwise_choice"] == "tie"
    assert row["pw/rationale"].startswith("(inconsistent, scored as a tie)")
    assert "make the overall choice agree" in row["pw/rationale"]


def test_a_contradiction_fixed_on_the_re_ask_is_a_normal_win() -> None:
    bad = _pairwise("A much better", "B", "NO", "YES")
    good_first = _pairwise("A better", "A", "YES", "NO")
    good_swapped = _pairwise("B better", "B", "NO", "YES")
    asked: list[int] = []

    def answer(body: dict[str, Any]) -> str:
        asked.append(1)
        if len(body["messages"]) == 1 and len(asked) <= 1:
            return bad  # the first call's first answer only
        return _by_order(good_first, good_swapped)(body)

    row, calls = _run_pair(answer)
    assert calls == 3
    assert row["pw/error"] is None and bool(row["pw/swap_consistent"]) is True
    assert row["pw/score"] == 0.5 and row["pw/pairwise_choice"] == "candidate better"


def test_a_choice_that_agrees_with_its_criteria_wins_at_once() -> None:
    # negative control: the same shapes, agreeing, are a confident swap-consistent win
    first = _pairwise("A much better", "A", "YES", "NO")
    swapped = _pairwise("B much better", "B", "NO", "YES")
    row, calls = _run_pair(_by_order(first, swapped))
    assert calls == 2
    assert row["pw/score"] == 1.0 and bool(row["pw/swap_consistent"]) is True
