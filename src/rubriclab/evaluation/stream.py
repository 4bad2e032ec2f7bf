"""Streamed runs: judge a source chunk by chunk into a file, with bounded memory and resume.

``rl.evaluate(source, metrics, output="results.parquet")`` lands here. The source (a Parquet,
JSONL or CSV path, a DataFrame, records, or an iterator of DataFrames) is cut into chunks of
``chunk_rows`` rows; each chunk is judged by the ordinary ``aevaluate`` and written to
``{output}.partial/`` as one file, atomically (temp file, fsync, rename), followed by a state
file that says how many chunks are finished and holds the running summaries. A killed run
(Ctrl-C, kill -9) loses at most the chunk in flight; running the same call again skips the
finished chunks, and the judge's cache answers what the unfinished chunk had already asked.
When the source is exhausted the chunks are joined into ``output`` (one Parquet row group or a
run of JSONL lines per chunk, behind a header holding the summary), again by rename.

A run holds an exclusive lock on its partial folder (a second run on the same output is
refused at once, never interleaved) and writes under names no other process uses. Each
finished chunk's input is hashed: a resumed run whose source reads differently is refused
(the rows would be half old, half new), and a finished file records a file source's size and
modification time, so a changed source is not answered with the old results. The summary in
the finished file is recomputed from the chunk files themselves, never taken from the state.
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import hashlib
import json
import math
import os
import secrets
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..columns import CRITERIA, JUDGES, PASSED, SCORE, SWAP_CONSISTENT, col, to_plain
from ..data import DataError, to_frame
from ..judges import JudgeConfigError, get_judge
from ..judges.cache import MemoryCache
from ..judges.sync import run_sync
from ..result import (
    FORMAT_VERSION,
    EvalResult,
    FileResult,
    RunStats,
    from_json_text,
    open_result,
)
from ..result.formats import (
    OutputFields,
    ResultFormat,
    check_output_fields,
    dropped_columns,
    result_format,
)
from ..scoring import (
    Summary,
    WinTieLoss,
    cell_flag,
    criterion_tallies,
    score_value,
    wilson_interval,
)
from .run import evaluate_frame

if TYPE_CHECKING:
    from ..calibration.measures import PanelTally
    from ..judges import Judge

__all__ = [
    "DEFAULT_CHUNK_ROWS",
    "RunningSummary",
    "astream_evaluate",
    "iter_chunks",
    "judge_frame",
    "streams",
]

#: rows judged and written at a time: 2,000 keeps a streamed run of a realistic workload (a
#: 4-criterion rubric and a pairwise metric, both orders) near 300 MB; 10,000 took ~650 MB
DEFAULT_CHUNK_ROWS = 2_000
_STATE_VERSION = 1


# -- running summaries ---------------------------------------------------------------------------


@dataclass
class RunningSummary:
    """What ``scoring.summarize`` computes, kept in O(1) memory and mergeable chunk by chunk.

    Mean and variance use Chan's parallel update, so a million rows give the same numbers as
    summarising the whole column at once (to floating-point rounding).
    """

    n: int = 0
    scored: int = 0
    mean: float = 0.0
    m2: float = 0.0
    pass_k: int = 0
    pass_n: int = 0
    has_pass: bool = False
    #: whether the metric's rubrics have a pass mark (None: unknown; see EvalResult.has_pass_mark)
    pass_mark: bool | None = None
    pairwise: bool = False
    win: int = 0
    tie: int = 0
    loss: int = 0
    #: pairwise: scored rows whose order-consistency is known, and those whose orders disagreed
    has_swap: bool = False
    swap_known: int = 0
    swap_flips: int = 0
    #: pairwise: per criterion, win/tie/loss counts (None until a chunk had a criteria column)
    criteria: dict[str, dict[str, int]] | None = None
    #: a judge panel's agreement tally (None for a metric without a panel)
    panel: PanelTally | None = None

    def add_frame(self, frame: pd.DataFrame, name: str) -> None:
        """Fold in metric ``name``'s columns of a block of result rows (a chunk's table, or a
        flattened block whose nested cells are JSON text: an executor's rows)."""
        scores = frame[col(name, SCORE)].tolist()
        if self.pairwise:
            swap, crits = col(name, SWAP_CONSISTENT), col(name, CRITERIA)
            self.add(
                scores,
                swap_consistent=frame[swap].tolist() if swap in frame else None,
                criteria=[from_json_text(c) for c in frame[crits]] if crits in frame else None,
            )
        else:
            passed = col(name, PASSED)
            self.add(scores, frame[passed].tolist() if passed in frame else None)
        judges = col(name, JUDGES)
        if judges in frame:
            self._panel().add([from_json_text(c) for c in frame[judges]])

    def add(
        self,
        values: Sequence[Any],
        passed: Sequence[Any] | None = None,
        *,
        swap_consistent: Sequence[Any] | None = None,
        criteria: Sequence[Any] | None = None,
    ) -> None:
        """Fold in a block's scores (and pass flags; for pairwise, order-consistency flags and
        criteria lists), counting exactly what ``scoring.summarize`` counts."""
        vals = [score_value(v) for v in values]
        self.n += len(vals)
        scored = [v for v in vals if v is not None]
        if scored:
            m = len(scored)
            mean = math.fsum(scored) / m
            m2 = math.fsum((v - mean) ** 2 for v in scored)
            total = self.scored + m
            delta = mean - self.mean
            self.m2 += m2 + delta * delta * self.scored * m / total
            self.mean += delta * m / total
            self.scored = total
        if self.pairwise:
            self.win += sum(v > 0 for v in scored)
            self.tie += sum(v == 0 for v in scored)
            self.loss += sum(v < 0 for v in scored)
            if swap_consistent is not None:
                self.has_swap = True
                for f, v in zip(swap_consistent, vals, strict=True):
                    mark = cell_flag(f) if v is not None else None
                    if mark is not None:
                        self.swap_known += 1
                        self.swap_flips += not mark
            if criteria is not None:
                rows = [c for c, v in zip(criteria, vals, strict=True) if v is not None]
                self.criteria = criterion_tallies(
                    rows, {} if self.criteria is None else self.criteria
                )
        elif passed is not None:
            self.has_pass = True
            for p, v in zip(passed, vals, strict=True):
                if v is not None and p is not None and not _is_nan(p):
                    self.pass_n += 1
                    self.pass_k += bool(p)

    def merge(self, other: RunningSummary) -> None:
        """Fold in a summary of other rows (Chan's combine of two means and M2s): lets workers
        summarise their own blocks and one process add up the small partial summaries."""
        if other.scored:
            total = self.scored + other.scored
            delta = other.mean - self.mean
            self.m2 += other.m2 + delta * delta * self.scored * other.scored / total
            self.mean += delta * other.scored / total
            self.scored = total
        self.n += other.n
        self.pass_k += other.pass_k
        self.pass_n += other.pass_n
        self.has_pass = self.has_pass or other.has_pass
        self.note_pass_mark(other.pass_mark)
        self.win += other.win
        self.tie += other.tie
        self.loss += other.loss
        self.has_swap = self.has_swap or other.has_swap
        self.swap_known += other.swap_known
        self.swap_flips += other.swap_flips
        if other.panel is not None:
            self._panel().merge(other.panel)
        if other.criteria is not None:
            mine = self.criteria = {} if self.criteria is None else self.criteria
            for name, counts in other.criteria.items():
                tally = mine.setdefault(name, {"win": 0, "tie": 0, "loss": 0})
                for side, k in counts.items():
                    tally[side] = tally.get(side, 0) + k

    def note_pass_mark(self, found: bool | None) -> None:
        """Fold in whether a block's rubrics have a pass mark (any block with one: True)."""
        if found is not None:
            self.pass_mark = bool(found) or bool(self.pass_mark)

    def summary(self) -> Summary:
        std = math.sqrt(self.m2 / (self.scored - 1)) if self.scored >= 2 else None
        if self.pass_mark is False:  # no row can pass: no pass rate (scoring.summarize's rule)
            return self._summary(std).model_copy(
                update={
                    "pass_rate": None,
                    "passed": None,
                    "verdicts": None,
                    "has_pass_mark": False,
                    "critical_fails": self.pass_n - self.pass_k,
                }
            )
        return self._summary(std)

    def _summary(self, std: float | None) -> Summary:
        pairwise = self.pairwise
        return Summary(
            n=self.n,
            scored=self.scored,
            errors=self.n - self.scored,
            mean=self.mean if self.scored else None,
            std=std,
            pass_rate=wilson_interval(self.pass_k, self.pass_n) if self.pass_n else None,
            passed=self.pass_k if self.has_pass else None,
            verdicts=self.pass_n if self.has_pass else None,
            win=wilson_interval(self.win, self.scored) if pairwise else None,
            tie=wilson_interval(self.tie, self.scored) if pairwise else None,
            loss=wilson_interval(self.loss, self.scored) if pairwise else None,
            swap_inconsistent=self.swap_flips if self.has_swap else None,
            swap_inconsistent_rate=self.swap_flips / self.swap_known if self.swap_known else None,
            has_pass_mark=None if pairwise else self.pass_mark,
            criteria=None
            if self.criteria is None
            else {name: WinTieLoss(**c) for name, c in self.criteria.items()},
        )

    def _panel(self) -> PanelTally:
        if self.panel is None:
            # imported on a panel's first block: calibration costs a kernel's first evaluate
            # ~25 ms, and most runs have no panel
            from ..calibration.measures import PanelTally

            self.panel = PanelTally()
        return self.panel

    def agreement(self) -> dict[str, Any] | None:
        """A judge panel's agreement (``panel_agreement``'s figures), None without a panel."""
        return None if self.panel is None else self.panel.result()

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["panel"] = None if self.panel is None else self.panel.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunningSummary:
        fields = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        if fields.get("panel") is not None:
            from ..calibration.measures import PanelTally

            fields["panel"] = PanelTally.from_dict(fields["panel"])
        return cls(**fields)


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


# -- sources -------------------------------------------------------------------------------------


def streams(data: Any) -> bool:
    """True for an iterator/generator of DataFrames (which only a streamed run can take)."""
    return isinstance(data, Iterator) and not isinstance(data, pd.DataFrame | str | bytes)


def iter_chunks(source: Any, chunk_rows: int = DEFAULT_CHUNK_ROWS) -> Iterator[pd.DataFrame]:
    """The source in chunks of exactly ``chunk_rows`` rows (the last may be shorter).

    Files are read piece by piece (Parquet record batches, pandas' JSONL/CSV readers), never
    whole. Each chunk's index is its rows' position in the whole source, so chunk ``k`` always
    holds rows ``k*chunk_rows ...`` whatever sizes an iterator yields: resume depends on it.
    """
    if not isinstance(chunk_rows, int) or isinstance(chunk_rows, bool) or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be an integer >= 1, got {chunk_rows!r}")
    start = 0
    for chunk in _rechunk(_pieces(source, chunk_rows), chunk_rows):
        chunk.index = pd.RangeIndex(start, start + len(chunk))
        start += len(chunk)
        yield chunk


def _pieces(source: Any, chunk_rows: int) -> Iterator[pd.DataFrame]:
    if isinstance(source, str | os.PathLike):
        yield from _read_file(Path(source), chunk_rows)
    elif isinstance(source, pd.DataFrame):
        for i in range(0, len(source), chunk_rows):
            yield source.iloc[i : i + chunk_rows]
    elif streams(source):
        for i, piece in enumerate(source):
            if not isinstance(piece, pd.DataFrame):
                raise DataError(
                    f"the data iterator's item {i} is a {type(piece).__name__}, not a DataFrame"
                )
            yield piece
    else:
        yield from _pieces(to_frame(source), chunk_rows)


def _read_file(path: Path, chunk_rows: int) -> Iterator[pd.DataFrame]:
    try:
        found = path.exists()
    except OSError as exc:  # a name too long, a loop of links...
        shown = str(path) if len(str(path)) <= 200 else str(path)[:100] + "…"
        raise DataError(f"data file {shown!r} cannot be read ({exc.strerror or exc})") from None
    if not found:
        raise DataError(f"data file {path} does not exist")
    suffix = path.suffix.lower()
    if suffix == ".gz":  # data.jsonl.gz, data.csv.gz: pandas gunzips by the name
        suffix = Path(path.stem).suffix.lower()
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        with pq.ParquetFile(path) as pf:
            for batch in pf.iter_batches(batch_size=chunk_rows):
                yield batch.to_pandas()
    elif suffix in (".jsonl", ".ndjson"):
        with pd.read_json(path, lines=True, dtype=False, chunksize=chunk_rows) as reader:
            yield from reader
    elif suffix == ".csv":
        with pd.read_csv(
            path, keep_default_na=False, na_values=[""], chunksize=chunk_rows
        ) as reader:
            yield from reader
    else:
        yield to_frame(path)  # .json and anything else: the reader's own error or whole file


def _rechunk(pieces: Iterable[pd.DataFrame], size: int) -> Iterator[pd.DataFrame]:
    buffer: list[pd.DataFrame] = []
    held = 0
    for piece in pieces:
        while len(piece):
            take = piece.iloc[: size - held]
            piece = piece.iloc[len(take) :]
            buffer.append(take)
            held += len(take)
            if held == size:
                yield _join(buffer)
                buffer, held = [], 0
    if held:
        yield _join(buffer)


def _join(frames: list[pd.DataFrame]) -> pd.DataFrame:
    if len(frames) == 1:
        return frames[0].reset_index(drop=True)
    return pd.concat(frames, ignore_index=True)


# -- the run -------------------------------------------------------------------------------------


def judge_frame(
    frame: pd.DataFrame, metrics: Sequence[Any], judge: Judge | str | None, **options: Any
) -> pd.DataFrame:
    """One chunk judged by the ordinary ``evaluate`` and flattened as a saved result is (nested
    fields as JSON text): the unit of work of every executor (Ray's actors, a Spark
    ``mapInPandas`` function)."""
    result = run_sync(evaluate_frame(frame, metrics, judge=judge, **options))
    flat, _json_columns = result.flat_table()
    return flat


@dataclass
class _State:
    """What ``{output}.partial/state.json`` holds between chunks."""

    fingerprint: str
    chunk_rows: int
    chunks: int = 0
    rows: int = 0
    running: dict[str, RunningSummary] = field(default_factory=dict)
    stats: RunStats = field(default_factory=RunStats)
    metrics: list[dict[str, Any]] = field(default_factory=list)
    judge: str = ""
    is_mock: bool = False
    columns: list[str] = field(default_factory=list)
    json_columns: list[str] = field(default_factory=list)
    #: per finished chunk, a hash of the rows it read (a resumed run checks its source)
    chunk_hashes: list[str] = field(default_factory=list)
    #: a file source's size and modification time when the run started
    source: dict[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": _STATE_VERSION,
            "chunk_hashes": self.chunk_hashes,
            "source": self.source,
            "fingerprint": self.fingerprint,
            "chunk_rows": self.chunk_rows,
            "chunks": self.chunks,
            "rows": self.rows,
            "running": {k: v.to_dict() for k, v in self.running.items()},
            "stats": self.stats.to_dict(),
            "metrics": self.metrics,
            "judge": self.judge,
            "is_mock": self.is_mock,
            "columns": self.columns,
            "json_columns": self.json_columns,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> _State:
        return cls(
            fingerprint=str(data["fingerprint"]),
            chunk_rows=int(data["chunk_rows"]),
            chunks=int(data["chunks"]),
            rows=int(data["rows"]),
            running={k: RunningSummary.from_dict(v) for k, v in data["running"].items()},
            stats=RunStats.from_dict(data.get("stats", {})),
            metrics=list(data.get("metrics", [])),
            judge=str(data.get("judge", "")),
            is_mock=bool(data.get("is_mock", False)),
            columns=list(data.get("columns", [])),
            json_columns=list(data.get("json_columns", [])),
            chunk_hashes=[str(h) for h in data.get("chunk_hashes", [])],
            source=_source_stamp(data.get("source")),
        )


async def astream_evaluate(
    source: Any,
    metrics: Sequence[Any],
    *,
    output: str | os.PathLike[str],
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    judge: Judge | str | None = None,
    output_fields: OutputFields | None = None,
    **options: Any,
) -> FileResult:
    """Judge ``source`` chunk by chunk into ``output`` and return the file-backed result.

    ``options`` go to ``aevaluate`` for every chunk (``model``, ``mapping``). Running the same
    call again resumes after the last finished chunk, or returns the finished file at once.
    ``output_fields`` says which metric fields the file keeps (see ``result.formats``).
    """
    out = Path(output)
    try:
        fmt = result_format(out)
    except ValueError:
        raise ValueError(
            f"output must end in .parquet, .jsonl or .jsonl.gz, got {str(out)!r}"
        ) from None
    check_output_fields(output_fields)
    if not isinstance(chunk_rows, int) or isinstance(chunk_rows, bool) or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be an integer >= 1, got {chunk_rows!r}")
    judge_obj = _run_judge(judge)
    fingerprint = _fingerprint(metrics, judge_obj, source, chunk_rows, output_fields)
    partial = out.with_name(out.name + ".partial")
    stamp = _file_stamp(source)
    if out.exists():
        return _finished(out, partial, fingerprint, stamp)
    parquet = fmt == "parquet"
    if parquet:
        _need_pyarrow()
    with _locked(partial, out):
        if out.exists():  # another run finished it just now
            return _finished(out, partial, fingerprint, stamp)
        state = _load_state(partial, fingerprint, chunk_rows)
        # the rows already judged are checked against the data as it is now (chunk hashes),
        # so the finished file describes the source as this run found it
        state.source = stamp
        run_judge, chunk_cache = _chunk_judge(judge_obj, partial) if judge_obj else (None, None)
        seen = 0
        for chunk in iter_chunks(source, chunk_rows):
            digest = _chunk_digest(chunk)
            if seen < state.chunks:  # finished before an interruption: already in a chunk file
                _same_rows(state, seen, digest, partial)
                seen += 1
                continue
            result = await evaluate_frame(chunk, metrics, judge=run_judge, **options)
            kept = _kept(result, output_fields)
            for column in _write_chunk(partial, state.chunks, kept, parquet):
                if column not in state.json_columns:
                    state.json_columns.append(column)
            _advance(state, result, len(chunk), kept.table.columns)
            state.chunk_hashes.append(digest)
            seen += 1
            _write_json_atomic(partial / "state.json", state.to_dict())
            if chunk_cache is not None:
                chunk_cache.clear()  # saved in the chunk file: the answers are not needed again
        _CHUNK_CACHES.pop(str(partial.resolve()), None)
        if seen < state.chunks:
            raise DataError(
                f"the data now has fewer rows than the {state.rows} the unfinished run in "
                f"{str(partial)!r} already judged: it changed since that run started; delete "
                f"{str(partial)!r} to start over, or restore the data"
            )
        if state.chunks == 0:
            shutil.rmtree(partial, ignore_errors=True)
            raise DataError("the data has no rows to evaluate")
        _assemble(out, partial, state, fmt)
        shutil.rmtree(partial, ignore_errors=True)
    return open_result(out)


def _same_rows(state: _State, k: int, digest: str, partial: Path) -> None:
    """Refuse to resume when finished chunk ``k`` would read other rows now (a state from
    before chunk hashes were kept cannot be checked, and is trusted as before)."""
    if k < len(state.chunk_hashes) and state.chunk_hashes[k] != digest:
        first, last = k * state.chunk_rows, (k + 1) * state.chunk_rows - 1
        raise DataError(
            f"the data changed since the unfinished run in {str(partial)!r} started: rows "
            f"{first}-{last} (chunk {k + 1}, already judged) read differently now, and "
            f"resuming would mix old and new rows; delete {str(partial)!r} to start over, or "
            "restore the data"
        )


def _chunk_digest(chunk: pd.DataFrame) -> str:
    """A hash of a chunk's columns and cells (what it read), the same for the same rows."""
    h = hashlib.sha256(json.dumps([str(c) for c in chunk.columns]).encode())
    for name in chunk.columns:
        column = chunk[name]
        if column.dtype == object:  # text, lists, dicts, bytes: their JSON text
            h.update(json.dumps(column.tolist(), default=_digest_default).encode())
        else:
            h.update(str(column.dtype).encode())
            h.update(pd.util.hash_pandas_object(column, index=False).to_numpy().tobytes())
    return h.hexdigest()[:32]


def _digest_default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return hashlib.sha256(value).hexdigest()
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(tolist):
        return tolist()
    return repr(value)


def _file_stamp(source: Any) -> dict[str, int] | None:
    """A file source's size and modification time (None for other sources)."""
    if not isinstance(source, str | os.PathLike):
        return None
    try:
        st = os.stat(source)
    except (OSError, ValueError):
        return None
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _source_stamp(value: Any) -> dict[str, int] | None:
    if not isinstance(value, Mapping):
        return None
    try:
        return {"size": int(value["size"]), "mtime_ns": int(value["mtime_ns"])}
    except (KeyError, TypeError, ValueError):
        return None


_LOCK_NAME = ".lock"


@contextmanager
def _locked(partial: Path, out: Path) -> Iterator[None]:
    """Hold the exclusive lock of ``partial`` (created if needed) for a run.

    A second run on the same output is refused at once with a clear error. The lock file's
    folder may be removed by a run finishing as this one takes it: then it is taken again.
    """
    for _ in range(20):
        partial.mkdir(parents=True, exist_ok=True)
        path = partial / _LOCK_NAME
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except FileNotFoundError:  # the folder went as we opened it
            continue
        if not _try_lock(fd):
            os.close(fd)
            raise ValueError(
                f"another run is writing {str(out)!r} now (it holds the lock in "
                f"{str(partial)!r}); wait for it to finish, or pass another output="
            )
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if not same:  # locked a file a finished run had just removed: take the new one
            os.close(fd)
            continue
        try:
            yield
        finally:
            os.close(fd)  # closing releases the lock
        return
    raise ValueError(f"could not lock {str(partial)!r}; is another run starting and ending?")


def _try_lock(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _temp(path: Path) -> Path:
    """A temp name beside ``path`` that no other writer uses."""
    return path.with_name(f"{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")


#: per unfinished output, the memory cache of its chunk in flight (kept for a re-run in the
#: same process after Ctrl-C; dropped when the run finishes)
_CHUNK_CACHES: dict[str, MemoryCache] = {}


def _run_judge(judge: Judge | str | None) -> Judge | None:
    """The run's judge; None when none is given or set: metrics that bring their own judges
    (a panel) or need none (computation metrics) run without one, and a metric that needs
    it fails with the usual "no judge set" error, as in an in-memory run."""
    try:
        return get_judge(judge)
    except JudgeConfigError:
        if judge is not None:
            raise
        return None


def _chunk_judge(judge: Judge, partial: Path) -> tuple[Judge, MemoryCache | None]:
    """A judge whose memory cache holds only the chunk in flight.

    A judge's own memory cache would keep every answer of the run (a million rows do not fit);
    finished chunks are in their files, so only the unfinished chunk needs its answers kept.
    A file cache is shared as it is: it is on disk, and other runs may want its answers.
    """
    if not isinstance(judge.cache, MemoryCache):
        return judge, None
    cache = _CHUNK_CACHES.setdefault(str(partial.resolve()), MemoryCache())
    return judge.with_cache(cache), cache


def _fingerprint(
    metrics: Sequence[Any],
    judge: Judge | None,
    source: Any,
    chunk_rows: int,
    output_fields: OutputFields | None = None,
) -> str:
    """What must match for a re-run to continue a partial run (metrics, judge, source path,
    and the fields its chunk files keep)."""
    described = []
    for m in metrics:
        rubric = getattr(m, "rubric", None)
        described.append(
            {
                "name": getattr(m, "name", None),
                "kind": getattr(m, "kind", None),
                "rubric": rubric.to_dict() if rubric is not None else None,
                "template": str(getattr(m, "template", "") or ""),
            }
        )
        # a metric's own judges (a panel's) are the run's judges too; named only when set,
        # so the fingerprint of a run without them is what earlier versions wrote
        own = [
            _judge_spec(j) for j in [getattr(m, "judge", None), *(getattr(m, "judges", None) or ())]
        ]
        if any(spec is not None for spec in own):
            described[-1]["own_judges"] = own
        examples = getattr(m, "examples", None)
        if examples:  # named only when given: runs without keep their fingerprint
            described[-1]["examples"] = [e.to_dict() for e in examples]
        cuts = getattr(m, "level_cuts", None)
        if cuts:  # the same answers score differently through other cut points
            described[-1]["level_cuts"] = [[name, list(c)] for name, c in dict(cuts).items()]
    where = str(Path(source).resolve()) if isinstance(source, str | os.PathLike) else None
    spec, model = (judge.spec, judge.model) if judge is not None else (None, None)
    material: list[Any] = [described, spec, model, where, chunk_rows]
    if output_fields not in (None, "all"):  # named only when set: other runs keep theirs
        material.append(
            output_fields if isinstance(output_fields, str) else sorted(map(str, output_fields))
        )
    blob = json.dumps(material, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def _judge_spec(judge: Any) -> Any:
    """A metric's judge as the fingerprint names it: its spec and model, never the id of
    its object."""
    if judge is None or isinstance(judge, str):
        return judge
    return [getattr(judge, "spec", None), getattr(judge, "model", None)]


def _finished(
    out: Path, partial: Path, fingerprint: str, stamp: dict[str, int] | None
) -> FileResult:
    try:
        done = open_result(out)
    except (ValueError, OSError) as exc:
        raise ValueError(
            f"output {str(out)!r} already exists and is not a streamed rubriclab result ({exc}); "
            "delete it or pass another output="
        ) from None
    if done.stream_fingerprint != fingerprint:
        raise ValueError(
            f"output {str(out)!r} already holds a run with other metrics, judge, data or "
            "chunk_rows; delete it or pass another output="
        )
    was = _source_stamp(done.stream_source)
    if stamp is not None and was is not None and was != stamp:
        raise ValueError(
            f"output {str(out)!r} holds the results of the data file as it was; the file has "
            "changed since (size or modification time); delete the output to judge it again, "
            "or pass another output="
        )
    if partial.exists():  # a run killed between rename and clean-up (never a live run's)
        with contextlib.suppress(ValueError), _locked(partial, out):
            shutil.rmtree(partial, ignore_errors=True)
    return done


def _load_state(partial: Path, fingerprint: str, chunk_rows: int) -> _State:
    path = partial / "state.json"
    if path.exists():
        try:
            state = _State.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(
                f"{str(path)!r} is unreadable ({exc}); delete {str(partial)!r} to start over"
            ) from None
        if state.fingerprint != fingerprint:
            raise ValueError(
                f"{str(partial)!r} holds an unfinished run with other metrics, judge, data or "
                f"chunk_rows; delete it to start over, or re-run the original call to finish it"
            )
    else:
        state = _State(fingerprint, chunk_rows)
    for stale in partial.glob("*.tmp"):  # a killed writer's (this run holds the lock)
        stale.unlink()
    for stale in partial.parent.glob(f"{glob.escape(partial.name.removesuffix('.partial'))}.*.tmp"):
        stale.unlink()  # a killed run's unfinished output file
    for stale in partial.glob("chunk-*"):  # written after the last state: the chunk in flight
        if _chunk_number(stale) >= state.chunks:
            stale.unlink()
    return state


def _chunk_number(path: Path) -> int:
    digits = path.name.split("-", 1)[1].split(".", 1)[0]
    return int(digits) if digits.isdigit() else 1 << 62


def _chunk_path(partial: Path, k: int, parquet: bool) -> Path:
    return partial / f"chunk-{k:06d}.{'parquet' if parquet else 'jsonl'}"


def _write_chunk(partial: Path, k: int, result: EvalResult, parquet: bool) -> list[str]:
    """Write one chunk as the saved format has it; returns Parquet's JSON-text columns."""
    path = _chunk_path(partial, k, parquet)
    tmp = _temp(path)
    json_columns: list[str] = []
    if parquet:
        import pyarrow as pa
        import pyarrow.parquet as pq

        flat, json_columns = result.flat_table()
        pq.write_table(pa.Table.from_pandas(flat, preserve_index=False), tmp)
        _fsync(tmp)
    else:  # JSONL: nested fields as real JSON, like EvalResult.save
        table = result.table.copy()
        table.columns = [str(c) for c in table.columns]
        with tmp.open("w", encoding="utf-8") as fh:
            for record in table.to_dict(orient="records"):  # native Python values
                try:
                    line = json.dumps(record, allow_nan=False)
                except (TypeError, ValueError):  # rubrics, numpy scalars, NaN: made plain
                    line = json.dumps({c: to_plain(v) for c, v in record.items()})
                fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)
    return json_columns


def _kept(result: EvalResult, output_fields: OutputFields | None) -> EvalResult:
    """The chunk's result as its file keeps it (``output_fields``' columns dropped)."""
    drop = dropped_columns(result.table.columns, output_fields, [m.name for m in result.metrics])
    if not drop:
        return result
    return EvalResult(
        result.table.drop(columns=drop),
        result.metrics,
        judge=result.judge,
        is_mock=result.is_mock,
        stats=result.stats,
        meta=result.meta,
    )


def _advance(state: _State, result: EvalResult, rows: int, written: Iterable[Any]) -> None:
    table = result.table
    for info in result.metrics:
        running = state.running.get(info.name)
        if running is None:
            running = state.running[info.name] = RunningSummary(pairwise=info.kind == "pairwise")
        running.add_frame(table, info.name)
        running.note_pass_mark(result.has_pass_mark(info.name))
    state.stats.merge(result.stats)
    if not state.metrics:
        state.metrics = [m.to_dict() for m in result.metrics]
        state.judge = result.judge
    state.is_mock = state.is_mock or result.is_mock
    for column in written:  # the file's columns (output_fields may have dropped some)
        if str(column) not in state.columns:
            state.columns.append(str(column))
    state.chunks += 1
    state.rows += rows


def _header(state: _State, parquet: bool) -> dict[str, Any]:
    header: dict[str, Any] = {
        "version": FORMAT_VERSION,
        "metrics": state.metrics,
        "judge": state.judge,
        "is_mock": state.is_mock,
        "stats": state.stats.to_dict(),
        "meta": {},
        "columns": state.columns,
        "rows": state.rows,
        "summary": {k: v.summary().model_dump() for k, v in state.running.items()},
        "agreement": {k: v.agreement() for k, v in state.running.items() if v.panel is not None},
        "stream": {
            "fingerprint": state.fingerprint,
            "chunk_rows": state.chunk_rows,
            "source": state.source,
        },
    }
    if parquet:  # JSONL holds nested values as real JSON; Parquet as JSON text, named here
        header["json_columns"] = state.json_columns
    return header


def _assemble(out: Path, partial: Path, state: _State, fmt: ResultFormat) -> None:
    """Join the chunk files into ``out`` (temp file, then rename), one piece at a time.

    The summary and row count in the header are recomputed from the chunk files (one chunk
    in memory at a time): what the file says is what its rows say, whatever the state holds,
    and chunk files that do not hold the rows the run judged are an error, not a result.
    """
    tmp = _temp(out)
    parquet = fmt == "parquet"
    parts = [_chunk_path(partial, k, parquet) for k in range(state.chunks)]
    state.running, state.rows = _summaries_of(parts, state, parquet, partial)
    header = _header(state, parquet)
    if parquet:
        _join_parquet(parts, tmp, header)
    else:
        with tmp.open("wb") as raw:
            # gzip as one stream over the header and every chunk (``zcat`` reads it whole)
            fh = (
                gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6) if fmt == "jsonl.gz" else raw
            )
            with fh if fh is not raw else contextlib.nullcontext():
                fh.write((json.dumps({"__rubriclab__": to_plain(header)}) + "\n").encode())
                for part in parts:
                    with part.open("rb") as src:
                        shutil.copyfileobj(src, fh, 1 << 20)
            raw.flush()
            os.fsync(raw.fileno())
    os.replace(tmp, out)


def _summaries_of(
    parts: list[Path], state: _State, parquet: bool, partial: Path
) -> tuple[dict[str, RunningSummary], int]:
    """Every metric's running summary and the row count, read back from the chunk files."""
    kinds = {str(m.get("name")): m.get("kind") for m in state.metrics if isinstance(m, Mapping)}
    running = {name: RunningSummary(pairwise=kind == "pairwise") for name, kind in kinds.items()}
    for name, summary in running.items():
        # whether rubrics have a pass mark is no column of the rows: the state noted it per chunk
        kept = state.running.get(name)
        summary.pass_mark = None if kept is None else kept.pass_mark
    wanted = {col(n, f) for n in kinds for f in (SCORE, PASSED, SWAP_CONSISTENT, CRITERIA, JUDGES)}
    rows = 0
    for k, part in enumerate(parts):
        try:
            block = _read_chunk(part, wanted, parquet)
        except (OSError, ValueError) as exc:
            raise DataError(
                f"chunk file {part.name} in {str(partial)!r} is unreadable ({exc}); delete "
                f"{str(partial)!r} to start over"
            ) from None
        expected = min(state.chunk_rows, state.rows - k * state.chunk_rows)
        if len(block) != expected:
            raise DataError(
                f"chunk file {part.name} in {str(partial)!r} holds {len(block)} rows, not the "
                f"{expected} judged (was it written by two runs at once?); delete "
                f"{str(partial)!r} to start over"
            )
        rows += len(block)
        for name, summary in running.items():
            if col(name, SCORE) in block:
                summary.add_frame(block, name)
            else:  # a chunk without the metric's columns: its rows are unscored
                summary.add([None] * len(block))
    return running, rows


def _read_chunk(part: Path, wanted: set[str], parquet: bool) -> pd.DataFrame:
    """The columns of ``wanted`` that a chunk file has (and its row count)."""
    if parquet:
        import pyarrow.parquet as pq

        with pq.ParquetFile(part) as pf:
            names = [n for n in pf.schema_arrow.names if n in wanted]
            table = pf.read(columns=names)
            return table.to_pandas() if names else pd.DataFrame(index=range(table.num_rows))
    records = []
    with part.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            try:
                record = json.loads(line)
            except ValueError:
                raise ValueError(f"line {number} is not JSON") from None
            if not isinstance(record, dict):
                raise ValueError(f"line {number} is not a row")
            records.append({c: v for c, v in record.items() if c in wanted})
    return pd.DataFrame.from_records(records, index=range(len(records)))


def _join_parquet(parts: list[Path], tmp: Path, header: Mapping[str, Any]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schemas = [pq.read_schema(p) for p in parts]
    try:
        schema = pa.unify_schemas(
            [s.remove_metadata() for s in schemas], promote_options="permissive"
        )
    except (pa.ArrowTypeError, pa.ArrowInvalid) as exc:
        raise DataError(f"the chunks' columns have clashing types: {exc}") from None
    schema = schema.with_metadata({b"rubriclab": json.dumps(to_plain(header)).encode()})
    with pq.ParquetWriter(tmp, schema) as writer:
        for part in parts:
            with pq.ParquetFile(part) as pf:
                for i in range(pf.num_row_groups):
                    writer.write_table(_conform(pf.read_row_group(i), schema))
    _fsync(tmp)


def _conform(table: Any, schema: Any) -> Any:
    """``table`` with ``schema``'s columns in its order; missing ones as nulls."""
    import pyarrow as pa

    columns = []
    for f in schema:
        if f.name in table.column_names:
            columns.append(table.column(f.name).cast(f.type))
        else:
            columns.append(pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(columns, schema=schema)


def _write_json_atomic(path: Path, data: Mapping[str, Any]) -> None:
    tmp = _temp(path)
    with tmp.open("w", encoding="utf-8") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _fsync(path: Path) -> None:
    with contextlib.suppress(OSError), path.open("rb+") as fh:
        os.fsync(fh.fileno())


def _need_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ImportError(
            "streaming to Parquet needs pyarrow: pip install 'rubriclab[arrow]', or use "
            "output='results.jsonl'"
        ) from None
