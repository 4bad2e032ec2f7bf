"""The ``{metric}/field`` column contract of a result table, and the two value helpers it needs.

Every metric writes its columns as ``{metric}/{field}`` (``support/score``, ``support/error``
...). The fields live here, once, so the writers (evaluate, streaming, Ray, the Vertex layer)
and the readers (summaries, views, comparisons, saved files) cannot drift apart. ``to_plain``
turns any cell into JSON-plain Python values; ``preview`` makes a one-line excerpt of a text.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping
from datetime import date, datetime, time
from typing import Any, Final

__all__ = [
    "ATTEMPTS",
    "BASELINE_CRITERIA",
    "BASELINE_SCORE",
    "CANDIDATE_CRITERIA",
    "CANDIDATE_SCORE",
    "CRITERIA",
    "ERROR",
    "FIELDS",
    "FLOAT_FIELDS",
    "JUDGES",
    "LATENCY",
    "MOCK_ATTR",
    "NESTED_FIELDS",
    "PAIRWISE_CHOICE",
    "PAIRWISE_FIELDS",
    "PASSED",
    "RATIONALE",
    "RAW_OUTPUT",
    "RUBRIC",
    "RUBRIC_RAW_OUTPUT",
    "SCORE",
    "SWAP_CONSISTENT",
    "TOKENS",
    "USAGE_FIELDS",
    "VERDICT",
    "col",
    "field_of",
    "is_missing_cell",
    "metric_of",
    "mock_judge_of",
    "preview",
    "split_col",
    "to_plain",
]

SEP: Final = "/"

# -- every metric ---------------------------------------------------------------------------------
SCORE: Final = "score"  #: float in [0, 1] (pairwise: -1.0 ... 1.0); NaN on an error row
VERDICT: Final = "verdict"  #: "pass"/"fail" (pairwise: "win"/"tie"/"loss")
PASSED: Final = "passed"  #: bool, or None when the row has no verdict
CRITERIA: Final = "criteria"  #: per-criterion level or yes/no, with evidence
RATIONALE: Final = "rationale"  #: the judge's overall reasoning
RAW_OUTPUT: Final = "raw_output"  #: what the judge said, kept whatever happened
ERROR: Final = "error"  #: why a row has no score (None when it has one)
TOKENS: Final = "tokens"  #: judge tokens spent on the row
LATENCY: Final = "latency"  #: seconds in judge calls for the row
ATTEMPTS: Final = "attempts"  #: judge calls made for the row, retries included

# -- pairwise metrics -----------------------------------------------------------------------------
PAIRWISE_CHOICE: Final = "pairwise_choice"  #: the overall choice, in words
SWAP_CONSISTENT: Final = "swap_consistent"  #: both orders agreed
CANDIDATE_CRITERIA: Final = "candidate_criteria"
BASELINE_CRITERIA: Final = "baseline_criteria"
CANDIDATE_SCORE: Final = "candidate_score"
BASELINE_SCORE: Final = "baseline_score"

# -- rubric generation and judge panels -----------------------------------------------------------
RUBRIC: Final = "rubric"  #: the generated rubric of the row
RUBRIC_RAW_OUTPUT: Final = "rubric_raw_output"  #: what the rubric writer said
JUDGES: Final = "judges"  #: a panel's per-judge outcomes

#: the fields every judged metric writes, in table order
FIELDS: Final = (SCORE, VERDICT, PASSED, CRITERIA, RATIONALE, RAW_OUTPUT, ERROR)
#: the extra fields of a pairwise metric, in table order
PAIRWISE_FIELDS: Final = (
    PAIRWISE_CHOICE,
    SWAP_CONSISTENT,
    CANDIDATE_CRITERIA,
    BASELINE_CRITERIA,
    CANDIDATE_SCORE,
    BASELINE_SCORE,
)
#: what a row's judge calls cost, in table order after the outcome fields
USAGE_FIELDS: Final = (TOKENS, LATENCY, ATTEMPTS)
#: fields held as floats (NaN when the row has none)
FLOAT_FIELDS: Final = (SCORE, CANDIDATE_SCORE, BASELINE_SCORE)
#: fields whose cells may hold lists or dicts (JSON text in Parquet, nested JSON in JSONL)
NESTED_FIELDS: Final = (CRITERIA, CANDIDATE_CRITERIA, BASELINE_CRITERIA, RAW_OUTPUT, RUBRIC, JUDGES)


def col(metric: str, field: str) -> str:
    """The column of ``metric``'s ``field``: ``col("support", "score") == "support/score"``."""
    return f"{metric}{SEP}{field}"


def split_col(column: str) -> tuple[str, str] | None:
    """``(metric, field)`` of a metric column, or None for a data column (no ``/``).

    Metric names never hold a ``/``, so the metric is what comes before the first one.
    """
    metric, sep, field = str(column).partition(SEP)
    return (metric, field) if sep and metric and field else None


def metric_of(column: str) -> str | None:
    """The metric a column belongs to (None for a data column)."""
    parts = split_col(column)
    return parts[0] if parts else None


def field_of(column: str) -> str | None:
    """A metric column's field (``"score"`` of ``"support/score"``; None for a data column)."""
    parts = split_col(column)
    return parts[1] if parts else None


def to_plain(value: Any, default: Callable[[Any], Any] | None = None) -> Any:
    """A JSON-plain copy of ``value``: dicts with string keys, lists, str, int, float, bool, None.

    numpy scalars and arrays unwrap, NaN/NA/NaT and infinities become None (JSON has no such
    numbers), times become ISO 8601 text, a rubric (any model with ``to_dict``) its dict, other
    pydantic models their JSON dump, bytes a ``<n bytes>`` note. Anything else goes through
    ``default`` (e.g. ``str`` for display); without one it is returned as it is, so
    ``json.dumps`` fails on it and the caller can name the cell at fault.
    """
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): to_plain(v, default) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_plain(v, default) for v in value]
    if isinstance(value, bytes | bytearray):
        return f"<{len(value)} bytes>"
    if isinstance(value, datetime | date | time):  # pd.Timestamp is a datetime
        return None if _is_missing(value) else value.isoformat()
    if _is_missing(value):
        return None
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and hasattr(value, "model_dump"):  # a Rubric, or a model like it
        return to_plain(to_dict(), default)
    if hasattr(value, "model_dump"):
        return to_plain(value.model_dump(mode="json"), default)
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy scalars and arrays, Series
        with contextlib.suppress(TypeError, ValueError):
            return to_plain(value.tolist(), default)
    return value if default is None else default(value)


def _is_missing(value: Any) -> bool:
    """pandas' NA and NaT (checked by name so this module needs no pandas import)."""
    kind = type(value).__name__
    return kind in ("NAType", "NaTType")


def is_missing_cell(value: Any) -> bool:
    """Whether a table cell holds nothing: None, a NaN float (numpy's too), pandas' NA or NaT.
    Blank text and empty lists are values here; callers that treat them as missing say so."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return _is_missing(value)


def preview(text: str, limit: int) -> str:
    """``text`` on one line (runs of whitespace as one space), cut to ``limit`` with an ``…``."""
    flat = " ".join(str(text).split())
    if limit < 1:
        return ""
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


#: ``DataFrame.attrs`` key a mock run's table carries (the judge's description): frames and
#: columns taken from it (pandas copies ``attrs`` along) still say they came from a mock, so
#: figures computed from them (agreement with people) can say so too
MOCK_ATTR: Final = "rubriclab_mock_judge"


def mock_judge_of(data: Any) -> str | None:
    """The mock judge a table or column came from (its ``attrs``), else None."""
    attrs = getattr(data, "attrs", None)
    if not isinstance(attrs, Mapping):
        return None
    judge = attrs.get(MOCK_ATTR)
    return str(judge) if judge else None
