"""Parsers for the text formats Vertex AI's rubric templates ask judges for.

Used by :mod:`rubriclab.compat.vertex`, so notebooks written for Vertex run on any judge:

* rubric generation: JSON in a fence, ``{"questions": [...]}`` or a plain list;
* pointwise critique: ``<question> ... Question: ... Verdict: [[YES]] </question>`` blocks,
  optionally ``[[Rubric Score: k/n]]``;
* pairwise critique: ``[[Response A Answers:]]`` and ``[[Response B Answers:]]`` sections of
  such blocks and a final ``[[SxS Rating: B > A]]``.

Judges drift from the format, so we also read replies that start inside the first block,
an unclosed last block and verdicts without brackets. Where Vertex returns a score of 0
for text it cannot read, these raise :class:`~rubriclab.parse.ParseError` with the raw
text, so the row records an error rather than a false 0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ...parse import ParseError, extract_json, require_text

__all__ = [
    "RATINGS",
    "PairwiseRubricResult",
    "PointwiseRubricResult",
    "QuestionVerdict",
    "RubricList",
    "parse_pairwise",
    "parse_pointwise",
    "parse_rubric_score",
    "parse_rubrics",
    "parse_sxs_rating",
]


# --------------------------------------------------------------------------------------
# Rubric generation
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RubricList:
    """Questions a judge generated, plus any other keys it returned (e.g. ``description``)."""

    questions: list[str]
    extra: dict[str, Any] = field(default_factory=dict)
    raw: str = ""


_QUESTION_KEYS = ("questions", "rubrics", "rubric")
_ITEM_TEXT_KEYS = ("question", "text", "rubric")


def _question_text(item: Any, index: int, raw: str) -> str:
    if isinstance(item, str):
        return item.strip()
    if isinstance(item, dict):
        for key in _ITEM_TEXT_KEYS:
            if isinstance(item.get(key), str):
                return str(item[key]).strip()
    raise ParseError(
        f"rubric item #{index + 1} is not a question (a string, or an object with a "
        f"'question' field): {item!r:.80}",
        raw,
    )


def parse_rubrics(text: str) -> RubricList:
    """Questions from a rubric-generation reply.

    Accepts ``{"questions": [...], ...}`` (other keys land in ``extra``) or a plain JSON
    list, fenced or not, with near-JSON repaired (the Vertex prompt itself shows trailing
    commas, which judges copy). Empty questions are dropped; no questions is an error.
    """
    raw = require_text(text)
    value = extract_json(raw)
    extra: dict[str, Any] = {}
    if isinstance(value, dict):
        key = next(
            (k for k in value if isinstance(k, str) and k.strip().lower() in _QUESTION_KEYS),
            None,
        )
        if key is None or not isinstance(value[key], list):
            raise ParseError(
                "the rubric JSON has no 'questions' list; expected {\"questions\": [...]}", raw
            )
        items: list[Any] = value[key]
        extra = {k: v for k, v in value.items() if k != key}
    elif isinstance(value, list):
        items = value
    else:
        raise ParseError('expected a JSON list of questions or {"questions": [...]}', raw)
    questions = [q for i, item in enumerate(items) if (q := _question_text(item, i, raw))]
    if not questions:
        raise ParseError("the judge returned no rubric questions", raw)
    return RubricList(questions=questions, extra=extra, raw=raw)


# --------------------------------------------------------------------------------------
# Pointwise critique
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QuestionVerdict:
    """One answered question: the text the judge echoed, its verdict, its reasoning."""

    question: str
    verdict: bool
    reasoning: str = ""


@dataclass(frozen=True)
class PointwiseRubricResult:
    """Verdicts in the order the judge gave them; ``stated_score`` from ``[[Rubric Score]]``."""

    verdicts: list[QuestionVerdict]
    stated_score: tuple[int, int] | None = None
    raw: str = ""

    @property
    def score(self) -> float:
        """Share of YES verdicts (computed from the verdicts, not from the stated score)."""
        return sum(v.verdict for v in self.verdicts) / len(self.verdicts)

    def by_position(self, questions: Sequence[str]) -> dict[str, bool]:
        """``{rubric question: verdict}`` matched by position, never by echoed text.

        A different number of verdicts than questions is an error: we cannot tell
        which question a verdict belongs to.
        """
        if len(questions) != len(self.verdicts):
            raise ParseError(
                f"the judge gave {len(self.verdicts)} verdicts for {len(questions)} rubric "
                "questions; they cannot be matched",
                self.raw,
            )
        return {q: v.verdict for q, v in zip(questions, self.verdicts, strict=True)}


_TAG = re.compile(r"<\s*/?\s*question\s*>", re.IGNORECASE)
_VERDICT = re.compile(
    r"verdict[\s*_]*[:：][\s*_]*(?:\[\[|\[)?\s*\**\s*(yes|no|true|false)\b(?!\s*[|/])",
    re.IGNORECASE,
)
_QUESTION_LINE = re.compile(r"^[\s>#*_-]*question[\s*_]*[:：]", re.IGNORECASE | re.MULTILINE)
_RUBRIC_SCORE = re.compile(r"\[\[\s*Rubric\s*Score\s*:\s*(\d+)\s*/\s*(\d+)\s*\]\]", re.IGNORECASE)
_STRIP_MARKUP = " \t\r\n*_"


def _verdicts_in(text: str) -> list[QuestionVerdict]:
    """Verdicts in ``text``, block by block; text between blocks without a verdict is skipped."""
    found: list[QuestionVerdict] = []
    for segment in _TAG.split(text):
        start = 0
        for match in _VERDICT.finditer(segment):
            chunk = segment[start : match.start()]
            start = match.end()
            questions = list(_QUESTION_LINE.finditer(chunk))
            if questions:
                q = questions[-1]
                question = chunk[q.end() :].strip(_STRIP_MARKUP)
                reasoning = chunk[: q.start()].strip()
            else:
                question, reasoning = "", chunk.strip()
            verdict = match.group(1).lower() in ("yes", "true")
            found.append(QuestionVerdict(question=question, verdict=verdict, reasoning=reasoning))
    return found


def parse_rubric_score(text: str) -> tuple[int, int] | None:
    """``(k, n)`` from the last ``[[Rubric Score: k/n]]``, or None when there is none."""
    raw = require_text(text)
    matches = list(_RUBRIC_SCORE.finditer(raw))
    if not matches:
        return None
    k, n = int(matches[-1].group(1)), int(matches[-1].group(2))
    if n == 0 or k > n:
        raise ParseError(f"[[Rubric Score: {k}/{n}]] is not a valid score", raw)
    return k, n


def parse_pointwise(text: str) -> PointwiseRubricResult:
    """Verdicts from a pointwise critique in Vertex's ``<question>`` block format."""
    raw = require_text(text)
    verdicts = _verdicts_in(raw)
    if not verdicts:
        raise ParseError(
            "no verdicts found (expected '<question> ... Verdict: [[YES]] </question>' blocks)",
            raw,
        )
    return PointwiseRubricResult(verdicts=verdicts, stated_score=parse_rubric_score(raw), raw=raw)


# --------------------------------------------------------------------------------------
# Pairwise critique
# --------------------------------------------------------------------------------------

Rating = Literal["A>>B", "A>B", "A=B", "B>A", "B>>A"]

#: Canonical ratings and how much better B is than A, on the 5-point scale.
RATINGS: dict[str, float] = {"A>>B": -1.0, "A>B": -0.5, "A=B": 0.0, "B>A": 0.5, "B>>A": 1.0}

_SXS = re.compile(
    r"(?:\[\[)?\s*SxS\s*Rating\s*:?\s*\**\s*([AB])\s*(>>|<<|>|<|=)\s*([AB])\s*\**\s*(?:\]\])?",
    re.IGNORECASE,
)
_SECTION = re.compile(r"\[\[\s*Response\s*([AB])\s*Answers?\s*:?\s*\]\]", re.IGNORECASE)


def parse_sxs_rating(text: str) -> Rating:
    """The last ``[[SxS Rating: X op Y]]`` as one of ``A>>B, A>B, A=B, B>A, B>>A``.

    ``<`` and ``<<`` are read by flipping sides (``A < B`` is ``B > A``).
    """
    raw = require_text(text)
    matches = list(_SXS.finditer(raw))
    if not matches:
        raise ParseError(
            "no '[[SxS Rating: ...]]' found (expected e.g. '[[SxS Rating: B > A]]')", raw
        )
    left, op, right = (g.upper() for g in matches[-1].groups())
    if left == right:
        raise ParseError(f"SxS rating compares {left} with itself", raw)
    if op in ("<", "<<"):
        left, right, op = right, left, op.replace("<", ">")
    rating = "A=B" if op == "=" else f"{left}{op}{right}"
    assert rating in RATINGS
    return rating  # type: ignore[return-value]


@dataclass(frozen=True)
class PairwiseRubricResult:
    """Both responses' verdicts and the side-by-side rating.

    In Vertex's pairwise templates Response A is the baseline and B the candidate;
    ``b_preference`` is +1.0 when B is much better, -1.0 when A is.
    """

    a: PointwiseRubricResult
    b: PointwiseRubricResult
    rating: Rating
    raw: str = ""

    @property
    def b_preference(self) -> float:
        return RATINGS[self.rating]

    @property
    def winner(self) -> Literal["A", "B", "tie"]:
        pref = self.b_preference
        return "B" if pref > 0 else "A" if pref < 0 else "tie"


def parse_pairwise(text: str) -> PairwiseRubricResult:
    """Sections ``[[Response A Answers:]]`` / ``[[Response B Answers:]]`` and the SxS rating."""
    raw = require_text(text)
    rating = parse_sxs_rating(raw)
    markers = list(_SECTION.finditer(raw))
    ends = [m.start() for m in markers[1:]]
    sxs_starts = [m.start() for m in _SXS.finditer(raw)]
    sections: dict[str, list[str]] = {"A": [], "B": []}
    for i, marker in enumerate(markers):
        end = ends[i] if i < len(ends) else len(raw)
        later_sxs = [s for s in sxs_starts if marker.end() <= s < end]
        if later_sxs:
            end = later_sxs[-1]
        sections[marker.group(1).upper()].append(raw[marker.end() : end])
    results: dict[str, PointwiseRubricResult] = {}
    for side in ("A", "B"):
        if not sections[side]:
            raise ParseError(f"no '[[Response {side} Answers:]]' section found", raw)
        if len(sections[side]) > 1:
            raise ParseError(f"'[[Response {side} Answers:]]' appears more than once", raw)
        body = sections[side][0]
        verdicts = _verdicts_in(body)
        if not verdicts:
            raise ParseError(f"the Response {side} section has no verdicts", raw)
        try:
            score = parse_rubric_score(body)
        except ParseError as exc:
            raise ParseError(f"Response {side} section: {exc.reason}", raw) from None
        results[side] = PointwiseRubricResult(verdicts=verdicts, stated_score=score, raw=body)
    return PairwiseRubricResult(a=results["A"], b=results["B"], rating=rating, raw=raw)
