"""Rubric generation (``RubricBasedMetric``): one prompt per row, parsed into ``rubrics``.

A row whose generation fails keeps ``rubrics`` empty and says why in
``rubric_generation_error``; the judge's text stays in ``rubric_generation_raw_output``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from ...judges import CallError, CallTally, Judge, MediaError, Reply, Request
from ...templates import TemplateError, format_braces
from .calls import UNPACED, CallPolicy
from .config import RubricGenerationConfig
from .rows import GEN_ERROR, GEN_RAW, RUBRICS, is_missing, media_per_row, messages, variables

__all__ = ["add_rubrics"]


async def add_rubrics(
    config: RubricGenerationConfig,
    name: str,
    data: pd.DataFrame,
    judge: Judge | Callable[[str], Any],
    calls: CallPolicy = UNPACED,
) -> tuple[pd.DataFrame, CallTally]:
    """``data`` plus ``rubrics`` (and the parser's extra keys) per row; an existing ``rubrics``
    column means nothing is generated. ``judge`` may be a Python function of the prompt text
    (vertexai's ``RubricGenerationConfig(model=...)`` with a model object of one's own)."""
    frame = data.copy()
    usage = CallTally()
    if RUBRICS in frame.columns:
        return frame, usage
    media = media_per_row(frame)
    rows = frame.to_dict(orient="records")
    errors: list[str | None] = [None] * len(rows)
    requests: list[tuple[int, Request]] = []
    texts: list[str] = []
    for i, row in enumerate(rows):
        try:
            text = format_braces(
                config.prompt_template,
                variables(row, {}),
                name=f"rubric generation prompt (row {i})",
            )
            chat = messages(text, media[i], None)
        except (TemplateError, MediaError) as exc:
            errors[i] = str(exc)
            continue
        requests.append((i, Request(chat)))
        texts.append(text)
    if isinstance(judge, Judge):
        replies = await calls.send(judge, [r for _, r in requests], desc=f"{name}: rubrics")
    else:
        replies = [await _ask_function(judge, text) for text in texts]
    values: dict[str, list[Any]] = {RUBRICS: [None] * len(rows)}
    raws: list[str | None] = [None] * len(rows)
    for (i, _), reply in zip(requests, replies, strict=True):
        usage.add(reply)
        raws[i] = reply.text
        if reply.error is not None:
            errors[i] = f"judge call failed: {reply.error}"
            continue
        try:
            parsed = config.parser(reply.text or "")
        except Exception as exc:  # a user's parser failing is that row's error
            errors[i] = f"parsing_fn raised {type(exc).__name__}: {exc}"
            continue
        extra: dict[str, Any] = {}
        if isinstance(parsed, Mapping):
            extra = dict(parsed)
            questions = extra.pop("questions", None)
            errors[i] = extra.pop("error", None) or None
        else:
            questions = parsed
        for key, value in extra.items():
            values.setdefault(str(key), [None] * len(rows))[i] = value
        if errors[i] is None:
            if is_missing(questions) or not isinstance(questions, list | str):
                errors[i] = f"the parser returned no questions (got {questions!r:.80})"
            else:
                values[RUBRICS][i] = questions
    for key, column in values.items():
        frame[key] = pd.Series(column, index=frame.index, dtype=object)
    frame[GEN_ERROR] = pd.Series(errors, index=frame.index, dtype=object)
    frame[GEN_RAW] = pd.Series(raws, index=frame.index, dtype=object)
    return frame, usage


async def _ask_function(model: Callable[[str], Any], text: str) -> Reply:
    """One reply from a user's function: its text (or the ``.text`` of what it returns, as a
    Gemini response has); an exception is that row's error."""
    try:
        out = model(text)
        if inspect.isawaitable(out):
            out = await out
    except Exception as exc:  # the user's model failing is that row's error
        return Reply(
            text=None,
            error=CallError("internal", f"the model function raised {type(exc).__name__}: {exc}"),
        )
    value = getattr(out, "text", out)
    return Reply(text=None if value is None else str(value), error=None)
