"""The arena: Bradley-Terry checked against choix, the pair schedule, and whole arenas judged
over real HTTP by scripted judges of known behaviour (with a random judge as the control)."""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

import numpy as np
import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.ranking import arena, fit_strengths, schedule_pairs, to_elo, win_matrix
from rubriclab.testing import FakeJudgeServer
from tests.judge_scripts import first_position

choix = pytest.importorskip("choix")


# -- Bradley-Terry -----------------------------------------------------------------------------
def _outcomes(
    seed: int, n: int, strengths: list[float], tie_share: float
) -> list[tuple[int, int, float]]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        i, j = (int(x) for x in rng.choice(len(strengths), 2, replace=False))
        p = 1 / (1 + math.exp(-(strengths[i] - strengths[j])))
        u = rng.random()
        out.append((i, j, 0.5 if u < tie_share else 1.0 if rng.random() < p else 0.0))
    return out


def _choix(outcomes: list[tuple[int, int, float]], k: int, alpha: float) -> np.ndarray:
    """choix's penalised maximum likelihood on the same outcomes: a decision counted twice, a tie
    as one win each way (so a tie weighs half a decision)."""
    data: list[tuple[int, int]] = []
    for i, j, s in outcomes:
        data += {1.0: [(i, j), (i, j)], 0.0: [(j, i), (j, i)], 0.5: [(i, j), (j, i)]}[s]
    ref = choix.opt_pairwise(k, data, alpha=alpha, tol=1e-12)
    return np.asarray(ref - ref.mean())


@pytest.mark.parametrize("prior", [0.0, 0.01, 0.5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_strengths_equal_choix(prior: float, seed: int) -> None:
    truth = [1.2, 0.6, 0.0, -0.4, -1.1]
    outcomes = _outcomes(seed, 400, truth, tie_share=0.2)
    ours = fit_strengths(win_matrix(outcomes, 5), prior)
    np.testing.assert_allclose(ours, _choix(outcomes, 5, 2 * prior), atol=1e-6)


def test_a_tie_is_half_a_win_each_way() -> None:
    # two ties between 0 and 1 weigh like one win each: equal strengths
    wins = win_matrix([(0, 1, 0.5), (0, 1, 0.5), (1, 2, 1.0), (2, 1, 1.0)], 3)
    assert wins.tolist() == [[0, 1, 0], [1, 0, 1], [0, 1, 0]]
    theta = fit_strengths(wins, 0.0)
    np.testing.assert_allclose(theta, [0, 0, 0], atol=1e-9)


def test_an_unbeaten_candidate_needs_a_prior() -> None:
    wins = win_matrix([(0, 1, 1.0), (0, 1, 1.0), (1, 2, 1.0), (2, 1, 1.0)], 3)
    with pytest.raises(ValueError, match="unbounded; give a prior > 0"):
        fit_strengths(wins, 0.0)
    theta = fit_strengths(wins, 0.01)
    assert theta[0] > theta[1] and np.all(np.isfinite(theta))


def test_elo_scale() -> None:
    # 400 points is a factor of ten in odds
    assert to_elo(np.array([math.log(10) / 2, -math.log(10) / 2])).tolist() == pytest.approx(
        [1200.0, 800.0]
    )


# -- the schedule ------------------------------------------------------------------------------
def test_all_pairs_on_every_case() -> None:
    plan = schedule_pairs(3, ["a", "b", "c", "d"])
    assert len(plan) == 3 * 6
    assert {(a, b) for _, a, b in plan if _ == 0} == {
        ("a", "b"),
        ("a", "c"),
        ("a", "d"),
        ("b", "c"),
        ("b", "d"),
        ("c", "d"),
    }


def test_a_budget_covers_pairs_evenly_and_connects_everyone() -> None:
    names = [f"m{i}" for i in range(6)]
    plan = schedule_pairs(30, names, pairs_per_case=2, seed=3)
    assert len(plan) == 60
    counts = pd.Series([tuple(sorted((a, b))) for _, a, b in plan]).value_counts()
    assert len(counts) == 15 and counts.max() - counts.min() <= 1
    # the first k - 1 comparisons already connect every candidate
    first = plan[: len(names) - 1]
    reached = {first[0][1]}
    for _ in names:
        for _, a, b in first:
            if a in reached or b in reached:
                reached |= {a, b}
    assert reached == set(names)


def test_a_budget_too_small_to_connect_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot connect 5 candidates"):
        schedule_pairs(3, list("abcde"), pairs_per_case=1)


# -- whole arenas over HTTP --------------------------------------------------------------------
RUBRIC = rl.Rubric.checklist(["Is it correct?", "Is it complete?"])
QUALITY = re.compile(r"\[quality (-?\d+(?:\.\d+)?)\]")


def _between(text: str, tag: str) -> str:
    match = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    assert match, f"no <{tag}> in the prompt"
    return match.group(1)


def _unit(*parts: str) -> float:
    digest = hashlib.sha256("\x00".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _pairwise_answer(body: dict[str, Any], a_wins: bool | None) -> str:
    ids = list(
        body["response_format"]["json_schema"]["schema"]["properties"]["criteria"]["properties"]
    )
    winner = "tie" if a_wins is None else "A" if a_wins else "B"
    crit = {i: {"evidence": "compared", "a": "YES", "b": "YES", "winner": winner} for i in ids}
    choice = "tie" if a_wins is None else "A better" if a_wins else "B better"
    return json.dumps({"criteria": crit, "overall": {"reasoning": "read both", "choice": choice}})


def bradley_terry_judge(body: dict[str, Any]) -> str:
    """Prefers the response of higher hidden quality with Bradley-Terry odds: the same coin in
    both orders (it hashes the two texts unordered), so its verdicts are swap-consistent."""
    prompt = body["messages"][0]["content"]
    a, b = _between(prompt, "response_A"), _between(prompt, "response_B")
    qa, qb = (float(QUALITY.search(t).group(1)) for t in (a, b))  # type: ignore[union-attr]
    first, second = sorted((a, b))
    p_first = 1 / (1 + math.exp(-((qa - qb) if first == a else (qb - qa))))
    first_wins = _unit(first, second) < p_first
    return _pairwise_answer(body, first_wins == (first == a))


def random_judge(body: dict[str, Any]) -> str:
    """The control: a coin per pair (both orders agree), blind to quality."""
    prompt = body["messages"][0]["content"]
    a, b = _between(prompt, "response_A"), _between(prompt, "response_B")
    first, second = sorted((a, b))
    first_wins = _unit("coin", first, second) < 0.5
    return _pairwise_answer(body, first_wins == (first == a))


QUALITIES = {"best": 2.0, "good": 1.0, "fair": 0.0, "weak": -1.0, "worst": -2.0}


def _cases(n: int) -> pd.DataFrame:
    rows = []
    for case in range(n):
        row = {"prompt": f"Question {case}: explain the refund policy."}
        for name, q in QUALITIES.items():
            row[name] = f"{name}'s answer to question {case} [quality {q}]"
        rows.append(row)
    return pd.DataFrame(rows)


def _metric() -> Any:
    return rl.metrics.PairwiseRubricMetric(rubric=RUBRIC, name="vs")


def test_a_known_order_is_recovered_with_separated_intervals(fake_judge: FakeJudgeServer) -> None:
    fake_judge.responder = bradley_terry_judge
    judge = rl.Judge(fake_judge.url, model="bt-judge", max_retries=0)
    ar = arena(_cases(40), candidates=list(QUALITIES), metric=_metric(), judge=judge, n_boot=400)

    assert list(ar.ranking["candidate"]) == list(QUALITIES)
    assert len(fake_judge.requests) == 40 * 10 * 2  # every pair of every case, both orders
    assert ar.errors == 0
    top, bottom = ar.ranking.iloc[0], ar.ranking.iloc[-1]
    assert top.elo_low > bottom.elo_high  # the data separate the ends
    assert top.rank_high <= 2 and bottom.rank_low >= 4
    # every interval holds its point estimate
    assert (ar.ranking.elo_low <= ar.ranking.elo).all() and (
        ar.ranking.elo <= ar.ranking.elo_high
    ).all()
    # the matrix: best beats worst more often than not; complementary cells add to 1
    assert ar.matrix.at["best", "worst"] > 0.5
    assert ar.matrix.at["best", "worst"] + ar.matrix.at["worst", "best"] == pytest.approx(1.0)
    assert (ar.pairs["swap_inconsistent"] == 0).all()
    assert set(ar.criteria.columns) == {"q1", "q2"}
    assert "MOCK" not in ar.summary_text()


def test_the_random_judge_control_separates_nobody(fake_judge: FakeJudgeServer) -> None:
    fake_judge.responder = random_judge
    judge = rl.Judge(fake_judge.url, model="coin", max_retries=0)
    ar = arena(_cases(40), candidates=list(QUALITIES), metric=_metric(), judge=judge, n_boot=400)
    # all intervals overlap: no candidate is shown better than another
    assert ar.ranking.elo_low.max() < ar.ranking.elo_high.min()
    assert (ar.ranking.rank_low == 1).sum() >= 2


def test_a_position_biased_judge_ties_everyone(fake_judge: FakeJudgeServer) -> None:
    fake_judge.responder = first_position
    judge = rl.Judge(fake_judge.url, model="first", max_retries=0)
    ar = arena(
        _cases(6), candidates=["best", "fair", "worst"], metric=_metric(), judge=judge, n_boot=50
    )
    assert (ar.pairs["swap_inconsistent_rate"] == 1.0).all()
    np.testing.assert_allclose(ar.ranking["elo"], 1000.0, atol=1e-6)
    assert (ar.matrix.stack().dropna() == 0.5).all()
    assert (ar.ranking["rank"] == 1).all() and (ar.ranking["rank_high"] == 1).all()


def test_failed_comparisons_are_counted_not_scored(fake_judge: FakeJudgeServer) -> None:
    def flaky(body: dict[str, Any]) -> str:
        prompt = body["messages"][0]["content"]
        return "not json at all" if "question 0 " in prompt else bradley_terry_judge(body)

    fake_judge.responder = flaky
    judge = rl.Judge(fake_judge.url, model="flaky", max_retries=0)
    ar = arena(_cases(5), candidates=["best", "worst"], metric=_metric(), judge=judge, n_boot=50)
    assert ar.errors == 1
    assert ar.ranking["comparisons"].tolist() == [4, 4]
    assert "1 comparisons had no verdict" in ar.summary_text()


def test_runs_as_candidates_and_mock_says_mock() -> None:
    cases = _cases(3)
    pointwise = [rl.metrics.RubricMetric(rubric=RUBRIC, name="p")]
    runs = {
        # a finished run (its metric columns are not read) and a plain table
        "best": rl.evaluate(
            cases[["prompt"]].assign(response=cases["best"]), pointwise, judge="mock"
        ),
        "worst": cases[["prompt"]].assign(response=cases["worst"]),
    }
    ar = arena(runs, metric=_metric(), judge="mock", n_boot=20)
    assert set(ar.ranking["candidate"]) == {"best", "worst"}
    assert len(ar.result.table) == 3
    assert ar.is_mock and "MOCK" in ar.summary_text()


def test_clear_errors() -> None:
    with pytest.raises(ValueError, match="no column 'nope'"):
        arena(_cases(2), candidates=["best", "nope"], metric=_metric(), judge="mock")
    with pytest.raises(ValueError, match="at least two candidates"):
        arena(_cases(2), candidates=["best"], metric=_metric(), judge="mock")
    metric = rl.metrics.RubricMetric(rubric=RUBRIC, name="pointwise")
    with pytest.raises(ValueError, match="is not pairwise"):
        arena(_cases(2), candidates=["best", "worst"], metric=metric, judge="mock")
