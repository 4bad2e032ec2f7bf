"""CalibrationView: the verdict heat map, the comparisons behind a cell, both sides of one,
per-criterion bars, and the static forms."""

from __future__ import annotations

import pandas as pd
import pytest

from rubriclab.calibration import criterion_agreement, pairwise_agreement
from rubriclab.widgets import CalibrationView
from tests._view_data import XSS


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    judge = pd.DataFrame(
        {
            "question_id": [1, 2, 3, 4],
            "model_a": ["x", "y", "x", "x"],
            "model_b": ["y", "x", "y", "y"],
            "winner": ["model_a", "model_a", "tie", "model_b"],
            "judgment": ["A is better", f"y wins {XSS[0]}", "a tie", "B is better"],
        }
    )
    human = pd.DataFrame(
        {
            "question_id": [1, 1, 2, 3, 4],
            "model_a": ["x", "y", "x", "x", "x"],
            "model_b": ["y", "x", "y", "y", "y"],
            "winner": ["model_a", "model_b", "model_a", "model_b", "model_b"],
            "judge": ["e1", "e2", "e1", "e1", "e2"],
            "question": ["q1", "q1", f"q2 {XSS[1]}", "q3", "q4"],
        }
    )
    return judge, human


def _view() -> CalibrationView:
    judge, human = _frames()
    pairs = pairwise_agreement(judge, human, on="question_id")
    crit = criterion_agreement(
        pd.DataFrame({"accuracy": [3, 2, 3, 1], "clarity": [1, 2, 2, 2]}),
        pd.DataFrame({"accuracy": [2, 2, 3, 2], "clarity": [1, 1, 2, 2]}),
        n_boot=200,
    )
    return CalibrationView(pairs, crit, judge=judge, human=human, title="GPT-4 vs experts")


def test_heat_map_and_figures() -> None:
    view = _view()
    assert view.labels == ["A", "B", "tie"] and view.sides == ["judge", "human"]
    assert view.confusion == [[2, 0, 0], [1, 1, 0], [0, 1, 0]]
    assert view.summary["with_ties"] == {"agree": 3, "total": 5, "rate": 0.6}
    assert view.summary["without_ties"]["rate"] == 0.75
    assert view.summary["disagreements"] == 2
    assert [c["criterion"] for c in view.criteria] == ["accuracy", "clarity"]
    assert view.criteria[1]["mean_diff"] == pytest.approx(0.25)


def test_clicking_a_cell_lists_its_comparisons_and_opens_both_sides() -> None:
    view = _view()
    view.set_state({"cell": ["B", "A"]})  # judge says B (y wins), the expert says A
    assert view.cell_total == 1
    assert view.items[0]["keys"] == {"question_id": 2}
    assert view.items[0]["rater"] == "e1"
    view.set_state({"item": 0})
    judge_side, human_side = view.detail["sides"]
    assert judge_side["name"] == "judge" and judge_side["verdict"] == "B"
    assert {"name": "judgment", "text": f"y wins {XSS[0]}"} in judge_side["fields"]
    assert {"name": "question", "text": f"q2 {XSS[1]}"} in human_side["fields"]
    view.set_state({"cell": []})
    assert view.items == [] and view.detail is None


def test_a_cell_outside_the_labels_is_refused() -> None:
    view = _view()
    with pytest.raises(Exception, match="a cell is"):
        view.cell = ["A", "nope"]


def test_static_forms() -> None:
    bundle, _ = _view()._repr_mimebundle_()
    text = bundle["text/plain"]
    assert text.splitlines()[:3] == ["GPT-4 vs experts", "judge vs human", "  pairs: 4"]
    assert "agreement without ties: 75% (3/4) · random 50%" in text
    assert "clarity: +0.25 [" in text
    assert "rl-calibration-static" in bundle["text/html"]
    with pytest.raises(ValueError, match=r"needs rl\.pairwise_agreement"):
        CalibrationView()


def test_a_cells_comparisons_come_a_page_at_a_time_with_their_texts() -> None:
    n = 20
    judge = pd.DataFrame(
        {
            "question_id": list(range(n)),
            "model_a": ["x"] * n,
            "model_b": ["y"] * n,
            "winner": ["model_a"] * n,
            "judgment": [f"A is better because {i}" for i in range(n)],
        }
    )
    human = pd.DataFrame(
        {
            "question_id": list(range(n)),
            "model_a": ["x"] * n,
            "model_b": ["y"] * n,
            "winner": ["model_a"] * n,
            "judge": ["e1"] * n,
            "question": [f"question {i} {XSS[0]}" for i in range(n)],
            "answer_a": [f"answer a {i}" for i in range(n)],
        }
    )
    view = CalibrationView(
        pairwise_agreement(judge, human, on="question_id"), judge=judge, human=human
    )
    view.set_state({"cell": ["A", "A"]})
    assert view.cell_total == n and len(view.items) == view.page_size == 8
    texts = {t["name"]: t["text"] for t in view.items[0]["texts"]}
    assert texts == {
        "judgment": "A is better because 0",
        "question": f"question 0 {XSS[0]}",
        "answer_a": "answer a 0",
    }
    view.set_state({"page": 2})
    assert [it["keys"]["question_id"] for it in view.items] == [16, 17, 18, 19]
    view.set_state({"item": 1})
    assert view.detail["item"]["keys"] == {"question_id": 17}
    view.set_state({"page": 99})
    assert view.page == 2  # clamped to the last page


def test_figures_from_a_mock_run_carry_the_mock_banner_and_a_real_run_does_not() -> None:
    """Issue 26: a CalibrationView of agreement figures whose judge side came from the mock
    judge showed no MOCK banner. The mark travels with the mock run's table (and the columns
    taken from it) into the figures and the view; a real run's figures have none."""
    import rubriclab as rl
    from rubriclab.testing import FakeJudgeServer

    df = pd.DataFrame({"prompt": [f"q{i}" for i in range(6)], "response": ["an answer"] * 6})
    rubric = rl.Rubric.analytic(
        {
            "accuracy": {"levels": {1: "wrong", 2: "partly", 3: "right"}},
            "clarity": {"levels": {1: "unclear", 2: "fair", 3: "clear"}},
        }
    )
    metric = rl.metrics.RubricMetric(rubric=rubric, name="m")
    human = pd.Series([{"accuracy": 2, "clarity": 3}] * 6)
    mock = rl.evaluate(df, [metric], judge="mock")
    crit = criterion_agreement(mock.table["m/criteria"], human, rubric=rubric, n_boot=50)
    view = CalibrationView(criteria=crit)
    assert crit.mock_judge and view.is_mock and "mock" in view.judge
    assert "MOCK judge" in view.static_text() and "MOCK judge" in view.static_html()

    with FakeJudgeServer() as server:  # answers as the mock would, over real HTTP
        judge = rl.Judge(server.url, model="m", max_retries=0, cache=False)
        # the negative control: a real run, over the mock run's own table
        real = rl.evaluate(mock.table[["prompt", "response"]], [metric], judge=judge)
    assert not real.is_mock
    crit = criterion_agreement(real.table["m/criteria"], human, rubric=rubric, n_boot=50)
    view = CalibrationView(criteria=crit)
    assert crit.mock_judge is None and not view.is_mock
    assert "MOCK" not in view.static_text() and "MOCK" not in view.static_html()
    # pairwise figures: the judge frame taken from a mock run says so too
    jd, hu = _frames()
    jd.attrs.update(mock.table.attrs)
    assert CalibrationView(pairwise_agreement(jd, hu, on="question_id")).is_mock
    assert not CalibrationView(pairwise_agreement(*_frames(), on="question_id")).is_mock
