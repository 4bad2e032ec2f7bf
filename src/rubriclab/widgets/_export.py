"""The table as a file: the rows a view shows (filtered, sorted), as CSV or JSON Lines.

Values are the result's own (scores 0-1, lists and dicts as JSON), not the capped cell text.
CSV text cells that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, CR)
get a leading apostrophe, so model output stays data when the file is opened in Excel. The
header row too: column names come from the user's data and metric names from a run config,
both someone else's text.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..columns import to_plain
from ..files import defused
from ._cells import is_missing

__all__ = ["MAX_EXPORT_ROWS", "export_rows"]

MAX_EXPORT_ROWS = 1_000_000


def _value(value: Any) -> Any:
    if is_missing(value):
        return None
    return to_plain(value, str)


def _csv_cell(value: Any) -> Any:
    value = _value(value)
    if value is None:
        return ""
    if isinstance(value, list | dict):
        value = json.dumps(value, ensure_ascii=False)
    if isinstance(value, str):
        return defused(value)
    return value


def export_rows(
    table: pd.DataFrame, positions: np.ndarray, columns: Sequence[str], fmt: str
) -> dict[str, Any]:
    """``{"text", "rows", "format", "mime", "filename"}`` for the rows at ``positions``."""
    if fmt not in ("csv", "jsonl"):
        raise ValueError(f"export format must be 'csv' or 'jsonl', got {fmt!r}")
    if len(positions) > MAX_EXPORT_ROWS:
        raise ValueError(
            f"{len(positions):,} rows is more than the view exports ({MAX_EXPORT_ROWS:,}); "
            "filter first, or save the result with result.save(path)"
        )
    names = ["index" if c == "__index__" else c for c in columns]
    labels = table.index[positions]
    data = [
        labels.to_numpy(dtype=object)
        if c == "__index__"
        else table[c].to_numpy(dtype=object)[positions]
        for c in columns
    ]
    buffer = io.StringIO()
    if fmt == "csv":
        # RFC 4180 line ends: a CR or LF inside a cell is then quoted, so text such as
        # "ok\r=HYPERLINK(...)" cannot start a row of its own in a spreadsheet
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow([defused(str(name)) for name in names])
        for i in range(len(positions)):
            writer.writerow([_csv_cell(col[i]) for col in data])
        mime = "text/csv"
    else:
        for i in range(len(positions)):
            record = {name: _value(col[i]) for name, col in zip(names, data, strict=True)}
            buffer.write(json.dumps(record, ensure_ascii=False) + "\n")
        mime = "application/x-ndjson"
    return {
        "text": buffer.getvalue(),
        "rows": len(positions),
        "format": fmt,
        "mime": mime,
        "filename": f"rubriclab-results.{fmt}",
    }
