"""Rows to judge messages: ``{placeholder}`` values, images as content parts, the rubric column.

Shared by rubric generation and critique, so both read a row the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ...data import DataError, Media, to_cases
from ...judges import image_part
from .utils import format_rubrics

__all__ = [
    "GEN_ERROR",
    "GEN_RAW",
    "RUBRICS",
    "is_missing",
    "media_per_row",
    "messages",
    "variables",
]

#: the column rubric generation fills and critique templates read as ``{rubrics}``
RUBRICS = "rubrics"
#: why a row's rubric generation failed (None when it worked)
GEN_ERROR = "rubric_generation_error"
#: the judge's text for a row's rubric generation
GEN_RAW = "rubric_generation_raw_output"


def is_missing(value: Any) -> bool:
    """True for None, NaN, pd.NA, blank text and empty lists: a cell with nothing to judge."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, str) and not value.strip():
        return True
    if isinstance(value, list | tuple) and not value:
        return True
    return value is pd.NA


def media_per_row(frame: pd.DataFrame) -> list[list[Media]]:
    """Each row's images (URLs, files, data URIs or Vertex's ``file_data`` JSON)."""
    if "prompt" not in frame.columns:
        return [[] for _ in range(len(frame))]
    cases = to_cases(frame, need_response=False)
    for case in cases:
        if case.error:  # an unreadable image must not become a row judged without it
            raise DataError(f"row {case.id}: {case.error}")
    return [c.media for c in cases]


def messages(text: str, media: Sequence[Media], system: str | None) -> list[dict[str, Any]]:
    """Chat messages for one prompt: the text, then the row's images as content parts."""
    content: str | list[dict[str, Any]] = text
    if media:
        content = [{"type": "text", "text": text}, *(image_part(m.source) for m in media)]
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    out.append({"role": "user", "content": content})
    return out


def variables(
    row: Mapping[Any, Any], defaults: Mapping[str, str], swap: bool = False
) -> dict[str, str]:
    """A row's ``{placeholder}`` values: rubrics numbered, empty cells left to ``defaults``;
    ``swap`` exchanges candidate and baseline (the second pairwise order)."""
    out = dict(defaults)
    for key, value in row.items():
        if key == RUBRICS:
            if not is_missing(value):
                out[key] = format_rubrics(value)
        elif not is_missing(value):
            out[str(key)] = str(value)
    if swap:
        out["response"], out["baseline_model_response"] = (
            out.get("baseline_model_response", ""),
            out.get("response", ""),
        )
    return out
