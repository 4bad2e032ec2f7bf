"""Result file formats (Parquet, JSONL, gzipped JSONL) and which fields a written file keeps.

Big runs write big files: a pairwise metric keeps the judge's raw answer for both orders, and a
JSONL row of a realistic run is several kilobytes. ``.jsonl.gz`` is read and written
transparently wherever ``.jsonl`` is, and ``output_fields="compact"`` drops the judge's raw
answers (every verdict, level, evidence and rationale stays). The fields the summaries and views
are computed from can never be dropped, so a compact file reads back with the same summary.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Final, Literal

from ..columns import (
    CRITERIA,
    ERROR,
    FIELDS,
    JUDGES,
    PAIRWISE_FIELDS,
    PASSED,
    RAW_OUTPUT,
    RUBRIC,
    RUBRIC_RAW_OUTPUT,
    SCORE,
    SWAP_CONSISTENT,
    USAGE_FIELDS,
    VERDICT,
    field_of,
    metric_of,
)

__all__ = [
    "ALWAYS_KEPT",
    "COMPACT_DROPS",
    "RESULT_SUFFIXES",
    "OutputFields",
    "ResultFormat",
    "check_output_fields",
    "dropped_columns",
    "open_text",
    "result_format",
    "result_stem",
]

ResultFormat = Literal["parquet", "jsonl", "jsonl.gz"]
#: what ``output_fields=`` takes: every field, the compact set, or the metric fields to keep
OutputFields = Literal["all", "compact"] | Sequence[str]

#: the file names a result may have, longest first (``.jsonl.gz`` before ``.gz``-less ones)
RESULT_SUFFIXES: Final = (".jsonl.gz", ".parquet", ".jsonl")
#: fields the summaries, pass rates, win rates and views are computed from: always written
ALWAYS_KEPT: Final = frozenset({SCORE, VERDICT, PASSED, ERROR, CRITERIA, SWAP_CONSISTENT, JUDGES})
#: what ``output_fields="compact"`` leaves out: the judge's raw answers (both orders of a
#: pairwise metric) and the rubric writer's; their content is parsed into the kept fields
COMPACT_DROPS: Final = frozenset({RAW_OUTPUT, RUBRIC_RAW_OUTPUT})
_KNOWN: Final = (
    frozenset(FIELDS)
    | set(PAIRWISE_FIELDS)
    | set(USAGE_FIELDS)
    | {
        RUBRIC,
        RUBRIC_RAW_OUTPUT,
        JUDGES,
    }
)


def result_format(path: str | Path) -> ResultFormat:
    """The format a result file's name asks for (a name without a suffix is JSON Lines); another
    suffix is refused, never guessed (``result.save("x.csv")`` once wrote JSONL under a CSV
    name)."""
    name = Path(path).name.lower()
    if name.endswith(".jsonl.gz"):
        return "jsonl.gz"
    if name.endswith(".jsonl"):
        return "jsonl"
    if name.endswith(".parquet"):
        return "parquet"
    if not Path(name).suffix:  # a bare name ("saved"): JSON Lines, as it always was
        return "jsonl"
    raise ValueError(
        f"{Path(path).name!r}: a result file ends in .parquet, .jsonl or .jsonl.gz "
        "(for a spreadsheet, export the table: result.table.to_csv(path))"
    )


def result_stem(path: str | Path) -> str:
    """The file name without its result suffix (``run.jsonl.gz`` -> ``run``)."""
    name = Path(path).name
    for suffix in RESULT_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return Path(path).stem


def open_text(
    path: str | Path, mode: Literal["r", "w"] = "r", *, gz: bool | None = None
) -> IO[str]:
    """A UTF-8 text stream of a result file, gunzipped or gzipped when its name ends in .gz
    (or ``gz`` says so: a temp file's name does not)."""
    if gz if gz is not None else str(path).lower().endswith(".gz"):
        # level 6: about 3x faster to write than 9 for a few percent more bytes
        raw = gzip.GzipFile(path, f"{mode}b", compresslevel=6)
        return io.TextIOWrapper(raw, encoding="utf-8", newline="")
    return open(path, mode, encoding="utf-8", newline="")


def dropped_columns(
    columns: Iterable[object],
    output_fields: OutputFields | None,
    metrics: Iterable[str] | None = None,
) -> list[str]:
    """The metric columns (``metric/field``) a file written with ``output_fields`` leaves out.

    ``"all"`` (or None) keeps everything; ``"compact"`` drops the raw answers; a list names the
    metric fields to keep, to which the always-kept ones are added. Data columns are always
    kept (with ``metrics``, only those metrics' columns count as metric columns).
    """
    drop = _fields_to_drop(output_fields)
    if not drop:
        return []
    names = None if metrics is None else set(metrics)
    out = []
    for c in columns:
        metric = metric_of(str(c))
        if metric is None or (names is not None and metric not in names):
            continue
        if field_of(str(c)) in drop:
            out.append(str(c))
    return out


def check_output_fields(output_fields: OutputFields | None) -> None:
    """Refuse a bad ``output_fields=`` before a run starts (not after an hour of calls)."""
    _fields_to_drop(output_fields)


def _fields_to_drop(output_fields: OutputFields | None) -> frozenset[str]:
    if output_fields is None or output_fields == "all":
        return frozenset()
    if output_fields == "compact":
        return COMPACT_DROPS
    if isinstance(output_fields, str) or not isinstance(output_fields, Sequence):
        raise ValueError(
            f"output_fields must be 'all', 'compact' or a list of field names, got {output_fields!r}"
        )
    keep = {str(f) for f in output_fields}
    unknown = sorted(keep - _KNOWN)
    if unknown:
        raise ValueError(
            f"output_fields: unknown field {unknown[0]!r}; the fields are "
            + ", ".join(sorted(_KNOWN))
        )
    return frozenset(_KNOWN - keep - ALWAYS_KEPT)
