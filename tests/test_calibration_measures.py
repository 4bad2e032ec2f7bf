"""Judge-vs-human agreement: the lesson's numbers, scikit-learn's kappas, and the input rules."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import cohen_kappa_score

import rubriclab as rl
from rubriclab.calibration.measures import Agreement

LESSON_JUDGE = [3, 2, 3, 1, 2, 3, 3, 2, 1, 3]
LESSON_HUMAN = [3, 2, 2, 1, 3, 3, 1, 2, 1, 3]


def sk_kappa(y1: list[int], y2: list[int], **kw: object) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        warnings.simplefilter("ignore", UserWarning)  # "a single label was found"
        return float(cohen_kappa_score(y1, y2, **kw))  # type: ignore[arg-type]


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


def test_lesson_example_exact_within_one_and_output_seven() -> None:
    a = rl.agreement(LESSON_JUDGE, LESSON_HUMAN)
    assert isinstance(a, Agreement)
    assert (a.n, a.dropped) == (10, 0)
    assert a.exact == pytest.approx(0.7)
    assert a.within_one == pytest.approx(0.9)
    assert (a.exact_count, a.within_one_count) == (7, 9)
    # the lesson's output 7 is the 7th item: position 6, counted from 0 as result tables are
    assert list(a.disagreements.index) == [6]
    assert a.disagreements.loc[6, "judge"] == 3
    assert a.disagreements.loc[6, "human"] == 1
    assert a.disagreements.loc[6, "difference"] == 2
    assert "6: judge 3, human 1" in str(a)
    assert "0.70 (7/10)" in str(a)


def test_confusion_matrix_rows_are_judge_columns_are_human() -> None:
    a = rl.agreement(LESSON_JUDGE, LESSON_HUMAN)
    assert a.confusion.index.name == "judge"
    assert a.confusion.columns.name == "human"
    assert a.confusion.loc[3, 1] == 1  # output 7: judge 3, human 1
    assert a.confusion.loc[1, 3] == 0
    assert int(a.confusion.to_numpy().sum()) == 10
    assert np.trace(a.confusion.to_numpy()) == 7


def test_lesson_kappas_equal_sklearn() -> None:
    a = rl.agreement(LESSON_JUDGE, LESSON_HUMAN)
    assert same(a.kappa, sk_kappa(LESSON_JUDGE, LESSON_HUMAN))
    assert same(a.kappa_linear, sk_kappa(LESSON_JUDGE, LESSON_HUMAN, weights="linear"))
    assert same(a.kappa_quadratic, sk_kappa(LESSON_JUDGE, LESSON_HUMAN, weights="quadratic"))


paired_levels = st.integers(min_value=1, max_value=60).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 5), min_size=n, max_size=n),
        st.lists(st.integers(0, 5), min_size=n, max_size=n),
    )
)


@settings(max_examples=300, deadline=None)
@given(paired_levels)
def test_kappas_equal_sklearn_on_random_levels(pair: tuple[list[int], list[int]]) -> None:
    judge, human = pair
    a = rl.agreement(judge, human)
    assert same(a.kappa, sk_kappa(judge, human))
    assert same(a.kappa_linear, sk_kappa(judge, human, weights="linear"))
    assert same(a.kappa_quadratic, sk_kappa(judge, human, weights="quadratic"))


@settings(max_examples=200, deadline=None)
@given(paired_levels, st.integers(0, 3))
def test_kappas_equal_sklearn_with_a_wider_scale(
    pair: tuple[list[int], list[int]], extra: int
) -> None:
    judge, human = pair
    scale = list(range(min(judge + human), max(judge + human) + 1 + extra))
    a = rl.agreement(judge, human, labels=scale)
    assert list(a.confusion.index) == scale
    assert same(a.kappa, sk_kappa(judge, human, labels=scale))
    assert same(a.kappa_linear, sk_kappa(judge, human, labels=scale, weights="linear"))
    assert same(a.kappa_quadratic, sk_kappa(judge, human, labels=scale, weights="quadratic"))


@pytest.mark.parametrize(
    ("judge", "human"),
    [
        ([2, 2, 2], [2, 2, 2]),  # one class only: sklearn gives nan
        ([1], [1]),
        ([1, 1, 1], [3, 3, 3]),  # each side constant, different levels
        ([1, 2], [2, 1]),
    ],
)
def test_degenerate_kappas_match_sklearn(judge: list[int], human: list[int]) -> None:
    a = rl.agreement(judge, human)
    for weights, got in (
        (None, a.kappa),
        ("linear", a.kappa_linear),
        ("quadratic", a.kappa_quadratic),
    ):
        assert same(got, sk_kappa(judge, human, weights=weights)), weights


def test_one_class_only_gives_nan_like_sklearn_and_none_in_to_dict() -> None:
    a = rl.agreement([2, 2, 2], [2, 2, 2])
    assert math.isnan(a.kappa)
    assert math.isnan(sk_kappa([2, 2, 2], [2, 2, 2]))
    assert a.exact == 1.0
    assert a.to_dict()["kappa"] is None
    assert "n/a" in str(a)


@settings(max_examples=200, deadline=None)
@given(paired_levels)
def test_correlations_equal_scipy(pair: tuple[list[int], list[int]]) -> None:
    judge, human = pair
    a = rl.agreement(judge, human)
    if len(set(judge)) < 2 or len(set(human)) < 2:
        assert math.isnan(a.pearson)
        assert math.isnan(a.spearman)
        return
    assert a.pearson == pytest.approx(stats.pearsonr(judge, human).statistic, abs=1e-12)
    assert a.spearman == pytest.approx(stats.spearmanr(judge, human).statistic, abs=1e-12)


def test_missing_values_are_dropped_and_counted() -> None:
    judge = [3, None, 2, float("nan"), 1, 3]
    human = [3, 2, pd.NA, 1, 1, np.nan]
    a = rl.agreement(judge, human)
    assert (a.n, a.dropped) == (2, 4)
    assert a.exact == 1.0
    assert "4 dropped" in str(a)


def test_missing_values_keep_the_original_positions_in_disagreements() -> None:
    a = rl.agreement([None, 1, 3], [2, 3, 1])
    assert a.dropped == 1
    assert list(a.disagreements.index) == [1, 2]


def test_list_positions_are_the_result_tables_row_keys() -> None:
    """Levels read off a result table's rows come back under those rows' keys (0-based)."""
    table = pd.DataFrame({"level": [3, 3, 1, 2]})  # a result table's index: 0..n-1
    a = rl.agreement(table["level"].tolist(), [3, 1, 3, 2])
    assert list(a.disagreements.index) == [1, 2] == [i for i in table.index if i in (1, 2)]
    assert a.to_dict()["disagreements"][0]["item"] == 1


def test_different_lengths_are_an_error() -> None:
    with pytest.raises(ValueError, match="judge_scores has 3 items but human_scores has 2"):
        rl.agreement([1, 2, 3], [1, 2])


def test_nothing_to_compare_is_an_error() -> None:
    with pytest.raises(ValueError, match="no item has both"):
        rl.agreement([None, 2], [1, None])


def test_series_index_names_the_disagreements() -> None:
    judge = pd.Series([3, 1, 2], index=["case-a", "case-b", "case-c"])
    human = pd.Series([1, 1, 2], index=["case-a", "case-b", "case-c"])
    a = rl.agreement(judge, human)
    assert list(a.disagreements.index) == ["case-a"]
    assert a.to_dict()["disagreements"] == [
        {"item": "case-a", "judge": 3, "human": 1, "difference": 2}
    ]


def test_two_series_are_aligned_by_label_not_position() -> None:
    judge = pd.Series([3, 1, 2], index=["x", "y", "z"])
    human = pd.Series([2, 1, 3], index=["z", "y", "x"])  # same scores, other order
    a = rl.agreement(judge, human)
    assert a.exact == 1.0


def test_series_labelling_different_items_is_an_error() -> None:
    judge = pd.Series([3, 1], index=["x", "y"])
    human = pd.Series([3, 1], index=["x", "w"])
    with pytest.raises(ValueError, match=r"only in judge_scores: \['y'\]"):
        rl.agreement(judge, human)


def test_a_mapping_is_keyed_by_item() -> None:
    a = rl.agreement({"q1": 3, "q2": 1}, [1, 1])
    assert list(a.disagreements.index) == ["q1"]


def test_unused_scale_levels_appear_in_the_confusion_matrix() -> None:
    a = rl.agreement([1, 2], [1, 2], labels=[1, 2, 3, 4])
    assert list(a.confusion.columns) == [1, 2, 3, 4]
    assert a.labels == (1, 2, 3, 4)


def test_a_score_off_the_scale_names_the_item() -> None:
    with pytest.raises(ValueError, match=r"judge score 5 for item 1 is not on the scale"):
        rl.agreement([1, 5], [1, 2], labels=[1, 2, 3])


def test_text_levels_are_refused_with_a_hint() -> None:
    with pytest.raises(TypeError, match="judge_scores: item 1 is 'bad', not a number"):
        rl.agreement([3, "bad"], [1, 2])


def test_to_dict_is_json_ready() -> None:
    d = rl.agreement(np.array(LESSON_JUDGE), np.array(LESSON_HUMAN)).to_dict()
    text = json.dumps(d)
    assert json.loads(text)["exact"] == pytest.approx(0.7)
    assert d["confusion"][2][0] == 1
    assert d["labels"] == [1, 2, 3]


def test_html_escapes_item_labels() -> None:
    judge = pd.Series([3, 1], index=["<script>alert(1)</script>", "ok"])
    human = pd.Series([1, 1], index=["<script>alert(1)</script>", "ok"])
    page = rl.agreement(judge, human)._repr_html_()
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    assert "Cohen&#x27;s kappa" in page or "Cohen's kappa" in page
