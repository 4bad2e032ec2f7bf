"""``JudgeCard``: how one or several judges (with one prompt and rubric) agree with people on the
shipped suites, with the published figures beside them; saved and loaded as JSON.

The card holds plain data (figures, per-item verdicts without model text, published figures
with their citation), so a card file from someone else is read as data and checked, never run.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..files import atomic_write_text
from ..result import presentation

__all__ = ["CARD_FORMAT", "JudgeCard", "load_judge_card"]

CARD_FORMAT = "rubriclab.judge_card"
_VERSION = 1
_SECTIONS = ("judges", "metric", "suites", "figures", "usage", "differences", "published")
MOCK_NOTE = "MOCK judge: offline and deterministic, not a real model; these figures rate nothing."


@dataclass(frozen=True, eq=False)
class JudgeCard:
    """A judge (or several) rated against people; ``summary`` is the table of figures.

    ``data`` holds everything: ``judges`` (name, model, ``mock``), ``metric`` (name and rubric
    text), ``suites``, ``n`` and ``seed``, ``figures`` (one row per judge, suite and subset),
    ``usage`` (calls, tokens, cost, seconds per judge), ``differences`` (paired accuracy
    differences between judges with bootstrap intervals), ``published`` (published judges'
    figures, cited) and ``verdicts`` (per item and judge: both orders' verdicts, the label, the
    error).
    """

    data: dict[str, Any]

    @property
    def is_mock(self) -> bool:
        """True when any rated judge is the offline mock."""
        return any(bool(j.get("mock")) for j in self.data.get("judges", []))

    @property
    def judges(self) -> list[str]:
        return [str(j["name"]) for j in self.data.get("judges", [])]

    @property
    def summary(self) -> pd.DataFrame:
        """One row per judge, suite and subset ("all" = the whole suite): items, errors,
        accuracy against people with its Wilson 95% interval, accuracy in both orders, swap
        inconsistency, first-slot share of inconsistent items, tie rate, accuracy when the
        preferred answer is the shorter / the longer one, and MT-Bench agreement with experts
        with and without ties."""
        rows = [_flat(f) for f in self.data.get("figures", [])]
        frame = pd.DataFrame(rows, columns=_SUMMARY_COLUMNS)
        if self.is_mock:
            frame.attrs["note"] = MOCK_NOTE
        return frame

    def table(self, figure: str = "accuracy") -> pd.DataFrame:
        """One figure of ``summary`` with a column per judge (rows: suite, subset)."""
        frame = self.summary
        if figure not in frame.columns:
            raise ValueError(f"figure: no column {figure!r}; choose from {_SUMMARY_COLUMNS[3:]}")
        wide: pd.DataFrame = frame.pivot_table(
            index=["suite", "subset"], columns="judge", values=figure, sort=False, dropna=False
        )
        return wide

    @property
    def verdicts(self) -> pd.DataFrame:
        """Per item and judge: ``v1`` (output 1 shown first), ``v2`` (output 2 first), ``label``,
        ``error``, in the dataset's numbering."""
        return pd.DataFrame(self.data.get("verdicts", []))

    @property
    def published(self) -> pd.DataFrame:
        """Published judges' figures beside ours, each with its source (paper, table)."""
        return pd.DataFrame(self.data.get("published", []))

    def to_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(self.data))  # type: ignore[no-any-return]

    def to_json(self) -> str:
        return json.dumps(self.data, indent=1, allow_nan=False, default=_no_nan)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the card as JSON (``.json``) or as a static HTML page (``.html``)."""
        target = Path(path)
        if target.suffix.lower() in (".html", ".htm"):
            return atomic_write_text(target, self.html_page())
        return atomic_write_text(target, _clean_json(self.data) + "\n")

    def html_page(self) -> str:
        """One self-contained HTML page (no scripts) showing the card."""
        return presentation().judge_card_page(self)

    def summary_text(self) -> str:
        return presentation().judge_card_text(self)

    def __repr__(self) -> str:
        mock = "MOCK " if self.is_mock else ""
        return f"{mock}JudgeCard(judges={self.judges}, suites={self.data.get('suites')})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return presentation().judge_card_mimebundle(self)


_SUMMARY_COLUMNS = [
    "judge",
    "suite",
    "subset",
    "items",
    "errors",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "accuracy_both_orders",
    "swap_inconsistency",
    "first_slot_share",
    "tie_rate",
    "accuracy_preferred_shorter",
    "accuracy_preferred_longer",
    "agreement_with_ties",
    "agreement_without_ties",
]


def _get(figure: Mapping[str, Any], *path: str) -> Any:
    value: Any = figure
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _flat(f: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "judge": f.get("judge"),
        "suite": f.get("suite"),
        "subset": f.get("subset"),
        "items": f.get("items"),
        "errors": f.get("errors"),
        "accuracy": _get(f, "accuracy", "rate"),
        "accuracy_low": _get(f, "accuracy", "low"),
        "accuracy_high": _get(f, "accuracy", "high"),
        "accuracy_both_orders": _get(f, "accuracy_both_orders", "rate"),
        "swap_inconsistency": _get(f, "swap_inconsistency", "rate"),
        "first_slot_share": _get(f, "first_slot", "rate"),
        "tie_rate": _get(f, "tie_rate", "rate"),
        "accuracy_preferred_shorter": _get(f, "length_bias", "preferred_shorter", "rate"),
        "accuracy_preferred_longer": _get(f, "length_bias", "preferred_longer", "rate"),
        "agreement_with_ties": _get(f, "agreement", "with_ties", "rate"),
        "agreement_without_ties": _get(f, "agreement", "without_ties", "rate"),
    }


def _no_nan(value: Any) -> Any:
    raise TypeError(f"not JSON: {type(value).__name__}")


def _clean_json(data: Any) -> str:
    def clean(v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, Mapping):
            return {str(k): clean(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [clean(x) for x in v]
        if hasattr(v, "item") and not isinstance(v, str):  # numpy scalars
            return clean(v.item())
        return v

    return json.dumps(
        {"format": CARD_FORMAT, "version": _VERSION, **clean(data)}, indent=1, allow_nan=False
    )


def load_judge_card(path: str | os.PathLike[str]) -> JudgeCard:
    """Read a card written by :meth:`JudgeCard.save` (JSON). The file is untrusted: it must be a
    judge card of a version this rubriclab reads, with lists where lists belong."""
    source = Path(path)
    if not source.exists():
        raise FileNotFoundError(f"no judge card at {source}")
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{source}: not a judge card (not JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("format") != CARD_FORMAT:
        raise ValueError(f'{source}: not a judge card (no "format": "{CARD_FORMAT}")')
    if data.get("version") != _VERSION:
        raise ValueError(
            f"{source}: judge card version {data.get('version')!r}; this reads {_VERSION}"
        )
    for key in ("judges", "suites", "figures", "usage", "differences", "published", "verdicts"):
        value = data.get(key, [])
        if not isinstance(value, list) or (
            key != "suites" and not all(isinstance(v, dict) for v in value)
        ):
            raise ValueError(f"{source}: judge card key {key!r} must be a list of objects")
    if not isinstance(data.get("metric", {}), dict):
        raise ValueError(f"{source}: judge card key 'metric' must be an object")
    data.pop("format")
    data.pop("version")
    return JudgeCard(data)
