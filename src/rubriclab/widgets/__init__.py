"""Notebook views (anywidget): one module per view, traits as the only contract with the JS.

``ResultTable`` (the whole result), ``Explanation`` (one case), ``RubricEditor`` (edit rubrics),
``PairwiseView`` (candidate vs baseline), ``CalibrationView`` (judge vs people) and
``ComparisonView`` (run B vs run A).
"""

from __future__ import annotations

from .calibration_view import CalibrationView
from .comparison_view import ComparisonView
from .explanation import Explanation
from .judge_card_view import JudgeCardView
from .pairwise_view import PairwiseView
from .result_table import ResultTable
from .rubric_editor import RubricEditor

__all__ = [
    "CalibrationView",
    "ComparisonView",
    "Explanation",
    "JudgeCardView",
    "PairwiseView",
    "ResultTable",
    "RubricEditor",
]
