"""Responses first: when ``evaluate`` is given a ``model``, it writes each row's response."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..judges import Judge, get_judge

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ModelFn", "generate_responses"]

ModelFn = Callable[[str], Any]


async def generate_responses(
    frame: pd.DataFrame, model: Judge | str | ModelFn, mapping: Mapping[str, str] | None
) -> pd.DataFrame:
    """Fill the response column from ``model``; a failed row keeps its error, others go on."""
    prompt_col = (mapping or {}).get("prompt", "prompt")
    response_col = (mapping or {}).get("response", "response")
    if prompt_col not in frame.columns:
        raise ValueError(f"the data has no {prompt_col!r} column to generate responses from")
    prompts = [str(p) for p in frame[prompt_col].tolist()]
    responses: list[str | None] = [None] * len(prompts)
    errors: list[str | None] = [None] * len(prompts)
    if isinstance(model, str | Judge):
        gen = get_judge(model)
        replies = await gen.amap(
            [[{"role": "user", "content": p}] for p in prompts], desc="responses"
        )
        for i, r in enumerate(replies):
            if r.error is not None:
                errors[i] = f"model call failed: {r.error}"
            else:
                responses[i] = r.text
    elif callable(model):
        for i, p in enumerate(prompts):
            try:
                value = model(p)
                if inspect.isawaitable(value):
                    value = await value
                responses[i] = None if value is None else str(value)
            except Exception as exc:  # a user's model function failing is that row's error
                errors[i] = f"model function raised {type(exc).__name__}: {exc}"
    else:
        raise TypeError("model must be a Judge, a judge spec string, or a callable(prompt) -> str")
    frame = frame.copy()
    frame[response_col] = responses
    if any(errors):
        frame["response_error"] = errors
    return frame
