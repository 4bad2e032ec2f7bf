"""The views' side of the results layer's one hook (:class:`rubriclab.result.Presentation`).

``rubriclab.result.PRESENTATION`` names this module: a result shown at the end of a cell, a
comparison's HTML, the report attached to an MLflow run and a live ``evaluate(display=True)``
all come through here, so the results layer reaches the views by this one name and never
imports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .alignment_view import alignment_mimebundle
from .arena_view import arena_mimebundle
from .calibration_view import CalibrationView
from .clusters_view import clusters_mimebundle
from .comparison_view import comparison_mimebundle
from .display import live_evaluate, result_mimebundle
from .judge_card_view import judge_card_mimebundle, judge_card_page
from .judge_card_view import judge_card_text_of as judge_card_text
from .report import report_html

__all__ = [
    "alignment_mimebundle",
    "arena_mimebundle",
    "calibration_view",
    "clusters_mimebundle",
    "comparison_mimebundle",
    "judge_card_mimebundle",
    "judge_card_page",
    "judge_card_text",
    "live_evaluate",
    "report_html",
    "result_mimebundle",
]


def calibration_view(calibration: Any, title: str | None = None) -> CalibrationView:
    """The view of ``rl.calibrate(result)``'s figures."""
    return CalibrationView(calibration=calibration, title=title)


if TYPE_CHECKING:  # mypy checks that this module is a Presentation
    from .. import result as _result
    from . import presentation as _this

    _checked: _result.Presentation = _this
