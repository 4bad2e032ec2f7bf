"""rubriclab: rubric-based LLM evaluation for notebooks.

The public face is small and lazy: names are imported on first use, so
``import rubriclab`` stays fast for the CLI and for magics, and heavy
modules (pandas, widgets) load only when a user touches them.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it (relative to this package)
_EXPORTS: dict[str, str] = {
    "Level": "rubric",
    "Criterion": "rubric",
    "Rubric": "rubric",
    "RubricError": "rubric",
    "Score": "scoring",
    "ScoreError": "scoring",
    "Summary": "scoring",
    "Agreement": "agreement",
    "agreement": "agreement",
    "pairwise_agreement": "calibration",
    "criterion_agreement": "calibration",
    "Judge": "judges",
    "Reply": "judges",
    "set_judge": "judges",
    "get_judge": "judges",
    "generate_rubrics": "generate",
    "evaluate": "evaluate",
    "aevaluate": "evaluate",
    "EvalResult": "result",
    "load_result": "result",
    "Span": "traces",
    "Trace": "traces",
    "load_traces": "traces",
    "TraceError": "traces",
    "display_eval_result": "display",
    "display_explanations": "display",
    "ResultTable": "widgets",
    "Explanation": "widgets",
    "RubricEditor": "widgets",
    "PairwiseView": "widgets",
    "CalibrationView": "widgets",
}
_SUBMODULES = {"metrics", "testing", "compat", "templates", "parse", "data", "widgets", "datasets"}

__all__ = sorted([*_EXPORTS, *_SUBMODULES, "__version__", "load_ipython_extension"])


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module = importlib.import_module(f".{_EXPORTS[name]}", __name__)
        value = getattr(module, name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'rubriclab' has no attribute {name!r}")


class _Package(types.ModuleType):
    """Keeps a public function whose module has the same name (``rl.agreement`` from
    ``agreement.py``, ``rl.evaluate`` from ``evaluate.py``) when that module is imported: the
    import system would otherwise overwrite the package attribute with the submodule."""

    def __setattr__(self, name: str, value: Any) -> None:
        if (
            isinstance(value, types.ModuleType)
            and _EXPORTS.get(name) == name
            and value.__name__ == f"{__name__}.{name}"
            and hasattr(value, name)
        ):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __dir__() -> list[str]:
    return __all__


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext rubriclab`` registers the ``%%rubric`` and ``%rubric_judge`` magics."""
    from .magics import load_ipython_extension as _load

    _load(ipython)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .agreement import Agreement, agreement
    from .rubric import Criterion, Level, Rubric, RubricError
    from .scoring import Score, ScoreError, Summary
