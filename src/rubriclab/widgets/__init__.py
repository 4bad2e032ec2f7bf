"""Notebook views (anywidget): one module per view, traits as the only contract with the JS.

``ResultTable`` (the whole result), ``Explanation`` (one case), ``RubricEditor`` (edit rubrics),
``PairwiseView`` (candidate vs baseline), ``CalibrationView`` (judge vs people) and
``ComparisonView`` (run B vs run A), ``AlignmentView`` (what ``rl.align`` changed).
"""

from __future__ import annotations

from .alignment_view import AlignmentView
from .calibration_view import CalibrationView
from .comparison_view import ComparisonView
from .explanation import Explanation
from .pairwise_view import PairwiseView
from .result_table import ResultTable
from .rubric_editor import RubricEditor

__all__ = [
    "AlignmentView",
    "CalibrationView",
    "ComparisonView",
    "Explanation",
    "PairwiseView",
    "ResultTable",
    "RubricEditor",
]
