"""``rl.calibrate(result)``: judge vs people from ``result.labels``, checked by hand."""

from __future__ import annotations

import math

import pytest

import rubriclab as rl
from rubriclab.widgets import CalibrationView

from ._view_data import XSS, pairwise_result, pointwise_result

# the judge's verdicts on pointwise_result(10) rows 0-9 (row 6 is a judge error):
#   fail fail pass fail pass fail - fail pass fail
ANA = ["fail", "pass", "pass", "fail", "fail", "fail", "pass", "fail", "pass", "fail"]


def _labelled(bo: bool = False) -> rl.EvalResult:
    result = pointwise_result(10)
    for row, value in enumerate(ANA):
        result.label(row, value, reviewer="ana", comment=f"ana on {row}")
    for row, level in enumerate([1, 3, 3]):
        result.label(row, level, criterion="accuracy", reviewer="ana")
    if bo:
        for row, value in enumerate(["fail", "fail", "pass", "pass"]):
            result.label(row, value, reviewer="bo")
    return result


def test_overall_agreement_and_kappa_by_hand() -> None:
    cal = rl.calibrate(_labelled())
    overall = cal["support", "overall"]
    # 9 rows compared (row 6 has no judge verdict): agree on 7
    assert (overall.n, overall.agree, overall.no_judge) == (9, 7, 1)
    # confusion judge x people: [[pass/pass 2, pass/fail 1], [fail/pass 1, fail/fail 5]]
    assert overall.confusion.to_numpy().tolist() == [[2, 1], [1, 5]]
    # p_o = 7/9, p_e = (3*3 + 6*6) / 81 = 5/9, kappa = (2/9) / (4/9)
    assert overall.kappa == pytest.approx(0.5)
    assert overall.kappa_low <= overall.kappa <= overall.kappa_high
    assert overall.interval().low < 7 / 9 < overall.interval().high
    # the same seed, the same interval
    again = rl.calibrate(_labelled())["support", "overall"]
    assert (again.kappa_low, again.kappa_high) == (overall.kappa_low, overall.kappa_high)


def test_criterion_levels_by_hand() -> None:
    acc = rl.calibrate(_labelled())["support", "accuracy"]
    # judge levels 1, 2, 3; people 1, 3, 3: p_o = 2/3, p_e = 1/3 * (1/3 + 0 + 2/3) = 1/3
    assert (acc.n, acc.agree) == (3, 2)
    assert acc.kappa == pytest.approx(0.5)


def test_disagreements_carry_texts_and_comments() -> None:
    cal = rl.calibrate(_labelled())
    rows = cal.disagreements
    assert rows[["row", "criterion", "judge", "people"]].values.tolist() == [
        [1, "overall", "fail", "pass"],
        [4, "overall", "pass", "fail"],
        [1, "accuracy", 2, 3],
    ]
    first = rows.iloc[0]
    assert first["comment"] == "ana on 1"
    assert [t["name"] for t in first["texts"]] == ["prompt", "response"]
    assert first["texts"][0]["text"].startswith("Question 1")


def test_several_reviewers_majority_split_and_their_own_agreement() -> None:
    overall = rl.calibrate(_labelled(bo=True))["support", "overall"]
    # rows 1 and 3: ana and bo split, left out; rows 0, 2, 4, 5, 7, 8, 9 compared: 6 agree
    assert (overall.n, overall.agree, overall.split) == (7, 6, 2)
    r = overall.reviewers
    assert r is not None and r.reviewers == ("ana", "bo")
    assert (r.units, r.agree) == (4, 2)
    # ana F P P F vs bo F F P P: p_o = 1/2 = p_e -> Cohen 0, Fleiss 0;
    # Krippendorff nominal: D_o = 4/8, D_e = 2*4*4/(8*7) -> alpha = 1 - 0.5/(32/56) = 0.125
    assert r.cohen_kappa == pytest.approx(0.0)
    assert r.fleiss_kappa == pytest.approx(0.0)
    assert r.krippendorff_alpha == pytest.approx(0.125)
    only_bo = rl.calibrate(_labelled(bo=True), reviewer="bo")["support", "overall"]
    assert (only_bo.n, only_bo.reviewers) == (4, None)


def test_pairwise_winners() -> None:
    result = pairwise_result(5)  # judge: candidate, candidate, tie, baseline, baseline
    for row, value in enumerate(["candidate", "tie", "tie", "baseline", "candidate"]):
        result.label(row, value, reviewer="ana")
    overall = rl.calibrate(result)["pair", "overall"]
    assert (overall.n, overall.agree) == (5, 3)
    assert list(overall.confusion.index) == ["candidate", "tie", "baseline"]


def test_no_labels_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no labels to compare with"):
        rl.calibrate(pointwise_result(3))


def test_calibration_view_shows_people_figures_as_text() -> None:
    result = pointwise_result(10, xss=True)
    for row, value in enumerate(ANA):
        result.label(row, value, reviewer="<b>ana</b>", comment=XSS[row % len(XSS)])
    cal = rl.calibrate(result)
    view = CalibrationView(cal)
    assert view.people is not None
    item = view.people["items"][0]
    assert (item["n"], item["agree"]) == (9, 7)
    assert view.people["disagreement_total"] == 2
    html = view.static_html()
    assert "Judge vs people" in html and "<script>" not in html
    assert "78% (7/9)" in view.static_text()
    assert not math.isnan(cal["overall"].kappa)
