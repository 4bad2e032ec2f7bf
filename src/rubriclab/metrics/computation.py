"""Computation metrics: deterministic per-row scores of the response against a ``reference``.

No judge is called. Each metric writes the same ``{metric}/field`` columns as a rubric metric,
so it sits beside rubric metrics in ``evaluate`` (and in the Vertex layer's ``EvalTask``).
ROUGE comes from Google's ``rouge-score`` and BLEU from ``sacrebleu``, the packages Vertex and
most papers use, so the numbers are the ones people quote; both are an optional extra
(``pip install 'rubriclab[metrics]'``) and a missing one is reported when the metric runs.
Every score is in [0, 1] (BLEU's 0-100 is divided by 100, as Vertex does).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..critique import Outcome
from .base import Judged, Rows, judged

if TYPE_CHECKING:
    from ..data import Case
    from ..rubric import Rubric

__all__ = [
    "COMPUTATION",
    "ComputationMetric",
    "bleu",
    "exact_match",
    "json_match",
    "rouge_1",
    "rouge_2",
    "rouge_l",
    "rouge_l_sum",
    "rouge_scorer",
]


class MissingExtraError(ImportError):
    """A computation metric's library is not installed."""


def _need(module: str, package: str, metric: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(
            f"the {metric} metric needs the {package} package: pip install 'rubriclab[metrics]' "
            f"(or pip install {package})"
        ) from None


# -- the scoring functions (response, reference) -> (score, note) ------------------------------------


def _exact(response: str, reference: str) -> tuple[float, str]:
    same = response.strip() == reference.strip()
    return (1.0, "matches the reference") if same else (0.0, "differs from the reference")


def _json_pairs(value: Any, prefix: str = "") -> dict[str, Any]:
    """Leaf paths of a JSON value (``a.b[0]``) with their values, so nested keys count once."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_json_pairs(v, f"{prefix}.{k}" if prefix else str(k)))
        return out or {prefix: {}}
    if isinstance(value, list):
        out = {}
        for i, v in enumerate(value):
            out.update(_json_pairs(v, f"{prefix}[{i}]"))
        return out or {prefix: []}
    return {prefix: value}


def _json(response: str, reference: str) -> tuple[float, str]:
    """Share of the reference's and response's leaf keys whose values agree (1.0 = same JSON)."""
    try:
        ref = json.loads(reference)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reference is not JSON ({exc.msg} at char {exc.pos})") from None
    try:
        got = json.loads(response)
    except json.JSONDecodeError as exc:
        return 0.0, f"the response is not JSON ({exc.msg} at char {exc.pos})"
    if got == ref:
        return 1.0, "same JSON as the reference"
    a, b = _json_pairs(got), _json_pairs(ref)
    keys = set(a) | set(b)
    same = sorted(k for k in keys if k in a and k in b and a[k] == b[k])
    wrong = sorted(k for k in keys if k in a and k in b and a[k] != b[k])
    missing = sorted(set(b) - set(a))
    extra = sorted(set(a) - set(b))
    parts = [f"{len(same)} of {len(keys)} keys agree"]
    for label, names in (("different", wrong), ("missing", missing), ("extra", extra)):
        if names:
            parts.append(f"{label}: {', '.join(names[:8])}{' ...' if len(names) > 8 else ''}")
    return len(same) / len(keys), "; ".join(parts)


@functools.cache
def rouge_scorer(kind: str, stemmer: bool) -> Any:
    """Google's ``rouge_score`` scorer for one ROUGE type (made once per type and stemmer)."""
    module = _need("rouge_score.rouge_scorer", "rouge-score", kind)
    return module.RougeScorer([kind], use_stemmer=stemmer)


def _rouge(kind: str, stemmer: bool = False) -> Callable[[str, str], tuple[float, str]]:
    def run(response: str, reference: str) -> tuple[float, str]:
        s = rouge_scorer(kind, stemmer).score(reference, response)[kind]
        return float(s.fmeasure), f"precision {s.precision:.3f}, recall {s.recall:.3f}"

    return run


@functools.cache
def _bleu_scorer() -> Any:
    module = _need("sacrebleu.metrics", "sacrebleu", "bleu")
    return module.BLEU(effective_order=True)


def _bleu(response: str, reference: str) -> tuple[float, str]:
    result = _bleu_scorer().sentence_score(response, [reference])
    # sacrebleu's 100.00000000000004 for identical text must not score above 1
    return min(1.0, max(0.0, float(result.score) / 100.0)), str(result)


# -- the metric ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ComputationMetric:
    """A deterministic metric of ``response`` against a reference column (no judge call).

    ``compute(response, reference)`` returns the score in [0, 1] and a short note (kept as the
    row's rationale). A row without a response or a reference, or whose reference cannot be
    read, gets its error and no score; it is never scored 0.
    """

    name: str
    compute: Callable[[str, str], tuple[float, str]] = field(repr=False)
    reference_column: str = "reference"
    description: str = ""

    kind: ClassVar[Literal["computation"]] = "computation"
    rubric: ClassVar[Rubric | None] = None

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name:
            raise ValueError(f"metric name {self.name!r} must be non-empty and contain no '/'")

    def with_options(self, **changes: Any) -> ComputationMetric:
        from dataclasses import replace

        return replace(self, **changes)

    def score_one(self, response: str | None, reference: str | None) -> Outcome:
        """One row's outcome (also what the Vertex layer calls per row)."""
        if response is None or (isinstance(response, float) and math.isnan(response)):
            return Outcome(error="no response to score")
        if reference is None or (isinstance(reference, float) and math.isnan(reference)):
            return Outcome(error=f"no {self.reference_column!r} value to compare with")
        try:
            value, note = self.compute(str(response), str(reference))
        except MissingExtraError:
            raise
        except ValueError as exc:
            return Outcome(error=str(exc))
        except RecursionError:  # e.g. JSON nested thousands deep: that row's error, not a crash
            return Outcome(error="the text is nested too deeply to compare")
        return Outcome(score=value, rationale=note)

    async def judge_rows(self, rows: Rows) -> Judged:
        """Score every row; no judge is asked (so a run of these alone needs none)."""
        cases = rows.cases
        refs = [_reference(c, self.reference_column) for c in cases]
        if cases and all(r is None for r in refs):
            raise ValueError(
                f"metric {self.name!r} compares with a {self.reference_column!r} column, and the "
                "data has none (map yours with mapping={'reference': 'your_column'})"
            )
        outcomes = [self.score_one(c.response, r) for c, r in zip(cases, refs, strict=True)]
        return judged(self.name, outcomes)


def _reference(case: Case, column: str) -> str | None:
    value = case.reference if column == "reference" else case.extra.get(column)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


exact_match = ComputationMetric(
    "exact_match", _exact, description="1 if the response equals the reference (ends stripped)"
)
json_match = ComputationMetric(
    "json_match",
    _json,
    description="share of JSON leaf keys whose values agree with the reference's",
)
rouge_1 = ComputationMetric("rouge_1", _rouge("rouge1"), description="ROUGE-1 F1 (rouge-score)")
rouge_2 = ComputationMetric("rouge_2", _rouge("rouge2"), description="ROUGE-2 F1 (rouge-score)")
rouge_l = ComputationMetric("rouge_l", _rouge("rougeL"), description="ROUGE-L F1 (rouge-score)")
rouge_l_sum = ComputationMetric(
    "rouge_l_sum",
    _rouge("rougeLsum"),
    description="ROUGE-Lsum F1, sentences split on newlines (rouge-score)",
)
bleu = ComputationMetric(
    "bleu", _bleu, description="sentence BLEU / 100, effective order (sacrebleu)"
)

#: by name, for the CLI, run configs and the Vertex layer's metric strings
COMPUTATION: dict[str, ComputationMetric] = {
    m.name: m for m in (exact_match, json_match, rouge_1, rouge_2, rouge_l, rouge_l_sum, bleu)
}
