"""Notebook views (anywidget): one module per view, traits as the only contract with the JS.

``ResultTable`` (the whole result), ``Explanation`` (one case), ``RubricEditor`` (edit rubrics),
``PairwiseView`` (candidate vs baseline) and ``CalibrationView`` (judge vs people).
"""

from __future__ import annotations

from .calibration_view import CalibrationView
from .explanation import Explanation
from .pairwise_view import PairwiseView
from .result_table import ResultTable
from .rubric_editor import RubricEditor

__all__ = ["CalibrationView", "Explanation", "PairwiseView", "ResultTable", "RubricEditor"]
