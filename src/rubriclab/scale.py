"""The one score scale: data holds fractions in [0, 1]; every display is a percent with ``%``.

Tables, summaries and saved results keep 0.75; people read "75.0%". Thresholds a person types
(``pass_mark``, ``--fail-under``) are read by one rule, :func:`parse_fraction`: ``0.7``,
``"70%"`` and ``70`` all mean seventy percent (a number above 1 cannot be a fraction), and the
CLI prints what it read. Views and the CLI format through :func:`format_percent` so every
number looks the same.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

__all__ = ["format_count", "format_percent", "format_spread", "parse_fraction"]


def format_percent(value: float | None, *, digits: int = 1, signed: bool = False) -> str:
    """``0.75`` -> ``"75.0%"``; None or NaN -> ``"n/a"``. ``signed`` adds ``+`` to gains."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    number = round(100 * float(value), digits) + 0.0  # + 0.0: never print "-0.0%"
    sign = "+" if signed and number > 0 else ""
    return f"{sign}{number:.{digits}f}%"


def format_count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 row``, ``2 rows``, ``1,234 rows``: a count with its noun in the right number."""
    word = noun if n == 1 else (plural or f"{noun}s")
    return f"{n:,} {word}"


def format_spread(std: float | None, *, digits: int = 1) -> str:
    """A standard deviation labelled as one: ``"± 12.5% std"`` (empty when there is none)."""
    if std is None or (isinstance(std, float) and math.isnan(std)):
        return ""
    return f"± {format_percent(std, digits=digits)} std"


def parse_fraction(value: Any, what: str) -> float:
    """A threshold as a fraction in [0, 1]: ``0.7``, ``"0.7"``, ``"70%"`` and ``70`` give 0.7.

    The rule, in full: text ending in ``%`` is a percent; a bare number up to 1 is a fraction;
    a bare number above 1 (up to 100) can only be a percent on a 0-1 scale, so it reads as one
    (the lesson writes "pass mark 70"). Anything else is refused, naming ``what``. Callers
    that take a threshold from a person say what they read (``format_percent`` of the result).
    """
    hint = "a fraction like 0.7 or a percent like '70%'"
    if isinstance(value, bool) or not isinstance(value, numbers.Real | str):
        raise ValueError(f"{what} must be {hint}, got {value!r}")
    text = value.strip() if isinstance(value, str) else None
    percent = text is not None and text.endswith("%")
    try:
        number = float(text.removesuffix("%").strip()) if text is not None else float(value)
    except ValueError:
        raise ValueError(f"{what} must be {hint}, got {value!r}") from None
    if not math.isfinite(number) or number < 0 or number > 100:
        raise ValueError(f"{what} must be {hint} (between 0 and 100%), got {value!r}")
    return number / 100 if percent or number > 1 else number
