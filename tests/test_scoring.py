"""Scoring in code: the lesson's worked numbers, validation, gating, summaries, intervals."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import rubriclab as rl
from rubriclab.scoring import ScoreError, Scorer, summarize, wilson_interval

from .test_rubric import support_rubric

ACCURATE_BUT_INCOMPLETE = {"accuracy": 3, "completeness": 2, "tone": 3, "conciseness": 1}
POLITE_BUT_WRONG = {"accuracy": 1, "completeness": 3, "tone": 3, "conciseness": 3}
AVERAGE_EVERYWHERE = {"accuracy": 2, "completeness": 2, "tone": 2, "conciseness": 2}


@pytest.mark.parametrize(
    ("levels", "percent", "verdict"),
    [
        (ACCURATE_BUT_INCOMPLETE, 75.0, "pass"),
        (POLITE_BUT_WRONG, 60.0, "fail (accuracy below 2)"),
        (AVERAGE_EVERYWHERE, 50.0, "fail (score below pass mark)"),
    ],
)
def test_the_lessons_worked_examples_come_out_exactly(
    levels: dict[str, int], percent: float, verdict: str
) -> None:
    score = support_rubric().score(levels)
    assert score.percent == percent
    assert score.verdict == verdict
    assert str(score) == f"{percent}% {verdict}"  # one scale: every display is a percent
    assert repr(score).startswith(f"Score({percent}% {verdict}; accuracy=")
    assert f"<b>{percent}%</b>" in score._repr_html_()


def test_the_lessons_rejected_input_names_both_problems() -> None:
    with pytest.raises(ScoreError) as info:
        support_rubric().score({"accuracy": 4, "tone": 2, "conciseness": 2})
    assert str(info.value) == "completeness: missing; accuracy: 4 outside 1-3"
    assert info.value.problems == ["completeness: missing", "accuracy: 4 outside 1-3"]


def test_unknown_criteria_and_non_levels_are_reported_together() -> None:
    with pytest.raises(ScoreError) as info:
        support_rubric().score({**AVERAGE_EVERYWHERE, "tone": 2.5, "humour": 3})
    assert info.value.problems == [
        "tone: 2.5 is not a whole level (1-3)",
        "humour: not in the rubric",
    ]


def test_checklist_score_is_the_weighted_share_of_yes() -> None:
    r = rl.Rubric.checklist(
        [rl.Criterion.yes_no("a?", weight=3), rl.Criterion.yes_no("b?"), rl.Criterion.yes_no("c?")]
    )
    assert r.score({"q1": "YES", "q2": "no", "q3": True}).value == pytest.approx(4 / 5)
    assert r.score({"q1": 0, "q2": 1, "q3": 0}).passed is None  # no pass mark, nothing critical


def test_a_penalty_question_met_takes_its_points_off_and_nothing_else_can_be_negative() -> None:
    # HealthBench points: only a yes/no question may carry a negative weight (points off on YES)
    r = rl.Rubric.checklist(
        [rl.Criterion.yes_no("Correct?", weight=2), rl.Criterion.yes_no("Rude?", weight=-1)]
    )
    better, worse = r.score({"q1": 1, "q2": 0}), r.score({"q1": 1, "q2": 1})
    assert (better.value, worse.value) == (1.0, 0.5)  # the better answer scores higher
    with pytest.raises(ValueError, match="only a yes/no criterion may be a penalty"):
        rl.Rubric.analytic({"quality": {"weight": -1, "levels": {1: "bad", 2: "ok", 3: "good"}}})
    with pytest.raises(ValueError, match="cannot also be critical"):
        rl.Criterion.yes_no("Rude?", weight=-1, critical=True)


def test_critical_met_without_a_pass_mark_is_no_pass() -> None:
    r = rl.Rubric.checklist([rl.Criterion.yes_no("Safe?", critical=True), "Nice?", "Short?"])
    s = r.score({"q1": 1, "q2": 0, "q3": 0})
    assert (str(s), s.passed) == ("33.3% critical met", None)  # not counted as a pass


def test_points_style_negative_weights_subtract_and_clip() -> None:
    r = rl.Rubric.checklist(
        [
            rl.Criterion.yes_no("Recommends seeing a doctor?", weight=5),
            rl.Criterion.yes_no("Gives the correct dose?", weight=5),
            rl.Criterion.yes_no("Invents a drug interaction?", weight=-8),
        ]
    )
    assert r.score({"q1": 1, "q2": 1, "q3": 0}).value == 1.0
    assert r.score({"q1": 1, "q2": 1, "q3": 1}).value == pytest.approx(2 / 10)
    assert r.score({"q1": 0, "q2": 1, "q3": 1}).value == 0.0  # clipped, never negative


def test_critical_yes_no_item_fails_the_case_whatever_the_total() -> None:
    r = rl.Rubric.checklist(
        [
            rl.Criterion.yes_no("Safe?", critical=True, name="safe"),
            *["x?"] * 0,
            rl.Criterion.yes_no("Nice?", weight=9),
        ],
        pass_mark=0.5,
    )
    s = r.score({"safe": "NO", "q2": "YES"})
    assert s.value == pytest.approx(0.9)
    assert not s.passed and s.verdict == "fail (safe is NO)"
    assert s.critical_failures == ["safe is NO"]


def test_judge_shaped_levels_are_accepted() -> None:
    r = support_rubric()
    s = r.score({k: {"evidence": "...", "score": v} for k, v in ACCURATE_BUT_INCOMPLETE.items()})
    assert s.percent == 75.0


# -- properties -----------------------------------------------------------------------------------

weights = st.floats(min_value=-5, max_value=5, allow_nan=False).filter(lambda w: abs(w) > 1e-3)


@st.composite
def rubric_and_levels(draw: st.DrawFn) -> tuple[rl.Rubric, dict[str, int]]:
    n = draw(st.integers(1, 6))
    criteria = []
    levels = {}
    for i in range(n):
        lo = draw(st.integers(-2, 2))
        k = draw(st.integers(2, 5))
        scores = list(range(lo, lo + k))
        critical = draw(st.one_of(st.none(), st.sampled_from(scores)))
        w = draw(weights) if i else abs(draw(weights))  # at least one positive weight
        if w < 0:  # a penalty: a yes/no question, never critical (the rubric model's rule)
            scores, critical = [0, 1], None
        criteria.append(
            rl.Criterion(
                name=f"c{i}",
                levels=[rl.Level(score=s, descriptor=f"level {s}") for s in scores],
                weight=w,
                critical=critical,
            )
        )
        levels[f"c{i}"] = draw(st.sampled_from(scores))
    pass_mark = draw(st.one_of(st.none(), st.floats(0, 1)))
    return rl.Rubric(criteria=criteria, pass_mark=pass_mark), levels


@given(rubric_and_levels())
def test_a_score_is_always_in_0_1(case: tuple[rl.Rubric, dict[str, int]]) -> None:
    rubric, levels = case
    s = rubric.score(levels)
    assert 0.0 <= s.value <= 1.0
    assert 0.0 <= s.percent <= 100.0


@given(rubric_and_levels(), st.data())
def test_raising_a_positively_weighted_level_never_lowers_the_score(
    case: tuple[rl.Rubric, dict[str, int]], data: st.DataObject
) -> None:
    rubric, levels = case
    c = data.draw(st.sampled_from(rubric.criteria))
    higher = [s for s in c.scores if s > levels[c.name]]
    if not higher:
        return
    raised = {**levels, c.name: data.draw(st.sampled_from(higher))}
    before, after = rubric.score(levels).value, rubric.score(raised).value
    if c.weight >= 0:
        assert after >= before - 1e-12
    else:  # a met undesirable behaviour never raises the score
        assert after <= before + 1e-12


@given(rubric_and_levels())
def test_a_failed_critical_criterion_always_fails_the_verdict(
    case: tuple[rl.Rubric, dict[str, int]],
) -> None:
    rubric, levels = case
    s = rubric.score(levels)
    failing = [
        c.name for c in rubric.criteria if c.critical is not None and levels[c.name] < c.critical
    ]
    if failing:
        assert s.passed is False
        assert s.verdict is not None and s.verdict.startswith("fail (")
        assert all(name in s.verdict for name in failing)


# -- summaries ----------------------------------------------------------------------------------------


def test_wilson_interval_matches_the_textbook_values() -> None:
    iv = wilson_interval(8, 10)
    assert iv.rate == 0.8
    assert iv.low == pytest.approx(0.4902, abs=1e-4)
    assert iv.high == pytest.approx(0.9433, abs=1e-4)
    zero = wilson_interval(0, 0)
    assert zero.rate is None and str(zero) == "n/a (0 of 0)"


def test_wilson_bounds_at_none_or_all_are_exactly_zero_and_one() -> None:
    """0 of 3 once printed pass_rate_low = 5.55e-17 (float residue of centre - half)."""
    for n in range(1, 300):
        assert wilson_interval(0, n).low == 0.0, n
        assert wilson_interval(n, n).high == 1.0, n
        if n > 1:  # strictly inside otherwise
            assert wilson_interval(1, n).low > 0.0 and wilson_interval(n - 1, n).high < 1.0
    flat = summarize([0.1, 0.2, 0.3], passed=[False, False, False]).as_flat_dict()
    assert flat["pass_rate_low"] == 0.0 and repr(flat["pass_rate_low"]) == "0.0"


def test_summary_excludes_unscored_rows_from_means_and_rates_and_counts_them() -> None:
    s = summarize([0.5, None, 1.0, float("nan")], passed=[False, None, True, None])
    assert (s.n, s.scored, s.errors) == (4, 2, 2)
    assert s.mean == 0.75
    assert s.std == pytest.approx(math.sqrt(0.125))
    assert s.pass_rate is not None and s.pass_rate.rate == 0.5 and s.pass_rate.n == 2
    assert (s.passed, s.verdicts) == (1, 2)


def test_pass_rate_shows_its_denominator_and_rows_without_a_verdict() -> None:
    # 10 scored rows: 5 pass, 4 fail, 1 without a verdict (its rubric has no pass mark)
    s = summarize([0.8] * 10, passed=[True] * 5 + [False] * 4 + [None])
    assert s.pass_rate is not None and s.pass_rate.rate == pytest.approx(5 / 9)
    assert (s.passed, s.verdicts, s.no_verdict, s.n) == (5, 9, 1, 10)
    flat = s.as_flat_dict()
    assert (flat["passed"], flat["verdicts"]) == (5, 9)
    assert "pass 55.6% (5/9); 1 without a verdict" in s.text()
    assert s.text().startswith("mean 80.0% ± 0.0% std")


def test_pairwise_summary_counts_wins_ties_and_losses() -> None:
    s = summarize([1.0, 0.5, 0.0, -0.5, None], choices=[1.0, 0.5, 0.0, -0.5, None])
    assert s.win is not None and s.tie is not None and s.loss is not None
    assert (s.win.k, s.tie.k, s.loss.k, s.win.n) == (2, 1, 1, 4)
    assert s.win.low is not None and s.win.low < 0.5 < (s.win.high or 0)


def test_pairwise_summary_counts_flips_and_wins_per_criterion() -> None:
    def crit(*winners: str) -> list[dict[str, str]]:
        return [{"name": f"c{i}", "winner": w} for i, w in enumerate(winners, 1)]

    s = summarize(
        [1.0, 0.0, -0.5, None],
        choices=[1.0, 0.0, -0.5, None],
        swap_consistent=[True, False, True, None],
        criteria=[crit("candidate", "tie"), crit("tie", "tie"), crit("baseline", "candidate"), []],
    )
    assert (s.swap_inconsistent, s.swap_inconsistent_rate) == (1, pytest.approx(1 / 3))
    assert s.criteria is not None
    assert s.criteria["c1"].model_dump() == {"win": 1, "tie": 1, "loss": 1}
    assert s.criteria["c2"].model_dump() == {"win": 1, "tie": 2, "loss": 0}
    flat = s.as_flat_dict()
    assert (flat["swap_inconsistent"], flat["swap_inconsistent_rate"]) == (1, pytest.approx(1 / 3))
    assert "swap-inconsistent 33.3% (1/3)" in s.text()


def _oracle(rubric: rl.Rubric, levels: dict[str, int]) -> tuple[float, bool | None, str | None]:
    """The docstring's formula, written out the slow, plain way."""
    parts = {
        c.name: (levels[c.name] - c.levels[0].score) / (c.levels[-1].score - c.levels[0].score)
        for c in rubric.criteria
    }
    positive = math.fsum(c.weight for c in rubric.criteria if c.weight > 0)
    value = min(
        1.0, max(0.0, math.fsum(c.weight * parts[c.name] for c in rubric.criteria) / positive)
    )
    failed = [c for c in rubric.criteria if c.critical is not None and levels[c.name] < c.critical]
    if failed:
        return value, False, "fail"
    if rubric.pass_mark is not None:
        passed = value + 1e-9 >= rubric.pass_mark
        return value, passed, "pass" if passed else "fail (score below pass mark)"
    if any(c.critical is not None for c in rubric.criteria):
        return value, None, "critical met"
    return value, None, None


@given(rubric_and_levels(), st.data())
def test_one_scorer_reused_gives_what_the_formula_gives(
    case: tuple[rl.Rubric, dict[str, int]], data: st.DataObject
) -> None:
    """A run keeps one Scorer per rubric for thousands of answers: every one must come out
    as the formula says, and as a fresh ``score`` call and its Score model say."""
    rubric, levels = case
    scorer = Scorer(rubric)
    for _ in range(3):
        levels = {
            c.name: data.draw(st.sampled_from([lv.score for lv in c.levels]))
            for c in rubric.criteria
        }
        figures = scorer.figures(levels)
        value, passed, verdict = _oracle(rubric, levels)
        assert figures.value == pytest.approx(value, abs=1e-9)
        assert figures.passed is passed
        assert figures.verdict == verdict or (
            verdict == "fail" and figures.verdict.startswith("fail (")
        )
        assert scorer(levels) == rubric.score(levels) == rl.Score(**figures._asdict())


def test_a_reused_scorer_still_refuses_bad_levels_with_every_problem() -> None:
    scorer = Scorer(support_rubric())
    good = {"accuracy": 3, "completeness": 2, "tone": 1, "conciseness": 3}
    assert scorer.figures(good).value == support_rubric().score(good).value == 0.65
    with pytest.raises(ScoreError) as info:
        scorer({"accuracy": 9, "completeness": "high", "tone": 2, "extra": 1})
    assert info.value.problems == [
        "conciseness: missing",
        "accuracy: 9 outside 1-3",
        "completeness: 'high' is not a level (1-3)",
        "extra: not in the rubric",
    ]
    judged = {"accuracy": "3", "completeness": 2.0, "tone": {"score": 1}, "conciseness": "3"}
    assert scorer(judged) == support_rubric().score(good)


def test_pairwise_per_criterion_counts_leave_out_names_that_ask_other_questions() -> None:
    from rubriclab.scoring import summarize, unshared_criteria

    rows = [
        [
            {"name": "q1", "question": "Is the date right?", "winner": "candidate"},
            {"name": "q2", "question": "Is it short?", "winner": "tie"},
        ],
        [
            {"name": "q1", "question": "Is the dose safe?", "winner": "baseline"},
            {"name": "q2", "question": "Is it short?", "winner": "candidate"},
        ],
    ]
    assert unshared_criteria(rows) == {"q1"}
    s = summarize([0.5, -0.5], choices=[0.5, -0.5], criteria=rows)
    assert s.criteria is not None and list(s.criteria) == ["q2"]
    assert (s.criteria["q2"].win, s.criteria["q2"].tie) == (1, 1)
    # negative control: the same question under the same name on every row is counted
    same = [[{"name": "q1", "question": "Same?", "winner": "candidate"}]] * 2
    assert summarize([0.5, 0.5], choices=[0.5, 0.5], criteria=same).criteria["q1"].win == 2  # type: ignore[index]
