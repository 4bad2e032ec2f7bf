"""Response cache: identical requests are answered once, so re-runs and resumes are free.

The key hashes everything that can change an answer (endpoint, model, messages, response
format, sampling params, sample index) and nothing secret (no key, no headers). Only
successes are stored. SQLite in WAL mode lets several processes share one file; a corrupt
file is set aside and rebuilt, and a cache that breaks mid-run is switched off with a
warning instead of failing the run.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import sqlite3
import stat
import threading
import time
import warnings
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Union

from .base import Request, Usage
from .clean import clean_text

__all__ = [
    "Cache",
    "CacheArg",
    "CacheEntry",
    "CacheError",
    "MemoryCache",
    "ResponseCache",
    "RunKeys",
    "cache_key",
    "default_cache_path",
    "open_cache",
]

_CHUNK = 500
_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    total_tokens INTEGER NOT NULL,
    finish_reason TEXT,
    created REAL NOT NULL
) WITHOUT ROWID
"""


_BATCH_SCHEMA = """
CREATE TABLE IF NOT EXISTS batch_jobs (
    key TEXT PRIMARY KEY,
    record TEXT NOT NULL,
    updated REAL NOT NULL
) WITHOUT ROWID
"""


class CacheError(RuntimeError):
    """The cache file cannot be used at all (e.g. its folder is not writable)."""


@dataclass(frozen=True, slots=True)
class CacheEntry:
    text: str
    usage: Usage
    model: str
    finish_reason: str | None = None


class ResponseCache(Protocol):
    def get_many(self, keys: Iterable[str]) -> dict[str, CacheEntry]: ...

    def put(self, key: str, entry: CacheEntry) -> None: ...

    def describe(self) -> str: ...

    def close(self) -> None: ...


CacheArg = Union[None, bool, str, "os.PathLike[str]", ResponseCache]


def cache_key(endpoint: str, model: str, request: Request, settings: Mapping[str, Any]) -> str:
    """Hex digest of everything that can change the answer (never the key or headers)."""
    return RunKeys(endpoint, model, settings)(request)[0]


class RunKeys:
    """``cache_key`` for the requests of one run, with what they share written once.

    A run's requests share an endpoint, a model, settings and (usually) one response_format
    object, and writing those out again for every request cost as much as the messages. The
    digest is the same as writing the whole list each time: the JSON of
    ``[endpoint, model, messages, response_format, sample, settings + params]``.

    Each call also returns the messages' JSON when it is plain JSON (no value needed
    ``default=str``), so the body can reuse it instead of writing the messages a second time.
    Kept for one run only: a format object changed in place between runs is written again.
    """

    def __init__(self, endpoint: str, model: str, settings: Mapping[str, Any]) -> None:
        self._head = f"[{_key_json(endpoint)},{_key_json(model)},"
        self._settings = dict(settings)
        self._settings_json = _key_json(self._settings)
        self._formats: dict[int, tuple[Any, str]] = {}

    def __call__(self, request: Request) -> tuple[str, str | None]:
        """The request's key, and its messages' JSON (None when it is not plain JSON).

        Raises what JSON raises for a request no JSON can hold (an int past Python's digit
        limit, nesting past the recursion limit): the engine makes that its row's error.
        """
        try:
            fmt_json = self._format_json(request.response_format)
            return self._key(request.messages, fmt_json, request.sample, request.params)
        except TypeError:
            # dict keys JSON writes but cannot sort (1 and "a" in one dict): keyed as the
            # body writes them, as strings (a key that used to raise here: no key changes)
            fmt_json = _key_json(_str_keys(request.response_format))
            messages, params = _str_keys(request.messages), _str_keys(request.params)
            key, _ = self._key(messages, fmt_json, request.sample, params)
            return key, None  # (the body writes such messages itself)

    def _key(
        self, messages: Any, fmt_json: str, sample: int, params: Mapping[str, Any]
    ) -> tuple[str, str | None]:
        try:
            written: str | None = _strict_json(messages)
        except (TypeError, ValueError):
            written = None
        blob = "".join(
            (
                self._head,
                _key_json(messages) if written is None else written,
                ",",
                fmt_json,
                ",",
                str(sample) if type(sample) is int else _key_json(sample),
                ",",
                _key_json({**self._settings, **params}) if params else self._settings_json,
                "]",
            )
        )
        return hashlib.sha256(blob.encode()).hexdigest(), written

    def _format_json(self, fmt: Mapping[str, Any] | None) -> str:
        if fmt is None:
            return "null"
        seen = self._formats.get(id(fmt))
        if seen is None or seen[0] is not fmt:
            seen = (fmt, _key_json(fmt))  # the object is kept, so its id is not reused
            self._formats[id(fmt)] = seen
        return seen[1]


def _str_keys(value: Any) -> Any:
    """``value`` with every dict key as the string JSON writes for it."""
    if isinstance(value, Mapping):
        return {_json_key(k): _str_keys(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_str_keys(v) for v in value]
    return value


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key)  # 1 -> "1", True -> "true", None -> "null", as json writes
    return str(key)


_key_json = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str).encode
_strict_json = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
"""The key's JSON where every value is JSON already: the same text, or a TypeError."""


_APP_ID = 0x52424C43  # "RBLC" in the SQLite header: a cache file rubriclab made
_SQLITE_MAGIC = b"SQLite format 3\x00"


def _header(path: Path) -> bytes:
    try:
        with path.open("rb") as fh:
            return fh.read(100)
    except OSError:
        return b""


def _made_by_us(path: Path) -> bool:
    """Whether ``path`` is an SQLite file bearing rubriclab's application id (readable from
    the header even when the rest of the file is damaged)."""
    head = _header(path)
    return (
        len(head) == 100
        and head.startswith(_SQLITE_MAGIC)
        and int.from_bytes(head[68:72], "big") == _APP_ID
    )


def _legacy_cache(path: Path) -> bool:
    """A cache from before the application id: an SQLite file holding our ``replies`` table
    and nothing but our tables (read-only look; a damaged file is not taken for one)."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except (sqlite3.Error, OSError, ValueError):
        return False
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    return "replies" in names and names <= {"replies", "batch_jobs"}


def _short(path: Path) -> str:
    """A path for a one-line message (an over-long one is cut)."""
    text = str(path)
    return repr(text if len(text) <= 200 else text[:100] + "…" + text[-60:])


def default_cache_path() -> Path:
    """``$RUBRICLAB_CACHE`` if set, else the user cache folder."""
    explicit = os.environ.get("RUBRICLAB_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rubriclab" / "judge-cache.sqlite3"


def open_cache(arg: CacheArg) -> ResponseCache | None:
    """None: a memory cache for this judge; False: none; True: the default file; a path: it."""
    if arg is None:
        return MemoryCache()
    if arg is False:
        return None
    if arg is True:
        return Cache(default_cache_path())
    if isinstance(arg, (str, os.PathLike)):
        return Cache(arg)
    if all(hasattr(arg, name) for name in ("get_many", "put", "describe", "close")):
        return arg
    raise TypeError(
        "cache= takes None (memory), False (off), True (default file), a path, or a Cache"
    )


class MemoryCache:
    """Per-judge, per-process cache: an interrupted notebook cell resumes on re-run."""

    def __init__(self) -> None:
        self._data: dict[str, CacheEntry] = {}
        self._batches: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def get_many(self, keys: Iterable[str]) -> dict[str, CacheEntry]:
        data = self._data
        with self._lock:
            return {k: data[k] for k in keys if k in data}

    def put(self, key: str, entry: CacheEntry) -> None:
        with self._lock:
            self._data[key] = entry

    def flush(self) -> None:
        """Nothing to write: every answer is kept as it comes."""

    def get_batch(self, key: str) -> dict[str, Any] | None:
        """The batch job recorded under ``key`` (see ``judges.batch``), if any."""
        with self._lock:
            record = self._batches.get(key)
        return dict(record) if record is not None else None

    def put_batch(self, key: str, record: Mapping[str, Any]) -> None:
        with self._lock:
            self._batches[key] = dict(record)

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def describe(self) -> str:
        return "memory cache of this Judge (kept until the Python process ends)"

    def close(self) -> None:
        return None

    def __getstate__(self) -> dict[str, Any]:
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]


class Cache:
    """SQLite file cache, safe for concurrent writers (threads and processes).

    Answers are written a group at a time: one transaction once :attr:`FLUSH_ROWS` answers
    wait, or with the first answer that comes :attr:`FLUSH_SECONDS` after the oldest waiting
    one; and everything waiting at the end of every run (the engine calls :meth:`flush`, also
    when the run is interrupted), before any read, and at exit. A transaction per answer cost
    50 us of CPU and up to a third of a millisecond of the event loop each. A process killed
    outright (``kill -9``) loses the answers still waiting (fewer than a group), which the
    next run asks again. (A writer thread was tried: it saved neither CPU nor wall.)
    """

    FLUSH_ROWS = 64
    FLUSH_SECONDS = 0.25

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        self._broken = False
        self._pending: list[tuple[Any, ...]] = []
        self._oldest = 0.0
        self._conn = self._open()
        _OPEN.add(self)

    # -- opening and recovery ------------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(
                f"cannot create the cache folder {_short(self.path.parent)} "
                f"({exc.strerror or type(exc).__name__}): pass cache=PATH somewhere writable, "
                "or cache=False"
            ) from None
        self._check_target()
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            if not _made_by_us(self.path):  # never move what we did not create
                raise CacheError(
                    f"cannot open cache {_short(self.path)} ({exc}); it is not a cache "
                    "rubriclab made, so it is left as it is: pass another cache=PATH, or "
                    "cache=False"
                ) from None
            aside = self._set_aside()
            warnings.warn(
                f"rubriclab: the cache file {str(self.path)!r} was unreadable ({exc}); it was "
                f"moved to {str(aside)!r} and a new cache was started",
                RuntimeWarning,
                stacklevel=3,
            )
            try:
                return self._connect()
            except sqlite3.DatabaseError as again:
                raise CacheError(f"cannot rebuild cache {str(self.path)!r}: {again}") from None

    def _check_target(self) -> None:
        """Refuse a path that is not a cache file we may use: a folder (``cache: .``), a file
        that is not SQLite, or another program's SQLite database (never written to)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return  # a new cache
        except OSError as exc:
            raise CacheError(
                f"cannot use cache {_short(self.path)} ({exc.strerror or type(exc).__name__}): "
                "pass cache=PATH of a cache file, or cache=False"
            ) from None
        if not stat.S_ISREG(st.st_mode):
            raise CacheError(
                f"cache {_short(self.path)} is a folder or not a regular file; pass cache=PATH "
                "of a cache file (e.g. judge-cache.sqlite3), or cache=False"
            )
        if st.st_size == 0 or _made_by_us(self.path):
            return
        head = _header(self.path)
        if not head.startswith(_SQLITE_MAGIC):
            raise CacheError(
                f"cache {_short(self.path)} is not a rubriclab cache (not an SQLite file), so "
                "it is left as it is: pass another cache=PATH, or delete that file"
            )
        if not _legacy_cache(self.path):
            raise CacheError(
                f"cache {_short(self.path)} is an SQLite database rubriclab did not create, so "
                "it is left as it is: pass another cache=PATH"
            )

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute("PRAGMA busy_timeout=30000")
            if conn.execute("PRAGMA application_id").fetchone()[0] != _APP_ID:
                # marked before WAL, so the mark is in the file's own header: only a file
                # bearing it is ever set aside as corrupt
                conn.execute(f"PRAGMA application_id={_APP_ID}")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA)
            conn.execute(_BATCH_SCHEMA)
            conn.execute("SELECT key FROM replies LIMIT 1").fetchall()
        except sqlite3.DatabaseError:
            conn.close()
            raise
        return conn

    def _set_aside(self) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        self.path.replace(aside)
        for suffix in ("-wal", "-shm"):
            side = self.path.with_name(self.path.name + suffix)
            if side.exists():
                side.unlink()
        return aside

    def _fail(self, exc: Exception) -> None:
        if not self._broken:
            self._broken = True
            warnings.warn(
                f"rubriclab: the cache {str(self.path)!r} failed ({exc}); caching is off for "
                "the rest of this session and the run goes on",
                RuntimeWarning,
                stacklevel=4,
            )

    # -- reading and writing -------------------------------------------------------------
    def get_many(self, keys: Iterable[str]) -> dict[str, CacheEntry]:
        wanted = list(keys)
        found: dict[str, CacheEntry] = {}
        if self._broken or not wanted:
            return found
        try:
            with self._lock:
                self._flush_locked()
                for start in range(0, len(wanted), _CHUNK):
                    chunk = wanted[start : start + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    rows = self._conn.execute(
                        "SELECT key, model, text, prompt_tokens, completion_tokens, "
                        f"total_tokens, finish_reason FROM replies WHERE key IN ({marks})",
                        chunk,
                    ).fetchall()
                    for key, model, text, p, c, t, finish in rows:
                        found[key] = CacheEntry(text, Usage(p, c, t), model, finish)
        except sqlite3.Error as exc:
            self._fail(exc)
            return {}
        return found

    def put(self, key: str, entry: CacheEntry) -> None:
        """Store a success (written with the next group); never raises: a cache that fails
        is switched off and the run goes on."""
        if self._broken:
            return
        u = entry.usage
        finish = entry.finish_reason
        row = (
            key,
            clean_text(entry.model),  # SQLite stores UTF-8: no lone surrogates
            clean_text(entry.text),
            _sqlite_int(u.prompt_tokens),  # the endpoint's numbers: any size
            _sqlite_int(u.completion_tokens),
            _sqlite_int(u.total_tokens),
            clean_text(finish) if finish is not None else None,
            time.time(),
        )
        with self._lock:
            pending = self._pending
            if not pending:
                self._oldest = time.monotonic()
            pending.append(row)
            if len(pending) >= self.FLUSH_ROWS or (
                time.monotonic() - self._oldest >= self.FLUSH_SECONDS
            ):
                self._flush_locked()

    def flush(self) -> None:
        """Write every answer stored so far (never raises, as ``put``)."""
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        rows, self._pending = self._pending, []
        if not rows or self._broken:
            return
        conn = self._conn
        try:
            conn.execute("BEGIN")
            conn.executemany("INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:  # (a COMMIT that stayed busy leaves it open)
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
            if not isinstance(exc, Exception):  # Ctrl-C, exit: the group waits for the next
                self._pending = rows + self._pending
                raise
            if not isinstance(exc, (sqlite3.Error, ValueError)):  # UnicodeError: a ValueError
                raise
            self._fail(exc)

    def get_batch(self, key: str) -> dict[str, Any] | None:
        """The batch job recorded under ``key``: its id survives a restarted process, so a
        run re-attaches to the job in flight instead of paying for it again."""
        if self._broken:
            return None
        try:
            with self._lock:
                row = self._conn.execute(
                    "SELECT record FROM batch_jobs WHERE key = ?", (key,)
                ).fetchone()
        except sqlite3.Error as exc:
            self._fail(exc)
            return None
        if row is None:
            return None
        record = json.loads(row[0])
        return record if isinstance(record, dict) else None

    def put_batch(self, key: str, record: Mapping[str, Any]) -> None:
        """Record (or update) a batch job; written before the job is polled."""
        off = f"the cache {str(self.path)!r} is off; a batch id cannot be kept"
        if self._broken:
            raise CacheError(off)
        with self._lock:
            self._flush_locked()  # a job's answers are kept before its record says so
            if self._broken:  # (they could not be: the record stays as it was)
                raise CacheError(off)
            self._conn.execute(
                "INSERT OR REPLACE INTO batch_jobs VALUES (?, ?, ?)",
                (key, json.dumps(dict(record)), time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            self._flush_locked()
            (count,) = self._conn.execute("SELECT count(*) FROM replies").fetchone()
        return int(count)

    def clear(self) -> None:
        with self._lock:
            self._pending = []
            self._conn.execute("DELETE FROM replies")

    def describe(self) -> str:
        return f"cache file {str(self.path)!r}"

    def close(self) -> None:
        with self._lock:
            self._flush_locked()
            self._conn.close()
        _OPEN.discard(self)

    def __del__(self) -> None:
        # let go with answers waiting (code that puts its own, no close): written, as at exit
        with contextlib.suppress(Exception):  # (a finalizer has no one to tell)
            self.flush()

    def __repr__(self) -> str:
        return f"Cache({str(self.path)!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"path": str(self.path)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"])  # type: ignore[misc]


def _sqlite_int(n: int) -> int:
    """``n`` within SQLite's 64-bit integers (past them, a write raises OverflowError)."""
    if isinstance(n, int) and not -_INT64 <= n < _INT64:
        return max(-_INT64, min(n, _INT64 - 1))
    return n


_INT64 = 2**63

_OPEN: weakref.WeakSet[Cache] = weakref.WeakSet()
"""File caches still open: their last answers are written when the interpreter exits."""


@atexit.register
def _flush_at_exit() -> None:
    for cache in list(_OPEN):
        with contextlib.suppress(Exception):  # (exit is no time to fail)
            cache.flush()


def _forget_in_child() -> None:
    """A forked child starts with no answers waiting (they are its parent's, which writes
    them) and with free locks: one another thread held at the fork would never be released,
    and the child's exit would wait on it forever."""
    for cache in list(_OPEN):
        cache._lock = threading.Lock()
        cache._pending = []


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
