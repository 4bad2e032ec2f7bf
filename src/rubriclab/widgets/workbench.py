"""``Workbench``: the rubric loop in one view: edit, re-judge only what changed, see what moved.

The rubric grid is the ``RubricEditor``'s (same traits, same validation, same front-end code),
the comparison is the ``ComparisonView``'s (same payloads from ``rl.compare``), with the rows
whose verdict flipped listed first. Re-judging runs on the kernel's own event loop as a task
started by a message from the view, so the notebook stays usable while calls run; the view
shows progress and can cancel. The loop itself (versions, what changed, agreement) is
``evaluation.loop.RubricLoop``; this module only draws it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import traitlets
from pydantic import ValidationError

from ..columns import SCORE, VERDICT, col
from ..evaluation.loop import RubricLoop, Slot, Version, flips
from ..files import resolve_inside
from ..judges.sync import run_sync
from ..rubric import Rubric, RubricError
from ._assets import EsmBundle
from ._base import RubricView
from ._cells import text_of
from .comparison_view import (
    MAX_LISTED,
    ComparisonTraits,
    case_detail,
    case_rows,
    comparison_text,
    criteria_rows,
    metric_rows,
    overview,
)
from .display import LIVE_INTERVAL_S
from .rubric_editor import RubricGridTraits, first_loc, validation_message

if TYPE_CHECKING:
    from ..comparison import Comparison
    from ..judges import Judge
    from ..metrics.base import Metric

__all__ = ["Workbench"]

#: rows of the result table sent to the view (the rest stay in ``workbench.result``)
TABLE_ROWS = 200
#: how often the progress line's call counter is brought up to date while a run goes
CALLS_INTERVAL_S = 0.25


class Workbench(RubricView, RubricGridTraits, ComparisonTraits):
    """``rl.Workbench(cases, metrics, judge=None)``: rubric grid, results and comparison.

    Edit a criterion (or a row's generated checklist), press **Re-judge** (Ctrl-Enter): only
    rows whose rendered request changed are sent, the rest come from the judge's cache. Each
    re-judge is a version (v1, v2, ...); the latest is compared with an earlier one, flipped
    verdicts first; **Undo** returns to any version; **Save** writes the rubric as YAML.
    ``workbench.rubric`` and ``workbench.versions`` give both to code.
    """

    _esm = EsmBundle("workbench")

    # the rubric grid's and the comparison's traits come from RubricGridTraits and
    # ComparisonTraits, so their front-end code draws both unchanged; the loop's own state:
    count = traitlets.Int(0).tag(sync=True)  # no rubric until the first version
    versions_info = traitlets.List(traitlets.Dict()).tag(sync=True)
    against = traitlets.Int(0).tag(sync=True)
    running = traitlets.Bool(False).tag(sync=True)
    progress = traitlets.Dict().tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    pending = traitlets.Int(0).tag(sync=True)
    rows = traitlets.List(traitlets.Dict()).tag(sync=True)
    row_total = traitlets.Int(0).tag(sync=True)
    flipped = traitlets.Int(0).tag(sync=True)
    save_path = traitlets.Unicode("rubric.yaml").tag(sync=True)
    #: each rubric metric's critique template ("" chooses one per rubric)
    templates = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        cases: Any,
        metrics: Metric | Sequence[Metric],
        judge: Judge | str | None = None,
        *,
        labels: pd.DataFrame | None = None,
        title: str | None = None,
        save_path: str = "rubric.yaml",
    ) -> None:
        self._loop = RubricLoop(cases, metrics, judge, labels=labels)
        self._slots: list[Slot] = self._loop.slots()
        self._comparison: Comparison | None = None
        self._listed: list[Any] = []
        self._task: asyncio.Task[Version] | None = None
        self._quiet_edits = False
        self._answered_at: float | None = None
        #: the result rows while a re-judge runs (sent in ``rows``, throttled)
        self._live: list[dict[str, Any]] = []
        self._live_shown = 0.0
        self._live_flush: asyncio.TimerHandle | None = None
        judge_obj = self._loop.judge
        with self._quiet():
            super().__init__(
                title=title or "Workbench",
                is_mock=bool(judge_obj is not None and judge_obj.is_mock),
                judge=str(judge_obj.model) if judge_obj is not None else "",
                save_path=save_path,
                pending=len(self._loop.changed_rows()),
                templates={k: v or "" for k, v in self._loop.templates.items()},
            )
            self._show_slot(0)
        self._register("rejudge", self._on_rejudge)
        self._register("cancel", self._on_cancel)
        self._register("undo", self._on_undo)
        self._register("save", self._on_save)
        self._register("template", self._on_template)

    # -- what code reads ---------------------------------------------------------------------------
    @property
    def loop(self) -> RubricLoop:
        """The model under the view (versions, rubrics, comparisons)."""
        return self._loop

    @property
    def rubric(self) -> Rubric | None:
        """The rubric shown in the grid (the first editable one until another is picked)."""
        if not self._slots:
            return None
        return self._loop.rubric_of(self._slots[self.index])

    @property
    def rubrics(self) -> dict[str, Any]:
        """Every editable rubric now: ``{metric: Rubric}`` or ``{metric: (rubric per row)}``."""
        return self._loop.snapshot()

    @property
    def versions(self) -> list[Version]:
        """Every version so far, v1 first."""
        return list(self._loop.versions)

    @property
    def comparison(self) -> Comparison | None:
        """The comparison shown (the latest version against the chosen earlier one)."""
        return self._comparison

    @property
    def result(self) -> Any:
        """The latest version's EvalResult (None before the first re-judge)."""
        return self._loop.versions[-1].result if self._loop.versions else None

    # -- judging ---------------------------------------------------------------------------------------
    def rejudge(self) -> Version:
        """Re-judge now from code (blocking); the view follows."""
        return run_sync(self._judged())

    async def arejudge(self) -> Version:
        """Re-judge on the running loop (what the button does)."""
        return await self._judged()

    async def _judged(self) -> Version:
        sent = self._loop.rows_to_send()
        total = len(sent)
        with self.hold_sync():
            self.running = True
            self.progress = {"done": 0, "total": total, "calls": 0}
            self.status = f"judging: {self.pending} changed row(s) sent, the rest from the cache"
            self._start_live(sent)
        judge = self._loop.judge
        calls_before = _calls(judge)

        def on_rows(block: pd.DataFrame) -> None:
            done = int(self.progress.get("done", 0)) + len(block)
            self._answered_at = time.perf_counter()
            self.progress = {"done": done, "total": total, "calls": _calls(judge) - calls_before}

        async def count_calls() -> None:
            # a block of rows may wait on many calls (a row's criteria, generated rubrics):
            # the counter follows each call as it ends, not only the blocks
            while True:
                await asyncio.sleep(CALLS_INTERVAL_S)
                calls = _calls(judge) - calls_before
                if calls != self.progress.get("calls"):
                    self.progress = {**self.progress, "calls": calls}

        counter = asyncio.ensure_future(count_calls())
        try:
            version = await self._loop.arejudge(on_rows=on_rows, on_block=self._fill_live)
        except asyncio.CancelledError:
            with self.hold_sync():
                self._stop_live()
                self.running = False
                self.status = "cancelled: no new version (the answers that came are cached)"
            raise
        except Exception as exc:
            with self.hold_sync():
                self._stop_live()
                self.running = False
                self.status = f"re-judge failed: {text_of(str(exc), 400)}"
            raise
        finally:
            counter.cancel()
        self._after_version(version)
        return version

    # -- the result rows while a re-judge runs ------------------------------------------------------
    def _start_live(self, sent: Sequence[int]) -> None:
        """Rows about to be judged show as waiting (their old answers cleared), the others keep
        the last version's answers; each finished block then fills its rows (``_fill_live``)."""
        self._stop_live()
        frame = self._loop.frame
        shown = min(len(frame), TABLE_ROWS)
        changed = set(self._loop.changed_rows())
        last = list(self.rows) if len(self.rows) == shown else []
        live = last or [_row_of(frame, pos, [], pos in changed) for pos in range(shown)]
        names = self._loop.metric_names
        for pos in sent:
            if pos >= shown:
                continue
            live[pos] = {
                **_row_of(frame, pos, names, pos in changed),
                "state": "waiting",
            }
        self._live = live
        self._live_shown = 0.0
        self.rows = [dict(r) for r in live]
        self.row_total = len(frame)

    def _fill_live(self, positions: list[int], block: pd.DataFrame) -> None:
        """A finished block's rows become ``done`` with their answers; the view hears of it at
        once for the first block, then at most every ``LIVE_INTERVAL_S`` (a late block is sent
        when the interval ends, so no finished row waits for the whole run)."""
        if not self._live:
            return
        names = self._loop.metric_names
        for i, pos in enumerate(positions):
            if pos < len(self._live):
                row = _row_of(block, i, names, bool(self._live[pos].get("sent")))
                row["row"] = pos
                row["state"] = "done"
                self._live[pos] = row
        now = time.monotonic()
        wait = LIVE_INTERVAL_S - (now - self._live_shown)
        if self._live_shown == 0.0 or wait <= 0:
            self._show_live()
        elif self._live_flush is None:
            # no running loop: the next block or the version shows it
            with contextlib.suppress(RuntimeError):
                self._live_flush = asyncio.get_running_loop().call_later(wait, self._show_live)

    def _show_live(self) -> None:
        self._live_flush = None
        if not self._live or not self.running:
            return
        self._live_shown = time.monotonic()
        self.rows = [dict(r) for r in self._live]

    def _stop_live(self) -> None:
        """End the live rows: a cancelled or failed run shows the last version again."""
        if self._live_flush is not None:
            self._live_flush.cancel()
            self._live_flush = None
        if self._live:
            self._live = []
            if self._loop.versions:
                self._table(self._loop.versions[-1])
            else:
                self.rows, self.row_total = [], 0

    def _after_version(self, version: Version) -> None:
        self._slots = self._loop.slots()
        if self._live_flush is not None:
            self._live_flush.cancel()
            self._live_flush = None
        self._live = []
        with self.hold_sync(), self._quiet():
            self.running = False
            self.versions_info = [v.to_dict() for v in self._loop.versions]
            self.count = len(self._slots)
            self._show_slot(min(self.index, max(len(self._slots) - 1, 0)))
            earlier = version.number - 1 if version.number > 1 else 0
            self.against = earlier
            self._compare(earlier)
            self._table(version)
            self.pending = len(self._loop.changed_rows())
            self.status = (
                f"{version.name}: {version.calls} call(s), {version.cached} from the cache, "
                f"{version.kept} unchanged row(s) kept, "
                f"{version.seconds:.2f} s" + (f" · {version.note}" if version.note else "")
            )

    # -- messages from the view ------------------------------------------------------------------
    def _on_rejudge(self, _content: Mapping[str, Any]) -> dict[str, Any]:
        if self._task is not None and not self._task.done():
            return {"error": "a re-judge is already running (press Cancel to stop it)"}
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no kernel loop (a plain script): judge now
            self.rejudge()
            return {"ok": True}
        self.running = True  # at once: the button greys before the task's first step
        self._task = loop.create_task(self._judged())
        self._task.add_done_callback(_consume)
        return {"ok": True, "started": True}

    def _on_cancel(self, _content: Mapping[str, Any]) -> dict[str, Any]:
        if self._task is None or self._task.done():
            return {"ok": True, "running": False}
        self._task.cancel()
        return {"ok": True, "running": True}

    def _on_undo(self, content: Mapping[str, Any]) -> dict[str, Any]:
        version = self._loop.undo(int(content.get("version", 0)))
        self.templates = {k: v or "" for k, v in self._loop.templates.items()}
        self._after_version(version)
        return {"ok": True, "version": version.name}

    def _on_save(self, content: Mapping[str, Any]) -> dict[str, Any]:
        # a path from the page stays inside the working folder, absolute or not
        asked = Path(str(content.get("path") or self.save_path))
        path = self.save(resolve_inside(asked, Path.cwd(), key="save path"))
        return {"ok": True, "path": str(path)}

    def _on_template(self, content: Mapping[str, Any]) -> dict[str, Any]:
        metric = str(content.get("metric", ""))
        self._loop.set_template(metric, str(content.get("template") or "") or None)
        with self.hold_sync():
            self.templates = {k: v or "" for k, v in self._loop.templates.items()}
            self.pending = len(self._loop.changed_rows())
        return {"ok": True}

    def save(self, path: str | Path | None = None) -> Path:
        """Write the rubrics as YAML (a relative path stays inside the working folder)."""
        target = Path(path or self.save_path)
        if not target.is_absolute():
            target = resolve_inside(target, Path.cwd(), key="save path")
        saved = self._loop.save(target)
        self.status = f"saved the rubric to {saved.name}"
        return saved

    # -- the grid ---------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _quiet(self) -> Iterator[None]:
        before = self._quiet_edits
        self._quiet_edits = True
        try:
            yield
        finally:
            self._quiet_edits = before

    def _show_slot(self, pos: int) -> None:
        self.count = len(self._slots)
        if not self._slots:
            self.value = {}
            self.heading = "the rubrics are written by the judge in v1: re-judge to edit them"
            return
        pos = min(max(pos, 0), len(self._slots) - 1)
        slot = self._slots[pos]
        self.index = pos
        self.value = self._loop.rubric_of(slot).to_dict()
        self.error = None  # type: ignore[assignment]
        self.heading = self._slot_heading(slot)

    def _slot_heading(self, slot: Slot) -> str:
        if slot.row is None:
            return f"{slot.metric}: the rubric of every row"
        frame = self._loop.frame
        for key in ("id", "prompt"):
            if key in frame.columns:
                text = text_of(frame[key].iloc[slot.row], 120) or ""
                return f"{slot.metric}: row {slot.row} ({key}: {' '.join(text.split())})"
        return f"{slot.metric}: row {slot.row}"

    @traitlets.observe("index")
    def _on_index(self, change: Any) -> None:
        if self._quiet_edits:
            return
        with self.hold_sync(), self._quiet():
            self._show_slot(int(change["new"]))

    @traitlets.observe("value")
    def _on_value(self, change: Any) -> None:
        if self._quiet_edits or not self._slots:
            return
        proposed = change["new"]
        slot = self._slots[self.index]
        try:
            rubric = Rubric.model_validate(proposed)
        except ValidationError as exc:
            self._reject(validation_message(exc, proposed), first_loc(exc), slot)
            return
        except (RubricError, ValueError, TypeError) as exc:
            self._reject(str(exc), [], slot)
            return
        self._loop.set_rubric(slot, rubric)
        canonical = rubric.to_dict()
        with self.hold_sync(), self._quiet():
            self.error = None  # type: ignore[assignment]
            self.revision += 1
            self.pending = len(self._loop.changed_rows())
            if canonical != proposed:
                self.value = canonical

    def _reject(self, message: str, path: list[Any], slot: Slot) -> None:
        with self.hold_sync(), self._quiet():
            self.error = {"message": message, "path": path}
            self.value = self._loop.rubric_of(slot).to_dict()

    def edit(self, rubric: Rubric, *, metric: str | None = None, row: int | None = None) -> None:
        """Replace a rubric from code (the shared one, or ``row``'s) as the grid would."""
        name = metric or next(iter(s.metric for s in self._slots), "")
        slot = Slot(name, row)
        self._loop.set_rubric(slot, rubric)
        if slot in self._slots:
            with self.hold_sync(), self._quiet():
                self._show_slot(self._slots.index(slot))
        self.pending = len(self._loop.changed_rows())

    # -- the comparison -----------------------------------------------------------------------------
    @traitlets.observe("against")
    def _on_against(self, change: Any) -> None:
        if self._quiet_edits:
            return
        with self.hold_sync(), self._quiet():
            self._compare(int(change["new"]))

    def _compare(self, earlier: int) -> None:
        latest = self._loop.versions[-1] if self._loop.versions else None
        if latest is None or earlier < 1 or earlier >= latest.number:
            self._comparison = None
            self.names, self.metrics, self.criteria, self.cases = [], [], [], []
            self.overview, self.case_total, self.flipped, self.metric = {}, 0, 0, ""
            self.item, self.detail = -1, None  # type: ignore[assignment]
            return
        comparison = self._loop.compare(earlier, latest.number)
        self._comparison = comparison
        self.names = list(comparison.names)
        self.overview = overview(comparison)
        self.metrics = metric_rows(comparison)
        self.criteria = criteria_rows(comparison)
        self.flipped = len(flips(comparison))
        first = self.metrics[0]["metric"] if self.metrics else ""
        if first == self.metric:
            self._list(first)  # the same metric of a new comparison: list it again
        else:
            self.metric = first

    @traitlets.observe("metric")
    def _on_metric(self, change: Any) -> None:
        self._list(str(change["new"]))

    def _list(self, metric: str) -> None:
        c = self._comparison
        with self.hold_sync():
            self.item = -1
            self.detail = None  # type: ignore[assignment]
            if c is None or not metric:
                self.cases, self.case_total, self._listed = [], 0, []
                return
            listed = _flipped_first(case_rows(c, metric))
            self.case_total = len(listed)
            self._listed = [r["key_value"] for r in listed[:MAX_LISTED]]
            self.cases = [{k: v for k, v in r.items() if k != "key_value"} for r in listed][
                :MAX_LISTED
            ]

    @traitlets.observe("item")
    def _on_item(self, change: Any) -> None:
        pos = int(change["new"])
        if self._comparison is None or pos < 0 or pos >= len(self._listed):
            self.detail = None  # type: ignore[assignment]
            return
        self.detail = case_detail(self._comparison, self._listed[pos], self.metric)

    # -- the result table -----------------------------------------------------------------------
    def _table(self, version: Version) -> None:
        t = version.result.table
        changed = set(version.changed)
        names = version.result.metric_names
        self.rows = [
            _row_of(t, pos, names, pos in changed) for pos in range(min(len(t), TABLE_ROWS))
        ]
        self.row_total = len(t)

    # -- static forms ----------------------------------------------------------------------------
    def static_text(self) -> str:
        lines = [
            f"{self.title}: {len(self._loop.frame)} rows, {len(self._loop.versions)} version(s)"
        ]
        for v in self._loop.versions:
            lines.append(
                f"  {v.name}: {v.calls} call(s), {v.cached} cached, {len(v.changed)} changed row(s)"
                + (f" ({v.note})" if v.note else "")
            )
        if self._comparison is not None:
            lines.append(comparison_text(self._comparison))
        return "\n".join(lines)

    def static_html(self) -> str:
        from ._static.common import esc

        return f"<pre>{esc(self.static_text())}</pre>"


def _row_of(t: pd.DataFrame, pos: int, names: Sequence[str], sent: bool) -> dict[str, Any]:
    """One result row as the view draws it (model text as plain, clipped text)."""
    row = t.iloc[pos]
    return {
        "row": pos,
        "key": text_of(row["id"] if "id" in t.columns else t.index[pos], 60),
        "response": text_of(row.get("response"), 160),
        "sent": sent,
        "metrics": [
            {
                "metric": m,
                "score": _finite(row.get(col(m, SCORE))),
                "verdict": _plain(row.get(col(m, VERDICT))),
                "error": _plain(row.get(col(m, "error"))),
            }
            for m in names
        ],
    }


def _flipped_first(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Verdict flips first, then by size of change (the stable sort keeps that order)."""
    return sorted(rows, key=lambda r: (r.get("verdict_a") == r.get("verdict_b"),))


def _calls(judge: Any) -> int:
    """Calls the judge has made so far (a judge of another kind counts none)."""
    calls = getattr(judge, "calls_made", 0)
    return calls if isinstance(calls, int) and not isinstance(calls, bool) else 0


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if number != number or number in (float("inf"), float("-inf")) else number


def _plain(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    return text_of(value, 200)


def _consume(task: asyncio.Task[Version]) -> None:
    """A view-started task's failure is shown in its status; keep asyncio from logging it."""
    if not task.cancelled():
        task.exception()
