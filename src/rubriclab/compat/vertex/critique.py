"""Critique with Vertex-style metrics: render ``{placeholders}``, call, parse, tabulate.

Every call goes through a :class:`~rubriclab.Judge` (so retries, cache and the mock apply), a
row's images travel as content parts, and whatever fails (a call, a parser, a missing rubric)
is recorded on that row with the judge's raw text; no row is dropped and none scores 0 by
default. Columns follow both contracts: Vertex's (``{metric}/rubric_verdict_pairs`` ...) and
ours (``{metric}/criteria``, ``{metric}/error`` ...) so our views work on the result.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ...columns import (
    ATTEMPTS,
    BASELINE_CRITERIA,
    BASELINE_SCORE,
    CANDIDATE_CRITERIA,
    CANDIDATE_SCORE,
    CRITERIA,
    ERROR,
    LATENCY,
    PAIRWISE_CHOICE,
    PASSED,
    RATIONALE,
    RAW_OUTPUT,
    SCORE,
    SWAP_CONSISTENT,
    TOKENS,
    VERDICT,
    col,
)
from ...judges import CallTally, Judge, MediaError, Request
from ...templates import TemplateError, format_braces
from . import utils
from .calls import UNPACED, CallPolicy
from .classic import CHOICES
from .config import AutoraterConfig
from .metrics import CritiqueMetric, PairwiseMetric
from .rows import GEN_ERROR, RUBRICS, is_missing, media_per_row, messages, variables

__all__ = [
    "BASELINE_PAIRS",
    "CANDIDATE_PAIRS",
    "PAIRWISE_KEYS",
    "POINTWISE_KEYS",
    "RAW_OUTPUTS",
    "VERDICT_PAIRS",
    "VERTEX_FIELDS",
    "Critiqued",
    "critique",
]


@dataclass
class Critiqued:
    """One metric's new columns, keyed by column name, plus what the calls cost."""

    name: str
    kind: str
    columns: dict[str, list[Any]] = field(default_factory=dict)
    usage: CallTally = field(default_factory=CallTally)


@dataclass
class _Row:
    error: str | None = None
    parsed: list[Mapping[str, Any]] = field(default_factory=list)  # one per order
    raw: list[str] = field(default_factory=list)
    usage: CallTally = field(default_factory=CallTally)


def _needs(metric: CritiqueMetric, row: Mapping[Any, Any]) -> str | None:
    wanted = set(metric.placeholders)
    if RUBRICS in wanted and is_missing(row.get(RUBRICS)):
        why = row.get(GEN_ERROR)
        return "no rubrics for this row" + (f" (generation failed: {why})" if why else "")
    for column in ("response", "baseline_model_response"):
        needed = column in wanted or (
            column == "baseline_model_response" and isinstance(metric, PairwiseMetric)
        )
        if needed and is_missing(row.get(column)):
            note = row.get("response_error") if column == "response" else None
            return f"no {column} to judge" + (f": {note}" if note else "")
    return None


def _parse(metric: CritiqueMetric, texts: list[str]) -> Mapping[str, Any]:
    try:
        parsed = metric.parser(list(texts))
    except Exception as exc:  # a user's parser failing is that row's error
        return {"score": None, "error": f"parsing_fn raised {type(exc).__name__}: {exc}"}
    if not isinstance(parsed, Mapping):
        return {"score": None, "error": f"parsing_fn returned {type(parsed).__name__}, not a dict"}
    score = parsed.get("score")
    if score is not None and (
        isinstance(score, bool) or not isinstance(score, int | float) or math.isnan(score)
    ):
        return {
            **parsed,
            "score": None,
            "error": f"parsing_fn returned a non-numeric score {score!r}",
        }
    return parsed


async def critique(
    metric: CritiqueMetric,
    frame: pd.DataFrame,
    judge: Judge,
    autorater: AutoraterConfig | None = None,
    calls: CallPolicy = UNPACED,
) -> Critiqued:
    """Judge every row of ``frame`` with ``metric`` and return its result columns."""
    config = metric.autorater_config or autorater or AutoraterConfig()
    pairwise = isinstance(metric, PairwiseMetric)
    orders = (False, True) if pairwise and config.flip_enabled else (False,)
    media = media_per_row(frame)
    rows = frame.to_dict(orient="records")
    state = [_Row() for _ in rows]
    batch: list[tuple[int, int, Request]] = []
    for i, row in enumerate(rows):
        state[i].error = _needs(metric, row)
        if state[i].error:
            continue
        try:
            for order, swap in enumerate(orders):
                text = format_braces(
                    metric.metric_prompt_template,
                    variables(row, metric.template_defaults, swap=swap),
                    name=f"metric {metric.metric_name!r} template (row {i})",
                )
                chat = messages(text, media[i], metric.system_instruction)
                for s in range(config.sampling_count):
                    batch.append((i, order, Request(chat, sample=s)))
        except (TemplateError, MediaError) as exc:  # this row's error; the run goes on
            state[i].error = str(exc)
            batch = [b for b in batch if b[0] != i]
    replies = await calls.send(
        judge, [r for _, _, r in batch], desc=f"{metric.metric_name}: critique"
    )
    texts: dict[tuple[int, int], list[str]] = {}
    for (i, order, _), reply in zip(batch, replies, strict=True):
        st = state[i]
        st.usage.add(reply)
        st.raw.append(reply.text or "")
        if reply.error is not None:
            st.error = st.error or f"judge call failed: {reply.error}"
        texts.setdefault((i, order), []).append(reply.text or "")
    for i, st in enumerate(state):
        if st.error is None:
            st.parsed = [_parse(metric, texts[(i, order)]) for order in range(len(orders))]
    out = Critiqued(metric.metric_name, metric.kind)
    for st in state:
        out.usage.merge(st.usage)
    _tabulate(out, metric, state, pairwise)
    return out


#: Vertex's own fields (beside ours from :mod:`rubriclab.columns`): verdicts as text lines
VERDICT_PAIRS = "rubric_verdict_pairs"
BASELINE_PAIRS = "baseline_rubric_verdict_pairs"
CANDIDATE_PAIRS = "candidate_rubric_verdict_pairs"
RAW_OUTPUTS = "raw_outputs"
#: the fields every row of a pointwise / pairwise metric has, in Vertex's table order
POINTWISE_KEYS = (SCORE, VERDICT_PAIRS)
PAIRWISE_KEYS = (PAIRWISE_CHOICE, SCORE, BASELINE_PAIRS, CANDIDATE_PAIRS)
#: Vertex's fields in the order its metrics table shows them
VERTEX_FIELDS = (  # vertexai's column order: pairwise_choice before score
    PAIRWISE_CHOICE,
    SCORE,
    VERDICT_PAIRS,
    BASELINE_PAIRS,
    CANDIDATE_PAIRS,
    RAW_OUTPUTS,
    ERROR,
)
_CLASSIC_CHOICE = {v: k for k, v in CHOICES.items()}


def _criteria(pairs: Any) -> list[dict[str, Any]]:
    return [
        {
            "name": f"q{n}",
            "question": q,
            "level": int(v),
            "label": "YES" if v else "NO",
            "evidence": "",
            "reasoning": "",
        }
        for n, (q, v) in enumerate(utils.read_verdict_pairs(pairs), 1)
    ]


def _combine(first: float | None, second: float | None) -> tuple[float | None, bool | None]:
    """Candidate-side scores of the two orders -> the kept score and whether they agree."""
    if first is None or second is None:
        return None, None
    if first == second or first * second > 0:
        return (first if abs(first) <= abs(second) else second), True
    return 0.0, False


def _tabulate(out: Critiqued, metric: CritiqueMetric, state: list[_Row], pairwise: bool) -> None:
    m = metric.metric_name
    n = len(state)
    known = PAIRWISE_KEYS if pairwise else POINTWISE_KEYS
    cols: dict[str, list[Any]] = {col(m, key): [None] * n for key in known}

    def put(field: str, i: int, value: Any) -> None:
        cols.setdefault(col(m, field), [None] * n)[i] = value

    for i, st in enumerate(state):
        first = st.parsed[0] if st.parsed else {}
        for key, value in first.items():
            if key == ERROR or (key == RAW_OUTPUTS and not metric.return_raw_output):
                continue
            put(str(key), i, value)
        if metric.return_raw_output:
            put(RAW_OUTPUTS, i, list(st.raw))
        errors = [str(p[ERROR]) for p in st.parsed if p.get(ERROR)]
        error = st.error or ("; ".join(errors) if errors else None)
        score = None if error else first.get(SCORE)
        put(RAW_OUTPUT, i, list(st.raw) if st.raw else None)
        put(RATIONALE, i, first.get("explanation") or "")  # classic metrics explain
        put(PASSED, i, None)
        if pairwise:
            swapped = st.parsed[1] if len(st.parsed) > 1 else None
            consistent: bool | None = None
            if swapped is not None and score is not None:
                other = swapped.get(SCORE)
                score, consistent = _combine(score, None if other is None else -float(other))
                if score is None:
                    error = "the swapped-order critique has no score"
            cand = _criteria(first.get(CANDIDATE_PAIRS))
            base = _criteria(first.get(BASELINE_PAIRS))
            if score is not None and first.get(PAIRWISE_CHOICE) in CHOICES:  # classic
                put(PAIRWISE_CHOICE, i, _CLASSIC_CHOICE[float(score)])
            elif score is not None:
                put(PAIRWISE_CHOICE, i, utils.CHOICE_SENTENCES.get(float(score)))
            put(SWAP_CONSISTENT, i, consistent)
            put(CANDIDATE_CRITERIA, i, cand or None)
            put(BASELINE_CRITERIA, i, base or None)
            put(CANDIDATE_SCORE, i, _share(cand))
            put(BASELINE_SCORE, i, _share(base))
            put(CRITERIA, i, _winners(cand, base))
            verdict = None
            if score is not None:
                verdict = "candidate wins" if score > 0 else "baseline wins" if score < 0 else "tie"
            put(VERDICT, i, verdict)
        else:
            put(CRITERIA, i, _criteria(first.get(VERDICT_PAIRS)))
            put(VERDICT, i, None)
        put(SCORE, i, None if score is None else float(score))
        put(ERROR, i, error)
        put(TOKENS, i, st.usage.tokens)
        put(LATENCY, i, round(st.usage.latency, 4))
        put(ATTEMPTS, i, st.usage.attempts)
    out.columns = cols


def _share(rows: list[dict[str, Any]]) -> float | None:
    return sum(r["level"] for r in rows) / len(rows) if rows else None


def _winners(cand: list[dict[str, Any]], base: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per question, who met it: the candidate alone, the baseline alone, or a tie."""
    if len(cand) != len(base):
        return []
    rows = []
    for c, b in zip(cand, base, strict=True):
        winner = "tie" if c["level"] == b["level"] else "candidate" if c["level"] else "baseline"
        rows.append(
            {
                "name": c["name"],
                "question": c["question"],
                "winner": winner,
                "candidate": c["label"],
                "baseline": b["label"],
            }
        )
    return rows
