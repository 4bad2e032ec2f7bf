"""rubriclab: rubric-based LLM evaluation for notebooks.

The public face is small and lazy: names are imported on first use, so
``import rubriclab`` stays fast for the CLI and for magics, and heavy
modules (pandas, widgets) load only when a user touches them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it (relative to this package)
_EXPORTS: dict[str, str] = {
    "Level": "rubric",
    "Criterion": "rubric",
    "Rubric": "rubric",
    "RubricError": "rubric",
    "RubricWarning": "rubric",
    "format_percent": "scale",
    "Score": "scoring",
    "ScoreError": "scoring",
    "Summary": "scoring",
    "Agreement": "calibration",
    "align": "alignment",
    "Alignment": "alignment",
    "Example": "fewshot",
    "agreement": "calibration",
    "pairwise_agreement": "calibration",
    "criterion_agreement": "calibration",
    "calibrate": "calibration",
    "Calibration": "calibration",
    "Judge": "judges",
    "Reply": "judges",
    "set_judge": "judges",
    "get_judge": "judges",
    "generate_rubrics": "generate",
    "evaluate": "evaluation",
    "aevaluate": "evaluation",
    "EvalResult": "result",
    "load_result": "result",
    "open_result": "result",
    "compare": "comparison",
    "Comparison": "comparison",
    "arena": "ranking",
    "Arena": "ranking",
    "Span": "traces",
    "Trace": "traces",
    "load_traces": "traces",
    "TraceError": "traces",
    "display_eval_result": "widgets.display",
    "display_explanations": "widgets.display",
    "ResultTable": "widgets",
    "Explanation": "widgets",
    "RubricEditor": "widgets",
    "PairwiseView": "widgets",
    "AlignmentView": "widgets",
    "CalibrationView": "widgets",
    "ComparisonView": "widgets",
    "Workbench": "widgets",
    "ArenaView": "widgets",
    "ClustersView": "widgets",
    "JudgeCard": "judge_card",
    "rate_judge": "judge_card",
    "rate_judges": "judge_card",
    "load_judge_card": "judge_card",
    "JudgeCardView": "widgets",
}
_SUBMODULES = {
    "metrics",
    "testing",
    "compat",
    "templates",
    "parse",
    "data",
    "widgets",
    "datasets",
    "judges",
}

#: modules that moved into a package, still reachable as ``rl.<old name>`` (``rl.display``)
_MOVED = {"display": "widgets.display"}

__all__ = sorted([*_EXPORTS, *_SUBMODULES, "__version__", "load_ipython_extension"])


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module = importlib.import_module(f".{_EXPORTS[name]}", __name__)
        value = getattr(module, name)
        globals()[name] = value
        return value
    if name in _SUBMODULES or name in _MOVED:
        module = importlib.import_module(f".{_MOVED.get(name, name)}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'rubriclab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext rubriclab`` registers the ``%%rubric`` and ``%rubric_judge`` magics."""
    from .magics import load_ipython_extension as _load

    _load(ipython)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from . import compat as compat
    from . import data as data
    from . import datasets as datasets
    from . import judges as judges
    from . import metrics as metrics
    from . import parse as parse
    from . import templates as templates
    from . import testing as testing
    from . import widgets as widgets
    from .alignment import Alignment as Alignment
    from .alignment import align as align
    from .calibration import Agreement as Agreement
    from .calibration import Calibration as Calibration
    from .calibration import agreement as agreement
    from .calibration import calibrate as calibrate
    from .calibration import criterion_agreement as criterion_agreement
    from .calibration import pairwise_agreement as pairwise_agreement
    from .comparison import Comparison as Comparison
    from .comparison import compare as compare
    from .evaluation import aevaluate as aevaluate
    from .evaluation import evaluate as evaluate
    from .fewshot import Example as Example
    from .generate import generate_rubrics as generate_rubrics
    from .judge_card import JudgeCard as JudgeCard
    from .judge_card import load_judge_card as load_judge_card
    from .judge_card import rate_judge as rate_judge
    from .judge_card import rate_judges as rate_judges
    from .judges import Judge as Judge
    from .judges import Reply as Reply
    from .judges import get_judge as get_judge
    from .judges import set_judge as set_judge
    from .ranking import Arena as Arena
    from .ranking.arena import arena as arena
    from .result import EvalResult as EvalResult
    from .result import load_result as load_result
    from .rubric import Criterion as Criterion
    from .rubric import Level as Level
    from .rubric import Rubric as Rubric
    from .rubric import RubricError as RubricError
    from .rubric import RubricWarning as RubricWarning
    from .scale import format_percent as format_percent
    from .scoring import Score as Score
    from .scoring import ScoreError as ScoreError
    from .scoring import Summary as Summary
    from .traces import Span as Span
    from .traces import Trace as Trace
    from .traces import TraceError as TraceError
    from .traces import load_traces as load_traces
    from .widgets import AlignmentView as AlignmentView
    from .widgets import ArenaView as ArenaView
    from .widgets import CalibrationView as CalibrationView
    from .widgets import ClustersView as ClustersView
    from .widgets import ComparisonView as ComparisonView
    from .widgets import Explanation as Explanation
    from .widgets import JudgeCardView as JudgeCardView
    from .widgets import PairwiseView as PairwiseView
    from .widgets import ResultTable as ResultTable
    from .widgets import RubricEditor as RubricEditor
    from .widgets import Workbench as Workbench
    from .widgets.display import display_eval_result as display_eval_result
    from .widgets.display import display_explanations as display_explanations
