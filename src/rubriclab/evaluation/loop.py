"""The rubric loop's model: edit the rubrics, re-judge, keep every version, compare, agree.

Rubric design is iteration: change a criterion, re-judge, look at what moved. This module holds
that loop without any view (``rl.Workbench`` draws it): the editable rubrics (a metric's shared
rubric, or one rubric per row, written or generated), a metric's template, and the history of
versions v1, v2, ... each with its rubric snapshot and its :class:`EvalResult`.

**Only what changed is sent.** A re-judge runs ``aevaluate`` with the same judge, whose response
cache keys a call on everything that can change the answer (endpoint, model, the rendered
messages, response format, sample, settings; see ``judges.cache``): a row whose rendered request
is the same as before is answered from the cache with 0 calls; only rows whose request changed
reach the judge. When only some rows' own rubrics changed, only those rows (and rows whose last
call failed) are run at all and the others keep the last version's results: the same answers
the cache would give, without rendering a thousand unchanged prompts to find that out. Rubrics the judge generated in
v1 are handed back as each row's fixed rubric afterwards, so they are never generated again.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import yaml

from ..calibration.people import calibrate
from ..columns import ERROR, RUBRIC, col, is_missing_cell
from ..comparison import Comparison, compare
from ..data import rubric_cell, to_cases, to_frame
from ..files import atomic_write_text
from ..generate import generate_for_cases
from ..judges import get_judge
from ..metrics.rubric import RubricMetric
from ..result import EvalResult
from ..rubric import Rubric
from . import aevaluate
from .run import check_metrics, metric_list

if TYPE_CHECKING:
    from ..judges import Judge
    from ..judges.base import CallTally
    from ..metrics.base import Metric

__all__ = ["RubricLoop", "Slot", "Version"]

#: the working table's column holding one metric's per-row rubrics (a fixed rubric per row)
ROW_RUBRICS = "_workbench_rubric_{}"
Snapshot = dict[str, "Rubric | tuple[Rubric | None, ...]"]


@dataclass(frozen=True)
class Slot:
    """One editable rubric: a metric's shared rubric (``row is None``) or one row's rubric."""

    metric: str
    row: int | None = None


@dataclass(frozen=True)
class Version:
    """One judged state of the rubrics: ``v1``, ``v2``, ... with what it cost.

    ``calls`` are requests that reached the judge, ``cached`` those answered from the cache,
    ``kept`` rows not run at all (unchanged: the last version's answers stand);
    ``changed`` the row positions whose rubric or template differed from the version before
    (every row for v1); ``agreement`` the judge's agreement with people's labels per metric and
    criterion (empty when the rows carry no labels).
    """

    number: int
    result: EvalResult = field(repr=False)
    rubrics: Snapshot = field(repr=False)
    templates: dict[str, str | None] = field(repr=False)
    calls: int
    cached: int
    changed: tuple[int, ...] = field(repr=False)
    seconds: float
    note: str = ""
    agreement: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    kept: int = 0
    """Rows not run at all: their requests were unchanged, so the last version's answers stand."""

    @property
    def name(self) -> str:
        return f"v{self.number}"

    def to_dict(self) -> dict[str, Any]:
        """Plain values for a view (no result table)."""
        return {
            "name": self.name,
            "number": self.number,
            "calls": self.calls,
            "cached": self.cached,
            "kept": self.kept,
            "changed": len(self.changed),
            "seconds": round(self.seconds, 3),
            "note": self.note,
            "agreement": list(self.agreement),
            "summary": {
                str(k): (None if pd.isna(v) else float(v)) for k, v in _means(self.result).items()
            },
        }


class RubricLoop:
    """Edit rubrics, re-judge only what changed, keep versions (``rl.Workbench``'s model).

    ``cases`` is a DataFrame (or records, or a file) of prompts and responses; ``metrics`` the
    metrics to judge them with; ``judge`` as for ``rl.evaluate``. ``labels`` (a DataFrame with
    the ``result.labels`` columns, or taken from ``cases`` when it is a labelled result) gives
    each version its agreement with people.
    """

    def __init__(
        self,
        cases: Any,
        metrics: Metric | Sequence[Metric],
        judge: Judge | str | None = None,
        *,
        labels: pd.DataFrame | None = None,
    ) -> None:
        if isinstance(cases, EvalResult):
            if labels is None and len(cases.labels):
                labels = cases.labels
            table = cases.table
            cases = table[[c for c in table.columns if "/" not in str(c)]]
        frame = to_frame(cases)
        if len(frame) == 0:
            raise ValueError("the workbench needs at least one case (the table is empty)")
        self._frame = frame.copy()
        self._metrics = metric_list(metrics)
        check_metrics(self._metrics)
        resolved = get_judge(judge) if judge is not None else None
        if resolved is None and any(_needs_judge(m) for m in self._metrics):
            resolved = get_judge(None)
        if resolved is not None and resolved.cache is None:
            resolved = resolved.with_cache(None)  # a memory cache: unchanged requests are free
        self._judge = resolved
        self._labels = labels
        self._shared: dict[str, Rubric] = {}
        self._rows: dict[str, list[Rubric | None]] = {}
        self._templates: dict[str, str | None] = {}
        for m in self._metrics:
            if not isinstance(m, RubricMetric):
                continue
            self._templates[m.name] = m.template
            if m.rubric is not None:
                self._shared[m.name] = m.rubric
            elif m.rubric_column is not None or _has_rubric_column(frame):
                column = m.rubric_column or RUBRIC
                if column not in frame.columns:
                    raise ValueError(f"metric {m.name!r}: no rubric column {column!r} in the cases")
                self._rows[m.name] = [
                    rubric_cell(v, f"row {i}", column) for i, v in enumerate(frame[column])
                ]
        self.versions: list[Version] = []

    # -- what can be edited --------------------------------------------------------------------
    @property
    def judge(self) -> Judge | None:
        return self._judge

    @property
    def metric_names(self) -> list[str]:
        return [m.name for m in self._metrics]

    @property
    def frame(self) -> pd.DataFrame:
        """The cases as given (a copy)."""
        return self._frame

    def slots(self) -> list[Slot]:
        """Every editable rubric: shared ones first, then each row's, metric by metric.

        Rubrics a generator writes become editable after the first version."""
        out = [Slot(name) for name in self._shared]
        for name, rubrics in self._rows.items():
            out.extend(Slot(name, i) for i, r in enumerate(rubrics) if r is not None)
        return out

    def rubric_of(self, slot: Slot) -> Rubric:
        if slot.row is None:
            if slot.metric not in self._shared:
                raise KeyError(f"metric {slot.metric!r} has no shared rubric to edit")
            return self._shared[slot.metric]
        rubrics = self._rows.get(slot.metric)
        if rubrics is None:
            raise KeyError(f"metric {slot.metric!r} has no per-row rubrics (yet)")
        found = rubrics[slot.row] if 0 <= slot.row < len(rubrics) else None
        if found is None:
            raise KeyError(f"row {slot.row} has no {slot.metric!r} rubric")
        return found

    def set_rubric(self, slot: Slot, rubric: Rubric) -> None:
        """Replace one editable rubric (checked: it must already exist)."""
        if not isinstance(rubric, Rubric):
            raise TypeError(f"a rubric is a rubriclab.Rubric, got {type(rubric).__name__}")
        self.rubric_of(slot)
        if slot.row is None:
            self._shared[slot.metric] = rubric
        else:
            assert slot.row is not None
            self._rows[slot.metric][slot.row] = rubric

    @property
    def templates(self) -> dict[str, str | None]:
        """Each rubric metric's critique template now (None: chosen per rubric)."""
        return dict(self._templates)

    def template_of(self, metric: str) -> str | None:
        if metric not in self._templates:
            raise KeyError(f"no rubric metric {metric!r} (rubric metrics: {list(self._templates)})")
        return self._templates[metric]

    def set_template(self, metric: str, template: str | None) -> None:
        """A metric's critique template (text, a built-in name, or None for the default)."""
        self.template_of(metric)
        self._templates[metric] = template or None

    def snapshot(self) -> Snapshot:
        out: Snapshot = dict(self._shared)
        out.update({name: tuple(rows) for name, rows in self._rows.items()})
        return out

    def changed_rows(self) -> list[int]:
        """Rows whose rubric or template differ from the latest version (all before v1)."""
        if not self.versions:
            return list(range(len(self._frame)))
        last = self.versions[-1]
        if last.templates != self._templates:
            return list(range(len(self._frame)))
        for name, rubric in self._shared.items():
            if _dump(last.rubrics.get(name)) != _dump(rubric):
                return list(range(len(self._frame)))
        changed: set[int] = set()
        for name, rows in self._rows.items():
            before = last.rubrics.get(name)
            if not isinstance(before, tuple):
                return list(range(len(self._frame)))
            changed.update(i for i, (a, b) in enumerate(zip(before, rows, strict=True)) if a != b)
        return sorted(changed)

    # -- judging ---------------------------------------------------------------------------------
    async def arejudge(
        self,
        on_rows: Callable[[pd.DataFrame], None] | None = None,
        note: str = "",
        *,
        on_block: Callable[[list[int], pd.DataFrame], None] | None = None,
    ) -> Version:
        """Judge the table with the rubrics as they are now: a new version.

        Unchanged requests come from the judge's cache (0 calls); ``on_rows`` gets each block
        of finished rows (the live table's hook); ``on_block`` gets the same blocks with the
        row positions (in the whole table) they fill, so a view can fill its rows live."""
        regenerated = await self._write_missing()
        changed = tuple(self.changed_rows())
        subset = self._subset(changed)
        on_rows = _with_positions(
            on_rows, on_block, list(range(len(self._frame))) if subset is None else subset
        )
        rubrics, templates = self.snapshot(), dict(self._templates)
        frame = self._frame.copy()
        metrics: list[Metric] = []
        for m in self._metrics:
            if isinstance(m, RubricMetric):
                template = templates[m.name]
                if m.name in self._shared:
                    m = dataclasses.replace(m, rubric=self._shared[m.name], template=template)
                elif m.name in self._rows:
                    column = ROW_RUBRICS.format(m.name)
                    frame[column] = pd.Series(list(self._rows[m.name]), index=frame.index)
                    m = dataclasses.replace(
                        m, rubric=None, rubric_column=column, generator=None, template=template
                    )
                else:
                    m = dataclasses.replace(m, template=template)
            metrics.append(m)
        start = time.perf_counter()
        if subset is None:
            result = await aevaluate(frame, metrics, judge=self._judge, on_rows=on_rows)
        else:  # the other rows' requests are unchanged: their results are the last version's
            before = self.versions[-1].result
            if subset:
                part = await aevaluate(
                    frame.iloc[subset], metrics, judge=self._judge, on_rows=on_rows
                )
                result = _spliced(before, part, subset)
            else:
                result = EvalResult(
                    before.table.copy(),
                    before.metrics,
                    judge=before.judge,
                    is_mock=before.is_mock,
                    meta=before.meta,
                )
        seconds = time.perf_counter() - start
        for m in self._metrics:  # rubrics written in v1 are each row's rubric from now on
            written = col(m.name, RUBRIC)
            if (
                isinstance(m, RubricMetric)
                and m.name not in self._shared
                and m.name not in self._rows
                and written in result.table.columns
            ):
                self._rows[m.name] = [
                    v if isinstance(v, Rubric) else None for v in result.table[written]
                ]
                rubrics[m.name] = tuple(self._rows[m.name])
        for name, tally in regenerated:
            result.stats.add(name, tally)
        for column in [c for c in result.table.columns if str(c).startswith("_workbench_")]:
            del result.table[column]
        version = Version(
            number=len(self.versions) + 1,
            result=result,
            rubrics=rubrics,
            templates=templates,
            calls=sum(result.stats.calls.values()),
            cached=sum(result.stats.cached.values()),
            changed=changed,
            seconds=seconds,
            note=note,
            agreement=self._agreement(result),
            kept=0 if subset is None else len(self._frame) - len(subset),
        )
        self.versions.append(version)
        return version

    async def _write_missing(self) -> list[tuple[str, CallTally]]:
        """Rubrics the generator failed to write in an earlier version are asked for again
        (a failure is never cached), so those rows are judged instead of kept as errors."""
        tallies: list[tuple[str, CallTally]] = []
        for m in self._metrics:
            rows = self._rows.get(m.name)
            if not isinstance(m, RubricMetric) or m.generator is None or rows is None:
                continue
            missing = [i for i, r in enumerate(rows) if r is None]
            if not missing or self._judge is None:
                continue
            cases = to_cases(self._frame.iloc[missing])
            made = await generate_for_cases(
                cases, m.generator, self._judge, reask=m.reask, max_prompt_chars=m.max_prompt_chars
            )
            for pos, g in zip(missing, made, strict=True):
                rows[pos] = g.rubric
                tallies.append((m.name, g.usage))
        return tallies

    def rows_to_send(self) -> list[int]:
        """The rows a re-judge now gives to the judge: all of them (the cache answers the
        unchanged), or, when only some rows' own rubrics changed, those rows and the rows whose
        last call failed (a failure is never cached, so it is tried again)."""
        changed = self.changed_rows()
        subset = self._subset(tuple(changed))
        return list(range(len(self._frame))) if subset is None else subset

    def _subset(self, changed: tuple[int, ...]) -> list[int] | None:
        """None: judge the whole table; else the positions to judge (the rest are reused)."""
        n = len(self._frame)
        if not self.versions or len(changed) == n:
            return None
        table = self.versions[-1].result.table
        rows = set(changed)
        for name in self.metric_names:
            errors = col(name, ERROR)
            if errors in table.columns:
                rows.update(
                    i for i, v in enumerate(table[errors].tolist()) if not is_missing_cell(v)
                )
        return None if len(rows) == n else sorted(rows)

    def _agreement(self, result: EvalResult) -> tuple[dict[str, Any], ...]:
        if self._labels is None or len(self._labels) == 0:
            return ()
        result.add_labels(self._labels)
        found = calibrate(result)
        return tuple(
            {k: v for k, v in item.to_dict().items() if k in _AGREEMENT_KEYS}
            for item in found.items
        )

    def undo(self, version: int | str) -> Version:
        """Return to an earlier version's rubrics: a new version with its result (0 calls)."""
        old = self.version(version)
        for name, value in old.rubrics.items():
            if isinstance(value, tuple):
                self._rows[name] = list(value)
            else:
                self._shared[name] = value
        self._templates = dict(old.templates)
        again = dataclasses.replace(
            old,
            number=len(self.versions) + 1,
            calls=0,
            cached=0,
            changed=tuple(self.changed_rows()),
            seconds=0.0,
            note=f"undo to {old.name}",
        )
        self.versions.append(again)
        return again

    def version(self, which: int | str) -> Version:
        """A version by number (1, 2, ...; -1 the latest) or name (``"v2"``)."""
        if not self.versions:
            raise IndexError("there is no version yet: re-judge first")
        if isinstance(which, str):
            text = which.strip().lower().removeprefix("v")
            if not text.isdigit():
                raise KeyError(f"no version {which!r}: versions are v1..v{len(self.versions)}")
            which = int(text)
        if which < 0:
            which = len(self.versions) + 1 + which
        if not 1 <= which <= len(self.versions):
            raise KeyError(f"no version v{which}: versions are v1..v{len(self.versions)}")
        return self.versions[which - 1]

    # -- comparing -------------------------------------------------------------------------------
    def compare(
        self, earlier: int | str | None = None, later: int | str | None = None
    ) -> Comparison:
        """``rl.compare`` of two versions (default: the latest against the one before)."""
        b = self.version(-1 if later is None else later)
        if earlier is None:
            if b.number < 2:
                raise IndexError("there is only one version: re-judge after an edit to compare")
            earlier = b.number - 1
        a = self.version(earlier)
        return compare(a.result, b.result, names=(a.name, b.name), n_boot=2000)

    # -- saving ----------------------------------------------------------------------------------
    def rubrics_yaml(self) -> str:
        """The current rubrics as YAML: one rubric alone, else ``{metric: rubric or [rubrics]}``."""
        if len(self._shared) == 1 and not self._rows:
            return next(iter(self._shared.values())).to_yaml()
        data: dict[str, Any] = {name: r.to_dict() for name, r in self._shared.items()}
        for name, rows in self._rows.items():
            data[name] = [None if r is None else r.to_dict() for r in rows]
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)

    def save(self, path: str | Path) -> Path:
        """Write the current rubrics as YAML (atomically: a failed save keeps the old file)."""
        return atomic_write_text(Path(path), self.rubrics_yaml())


_AGREEMENT_KEYS = ("metric", "criterion", "n", "agree", "rate", "rate_low", "rate_high", "kappa")


def flips(comparison: Comparison) -> pd.DataFrame:
    """Rows whose verdict differs between the two sides, per metric: key, metric, both verdicts
    and scores (the rows people look at first after an edit). A verdict's reason is not part
    of it: "fail (critical)" and "fail (score below pass mark)" are both a fail."""
    rows = []
    t = comparison.table
    for m in comparison.metric_names:
        va, vb = t.get(col(m, "verdict_a")), t.get(col(m, "verdict_b"))
        if va is None or vb is None:
            continue
        for key, a, b, sa, sb in zip(
            t.index, va, vb, t[col(m, "score_a")], t[col(m, "score_b")], strict=True
        ):
            if _text(a) != _text(b):
                rows.append(
                    {
                        "key": key,
                        "metric": m,
                        "verdict_a": a,
                        "verdict_b": b,
                        "score_a": sa,
                        "score_b": sb,
                    }
                )
    return pd.DataFrame(
        rows, columns=["key", "metric", "verdict_a", "verdict_b", "score_a", "score_b"]
    )


def _with_positions(
    on_rows: Callable[[pd.DataFrame], None] | None,
    on_block: Callable[[list[int], pd.DataFrame], None] | None,
    positions: list[int],
) -> Callable[[pd.DataFrame], None] | None:
    """One row hook for ``aevaluate`` that also tells ``on_block`` which rows each block fills
    (blocks come in row order, so the n-th finished row is ``positions[n]``)."""
    if on_block is None:
        return on_rows
    done = 0

    def hook(block: pd.DataFrame) -> None:
        nonlocal done
        if on_rows is not None:
            on_rows(block)
        on_block(positions[done : done + len(block)], block)
        done += len(block)

    return hook


def _spliced(before: EvalResult, part: EvalResult, rows: list[int]) -> EvalResult:
    """The last version's table with ``rows`` replaced by a run of just those rows."""
    table = before.table.copy()
    for column in part.table.columns:
        values = table[column].tolist() if column in table.columns else [None] * len(table)
        for pos, value in zip(rows, part.table[column].tolist(), strict=True):
            values[pos] = value
        keep = column in table.columns and table[column].dtype == object
        table[column] = pd.Series(values, index=table.index, dtype=object if keep else None)
    return EvalResult(
        table,
        part.metrics,
        judge=part.judge,
        is_mock=part.is_mock,
        stats=part.stats,
        meta=part.meta,
    )


def _text(value: Any) -> str | None:
    """A verdict without its reason: "fail (score below pass mark)" is "fail"."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    return str(value).split(" (", 1)[0]


def _dump(value: Any) -> Any:
    return value.to_dict() if isinstance(value, Rubric) else value


def _means(result: EvalResult) -> dict[str, float]:
    out = {}
    for name in result.metric_names:
        column = col(name, "score")
        if column in result.table.columns:
            out[name] = float(pd.to_numeric(result.table[column], errors="coerce").mean())
    return out


def _has_rubric_column(frame: pd.DataFrame) -> bool:
    return RUBRIC in frame.columns and bool(frame[RUBRIC].notna().all())


def _needs_judge(metric: Any) -> bool:
    return isinstance(metric, RubricMetric) or getattr(metric, "kind", "") == "template"
