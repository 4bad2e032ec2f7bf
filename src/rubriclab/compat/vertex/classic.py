"""Vertex's classic model-based metrics: a score (or a choice) plus an explanation, no rubric.

A ``PointwiseMetric`` whose template has no ``{rubrics}`` placeholder is Vertex's classic
pointwise metric (e.g. fluency, 1-5): the result has ``{metric}/score`` and
``{metric}/explanation``. A classic ``PairwiseMetric`` gives ``{metric}/pairwise_choice``
(``CANDIDATE``, ``BASELINE`` or ``TIE``) and ``{metric}/explanation``; a judge answering in
the labels of Vertex's own pairwise templates (``A``, ``B``, ``SAME``, where Response A is the
baseline) is read as Vertex reads it: ``A`` is BASELINE, ``B`` CANDIDATE, ``SAME`` a TIE. Judges answer in JSON
(``{"score": 4, "explanation": "..."}``) or in the lines Vertex's templates ask for
(``Score: 4`` / ``Explanation: ...``); an answer with no score is an error on its row, never 0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...parse import ParseError, extract_json

__all__ = ["CHOICES", "parse_pairwise_choice_result", "parse_pointwise_score_result"]

#: classic pairwise choice -> candidate-side score
CHOICES: dict[str, float] = {"CANDIDATE": 1.0, "TIE": 0.0, "BASELINE": -1.0}
#: the labels of Vertex's pairwise templates (Response A is the baseline), exact case for A/B
_VERTEX_LABELS = {"A": "BASELINE", "B": "CANDIDATE", "SAME": "TIE", "Same": "TIE", "same": "TIE"}
_SCORE = re.compile(r"(?im)^\W*(?:score|rating)\W*[:=]?\s*\**\s*(-?\d+(?:\.\d+)?)")
_CHOICE = re.compile(r"(?im)^\W*(?:pairwise[_ ]choice|choice)\W*[:=]?\s*\**\s*([A-Za-z]+)")
_EXPLAIN = re.compile(
    r"(?is)^\W*(?:explanation|rationale)\W*[:=]\s*(.+?)(?=^\W*(?:score|rating|pairwise[_ ]choice|choice)\W*[:=]|\Z)",
    re.M,
)


def _json(text: str) -> Mapping[str, Any] | None:
    try:
        data = extract_json(text, expect=dict)
    except ParseError:
        return None
    return data if isinstance(data, Mapping) else None


def _explanation(text: str, data: Mapping[str, Any] | None) -> str:
    if data is not None:
        for key in ("explanation", "rationale", "reasoning"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    found = _EXPLAIN.search(text)
    return found.group(1).strip() if found else text.strip()


def _score(text: str, data: Mapping[str, Any] | None) -> float | None:
    if data is not None:
        for key in ("score", "rating"):
            value = data.get(key)
            if value is None or isinstance(value, bool):
                continue
            try:
                number = float(value)
            except (TypeError, ValueError):
                continue
            if math.isfinite(number):
                return number
    found = _SCORE.search(text)
    return float(found.group(1)) if found else None


def parse_pointwise_score_result(results: Sequence[str]) -> dict[str, Any]:
    """``score`` (the mean over the samples that could be read) and the first ``explanation``."""
    scores: list[float] = []
    explanations: list[str] = []
    for text in results:
        data = _json(text)
        value = _score(text, data)
        if value is not None:
            scores.append(value)
            explanations.append(_explanation(text, data))
    if not scores:
        return {
            "score": None,
            "explanation": None,
            "raw_outputs": list(results),
            "error": "unreadable critique: no score in the judge's answer",
        }
    return {
        "score": math.fsum(scores) / len(scores),
        "explanation": explanations[0],
        "raw_outputs": list(results),
        "error": None,
    }


def parse_pairwise_choice_result(results: Sequence[str]) -> dict[str, Any]:
    """``pairwise_choice`` (the most frequent; a tie between choices is TIE), ``score`` on the
    candidate's side (1, 0, -1) and the ``explanation`` of a sample that made that choice."""
    picks: list[tuple[str, str]] = []
    for text in results:
        data = _json(text)
        raw = data.get("pairwise_choice", data.get("choice")) if data is not None else None
        if raw is None:
            found = _CHOICE.search(text)
            raw = found.group(1) if found else None
        label = str(raw).strip() if raw is not None else ""
        choice = _VERTEX_LABELS.get(label, label.upper())
        if choice in CHOICES:
            picks.append((choice, _explanation(text, data)))
    if not picks:
        return {
            "pairwise_choice": None,
            "score": None,
            "explanation": None,
            "raw_outputs": list(results),
            "error": (
                "unreadable critique: no CANDIDATE, BASELINE or TIE (or A, B, SAME) choice "
                "in the answer"
            ),
        }
    counts = {c: sum(1 for p, _ in picks if p == c) for c in CHOICES}
    top = max(counts.values())
    leaders = [c for c, n in counts.items() if n == top]
    choice = leaders[0] if len(leaders) == 1 else "TIE"
    explanation = next((e for p, e in picks if p == choice), picks[0][1])
    return {
        "pairwise_choice": choice,
        "score": CHOICES[choice],
        "explanation": explanation,
        "raw_outputs": list(results),
        "error": None,
    }
