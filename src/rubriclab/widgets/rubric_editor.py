"""``RubricEditor``: edit one rubric, or a column of generated rubrics case by case.

The browser sends the whole edited rubric as the ``value`` trait; the same pydantic models
validate it here. A valid edit becomes ``editor.rubric`` and is written back into the
DataFrame's column; an invalid one sets ``error`` (with the field's path) and ``value`` is put
back to the last good rubric explicitly, so browser and kernel never disagree.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pandas as pd
import traitlets
from pydantic import ValidationError

from ..alignment import Alignment, Change
from ..columns import RUBRIC, field_of
from ..files import error_text
from ..rubric import Criterion, Rubric, RubricError
from ._assets import EsmBundle
from ._base import RubricView
from ._cells import is_missing, text_of
from ._static.rubric import rubric_html, rubric_text

__all__ = ["RubricEditor", "RubricGridTraits", "first_loc", "validation_message"]


class RubricGridTraits(traitlets.HasTraits):
    """The synced state the rubric grid's front-end code draws (RubricEditor's, and the
    Workbench's, which reuses that code)."""

    value = traitlets.Dict().tag(sync=True)
    error = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    index = traitlets.Int(0).tag(sync=True)
    count = traitlets.Int(1).tag(sync=True)
    heading = traitlets.Unicode("").tag(sync=True)
    revision = traitlets.Int(0).tag(sync=True)


class RubricEditor(RubricView, RubricGridTraits):
    """An editable grid over a ``Rubric``, a DataFrame's rubric column, or a list of rubrics."""

    _esm = EsmBundle("rubric_editor")

    #: proposed changes (``rl.align``'s): kind, criterion, before/after wording, status
    proposals = traitlets.List(traitlets.Dict()).tag(sync=True)

    def __init__(
        self,
        source: Rubric | pd.DataFrame | Sequence[Rubric] | Any,
        column: str | None = None,
        index: int = 0,
        proposals: Alignment | Sequence[Change] | None = None,
    ) -> None:
        self._frame: pd.DataFrame | None = None
        self._column = ""
        self._list: list[Rubric] | None = None
        if isinstance(source, Rubric):
            self._list = [source]
        elif isinstance(source, pd.DataFrame) or (
            hasattr(source, "table") and isinstance(source.table, pd.DataFrame)
        ):
            frame = source if isinstance(source, pd.DataFrame) else source.table
            self._frame = frame
            self._column = _rubric_column(frame, column)
        elif isinstance(source, Sequence) and not isinstance(source, str):
            self._list = list(source)
            for i, item in enumerate(self._list):
                if not isinstance(item, Rubric):
                    raise TypeError(f"item {i} is a {type(item).__name__}, not a rubriclab.Rubric")
        else:
            raise TypeError(
                f"RubricEditor edits a Rubric, a DataFrame with a rubric column, or a list of "
                f"rubrics; got {type(source).__name__}"
            )
        n = len(self._frame) if self._frame is not None else len(self._list or [])
        if n == 0:
            raise ValueError("there is no rubric to edit (the table or list is empty)")
        if not 0 <= index < n:
            raise IndexError(f"index {index} is out of range: there are {n} rubrics (0..{n - 1})")
        self._good = self._load(index)
        self._reverting = False
        self._changes: list[Change] = []
        self._status: list[str] = []
        with self._quiet():  # the initial value is not an edit
            super().__init__(
                value=self._good.to_dict(),
                count=n,
                index=index,
                heading=self._heading(index),
            )
        self.on_msg(self._on_proposal_msg)
        if proposals is not None:
            self.propose(proposals)

    # -- what the user reads --------------------------------------------------------------------
    @property
    def rubric(self) -> Rubric:
        """The current rubric: always valid (the last accepted edit)."""
        return self._good

    @property
    def rubrics(self) -> list[Rubric]:
        """Every rubric, in order (the edited column, or the list given)."""
        return [self._load(i) for i in range(self.count)]

    # -- navigation ---------------------------------------------------------------------------------
    @traitlets.validate("index")
    def _valid_index(self, proposal: Any) -> int:
        return min(max(int(proposal["value"]), 0), self.count - 1 if self.count else 0)

    @traitlets.observe("index")
    def _on_index(self, change: Any) -> None:
        pos = int(change["new"])
        self._good = self._load(pos)
        with self.hold_sync(), self._quiet():
            self.error = None  # type: ignore[assignment]
            self.value = self._good.to_dict()
            self.heading = self._heading(pos)
            self._show_proposals()

    # -- edits ---------------------------------------------------------------------------------------
    @traitlets.observe("value")
    def _on_value(self, change: Any) -> None:
        if self._reverting:
            return
        proposed = change["new"]
        try:
            with Rubric.reading_saved():  # a criterion checked by a function: shown by name
                rubric = Rubric.model_validate(proposed)
            rubric = rubric.with_functions_from(self._good)
        except ValidationError as exc:
            self._reject(validation_message(exc, proposed), first_loc(exc))
            return
        except (RubricError, ValueError, TypeError) as exc:
            self._reject(str(exc), [])
            return
        self._good = rubric
        self._store(self.index, rubric)
        canonical = rubric.to_dict()
        with self.hold_sync(), self._quiet():
            self.error = None  # type: ignore[assignment]
            self.revision += 1
            if canonical != proposed:  # e.g. a pass mark of 70 becomes 0.7
                self.value = canonical
            self._show_proposals()

    # -- proposed changes ------------------------------------------------------------------------
    def propose(self, changes: Alignment | Sequence[Change]) -> None:
        """Show proposed changes above the grid, each with Apply and Reject.

        An ``Alignment`` proposes the changes ``align`` kept; a list proposes the changes given
        (e.g. ``alignment.changes``). Only changes with something to apply are shown."""
        if isinstance(changes, Alignment):
            picked = changes.kept
        elif isinstance(changes, Sequence) and not isinstance(changes, str):
            picked = list(changes)
        else:
            raise TypeError(
                "propose takes what rl.align(...) returns or a list of its changes "
                f"(alignment.changes), not a {type(changes).__name__}"
            )
        for i, c in enumerate(picked):
            if not isinstance(c, Change):
                raise TypeError(f"change {i} is a {type(c).__name__}, not an alignment Change")
        self._changes = [c for c in picked if c.after]
        self._status = ["open"] * len(self._changes)
        self._show_proposals()

    def apply(self, i: int) -> None:
        """Apply proposal ``i`` to the rubric shown (as an edit: validated, written back)."""
        self._decide(i, "apply")

    def reject(self, i: int) -> None:
        """Drop proposal ``i``; the rubric is unchanged."""
        self._decide(i, "reject")

    def _on_proposal_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, Mapping) or content.get("type") != "rl:proposal":
            return
        i, action = content.get("index"), content.get("action")
        if isinstance(i, int) and 0 <= i < len(self._changes) and action in ("apply", "reject"):
            self._decide(i, str(action))

    def _decide(self, i: int, action: str) -> None:
        if not 0 <= i < len(self._changes):
            raise IndexError(f"there is no proposal {i} (there are {len(self._changes)})")
        if self._status[i] != "open":
            raise ValueError(f"proposal {i} was already {self._status[i]}")
        if action == "reject":
            self._status[i] = "rejected"
            self._show_proposals()
            return
        target, why = self._target(self._changes[i])
        if target is None:
            self._show_proposals()
            raise ValueError(f"proposal {i} cannot be applied: {why}")
        before = self._good
        self.value = target  # the same path as an edit from the grid
        if self._good is not before or target == before.to_dict():
            self._status[i] = "applied"
        self._show_proposals()

    def _target(self, change: Change) -> tuple[dict[str, Any] | None, str]:
        """The rubric (as the grid's dict) with ``change`` applied, or None and why not."""
        current = self._good.to_dict()
        if change.kind == "pass_mark" and isinstance(change.proposal, float | int):
            current["pass_mark"] = float(change.proposal)
            return current, ""
        if change.kind == "rewrite" and isinstance(change.proposal, Criterion):
            names = [c.name for c in self._good.criteria]
            if change.criterion not in names:
                return None, f"criterion {change.criterion!r} is no longer in the rubric"
            new = change.proposal
            pos = names.index(str(change.criterion))
            mine = self._good.criteria[pos]
            if [lv.score for lv in mine.levels] != [lv.score for lv in new.levels]:
                return None, f"criterion {change.criterion!r} has other levels now"
            crit = current["criteria"][pos]
            crit["description"] = new.description
            crit["levels"] = [lv.model_dump() for lv in new.levels]
            return current, ""
        if change.kind in ("example", "cut_points"):
            return None, (
                f"{'an example' if change.kind == 'example' else 'cut points'} belong to the "
                "metric, not the rubric (alignment.metric has them)"
            )
        return None, "this change has nothing to apply"

    def _show_proposals(self) -> None:
        shown = []
        for i, c in enumerate(self._changes):
            status, why = self._status[i], ""
            if status == "open":
                target, why = self._target(c)
                if target is None:
                    status = "not applicable"
            shown.append(
                {
                    "index": i,
                    "kind": c.kind,
                    "criterion": c.criterion or "",
                    "before": c.before,
                    "after": c.after,
                    "kept": c.kept,
                    "note": c.note,
                    "status": status,
                    "why": why,
                }
            )
        with self._quiet():
            self.proposals = shown

    @contextlib.contextmanager
    def _quiet(self) -> Iterator[None]:
        """Trait changes made here are the kernel's own, not edits to validate (re-entrant)."""
        before = self._reverting
        self._reverting = True
        try:
            yield
        finally:
            self._reverting = before

    def _reject(self, message: str, path: list[Any]) -> None:
        """Show the error and put the last good rubric back, in the browser too."""
        with self.hold_sync(), self._quiet():
            self.error = {"message": message, "path": path}
            self.value = self._good.to_dict()

    def _load(self, pos: int) -> Rubric:
        if self._list is not None:
            return self._list[pos]
        assert self._frame is not None
        value = self._frame[self._column].iloc[pos]
        label = self._frame.index[pos]
        if isinstance(value, Rubric):
            return value
        if isinstance(value, Mapping):
            return Rubric.from_dict(value)
        if isinstance(value, str):
            try:
                return (
                    Rubric.from_json(value)
                    if value.lstrip().startswith("{")
                    else Rubric.from_yaml_text(value)
                )
            except (RubricError, ValueError) as exc:
                raise RubricError(
                    f"row {label!r}, column {self._column!r}: {error_text(exc)}"
                ) from None
        if is_missing(value):
            raise RubricError(
                f"row {label!r} has no rubric in column {self._column!r}: generate one "
                "(rl.generate_rubrics) or fill it before editing"
            )
        raise RubricError(
            f"row {label!r}, column {self._column!r} holds a {type(value).__name__}, not a rubric"
        )

    def _store(self, pos: int, rubric: Rubric) -> None:
        if self._list is not None:
            self._list[pos] = rubric
            return
        assert self._frame is not None
        col = self._frame.columns.get_loc(self._column)
        assert isinstance(col, int)
        self._frame.iat[pos, col] = rubric  # type: ignore[assignment]

    def _heading(self, pos: int) -> str:
        if self._frame is None:
            return ""
        for key in ("prompt", "id", "case_id"):
            if key in self._frame.columns:
                text = text_of(self._frame[key].iloc[pos], 160)
                if text:
                    return f"{key}: {' '.join(text.split())}"
        return f"row {self._frame.index[pos]}"

    # -- static forms ----------------------------------------------------------------------------
    def static_text(self) -> str:
        where = f"rubric {self.index + 1} of {self.count}" if self.count > 1 else ""
        return rubric_text(self._good, " · ".join(p for p in (where, self.heading) if p))

    def static_html(self) -> str:
        message = str(self.error["message"]) if self.error else ""
        return rubric_html(self._good, self.heading, message)


def _rubric_column(frame: pd.DataFrame, column: str | None) -> str:
    if column is not None:
        if column not in frame.columns:
            raise KeyError(
                f"no column {column!r} in the table (columns: {', '.join(map(str, frame.columns))})"
            )
        return column
    candidates = [str(c) for c in frame.columns if RUBRIC in (str(c), field_of(str(c)))]
    if not candidates:
        raise KeyError(
            "the table has no 'rubric' column: run rl.generate_rubrics(df, ...) first, or pass "
            "column='name of the rubric column'"
        )
    return candidates[0]


def first_loc(exc: ValidationError) -> list[Any]:
    errors = exc.errors()
    return list(errors[0].get("loc", ())) if errors else []


def validation_message(exc: ValidationError, proposed: Any) -> str:
    """pydantic's errors, one line each, naming the criterion and field (and what to fix)."""
    lines = []
    for err in exc.errors():
        loc = list(err.get("loc", ()))
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        where = ""
        if len(loc) >= 2 and loc[0] == "criteria" and isinstance(loc[1], int):
            name = _criterion_name(proposed, loc[1])
            if not msg.startswith("criterion "):
                where = f"criterion {name!r} (#{loc[1] + 1})"
            rest = ".".join(str(p) for p in loc[2:])
            if rest:
                where = f"{where} {rest}".strip()
        else:
            where = ".".join(str(p) for p in loc)
        lines.append(f"{where}: {msg}" if where else msg)
    return "\n".join(lines)


def _criterion_name(proposed: Any, i: int) -> str:
    try:
        return str(proposed["criteria"][i].get("name") or f"q{i + 1}")
    except (KeyError, IndexError, TypeError, AttributeError):
        return f"q{i + 1}"
