"""The JS tests' fixtures, made by the real Python views: each view's synced state (and the
replies to the requests it makes), as JSON in ``js/test/fixtures/``.

The vitest suite renders every view from these files, and ``test_widgets_js_fixtures.py`` fails
when the committed files differ from what the Python side produces now; so a payload change on
either side fails a unit test instead of a notebook. After changing a payload on purpose::

    .venv/bin/python -m tests.js_fixtures      # rewrite js/test/fixtures/*.json
    cd js && npm test                          # the views must still render them
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anywidget
import pandas as pd

from rubriclab.calibration import criterion_agreement, pairwise_agreement
from rubriclab.comparison import compare
from rubriclab.result import EvalResult, MetricInfo
from rubriclab.widgets import (
    CalibrationView,
    ComparisonView,
    Explanation,
    PairwiseView,
    ResultTable,
    RubricEditor,
)

from ._view_data import SUPPORT, XSS, pairwise_result, pointwise_result

FIXTURES = Path(__file__).resolve().parent.parent / "js" / "test" / "fixtures"
#: traits every anywidget has (model names, _esm, _css, layout ...): not the view's payload
_BASE_TRAITS = set(anywidget.AnyWidget.class_trait_names(sync=True))


def _state(view: Any) -> dict[str, Any]:
    """The view's own synced traits, as the front end receives them (not the bundle, the
    stylesheet or anywidget's bookkeeping)."""
    state = view.get_state()
    return {
        k: v for k, v in sorted(state.items()) if k not in _BASE_TRAITS and not k.startswith("_")
    }


def _ask(view: Any, op: str, **payload: Any) -> dict[str, Any]:
    """What the kernel answers the view's ``op`` request (the reply message, id aside)."""
    sent: list[dict[str, Any]] = []
    view.send = sent.append  # capture instead of a comm
    view._on_custom(view, {"type": "rl:request", "id": "fixture", "op": op, **payload}, [])
    (reply,) = sent
    return {k: v for k, v in reply.items() if k not in ("id",)}


_DEFAULT_QUERY = {
    "sort": None,
    "search": "",
    "metric": None,
    "score_min": None,
    "score_max": None,
    "status": None,
    "criterion": None,
    "errors_only": False,
    "swap_inconsistent_only": False,
}


def _table(result: EvalResult) -> dict[str, Any]:
    view = ResultTable(result, title="fixture")
    state = _state(view)
    n = min(len(result.table), int(view.page_size))
    page = _ask(view, "page", start=0, stop=n, query=_DEFAULT_QUERY, columns=list(view.visible))
    charts = _ask(view, "charts", query=_DEFAULT_QUERY)
    view.selected = 1
    return {"state": state, "replies": {"page": page, "charts": charts}, "detail": view.detail}


def result_table() -> dict[str, Any]:
    return _table(pointwise_result(6, xss=True, is_mock=True))


def result_table_pairwise() -> dict[str, Any]:
    return _table(pairwise_result(4, xss=True))


def explanation() -> dict[str, Any]:
    return {"state": _state(Explanation(pointwise_result(4, xss=True), index=1))}


def pairwise_view() -> dict[str, Any]:
    result = pairwise_result(4, xss=True)
    return {"state": _state(PairwiseView(result, result.metric_names[0], index=0))}


def rubric_editor() -> dict[str, Any]:
    cases = pd.DataFrame({"prompt": ["a", "b"], "rubric": [SUPPORT, SUPPORT]})
    return {"state": _state(RubricEditor(cases))}


def calibration_view() -> dict[str, Any]:
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
    crit = criterion_agreement(
        pd.DataFrame({"accuracy": [3, 2, 3, 1], "clarity": [1, 2, 2, 2]}),
        pd.DataFrame({"accuracy": [2, 2, 3, 2], "clarity": [1, 1, 2, 2]}),
        n_boot=200,
    )
    view = CalibrationView(
        pairwise_agreement(judge, human, on="question_id"),
        crit,
        judge=judge,
        human=human,
        title="judge vs experts",
    )
    view.cell = [view.labels[0], view.labels[0]]
    view.item = 0
    return {"state": _state(view)}


def _run(scores: list[float | None]) -> EvalResult:
    table = pd.DataFrame({"id": ["q1", "q2", "q3"], "prompt": [f"question {i}" for i in "123"]})
    table["response"] = [f"answer {XSS[0]}", "answer two", "answer three"]
    table["support/score"] = pd.Series(scores, dtype=float)
    table["support/verdict"] = ["pass" if s is not None and s >= 0.5 else "fail" for s in scores]
    table["support/error"] = pd.Series(
        [None if s is not None else f"judge call failed {XSS[1]}" for s in scores], dtype=object
    )
    table["support/criteria"] = pd.Series(
        [[{"name": "accuracy", "level": 1 + round(2 * (s or 0)), "label": "ok"}] for s in scores],
        dtype=object,
    )
    table["support/rationale"] = [f"because {XSS[3]}"] * 3
    return EvalResult(table, [MetricInfo("support")], judge="fixture judge")


def comparison_view() -> dict[str, Any]:
    view = ComparisonView(compare(_run([0.5, 0.25, None]), _run([1.0, 0.0, 0.5]), key="id"))
    view.item = 0
    return {"state": _state(view)}


BUILDERS: dict[str, Callable[[], dict[str, Any]]] = {
    "result_table": result_table,
    "result_table_pairwise": result_table_pairwise,
    "explanation": explanation,
    "pairwise_view": pairwise_view,
    "rubric_editor": rubric_editor,
    "calibration_view": calibration_view,
    "comparison_view": comparison_view,
}


def render(name: str) -> str:
    """One fixture file's text, exactly as committed (the views' default reviewer pinned: the
    login name would make the fixtures differ from machine to machine)."""
    old = os.environ.get("RUBRICLAB_REVIEWER")
    os.environ["RUBRICLAB_REVIEWER"] = "reviewer"
    try:
        state = BUILDERS[name]()
    finally:
        if old is None:
            os.environ.pop("RUBRICLAB_REVIEWER", None)
        else:
            os.environ["RUBRICLAB_REVIEWER"] = old
    return json.dumps(state, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> int:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name in BUILDERS:
        (FIXTURES / f"{name}.json").write_text(render(name), encoding="utf-8")
        print(f"wrote {FIXTURES / name}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
