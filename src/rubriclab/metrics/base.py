"""The ``Metric`` protocol: what is judged, apart from how judge calls are made.

A metric gets the rows of a run (:class:`Rows`: the cases, their table and the run's judge)
and returns :class:`Judged`: every ``{metric}/field`` column it adds, in table order, the
tally of every call it made and the judges that answered. ``evaluate`` loops over metrics
through this protocol alone and never asks what kind a metric is; ``kind`` only tells the
result how to summarise the scores (pass rates, or win/tie/loss for pairwise).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..columns import ATTEMPTS, FIELDS, LATENCY, PAIRWISE_FIELDS, TOKENS, col

if TYPE_CHECKING:
    import pandas as pd

    from ..critique import Outcome
    from ..data import Case
    from ..judges import Judge
    from ..judges.base import CallTally
    from ..result import MetricKind
    from ..rubric import Rubric

__all__ = ["Judged", "Metric", "Rows", "judged", "outcome_columns"]


@dataclass
class Rows:
    """What a metric judges: the cases, the table they came from, and the run's judge.

    ``judge()`` resolves the run's judge when first called, so a metric that calls no judge
    (a computation metric) never needs one. ``table`` holds the data columns a metric may read
    (a rubric column, a baseline column); metrics return columns, they do not write them.
    """

    cases: Sequence[Case]
    table: pd.DataFrame
    judge: Callable[[], Judge]


@dataclass
class Judged:
    """What one metric made of the rows: its columns, its calls and the judges that answered."""

    columns: dict[str, list[Any]]
    """Every column the metric adds, full names (``{metric}/score`` ...), in table order."""
    usage: list[CallTally] = field(default_factory=list)
    """One tally per row, plus any for calls made before judging (rubric writing)."""
    judges: list[Judge] = field(default_factory=list)
    """The judges that were asked (the result is labelled a mock when any of them is one)."""


@runtime_checkable
class Metric(Protocol):
    """Anything ``evaluate`` can judge rows with: rubric, pairwise, template and computation
    metrics and judge panels, and any later kind that implements these members."""

    @property
    def name(self) -> str:
        """The prefix of the metric's columns (``{name}/score``); unique in a run."""
        ...

    @property
    def kind(self) -> MetricKind:
        """How the result summarises the scores: "pointwise", "pairwise", "template" or
        "computation"."""
        ...

    @property
    def description(self) -> str: ...

    @property
    def rubric(self) -> Rubric | None:
        """The rubric every row is judged by, when there is one (views show it)."""
        ...

    async def judge_rows(self, rows: Rows) -> Judged:
        """Judge every row; a row that fails keeps its error and raw output, never a score."""
        ...


def outcome_columns(
    name: str,
    outcomes: Sequence[Outcome],
    *,
    pairwise: bool = False,
    before: Mapping[str, list[Any]] | None = None,
    after: Mapping[str, list[Any]] | None = None,
) -> dict[str, list[Any]]:
    """The ``{name}/field`` columns of ``outcomes`` (with the pairwise fields when asked), then
    the call costs; ``before`` and ``after`` are extra columns placed around them."""
    fields = FIELDS + (PAIRWISE_FIELDS if pairwise else ())
    out: dict[str, list[Any]] = dict(before or {})
    for f in fields:
        out[col(name, f)] = [getattr(o, f) for o in outcomes]
    out[col(name, TOKENS)] = [o.usage.tokens for o in outcomes]
    out[col(name, LATENCY)] = [round(o.usage.latency, 4) for o in outcomes]
    out[col(name, ATTEMPTS)] = [o.usage.attempts for o in outcomes]
    out.update(after or {})
    return out


def judged(
    name: str,
    outcomes: Sequence[Outcome],
    judges: Iterable[Judge] = (),
    *,
    pairwise: bool = False,
    before: Mapping[str, list[Any]] | None = None,
    after: Mapping[str, list[Any]] | None = None,
    usage: Iterable[CallTally] = (),
) -> Judged:
    """A :class:`Judged` from per-row outcomes: their columns, their tallies and ``usage``."""
    columns = outcome_columns(name, outcomes, pairwise=pairwise, before=before, after=after)
    return Judged(columns, [*usage, *(o.usage for o in outcomes)], list(judges))
