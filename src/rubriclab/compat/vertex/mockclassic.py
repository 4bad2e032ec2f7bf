"""The offline mock's answers to Vertex's classic model-based metrics (a score or a choice, no rubric).

A classic pointwise template (``MetricPromptTemplateExamples`` fluency, safety, verbosity ...,
or a ``PointwiseMetricPromptTemplate`` with its own ``rating_rubric``) lists its ratings under a
``Rating Rubric`` heading (``5 (completely fluent): ...``, ``1: ...``), or its output
instructions ask for ``Score: N`` / ``"score"`` on a scale ``from 1 to 5``. The mock picks one
of those ratings by a hash of the prompt text and answers ``Score: N`` and ``Explanation: ...``
(JSON when the template asks for JSON), which :mod:`.classic` reads.

A classic pairwise template lists ``"A"`` / ``"SAME"`` / ``"B"`` under its ``Rating Rubric``, or
names ``CANDIDATE``, ``BASELINE`` and ``TIE`` as the choices. Each of the two responses (found
under ``Response A`` / ``Response B`` headings, as Vertex lays them out, or in
``<response_a>`` / ``<response_b>`` tags) gets a level from a hash of the shared text before
them and the response itself, so the same two responses in the other order give the mirrored
choice. When the two responses cannot be found the mock calls it a tie, and says why.

Everything is read line by line with anchored, bounded patterns: linear in the prompt, and a
response that imitates the template changes at most which rating the hash picks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ...judges.mockdata import LABEL, stable_unit

__all__ = ["ClassicPair", "classic_answer", "find_classic_pair", "rating_scale"]

_RUBRIC_HEADING = re.compile(r"^\s*(?:#+\s*|\*\*)?rating rubric\b", re.I)
#: ``5 (completely fluent): ...``, ``"1": ...``, ``- 0: (unsafe) ...``, ``"SAME": ...``
_RATING = re.compile(
    r'^\s*(?:[-*]\s*)?"?(-?\d{1,3}(?:\.\d{1,3})?|[A-Za-z]{1,10})"?(?:\s*(\([^()\n]{0,60}\)))?\s*:'
    r"\s*(\([^()\n]{0,60}\))?"
)
_NUMBER = re.compile(r"-?\d{1,3}(?:\.\d{1,3})?")
_ASKS_SCORE = re.compile(r'(?im)(?:^|[\'"`\s])score\s*:|"score"')
_SCALE = re.compile(
    r"(?i)\b(?:from|between)\s+(-?\d{1,3})\b[^\n]{0,60}?\b(?:to|and)\s+(-?\d{1,3})\b"
)
_CHOICE_WORDS = ("CANDIDATE", "BASELINE", "TIE")
_SLOT = re.compile(
    r"^\s*(?:#+\s*|\*\*)?(response\s*[ab]|baseline|candidate)\b(?:\s+model)?(?:\s+response)?(.*)$",
    re.I,
)
_TAG = re.compile(r"<(/?)response_([ab])>", re.I)
_MAX_SCALE = 101  # a "from 0 to 100" scale is the widest the mock spells out


@dataclass(frozen=True)
class ClassicPair:
    """The two responses of a classic pairwise prompt: ``a`` in the first slot (Vertex's
    baseline), ``b`` in the second, and the text both orders share before them."""

    a: str
    b: str
    shared: str


def _rubric_keys(text: str) -> list[tuple[str, str]]:
    """The ratings listed under the first ``Rating Rubric`` heading: (key, label) pairs."""
    lines = text.splitlines()
    start = next((n for n, line in enumerate(lines) if _RUBRIC_HEADING.match(line)), None)
    if start is None:
        return []
    keys: dict[str, str] = {}
    for line in lines[start + 1 :]:
        if line.lstrip().startswith("#") or len(keys) >= _MAX_SCALE:
            break
        found = _RATING.match(line)
        if found and found.group(1) not in keys:
            label = found.group(2) or found.group(3) or ""
            keys[found.group(1)] = label.strip("()").strip()
    return list(keys.items())


def rating_scale(text: str) -> list[tuple[str, str]] | None:
    """The ratings a classic pointwise template allows, as (value, label), or None when the
    text is not such a template (no numeric rating rubric, no ``Score:`` on a stated scale)."""
    return _scale(text, _rubric_keys(text))


def _scale(text: str, keys: Sequence[tuple[str, str]]) -> list[tuple[str, str]] | None:
    numeric = [(k, label) for k, label in keys if _NUMBER.fullmatch(k)]
    if len(numeric) >= 2:
        return numeric
    if not _ASKS_SCORE.search(text):
        return None
    scale = _SCALE.search(text)
    if scale is None:
        return None
    lo, hi = sorted((int(scale.group(1)), int(scale.group(2))))
    if lo == hi or hi - lo >= _MAX_SCALE:
        return None
    return [(str(v), "") for v in range(hi, lo - 1, -1)]


def _pair_labels(keys: Sequence[tuple[str, str]]) -> tuple[str, str, str] | None:
    """(first slot wins, same, second slot wins) as the rating rubric names them, or None."""
    names = {k.upper() for k, _ in keys}
    if {"A", "B"} <= names:
        return ("A", "SAME" if "SAME" in names or "TIE" not in names else "TIE", "B")
    return None


def _names_choices(text: str) -> bool:
    """Output instructions that name CANDIDATE, BASELINE and TIE as the choice."""
    return "choice" in text.lower() and all(re.search(rf"\b{w}\b", text) for w in _CHOICE_WORDS)


def _tags(text: str) -> ClassicPair | None:
    """From the first ``<response_a>`` to the last ``</response_a>`` before the last
    ``<response_b>``, and from there to the last ``</response_b>`` (any letter case)."""
    spots: dict[str, list[int]] = {}
    ends: dict[str, list[int]] = {}
    for found in _TAG.finditer(text):
        key = found.group(1) + found.group(2).lower()
        spots.setdefault(key, []).append(found.start())
        ends.setdefault(key, []).append(found.end())
    if not all(k in spots for k in ("a", "/a", "b", "/b")):
        return None
    start, a_from = spots["a"][0], ends["a"][0]
    b_at, b_from = spots["b"][-1], ends["b"][-1]
    a_end = max((p for p in spots["/a"] if a_from <= p < b_at), default=-1)
    b_end = spots["/b"][-1]
    if a_end < 0 or b_end < b_from:
        return None
    return ClassicPair(text[a_from:a_end].strip(), text[b_from:b_end].strip(), text[:start])


def find_classic_pair(text: str) -> ClassicPair | None:
    """Response A and B (tags first, else Vertex's headings), or None when either is missing.

    With headings, A runs from the first ``Response A`` (or ``Baseline``) heading to the last
    ``Response B`` (or ``Candidate``) heading, and B from there to the end of the prompt, where
    Vertex's templates put it.
    """
    tags = _tags(text)
    if tags is not None:
        return tags
    first: tuple[int, int] | None = None  # (where the heading starts, where its text starts)
    second: tuple[int, int] | None = None
    offset = 0
    for line in text.splitlines(keepends=True):
        found = _SLOT.match(line)
        if found and not found.group(2).strip().strip(":*").strip():
            name = "".join(found.group(1).split()).lower()
            if name in ("responsea", "baseline") and first is None:
                first = (offset, offset + len(line))
            elif name in ("responseb", "candidate") and first is not None:
                second = (offset, offset + len(line))
        offset += len(line)
    if first is None or second is None:
        return None
    a, b = text[first[1] : second[0]], text[second[1] :]
    return ClassicPair(a.strip(), b.strip(), text[: first[0]])


def _clean(label: str) -> str:
    """A template's rating label, safe to repeat in an answer a parser reads."""
    return re.sub(r"[^\w .,'-]", "", label)[:60]


def _pointwise(text: str, scale: list[tuple[str, str]], sample: int) -> str:
    pick = min(len(scale) - 1, int(stable_unit("classic score", text, str(sample)) * len(scale)))
    value, label = scale[pick]
    named = f" ({_clean(label)})" if label else ""
    options = ", ".join(v for v, _ in scale)
    explanation = (
        f"{LABEL} no model read this response; the rating {value}{named} was picked from the "
        f"template's scale ({options}) by a hash of the prompt and the response."
    )
    number = float(value)
    score: float | int = int(number) if number.is_integer() else number
    if '"score"' in text:
        return json.dumps({"score": score, "explanation": explanation})
    return f"Score: {score}\nExplanation: {explanation}"


def _level(shared: str, response: str, sample: int) -> int:
    return int(stable_unit("classic level", shared, response, str(sample)) * 5)


def _pairwise(text: str, labels: tuple[str, str, str], sample: int) -> str:
    pair = find_classic_pair(text)
    if pair is None:
        choice = labels[1]
        why = "the mock found no Response A / Response B in this prompt, so it calls a tie"
    else:
        lead = _level(pair.shared, pair.a, sample) - _level(pair.shared, pair.b, sample)
        choice = labels[0] if lead > 0 else labels[2] if lead < 0 else labels[1]
        why = (
            "each response got a level from a hash of its own text, so the other order gives "
            "the mirrored choice"
        )
    explanation = f"{LABEL} no model compared these responses; {why}."
    if '"pairwise_choice"' in text:
        return json.dumps({"pairwise_choice": choice, "explanation": explanation})
    return f"pairwise_choice: {choice}\nExplanation: {explanation}"


def classic_answer(text: str, sample: int) -> str | None:
    """The mock's answer to a classic pointwise or pairwise prompt, or None for any other.

    The template's own rating rubric decides first (it comes before the responses in Vertex's
    layout), so a response that names CANDIDATE or TIE does not turn a pointwise prompt into
    a pairwise one."""
    keys = _rubric_keys(text)
    labels = _pair_labels(keys)
    if labels is not None:
        return _pairwise(text, labels, sample)
    numeric = [k for k in keys if _NUMBER.fullmatch(k[0])]
    if len(numeric) < 2 and _names_choices(text):
        return _pairwise(text, ("BASELINE", "TIE", "CANDIDATE"), sample)
    scale = _scale(text, keys)
    if scale is not None:
        return _pointwise(text, scale, sample)
    return None
