"""ComparisonView: deltas sorted by change, a metric's cases, both critiques of one, static forms."""

from __future__ import annotations

import pandas as pd
import pytest
import traitlets

import rubriclab as rl
from rubriclab.result import EvalResult, MetricInfo
from rubriclab.widgets import ComparisonView
from tests._view_data import XSS


def _run(scores: list[float | None], rouge: list[float], words: str) -> EvalResult:
    ids = ["c1", "c2", "c3"]
    t = pd.DataFrame(
        {
            "id": ids,
            "prompt": [f"question {i}" for i in ids],
            "response": [f"{words} {XSS[0]}", f"{words} two", f"{words} three"],
        }
    )
    t["support/score"] = pd.Series(scores, dtype=float)
    t["support/passed"] = pd.Series([s is not None and s >= 0.5 for s in scores], dtype=object)
    t["support/verdict"] = ["pass" if s is not None and s >= 0.5 else "fail" for s in scores]
    t["support/error"] = pd.Series(
        [None if s is not None else f"judge call failed {XSS[1]}" for s in scores], dtype=object
    )
    t["support/criteria"] = pd.Series(
        [
            [
                {
                    "name": "accuracy",
                    "level": 1 + round(2 * (s or 0)),
                    "label": "ok",
                    "evidence": XSS[2],
                }
            ]
            for s in scores
        ],
        dtype=object,
    )
    t["support/rationale"] = [f"{words} rationale {XSS[3]}"] * 3
    t["rouge_l/score"] = rouge
    t["rouge_l/error"] = pd.Series([None] * 3, dtype=object)
    return EvalResult(
        t, [MetricInfo("support"), MetricInfo("rouge_l", "computation")], is_mock=True, judge="mock"
    )


def _view() -> ComparisonView:
    a = _run([0.5, 0.25, None], [0.5, 0.5, 0.5], "old")
    b = _run([1.0, 0.0, 0.5], [0.52, 0.5, 0.49], "new")
    return ComparisonView(rl.compare(a, b, names=("v1", "v2")))


def test_metrics_sorted_by_largest_change_and_first_metric_listed() -> None:
    view = _view()
    assert [m["metric"] for m in view.metrics] == ["support", "rouge_l"]
    support = view.metrics[0]
    assert support["diff"] == pytest.approx(0.125)
    assert support["errored"] == 1
    assert view.overview == {
        "cases": 3,
        "only_a": 0,
        "only_b": 0,
        "errored": 1,
        "confidence": 0.95,
        "metrics_only_in_one": [],
    }
    assert view.metric == "support"
    assert [c["key"] for c in view.cases] == ["c1", "c2", "c3"]  # |+0.5| > |-0.25|; c3 errored
    assert view.cases[2]["diff"] is None
    assert view.criteria[0]["criterion"] == "accuracy"
    assert view.is_mock


def test_choosing_a_case_shows_both_critiques() -> None:
    view = _view()
    view.item = 0
    detail = view.detail
    assert detail is not None
    assert detail["key"] == "c1"
    left, right = detail["sides"]
    assert (left["name"], right["name"]) == ("v1", "v2")
    assert (left["score"], right["score"]) == (0.5, 1.0)
    assert left["criteria"][0]["evidence"] == XSS[2]  # sent as data; the JS puts it in as text
    assert any(f["name"] == "response" and "old" in f["text"] for f in left["fields"])
    view.metric = "rouge_l"
    assert view.detail is None
    assert view.item == -1
    assert view.cases[0]["key"] == "c1"  # +0.02 is the largest rouge change
    with pytest.raises(traitlets.TraitError, match="no metric 'nope'"):
        view.metric = "nope"


def test_static_forms_have_no_scripts_and_escape_model_text() -> None:
    bundle, _ = _view()._repr_mimebundle_()
    html = bundle["text/html"]
    assert "rl-comparison-static" in html
    assert "<script" not in html.replace("&lt;script", "")
    assert "MOCK judge" in html
    assert "+12.5%" in html
    text = bundle["text/plain"]
    assert text.startswith("v2 vs v1")
    assert "support: 37.5% -> 50.0%, diff +12.5%" in text


def test_case_keys_from_the_data_are_escaped_in_the_static_form() -> None:
    a, b = _run([0.5, 0.25, 0.0], [0.5] * 3, "a"), _run([1.0, 0.0, 0.5], [0.5] * 3, "b")
    for r in (a, b):
        r.table["id"] = [XSS[1], "c2", "c3"]
    html = ComparisonView(rl.compare(a, b)).static_html()
    assert "<img" not in html
    assert "&lt;img src=x" in html


def test_comparison_displays_itself_as_static_html() -> None:
    c = rl.compare(
        _run([0.5, 0.5, 0.5], [0.1, 0.2, 0.3], "a"), _run([0.5, 1.0, 0.5], [0.1, 0.2, 0.3], "b")
    )
    bundle = c._repr_mimebundle_()
    assert "rl-comparison-static" in bundle["text/html"]
    assert "the most changed cases" in bundle["text/html"]
    assert bundle["text/plain"].startswith("== B vs A")
