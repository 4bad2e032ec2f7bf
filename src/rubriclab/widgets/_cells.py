"""Table cells and cases as JSON the views can show: plain values, capped text, safe image URLs.

Text stays text here (no HTML is built); the browser puts it in the page with ``textContent``.
"""

from __future__ import annotations

import base64
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..columns import (
    ATTEMPTS,
    BASELINE_CRITERIA,
    BASELINE_SCORE,
    CANDIDATE_CRITERIA,
    CANDIDATE_SCORE,
    CRITERIA,
    ERROR,
    LATENCY,
    PAIRWISE_CHOICE,
    PASSED,
    RATIONALE,
    RAW_OUTPUT,
    RUBRIC,
    SCORE,
    SWAP_CONSISTENT,
    TOKENS,
    VERDICT,
    col,
    field_of,
    metric_of,
    to_plain,
)
from ..data import DataError, conversation_cell
from ..rubric import Rubric
from ._source import MetricRef, Source

__all__ = [
    "INPUT_ORDER",
    "case_payload",
    "cell",
    "column_kind",
    "columns_payload",
    "criteria_summary",
    "image_columns",
    "input_columns",
    "is_missing",
    "metric_payload",
    "text_of",
]

#: input columns shown first, in this order, when a case has them
INPUT_ORDER = ("prompt", "response", "baseline_model_response", "reference", "context")
CELL_CHARS = 240
CASE_CHARS = 100_000
IMAGE_BYTES = 4_000_000

_NUMBER_FIELDS = {TOKENS, LATENCY, ATTEMPTS, CANDIDATE_SCORE, BASELINE_SCORE}
_LIST_FIELDS = {CRITERIA, CANDIDATE_CRITERIA, BASELINE_CRITERIA, RAW_OUTPUT, RUBRIC}
_CRITERION_KEYS = (
    "name",
    "question",
    "level",
    "label",
    "evidence",
    "reasoning",
    "weight",
    "critical",
    "passed_critical",
    "checked_by",
    "check",
)


def is_missing(value: Any) -> bool:
    """None, NaN, NA or NaT (a list or mapping is never missing, even when empty)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def text_of(value: Any, limit: int = CASE_CHARS) -> str | None:
    """Any cell as display text (lists and dicts as JSON), capped at ``limit`` characters."""
    if is_missing(value):
        return None
    if isinstance(value, str):
        text = value
    elif isinstance(value, list | tuple | Mapping | Rubric):
        text = json.dumps(to_plain(value, str), ensure_ascii=False)
    else:
        text = str(to_plain(value, str))
    if len(text) > limit:
        text = text[:limit] + f"… [{len(text) - limit:,} more characters]"
    return text


def column_kind(name: str, series: pd.Series | None = None) -> str:
    """How the table shows a column: score, verdict, error, bool, number, list or text."""
    field = field_of(name) or ""
    if field == SCORE:
        return "score"
    if field in (VERDICT, PAIRWISE_CHOICE):
        return "verdict"
    if field == ERROR:
        return "error"
    if field in (SWAP_CONSISTENT, PASSED):
        return "bool"
    if field in _NUMBER_FIELDS:
        return "number"
    if field in _LIST_FIELDS or name == RUBRIC:
        return "list"
    if (
        series is not None
        and pd.api.types.is_numeric_dtype(series)
        and not pd.api.types.is_bool_dtype(series)
    ):
        return "number"
    if series is not None and pd.api.types.is_bool_dtype(series):
        return "bool"
    return "text"


_IMAGE_TEXT = re.compile(
    r"^(data:image/|https?://\S+\.(png|jpe?g|gif|webp|bmp|avif)(\?\S*)?$|gs://|\S+\.(png|jpe?g|gif|webp|bmp|avif)$)",
    re.IGNORECASE,
)


def _looks_like_image(value: Any) -> bool:
    if isinstance(value, bytes | Path):
        return True
    if isinstance(value, Mapping):
        return any(k in value for k in ("url", "image_url", "path"))
    if isinstance(value, list | tuple):
        return any(_looks_like_image(v) for v in value if not is_missing(v))
    return isinstance(value, str) and bool(_IMAGE_TEXT.match(value.strip()))


#: names that say "this column is images" whatever its values (``image``, ``image_url``, ...)
_IMAGE_NAME = re.compile(r"^(images?|img|image_(urls?|paths?|files?|uri|bytes|data))$|_images?$")


def image_columns(table: pd.DataFrame) -> list[str]:
    """Input columns of images: named so (``image``, ``images``, ``image_url``, ``photo_image``)
    or named with "image" and holding image references (bytes, image paths or URLs, data URIs).
    ``image_description`` holding prose is a text column."""
    out = []
    for c in table.columns:
        name = str(c)
        if metric_of(name) is not None or "image" not in name.lower():
            continue
        if _IMAGE_NAME.search(name.lower()):
            out.append(name)
            continue
        sample = [v for v in table[c].iloc[:50].tolist() if not is_missing(v)]
        if sample and all(_looks_like_image(v) for v in sample):
            out.append(name)
    return out


ID_COLUMNS = ("id", "case_id", "row_id")


def input_columns(table: pd.DataFrame) -> list[str]:
    """The case's own columns (not judged ones, not rubrics, not images): ids, prompt first."""
    images = set(image_columns(table))
    cols = [
        str(c)
        for c in table.columns
        if metric_of(str(c)) is None
        and str(c) not in (RUBRIC, "trace_tree")
        and str(c) not in images
    ]
    first = [c for c in (*ID_COLUMNS, *INPUT_ORDER) if c in cols]
    return first + [c for c in cols if c not in first]


def text_width(series: pd.Series, *, longest: bool = False, pad: int = 28) -> int:
    """A column width (px) that fits its typical (or, for badges, longest) text, clamped."""
    sample = series.iloc[:500]
    lengths = sorted(len(t) for t in (text_of(v, 400) for v in sample) if t)
    if not lengths:
        return 110
    chars = lengths[-1] if longest else lengths[len(lengths) // 2]
    return int(min(max(chars * 7.6 + pad, 90), 300))


def columns_payload(source: Source) -> tuple[list[dict[str, Any]], list[str]]:
    """Column descriptors for the grid and the keys shown by default."""
    table = source.table
    kinds = {m.name: m.kind for m in source.metrics}
    widest = max((len(str(v)) for v in table.index[-3:]), default=1)
    cols: list[dict[str, Any]] = [
        {
            "key": "__index__",
            "label": "#",
            "kind": "index",
            "sortable": True,
            "width": min(max(8 * widest + 22, 48), 200),
        }
    ]
    visible = ["__index__"]
    for name in input_columns(table) + image_columns(table):
        kind = column_kind(name, table[name])
        desc: dict[str, Any] = {
            "key": name,
            "label": name,
            "kind": kind,
            "sortable": kind != "list",
        }
        if kind == "text":
            desc["width"] = text_width(table[name])
            desc["fixed"] = name in ID_COLUMNS  # ids are read whole: never squeezed
        cols.append(desc)
        if name in (*ID_COLUMNS, *INPUT_ORDER[:3]) or (
            name not in image_columns(table) and len(visible) < 4
        ):
            visible.append(name)
    for m in source.metrics:
        for column in table.columns:
            name = str(column)
            if metric_of(name) != m.name:
                continue
            field = field_of(name) or ""
            kind = column_kind(name, table[name])
            desc = {
                "key": name,
                "label": name,
                "kind": kind,
                "metric": m.name,
                "metric_kind": kinds.get(m.name, "pointwise"),
                "sortable": kind != "list",
            }
            desc["field"] = field
            if kind == "verdict":
                desc["width"] = text_width(table[name], longest=True, pad=44)
            if kind == "error":
                desc["empty"] = bool(table[name].map(_blank_cell).all())
            cols.append(desc)
            if (
                field in (SCORE, VERDICT)
                or (field == ERROR and not desc["empty"])
                or (field == SWAP_CONSISTENT and m.kind == "pairwise")
            ):
                visible.append(name)
    return cols, visible


def _blank_cell(value: Any) -> bool:
    return is_missing(value) or (isinstance(value, str) and not value.strip())


def criteria_summary(value: Any) -> str:
    """A criteria list in one line: ``accuracy 3 · clarity YES``."""
    if not isinstance(value, list | tuple):
        return text_of(value, CELL_CHARS) or ""
    parts = []
    for item in value:
        if isinstance(item, Mapping):
            label = item.get("label")
            level = item.get("level")
            winner = item.get("winner")
            shown = winner if winner is not None else label if label in ("YES", "NO") else level
            parts.append(
                f"{item.get('name', '?')} {to_plain(shown, str) if shown is not None else '—'}"
            )
    return " · ".join(parts)


def cell(kind: str, key: str, value: Any) -> Any:
    """One grid cell: numbers as numbers, everything else as one line of capped text."""
    if is_missing(value):
        return None
    if kind in ("score", "number"):
        try:
            number = float(value)
        except (TypeError, ValueError):
            return text_of(value, CELL_CHARS)
        return None if math.isnan(number) or math.isinf(number) else number
    if kind == "bool":
        return bool(value)
    if kind == "list":
        if (field_of(key) or "").endswith(CRITERIA):
            return criteria_summary(value)
        if isinstance(value, list | tuple) and value and isinstance(value[0], str):
            value = value[0]
    text = text_of(value, CELL_CHARS) or ""
    return " ".join(text.split())


# -- one case ------------------------------------------------------------------------------------
def case_payload(
    source: Source,
    pos: int,
    metrics: Sequence[MetricRef] | None = None,
    *,
    image_roots: Sequence[Path] | None = None,
) -> dict[str, Any]:
    """Everything a person needs to read one case and what the judge said about it.

    With ``image_roots`` (resolved folders; the first is where relative paths are read from)
    a local image is embedded only from inside one of them: a report written from a result
    someone sent must not carry the reader's own pictures away.
    """
    table = source.table
    if not 0 <= pos < len(table):
        raise IndexError(f"row {pos} is out of range: the result has {len(table)} rows")
    row = table.iloc[pos]
    label = table.index[pos]
    heading = f"case {pos + 1} of {len(table)}"
    if not isinstance(label, int) or label != pos:
        heading += f" · index {label}"
    id_key = next((k for k in ID_COLUMNS if k in table.columns and not is_missing(row[k])), None)
    if id_key is not None:
        heading += f" · {id_key} {text_of(row[id_key], 80)}"
    conversation = _conversation_payload(row)
    fields = [
        {"name": name, "text": text_of(row[name])}
        for name in input_columns(table)
        if name != id_key
        and not is_missing(row[name])
        and not (conversation and name == CONVERSATION_COLUMN)
    ]
    images = [img for name in image_columns(table) for img in _images(name, row[name], image_roots)]
    return {
        "row": pos,
        "heading": heading,
        "fields": fields,
        "images": images,
        "conversation": conversation,
        "trace": _trace_payload(row, _span_scores(source, row)),
        "metrics": [metric_payload(source, row, m) for m in (metrics or source.metrics)],
    }


MAX_TRACE_SPANS = 500
CONVERSATION_COLUMN = "conversation"
MAX_MESSAGES = 400


def _conversation_payload(row: pd.Series) -> dict[str, Any] | None:
    """The row's ``conversation`` cell as messages for a chat transcript (text only: the views
    show it as text, never HTML), or None when there is none or it does not read as one (then
    the cell is shown as a plain field instead)."""
    if CONVERSATION_COLUMN not in row.index:
        return None
    try:
        messages = conversation_cell(row[CONVERSATION_COLUMN], "row", CONVERSATION_COLUMN)
    except (DataError, TypeError, ValueError):
        return None
    if not messages:
        return None
    turn = 0
    shown: list[dict[str, Any]] = []
    for m in messages[:MAX_MESSAGES]:
        item: dict[str, Any] = {
            "role": m["role"],
            "content": text_of(m.get("content") or "") or "",
            "tool_calls": [
                {"name": text_of(c["name"], 200), "arguments": text_of(c["arguments"], 4000)}
                for c in m.get("tool_calls") or ()
            ],
        }
        if m["role"] == "assistant":
            turn += 1
            item["turn"] = turn
        for key in ("name", "tool_call_id"):
            if m.get(key):
                item[key] = text_of(m[key], 200)
        shown.append(item)
    return {"messages": shown, "omitted": max(0, len(messages) - MAX_MESSAGES)}


def _score_of(row: pd.Series, metric: str) -> dict[str, Any] | None:
    """One metric's outcome on one result row, as a span's score chip shows it."""

    def get(field: str) -> Any:
        key = col(metric, field)
        value = row[key] if key in row.index else None
        return None if is_missing(value) else value

    score, error = get("score"), get("error")
    if score is None and error is None and get("verdict") is None:
        return None
    passed = get("passed")
    number = score if isinstance(score, int | float) and not isinstance(score, bool) else None
    return {
        "metric": text_of(metric, 80),
        "score": float(number) if number is not None and math.isfinite(number) else None,
        "label": text_of(get("verdict"), 120),
        "passed": bool(passed) if isinstance(passed, bool | int) else None,
        "explanation": text_of(get("rationale"), 2000),
        "error": text_of(error, 500),
    }


def _span_scores(source: Source, row: pd.Series) -> dict[str, list[dict[str, Any]]]:
    """The result's scores on the spans of this row's trace: every span row of the same trace
    (``partition="span"``), or this row's scores on the root (``partition="trace"``)."""
    table = source.table
    if "trace_id" not in row.index or is_missing(row["trace_id"]):
        return {}
    tree = row["trace_tree"] if "trace_tree" in row.index else None
    roots = [
        s
        for s in (tree if isinstance(tree, list | tuple) else [])
        if isinstance(s, Mapping) and is_missing(s.get("parent_id"))
    ]
    root = str(roots[0].get("span_id")) if roots else None
    pairs = []
    for _, judged in table[table["trace_id"] == row["trace_id"]].iterrows():
        span = judged["span_id"] if "span_id" in judged.index else None
        target = root if is_missing(span) else str(span)  # a trace row: onto its root
        if target is not None:
            pairs.append((target, judged))
    out: dict[str, list[dict[str, Any]]] = {}
    for span_id, judged in pairs:
        for m in source.metrics:
            score = _score_of(judged, m.name)
            if score is not None:
                out.setdefault(span_id, []).append(score)
    return out


def _passed_from_label(label: str | None) -> bool | None:
    """A written verdict read back: "pass", "fail", "fail (score below pass mark)"."""
    word = (label or "").strip().lower().split(" ", 1)[0]
    return True if word == "pass" else False if word == "fail" else None


def _event_scores(span: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Scores a span carried in from its trace file (``gen_ai.evaluation.result`` events)."""
    out = []
    raw: Any = span.get("evaluations")
    if hasattr(raw, "tolist"):  # a numpy array, after a Parquet round trip
        raw = raw.tolist()
    items: list[Any] = list(raw) if isinstance(raw, list | tuple) else []
    for e in items:
        if not isinstance(e, Mapping):
            continue
        label = text_of(e.get("label"), 120)
        score = e.get("score")
        number = score if isinstance(score, int | float) and not isinstance(score, bool) else None
        out.append(
            {
                "metric": text_of(e.get("metric"), 80),
                "score": float(number) if number is not None and math.isfinite(number) else None,
                "label": label,
                "passed": _passed_from_label(label),
                "explanation": text_of(e.get("explanation"), 2000),
                "error": text_of(e.get("error"), 500),
                "from_trace": True,
            }
        )
    return out


def _trace_payload(
    row: pd.Series, scores: Mapping[str, list[dict[str, Any]]] | None = None
) -> dict[str, Any] | None:
    """The trace the row came from, as a tree with the judged span marked (trace results),
    each span with the scores it got: this result's, then any its trace file carried for
    other metrics."""
    tree = row["trace_tree"] if "trace_tree" in row.index else None
    if not isinstance(tree, list | tuple) or not tree:
        return None
    judged = row["span_id"] if "span_id" in row.index else None
    spans = []
    for span in tree[:MAX_TRACE_SPANS]:
        if not isinstance(span, Mapping):
            continue
        span_id = text_of(span.get("span_id"), 80)
        own = list((scores or {}).get(str(span.get("span_id")), []))
        mine = {s["metric"] for s in own}
        own.extend(s for s in _event_scores(span) if s["metric"] not in mine)
        spans.append(
            {
                "span_id": span_id,
                "name": text_of(span.get("name"), 200),
                "kind": text_of(span.get("kind"), 40),
                "status": text_of(span.get("status"), 40),
                "duration_ms": to_plain(span.get("duration_ms"), str),
                "depth": to_plain(span.get("depth"), str),
                "scores": own,
            }
        )
    return {
        "spans": spans,
        "highlight": None if is_missing(judged) else text_of(judged, 80),
        "omitted": max(0, len(tree) - MAX_TRACE_SPANS),
    }


def metric_payload(source: Source, row: pd.Series, m: MetricRef) -> dict[str, Any]:
    def get(field: str) -> Any:
        key = col(m.name, field)
        return row[key] if key in row.index else None

    rubric = _row_rubric(row, m)
    out: dict[str, Any] = {
        "name": m.name,
        "kind": m.kind,
        "score": cell("score", "", get(SCORE)),
        "verdict": text_of(get(VERDICT), 400),
        "criteria": _criteria(get(CRITERIA), rubric),
        "rationale": text_of(get(RATIONALE)),
        "raw_output": _raw(get(RAW_OUTPUT)),
        "error": text_of(get(ERROR)),
        "tokens": cell("number", "", get(TOKENS)),
        "latency": cell("number", "", get(LATENCY)),
        "attempts": cell("number", "", get(ATTEMPTS)),
    }
    turns = _turns(get("turns"))
    if turns:
        out["turns"] = turns
    # every call of this row answered from the cache: say so, not "attempts 0 · latency 0 ms"
    out["cached"] = out["attempts"] == 0 and out["error"] is None and bool(out["raw_output"])
    if m.kind == "pairwise":
        consistent = get(SWAP_CONSISTENT)
        out["choice"] = text_of(get(PAIRWISE_CHOICE), 200)
        out["swap_consistent"] = None if is_missing(consistent) else bool(consistent)
        out["candidate_criteria"] = _criteria(get(CANDIDATE_CRITERIA), rubric)
        out["baseline_criteria"] = _criteria(get(BASELINE_CRITERIA), rubric)
        out["pair_rows"] = _pair_rows(out, get(CRITERIA))
    return out


def _turns(value: Any) -> list[dict[str, Any]]:
    """A per-turn metric's turn results (``{name}/turns``, worst first) for the transcript."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return []
    if not isinstance(value, list | tuple):
        return []
    out = []
    for item in value:
        if not isinstance(item, Mapping) or not isinstance(item.get("turn"), int | float):
            continue
        out.append(
            {
                "turn": int(item["turn"]),
                "score": cell("score", "", item.get("score")),
                "passed": None if is_missing(item.get("passed")) else bool(item.get("passed")),
                "verdict": text_of(item.get("verdict"), 400),
                "error": text_of(item.get("error"), 2000),
            }
        )
    return out


def _row_rubric(row: pd.Series, m: MetricRef) -> Rubric | None:
    for key in (col(m.name, RUBRIC), "rubric"):
        if key in row.index:
            value = row[key]
            if isinstance(value, Rubric):
                return value
            if isinstance(value, Mapping):
                try:
                    return Rubric.from_saved(value)
                except ValueError:
                    return m.rubric
    return m.rubric


def _criteria(value: Any, rubric: Rubric | None) -> list[dict[str, Any]]:
    if not isinstance(value, list | tuple):
        return []
    rows = []
    for item in value:
        if not isinstance(item, Mapping):
            continue
        out = {k: to_plain(item.get(k), str) for k in _CRITERION_KEYS}
        for k in ("name", "question", "label", "evidence", "reasoning", "check"):
            out[k] = text_of(item.get(k), 20_000)
        if rubric is not None and out["name"] is not None:
            try:
                criterion = rubric[str(out["name"])]
            except KeyError:
                pass
            else:
                out["max_level"] = criterion.max_score
                if not criterion.is_yes_no and isinstance(out["level"], int):
                    out["min_level"] = criterion.min_score
        rows.append(out)
    return rows


def _pair_rows(metric: Mapping[str, Any], criteria: Any) -> list[dict[str, Any]]:
    """Per criterion: the winner (both orders), evidence, and each side's level when known."""
    cand = {c["name"]: c for c in metric["candidate_criteria"]}
    base = {c["name"]: c for c in metric["baseline_criteria"]}
    rows = []
    items = criteria if isinstance(criteria, list | tuple) else []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        name = text_of(item.get("name"), 400) or ""
        consistent = item.get("swap_consistent")
        rows.append(
            {
                "name": name,
                "question": text_of(item.get("question"), 20_000),
                "winner": text_of(item.get("winner"), 40),
                "consistent": None if is_missing(consistent) else bool(consistent),
                "evidence": text_of(item.get("evidence"), 20_000),
                "evidence_swapped": text_of(item.get("evidence_swapped"), 20_000),
                "candidate": cand.get(name),
                "baseline": base.get(name),
            }
        )
    if not rows:  # no winner list: compare the two sides' levels
        for name in list(cand) + [n for n in base if n not in cand]:
            c, b = cand.get(name), base.get(name)
            rows.append(
                {
                    "name": name,
                    "question": (c or b or {}).get("question"),
                    "winner": _winner(c, b),
                    "consistent": None,
                    "evidence": (c or {}).get("evidence"),
                    "evidence_swapped": (b or {}).get("evidence"),
                    "candidate": c,
                    "baseline": b,
                }
            )
    return rows


def _winner(c: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> str | None:
    if not c or not b or not isinstance(c.get("level"), int) or not isinstance(b.get("level"), int):
        return None
    lc, lb = c["level"], b["level"]
    return "candidate" if lc > lb else "baseline" if lb > lc else "tie"


def _raw(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [text_of(v) or "" for v in value]
    text = text_of(value)
    return [] if text is None else [text]


# -- images ---------------------------------------------------------------------------------------
_MAGIC = (
    (b"\x89PNG", "png"),
    (b"\xff\xd8", "jpeg"),
    (b"GIF8", "gif"),
    (b"RIFF", "webp"),
    (b"BM", "bmp"),
)
_SUFFIX = {".png": "png", ".jpg": "jpeg", ".jpeg": "jpeg", ".gif": "gif", ".webp": "webp"}
_DATA_URI = re.compile(r"^data:image/(png|jpe?g|gif|webp|bmp|avif);base64,[A-Za-z0-9+/=\s]+$")


def _images(name: str, value: Any, roots: Sequence[Path] | None = None) -> list[dict[str, Any]]:
    if is_missing(value):
        return []
    values = list(value) if isinstance(value, list | tuple) else [value]
    return [_image(name, v, roots) for v in values if not is_missing(v)]


def _image(name: str, value: Any, roots: Sequence[Path] | None = None) -> dict[str, Any]:
    """A browser-safe ``src`` (http(s) or a data: image URI) or a note saying why not."""
    if isinstance(value, Mapping):
        value = value.get("url") or value.get("image_url") or value.get("path")
        if isinstance(value, Mapping):
            value = value.get("url")
    if isinstance(value, bytes):
        return _from_bytes(name, value)
    if not isinstance(value, str | Path):
        return {"name": name, "note": f"unsupported image value ({type(value).__name__})"}
    text = str(value).strip()
    if _DATA_URI.match(text):
        return {"name": name, "src": text}
    if re.match(r"^https?://[^\s\"'<>]+$", text, re.IGNORECASE):
        return {"name": name, "src": text}
    if re.match(r"^[a-z][a-z0-9+.-]*:", text, re.IGNORECASE) and not re.match(
        r"^[a-z]:\\", text, re.IGNORECASE
    ):
        return {"name": name, "note": f"not shown: unsupported URL scheme in {text[:60]!r}"}
    missing = {"name": name, "note": f"not shown: no image file at {text[:120]!r}"}
    try:
        if roots is None:
            path = Path(text).expanduser()
        else:  # confined: no ~, relative to the first folder, and never out of them
            path = Path(text) if Path(text).is_absolute() else roots[0] / text
            real = path.resolve()
            if not any(real.is_relative_to(root) for root in roots):
                return {
                    "name": name,
                    "note": f"not shown: local image {text[:120]!r} is outside the folders "
                    "images are embedded from (the result's folder; allow others with "
                    "--allow-images DIR or image_dirs=)",
                }
        if path.suffix.lower() not in _SUFFIX or not path.is_file():
            return missing
        if path.stat().st_size > IMAGE_BYTES:
            return {"name": name, "note": f"not shown: {path.name[:120]} is larger than 4 MB"}
        data = path.read_bytes()
    except (OSError, RuntimeError, ValueError):  # over-long, looping or unreadable paths
        return missing
    return _from_bytes(name, data)  # the kind from the content, never from the name


def _from_bytes(name: str, data: bytes, kind: str | None = None) -> dict[str, Any]:
    if len(data) > IMAGE_BYTES:
        return {"name": name, "note": "not shown: image larger than 4 MB"}
    kind = kind or next((k for magic, k in _MAGIC if data.startswith(magic)), None)
    if kind is None:
        return {
            "name": name,
            "note": "not shown: bytes are not a PNG, JPEG, GIF, WebP or BMP image",
        }
    encoded = base64.b64encode(data).decode("ascii")
    return {"name": name, "src": f"data:image/{kind};base64,{encoded}"}
