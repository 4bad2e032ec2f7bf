"""PairwiseView: both sides, per-criterion winners, the choice, order agreement, run totals."""

from __future__ import annotations

import pytest

from rubriclab.widgets import PairwiseView
from tests._view_data import pairwise_result, pointwise_result


def test_sides_winners_choice_and_agreement() -> None:
    view = PairwiseView(pairwise_result(12))
    case = view.case
    assert case["candidate"] == {"name": "response", "text": "Candidate answer 0 "}
    assert case["baseline"] == {"name": "baseline_model_response", "text": "Baseline answer 0"}
    assert [f["name"] for f in case["fields"]] == ["prompt"]
    metric = case["metric"]
    assert metric["score"] == 1.0 and metric["choice"] == "candidate much better"
    assert metric["swap_consistent"] is True
    accuracy = metric["pair_rows"][0]
    assert accuracy["winner"] == "candidate" and accuracy["evidence"] == "cand evidence "
    assert accuracy["candidate"]["level"] == 3 and accuracy["baseline"]["level"] == 2
    view.set_state({"index": 3})
    assert view.case["metric"]["swap_consistent"] is False
    assert view.case["metric"]["pair_rows"][0]["consistent"] is False


def test_totals_for_the_whole_run() -> None:
    totals = PairwiseView(pairwise_result(12)).totals[0]
    # choices cycle 1, .5, 0, -.5, -1 over 12 rows: 6 wins, 2 ties (rows 2 and 7), 4 losses
    assert totals["metric"] == "pair"
    assert totals["win_rate"] == pytest.approx(6 / 12)
    assert totals["tie_rate"] == pytest.approx(2 / 12)
    assert totals["loss_rate"] == pytest.approx(4 / 12)
    assert totals["win_rate_low"] < totals["win_rate"] < totals["win_rate_high"]
    assert totals["swap_checked"] == 12 and totals["swap_inconsistent"] == 3


def test_needs_a_pairwise_metric() -> None:
    with pytest.raises(ValueError, match="no pairwise metric"):
        PairwiseView(pointwise_result(3))


def test_static_text_is_deterministic() -> None:
    text = repr(PairwiseView(pairwise_result(4)))
    assert text == repr(PairwiseView(pairwise_result(4)))
    assert text.splitlines()[0].startswith("pair: candidate wins 50% (2/4), ties 25% (1/4)")
    assert "mean preference +25.0% (on -100%..+100%)" in text.splitlines()[0]
    assert "orders agree: yes" in text


def test_pairwise_numbers_share_one_unit_and_never_say_fail() -> None:
    from rubriclab.widgets._charts import chart_data
    from rubriclab.widgets._source import as_source
    from rubriclab.widgets._static.common import fmt_score
    from rubriclab.widgets._svg import criteria_svg
    from rubriclab.widgets.report import report_html

    assert fmt_score(0.5, "pairwise") == "+50.0%" and fmt_score(-0.5, "pairwise") == "-50.0%"
    result = pairwise_result(4)
    page = report_html({"run": result}, "r")
    assert " fail</text>" not in page and "baseline</text>" in page
    for chart in chart_data(as_source(result)):
        if chart["kind"] == "pairwise":
            assert "fail" not in criteria_svg(chart)


def test_pairwise_labels_winners_beside_the_judge() -> None:
    from rubriclab.result import LabelError
    from tests._view_data import pairwise_result

    result = pairwise_result(5)
    view = PairwiseView(result, index=1)
    view.reviewer = "ana"
    assert view.labelling
    form = view._label_form({"row": 1})["form"][0]
    overall = form["questions"][0]
    assert overall["allowed"] == ["candidate", "tie", "baseline"]
    assert overall["judge"] == "candidate"
    assert [q["judge"] for q in form["questions"][1:]] == ["candidate", "tie"]
    saved = view._save_labels(
        {"labels": [{"row": 1, "metric": "pair", "criterion": "overall", "value": "baseline"}]}
    )
    assert saved == {"saved": 1}
    assert result.labels[["row", "value", "reviewer"]].values.tolist() == [[1, "baseline", "ana"]]
    with pytest.raises(LabelError, match="'pass' is not one of candidate, tie, baseline"):
        view._save_labels({"labels": [{"row": 1, "metric": "pair", "value": "pass"}]})
