"""Level cut points: a scored criterion's judge level read onto people's scale before scoring.

A judge can be consistently harsher or kinder than people on a criterion with levels (it says 2
where people say 3). ``RubricMetric(level_cuts={"detail": (2, 3)})`` keeps the judge's answer
and reads it through cut points: with levels ``s_0 < s_1 < ... < s_m`` and ascending cuts
``c_1 <= ... <= c_m``, a judge level ``x`` becomes ``s_i`` where ``i`` is how many cuts are at or
below ``x``. The identity is ``c_i = s_i``. The judge's own level stays in the row's criteria
cell as ``judge_level``; the score, pass and verdict are computed from the read levels.
``rl.align`` chooses cut points that best match people on training rows (no new calls).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..critique import Outcome
from ..rubric import Criterion, Rubric
from ..scoring import score

__all__ = ["Cuts", "apply_cuts", "check_cuts", "identity_cuts", "read_level"]

#: criterion name -> ascending cut points (one fewer than the criterion's levels)
Cuts = tuple[tuple[str, tuple[float, ...]], ...]


def identity_cuts(criterion: Criterion) -> tuple[float, ...]:
    """The cut points that change nothing: each level from its own score up."""
    return tuple(float(s) for s in criterion.scores[1:])


def as_cuts(value: Mapping[str, Sequence[float]] | Cuts | None, metric: str) -> Cuts:
    """``level_cuts`` as given (a mapping or pairs), as sorted immutable pairs."""
    if not value:
        return ()
    items = value.items() if isinstance(value, Mapping) else value
    out: list[tuple[str, tuple[float, ...]]] = []
    for item in items:
        try:
            name, cuts = item
            numbers = tuple(float(c) for c in cuts)
        except (TypeError, ValueError):
            raise ValueError(
                f"metric {metric!r}: level_cuts maps a criterion's name to a list of numbers, "
                f"got {item!r}"
            ) from None
        if any(math.isnan(c) for c in numbers) or list(numbers) != sorted(numbers):
            raise ValueError(
                f"metric {metric!r}: level_cuts[{str(name)!r}] must be ascending numbers, "
                f"got {list(numbers)}"
            )
        out.append((str(name), numbers))
    return tuple(sorted(out))


def check_cuts(cuts: Cuts, rubric: Rubric, metric: str) -> None:
    """Each cut list names a criterion of ``rubric`` and has one fewer entries than its levels."""
    by_name = {c.name: c for c in rubric.criteria}
    for name, numbers in cuts:
        criterion = by_name.get(name)
        if criterion is None:
            raise ValueError(
                f"metric {metric!r}: level_cuts names criterion {name!r}, which is not in the "
                f"rubric ({', '.join(by_name)})"
            )
        want = len(criterion.scores) - 1
        if len(numbers) != want:
            raise ValueError(
                f"metric {metric!r}: level_cuts[{name!r}] needs {want} cut point(s) for levels "
                f"{', '.join(map(str, criterion.scores))}, got {len(numbers)}"
            )


def read_level(level: float, cuts: Sequence[float], scores: Sequence[int]) -> int:
    """The level ``level`` reads as through ``cuts`` (``scores`` ascending)."""
    return scores[sum(1 for c in cuts if c <= level)]


def apply_cuts(outcomes: Sequence[Outcome], rubric: Rubric | None, cuts: Cuts) -> None:
    """Read each judged row's levels through ``cuts`` and score it again (in place)."""
    if not cuts or rubric is None:
        return
    by_name = {c.name: c for c in rubric.criteria}
    table = dict(cuts)
    for out in outcomes:
        if out.error or not out.criteria:
            continue
        levels: dict[str, Any] = {}
        for row in out.criteria:
            name = str(row.get("name"))
            level = row.get("level")
            criterion = by_name.get(name)
            if name in table and criterion is not None and isinstance(level, int | float):
                read = read_level(level, table[name], criterion.scores)
                row["judge_level"] = level
                row["level"] = read
                row["label"] = (
                    ("YES" if read == 1 else "NO")
                    if criterion.is_yes_no
                    else criterion.descriptor(read)
                )
                if criterion.critical is not None:
                    row["passed_critical"] = read >= criterion.critical
            levels[name] = row.get("level")
        result = score(rubric, levels)
        out.score, out.passed, out.verdict = result.value, result.passed, result.verdict
