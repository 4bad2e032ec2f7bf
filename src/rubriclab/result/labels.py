"""People's labels on a result: one append-only JSON Lines file beside the results.

A reviewer's label says, for one row and one metric, what a person thinks: the overall verdict
(``pass``/``fail``; for a pairwise metric the winner ``candidate``/``tie``/``baseline``) or the
level of one criterion (a level number, or ``yes``/``no`` for a checklist item), with a comment.

**Why a file of its own, append-only.** Labels come from several places at once: a notebook, a
second notebook, the review page's reviewers. Rewriting the results file for every label would
race (the last writer wins, the other labels vanish). Appending one whole line per label under
an exclusive ``flock`` loses nothing, and a reader only ever takes complete lines, so it never
sees half a label. The file is ``results.labels.jsonl`` for ``results.jsonl`` (or
``results.parquet``).

**Latest per reviewer wins.** A reviewer who changes their mind appends a new label; for each
(row, metric, criterion, reviewer) the last line in the file counts. A label whose value is
``null`` withdraws that reviewer's label. Several reviewers keep their own labels.

**The file is untrusted.** It may come from someone else: each line is parsed alone (a line
that is not JSON, too long, of the wrong types, for a row or metric the result does not have,
or with a value outside the metric's levels is skipped and reported by line number, never
executed or shown as HTML), so one bad line never hides the others.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from .formats import result_stem

try:  # POSIX: an exclusive lock per append; elsewhere O_APPEND's whole-line writes
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "LABEL_COLUMNS",
    "OVERALL",
    "PAIRWISE_VERDICTS",
    "POINTWISE_VERDICTS",
    "YES_NO",
    "Label",
    "LabelError",
    "LabelStore",
    "check_value",
    "default_reviewer",
    "labels_path",
    "now_utc",
    "parse_label",
]

#: the columns of ``result.labels`` (the contract ``rl.align`` and ``rl.calibrate`` read)
LABEL_COLUMNS = ("row", "metric", "criterion", "value", "reviewer", "time", "comment")
#: the criterion name of a label on the whole row (the verdict, or the pairwise winner)
OVERALL = "overall"
POINTWISE_VERDICTS = ("pass", "fail")
PAIRWISE_VERDICTS = ("candidate", "tie", "baseline")
YES_NO = ("yes", "no")

MAX_LINE_BYTES = 64 * 1024
MAX_COMMENT = 10_000
MAX_REVIEWER = 100
MAX_NAME = 400
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class LabelError(ValueError):
    """A label the result cannot take; the message names the row, metric and criterion."""


def now_utc() -> str:
    """The current time as a UTC ISO 8601 timestamp with milliseconds (``...Z``)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def default_reviewer() -> str:
    """``$RUBRICLAB_REVIEWER``, else the login name, else ``"reviewer"``."""
    name = os.environ.get("RUBRICLAB_REVIEWER", "").strip()
    if not name:
        try:
            import getpass

            name = getpass.getuser()
        except (OSError, KeyError, ImportError):
            name = ""
    return clean_reviewer(name or "reviewer")


def clean_reviewer(name: Any) -> str:
    """A reviewer name: text of 1-100 characters, no control characters."""
    if not isinstance(name, str):
        raise LabelError(f"the reviewer must be text, got {type(name).__name__}")
    text = name.strip()
    if not text or len(text) > MAX_REVIEWER or _CONTROL.search(text):
        raise LabelError(
            f"the reviewer name must be 1-{MAX_REVIEWER} characters without control characters"
        )
    return text


def labels_path(results: str | Path) -> Path:
    """Where a result file's labels live: ``run.jsonl`` (or ``run.jsonl.gz``, ``run.parquet``)
    -> ``run.labels.jsonl``."""
    path = Path(results)
    return path.with_name(f"{result_stem(path)}.labels.jsonl")


@dataclass(frozen=True)
class Label:
    """One person's label on one row, metric and criterion (``overall`` for the verdict)."""

    row: int
    metric: str
    criterion: str
    value: str | int | None
    reviewer: str
    time: str
    comment: str = ""

    @property
    def slot(self) -> tuple[int, str, str, str]:
        """What a later label by the same reviewer replaces."""
        return (self.row, self.metric, self.criterion, self.reviewer)

    def line(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, allow_nan=False) + "\n"


#: checks (and normalises) a label against the result: its row, metric, criterion and value
Validator = Callable[[Label], Label]


def parse_label(data: Any) -> Label:
    """A label from decoded JSON, with every field's type checked (values not yet checked
    against the metric: see :class:`LabelStore`'s validator)."""
    if not isinstance(data, Mapping):
        raise LabelError("a label must be a JSON object")
    unknown = set(data) - set(LABEL_COLUMNS)
    if unknown:
        raise LabelError(f"unknown label keys: {', '.join(sorted(map(str, unknown)))}")
    row = data.get("row")
    if isinstance(row, bool) or not isinstance(row, int) or row < 0:
        raise LabelError(f"'row' must be a row number (0, 1, ...), got {_show(row)}")
    metric = _name(data.get("metric"), "metric")
    criterion = _name(data.get("criterion", OVERALL), "criterion")
    value = data.get("value")
    if isinstance(value, bool) or not (value is None or isinstance(value, int | str)):
        raise LabelError(f"'value' must be text or a level number, got {_show(value)}")
    if isinstance(value, str):
        value = value.strip().lower()
        if not value or len(value) > 40:
            raise LabelError("'value' must be a verdict, a level or yes/no")
    comment = data.get("comment") or ""
    if not isinstance(comment, str) or len(comment) > MAX_COMMENT:
        raise LabelError(f"'comment' must be text of at most {MAX_COMMENT} characters")
    time = data.get("time")
    if not isinstance(time, str) or len(time) > 40:
        raise LabelError("'time' must be an ISO timestamp")
    try:
        datetime.fromisoformat(time.replace("Z", "+00:00"))
    except ValueError:
        raise LabelError(f"'time' is not an ISO timestamp: {time[:40]!r}") from None
    return Label(row, metric, criterion, value, clean_reviewer(data.get("reviewer")), time, comment)


def _name(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME:
        raise LabelError(f"{key!r} must be a name (text), got {_show(value)}")
    return value


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[int]:
    """The labels file opened for appending, held under an exclusive lock."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # closing releases the lock


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _unchecked(label: Label) -> Label:
    """The validator of a store with no result to check labels against."""
    return label


class LabelStore:
    """A result's labels: every label in order (``history``), the file they live in (if any),
    and the labels not yet written to a file (a result never saved)."""

    def __init__(self, path: Path | None = None, validator: Validator | None = None) -> None:
        self.path = path
        self.validator = validator or _unchecked
        self._history: list[Label] = []
        self._pending: list[Label] = []
        self._offset = 0
        self._lineno = 0
        self._raw: list[tuple[int, Any]] = []  # decoded lines not yet validated (lazy)
        self.skipped: list[str] = []
        self._warned = 0
        self._lock = threading.RLock()

    # a result travels by pickle (Ray, multiprocessing): the lock is made anew on arrival
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    # -- reading ---------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Take the complete lines other writers appended since the last read."""
        if self.path is None:
            return
        with self._lock:
            try:
                size = self.path.stat().st_size
            except FileNotFoundError:
                return
            if size == self._offset:
                return
            if size < self._offset:  # replaced by a shorter file: read it again
                self._history, self._offset, self._lineno = [], 0, 0
            with self.path.open("rb") as fh:
                fh.seek(self._offset)
                data = fh.read(size - self._offset)
            end = data.rfind(b"\n")
            if end < 0:
                return  # a writer is half-way through its first line
            self._offset += end + 1
            for raw in data[: end + 1].split(b"\n")[:-1]:
                self._lineno += 1
                self._take(raw, self._lineno)
            self._report()

    def _take(self, raw: bytes, lineno: int) -> None:
        if not raw.strip():
            return
        where = f"{self.path.name if self.path else 'labels'} line {lineno}"
        if len(raw) > MAX_LINE_BYTES:
            self.skipped.append(f"{where}: longer than {MAX_LINE_BYTES // 1024} KiB")
            return
        try:
            data = json.loads(raw.decode("utf-8"))
            label = self.validator(parse_label(data))
        except (ValueError, RecursionError, UnicodeDecodeError) as exc:
            reason = str(exc) if isinstance(exc, LabelError) else "not a JSON object"
            self.skipped.append(f"{where}: {reason}")
            return
        self._history.append(label)

    def _report(self) -> None:
        if len(self.skipped) > self._warned:
            new = self.skipped[self._warned :]
            self._warned = len(self.skipped)
            more = f" (and {len(new) - 1} more; see result.label_problems)" if len(new) > 1 else ""
            warnings.warn(f"label skipped: {new[0]}{more}", stacklevel=4)

    @property
    def history(self) -> list[Label]:
        """Every label, oldest first (the file's, then any not yet written)."""
        self.refresh()
        return [*self._history, *self._pending]

    def latest(self) -> list[Label]:
        """Each reviewer's last label per row, metric and criterion (withdrawn ones left out)."""
        last: dict[tuple[int, str, str, str], Label] = {}
        for label in self.history:
            last.pop(label.slot, None)  # re-inserted: dict order follows the latest label
            last[label.slot] = label
        return [label for label in last.values() if label.value is not None]

    def frame(self) -> pd.DataFrame:
        """The latest labels as a DataFrame with :data:`LABEL_COLUMNS`, in row order."""
        rows = [asdict(label) for label in self.latest()]
        frame = pd.DataFrame(rows, columns=list(LABEL_COLUMNS))
        frame["row"] = frame["row"].astype("int64")
        frame["value"] = frame["value"].astype(object)
        frame = frame.sort_values(["row", "metric", "criterion", "reviewer"], kind="stable")
        return frame.reset_index(drop=True)

    # -- writing ---------------------------------------------------------------------------------
    def add(self, labels: Iterable[Label]) -> list[Label]:
        """Validate and keep labels: appended to the file at once if there is one."""
        checked = [self.validator(label) for label in labels]
        if not checked:
            return []
        with self._lock:
            if self.path is None:
                self._pending.extend(checked)
            else:
                self._append(self.path, checked)
                self.refresh()
        return checked

    @staticmethod
    def _append(path: Path, labels: Sequence[Label]) -> None:
        data = "".join(label.line() for label in labels).encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path) as fd:
            _write_all(fd, data)

    def save_to(self, path: Path) -> None:
        """Make ``path`` hold every label of this store (appending the ones it lacks), then
        keep labels there. Labels already in ``path`` (another reviewer's) are kept."""
        with self._lock:
            mine = self.history
            if self.path is not None and path.resolve() == self.path.resolve():
                return  # every label of this store is in this file already
            present = set(_lines(path))
            missing = [label for label in mine if label.line().rstrip("\n") not in present]
            if missing:
                self._append(path, missing)
            self.path, self._pending = path, []
            self._history, self._offset, self._lineno = [], 0, 0
            self.refresh()


def _lines(path: Path) -> list[str]:
    """A labels file's complete lines as text (none if there is no file)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    return [raw.decode("utf-8", "replace") for raw in data.split(b"\n")[:-1]]


def check_value(
    label: Label,
    *,
    pairwise: bool,
    criteria: Mapping[str, Sequence[str | int]] | None,
) -> Label:
    """``label`` with its value checked against what the metric allows.

    ``criteria`` maps each criterion of the row to its allowed values (levels, or yes/no; for a
    pairwise metric, the winners); None when the row's criteria are unknown (any level or
    yes/no is then taken).
    """
    where = f"row {label.row}, metric {label.metric!r}, criterion {label.criterion!r}"
    value = label.value
    if value is None:
        return label
    if label.criterion == OVERALL:
        allowed: Sequence[str | int] = PAIRWISE_VERDICTS if pairwise else POINTWISE_VERDICTS
    elif criteria is not None:
        if label.criterion not in criteria:
            names = ", ".join(criteria) or "none"
            raise LabelError(f"{where}: no such criterion (criteria: {names})")
        allowed = criteria[label.criterion]
    else:
        allowed = PAIRWISE_VERDICTS if pairwise else ()
    if isinstance(value, str) and value.lstrip("-").isdigit() and len(value) < 6:
        value = int(value)
    if isinstance(value, int) and set(allowed) == set(YES_NO) and value in (0, 1):
        value = "yes" if value else "no"
    if allowed and value not in allowed:
        shown = ", ".join(str(v) for v in allowed)
        raise LabelError(f"{where}: {label.value!r} is not one of {shown}")
    if not allowed and not (isinstance(value, int) or value in YES_NO):
        raise LabelError(f"{where}: {label.value!r} is not a level number or yes/no")
    return replace(label, value=value)
