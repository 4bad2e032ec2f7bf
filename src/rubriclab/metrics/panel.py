"""Panels of judges: several judges critique every case, and their verdicts are combined.

Each judge runs through the ordinary pointwise driver (``critique_pointwise``); the drivers for
all judges are started together, so every judge's calls are in flight in the same pass and a
slow judge does not hold up the others. Per criterion the panel takes the ``majority`` level
(a tie goes to the lower level: conservative), the lower ``median`` level, or the ``mean``.
Each judge's own verdict stays in the ``{metric}/judges`` column, which
:func:`rubriclab.calibration.measures.panel_agreement` reads for Fleiss' kappa and Krippendorff's alpha.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..critique import CritiqueOptions, Outcome, critique_pointwise
from ..judges.base import CallTally
from ..rubric import Rubric
from ..scoring import score

if TYPE_CHECKING:
    from ..data import Case
    from ..judges import Judge

__all__ = ["critique_panel", "judge_labels"]


def judge_labels(judges: Sequence[Judge]) -> list[str]:
    """Short distinct names for the panel's judges (model names; repeats get ``#2``...)."""
    labels: list[str] = []
    for j in judges:
        base = str(getattr(j, "model", "") or "judge")
        name, k = base, 2
        while name in labels:
            name, k = f"{base}#{k}", k + 1
        labels.append(name)
    return labels


async def critique_panel(
    cases: Sequence[Case],
    rubrics: Sequence[Rubric | None],
    metric: CritiqueOptions,
    judges: Sequence[Judge],
    *,
    aggregate: str,
    missing: Sequence[str | None] | None = None,
) -> tuple[list[Outcome], dict[str, list[Any]]]:
    """Every judge on every case, combined per criterion; returns outcomes and extra columns.

    A case is scored when more than half of the panel answered it; otherwise it is an error
    that names each judge's failure. Either way each judge's verdict is kept.
    """
    per_judge = await asyncio.gather(
        *(critique_pointwise(cases, rubrics, metric, j, missing=missing) for j in judges)
    )
    labels = judge_labels(judges)
    outcomes: list[Outcome] = []
    verdicts: list[list[dict[str, Any]]] = []
    for i, rubric in enumerate(rubrics):
        row = [per_judge[k][i] for k in range(len(judges))]
        verdicts.append([_verdict(label, o) for label, o in zip(labels, row, strict=True)])
        outcomes.append(_combine(row, labels, rubric, aggregate))
    return outcomes, {"judges": verdicts}


def _levels(outcome: Outcome) -> dict[str, int]:
    return {str(r["name"]): int(r["level"]) for r in outcome.criteria if "level" in r}


def _verdict(label: str, o: Outcome) -> dict[str, Any]:
    return {
        "judge": label,
        "score": o.score,
        "verdict": o.verdict,
        "levels": _levels(o) if o.error is None else {},
        "rationale": o.rationale,
        "error": o.error,
    }


def _combine(
    row: Sequence[Outcome], labels: Sequence[str], rubric: Rubric | None, how: str
) -> Outcome:
    out = Outcome(usage=_tally(row))
    out.raw_output = [o.raw_output if isinstance(o.raw_output, str) else "" for o in row]
    answered = [(lab, o) for lab, o in zip(labels, row, strict=True) if o.error is None]
    failed = [f"{lab}: {o.error}" for lab, o in zip(labels, row, strict=True) if o.error]
    if rubric is None or len(answered) * 2 <= len(row):
        if len({o.error for o in row}) == 1 and row[0].error:
            out.error = row[0].error  # the same reason for every judge (no rubric, no response)
        else:
            out.error = f"{len(answered)} of {len(row)} judges answered; " + "; ".join(failed)
        return out
    levels_by_judge = {lab: _levels(o) for lab, o in answered}
    rows: list[dict[str, Any]] = []
    chosen: dict[str, float] = {}
    for c in rubric.criteria:
        votes = {lab: lv[c.name] for lab, lv in levels_by_judge.items() if c.name in lv}
        values = sorted(votes.values())
        if how == "mean":
            level: float = math.fsum(values) / len(values)
        elif how == "median":
            level = values[(len(values) - 1) // 2]  # the lower median: an actual level
        else:
            counts = Counter(values)
            top = max(counts.values())
            level = min(v for v, n in counts.items() if n == top)
        chosen[c.name] = level
        source = next((o for _, o in answered for r in o.criteria if r["name"] == c.name), None)
        base = next((dict(r) for r in source.criteria if r["name"] == c.name), {}) if source else {}
        match = next(
            (
                dict(r)
                for _, o in answered
                for r in o.criteria
                if r["name"] == c.name and r.get("level") == level
            ),
            base,
        )
        match.update(level=level, votes=votes)
        if how == "mean":
            match["label"] = f"mean {level:.2f}"
            match["passed_critical"] = None if c.critical is None else level >= c.critical
        rows.append(match)
    out.criteria = rows
    out.rationale = "\n\n".join(f"[{lab}] {o.rationale}" for lab, o in answered if o.rationale)
    if failed:
        out.rationale = f"(not counted: {'; '.join(failed)})\n\n{out.rationale}".strip()
    if how == "mean":
        _mean_verdict(out, rubric, chosen, [o.score for _, o in answered])
    else:
        result = score(rubric, {k: int(v) for k, v in chosen.items()})
        out.score, out.passed, out.verdict = result.value, result.passed, result.verdict
    return out


def _mean_verdict(
    out: Outcome, rubric: Rubric, levels: dict[str, float], scores: Sequence[float | None]
) -> None:
    """Mean of the judges' scores; critical criteria checked on their mean level."""
    values = [s for s in scores if s is not None]
    out.score = math.fsum(values) / len(values)
    failures = [
        f"{c.name} is NO" if c.is_yes_no else f"{c.name} below {c.critical}"
        for c in rubric.criteria
        if c.critical is not None and levels[c.name] < c.critical
    ]
    if failures:
        out.passed, out.verdict = False, f"fail ({'; '.join(failures)})"
    elif rubric.pass_mark is not None:
        out.passed = out.score + 1e-9 >= rubric.pass_mark
        out.verdict = "pass" if out.passed else "fail (score below pass mark)"
    elif any(c.critical is not None for c in rubric.criteria):
        out.passed, out.verdict = True, "critical met"


def _tally(row: Sequence[Outcome]) -> CallTally:
    total = CallTally()
    for o in row:
        total.merge(o.usage)
    return total
