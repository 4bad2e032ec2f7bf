"""Notebook views (anywidget): one module per view, traits as the only contract with the JS.

``ResultTable`` (the whole result), ``Explanation`` (one case), ``RubricEditor`` (edit rubrics),
``PairwiseView`` (candidate vs baseline), ``CalibrationView`` (judge vs people) and
``ComparisonView`` (run B vs run A), ``Workbench`` (edit, re-judge, compare: the rubric loop); ``ArenaView`` (many candidates ranked), ``ClustersView``
(failing rows grouped), ``AlignmentView`` (what ``rl.align`` changed) and ``JudgeCardView`` are
static HTML.
"""

from __future__ import annotations

from .alignment_view import AlignmentView
from .arena_view import ArenaView
from .calibration_view import CalibrationView
from .clusters_view import ClustersView
from .comparison_view import ComparisonView
from .explanation import Explanation
from .judge_card_view import JudgeCardView
from .pairwise_view import PairwiseView
from .result_table import ResultTable
from .rubric_editor import RubricEditor
from .workbench import Workbench

__all__ = [
    "AlignmentView",
    "ArenaView",
    "CalibrationView",
    "ClustersView",
    "ComparisonView",
    "Explanation",
    "JudgeCardView",
    "PairwiseView",
    "ResultTable",
    "RubricEditor",
    "Workbench",
]
