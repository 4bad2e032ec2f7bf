"""Turn a DataFrame or records into validated ``Case``s, with errors that name row and column.

Everything downstream (rendering, judging, scoring, views) reads cases, never raw frames, so the
checks here happen once, before any call. Shape problems (a missing column, an unknown mapping)
fail fast; a row's content never stops the run: an empty response ("") is judged as what the
model said, and a missing one (None/NaN), a missing prompt, an unreadable image or rubric cell
becomes that row's error (``Case.error``) while every other row is scored.
"""

from __future__ import annotations

import json
import math
import mimetypes
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from .files import error_text
from .rubric import Rubric

__all__ = [
    "Case",
    "DataError",
    "ImageRoots",
    "Media",
    "cases_to_frame",
    "conversation_cell",
    "image_roots",
    "rubric_cell",
    "to_cases",
    "to_frame",
    "transcript",
]

#: the canonical fields a case has; a column mapping renames user columns onto these
FIELDS = ("prompt", "response", "baseline_model_response", "reference", "context")
#: columns read as media when present (case-insensitive)
MEDIA_COLUMNS = ("image", "images", "image_url", "image_path", "media")

_T = TypeVar("_T")
_DATA_URI = re.compile(r"^data:([\w.+-]+/[\w.+-]+)?(;base64)?,", re.I)


class DataError(ValueError):
    """Input data that cannot be evaluated; the message names the row, the column and the fix."""


@dataclass(frozen=True)
class Media:
    """One attached image (or other file): a URL, a data URI, or a local path."""

    source: str
    mime_type: str | None = None
    column: str = "image"

    @property
    def kind(self) -> str:
        if _DATA_URI.match(self.source):
            return "data"
        if re.match(r"^[a-z][a-z0-9+.-]*://", self.source, re.I):
            return "url"
        return "file"


@dataclass
class Case:
    """One row to evaluate. ``id`` is the row's label as text; ``index`` the original label."""

    id: str
    index: Any
    prompt: str
    response: str | None = None
    baseline_model_response: str | None = None
    reference: str | None = None
    context: str | None = None
    media: list[Media] = field(default_factory=list)
    rubric: Rubric | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    """Why this row cannot be judged (e.g. no prompt); it becomes the row's error, no call made."""
    bound: Mapping[str, Any] | None = None
    """What a template metric binds instead of the row's fields (a trace adapter binds the raw
    span or trace under ``input_span`` / ``input_trace``)."""
    conversation: list[dict[str, Any]] | None = None
    """The row's messages (``conversation_cell``'s form), when the data has a conversation."""

    def variables(self) -> dict[str, Any]:
        """What templates see: the canonical fields plus every other input column."""
        out: dict[str, Any] = dict(self.extra)
        out.update(
            prompt=self.prompt,
            response=self.response,
            baseline_model_response=self.baseline_model_response,
            reference=self.reference,
            context=self.context,
            has_media=bool(self.media),
            case_id=self.id,
        )
        if self.conversation is not None:
            out["conversation"] = self.conversation
            out["transcript"] = transcript(self.conversation)
        return out


def to_frame(data: Any) -> pd.DataFrame:
    """A DataFrame from a DataFrame, a list of dicts, a dict of columns, or a file path."""
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, str | Path):
        return read_table(Path(data))
    if isinstance(data, Mapping):
        return pd.DataFrame(dict(data))
    if isinstance(data, Iterable):
        records = list(data)
        if records and not all(isinstance(r, Mapping) for r in records):
            bad = next(i for i, r in enumerate(records) if not isinstance(r, Mapping))
            raise DataError(f"record {bad} is a {type(records[bad]).__name__}, not a dict")
        return pd.DataFrame.from_records(records)
    raise DataError(f"cannot read evaluation data from a {type(data).__name__}")


def read_table(path: Path) -> pd.DataFrame:
    """Read CSV, JSONL/JSON or Parquet by extension, with a clear error for anything else."""
    try:
        found = path.exists()
    except OSError as exc:  # a name too long, a loop of links...
        raise DataError(
            f"data file {_shown(str(path))} cannot be read ({exc.strerror or exc})"
        ) from None
    if not found:
        raise DataError(f"data file {path} does not exist")
    suffix = path.suffix.lower()
    if suffix == ".gz":  # data.jsonl.gz, data.csv.gz: pandas gunzips by the name
        suffix = Path(path.stem).suffix.lower()
        if suffix not in (".csv", ".jsonl", ".ndjson", ".json"):
            raise DataError(f"{path}: unknown data format (use .csv.gz, .jsonl.gz or .json.gz)")
    if suffix not in TABLE_SUFFIXES:
        raise DataError(
            f"{path}: unknown data format {suffix!r} (use .csv, .jsonl, .json or .parquet, or .gz of the text ones)"
        )
    return read_table_file(path, suffix)


#: the file formats :func:`read_table` reads, by suffix
TABLE_SUFFIXES = (".csv", ".jsonl", ".ndjson", ".json", ".parquet")


def read_table_file(source: Any, suffix: str) -> pd.DataFrame:
    """One table from a path or an open binary file, in the format ``suffix`` names (one of
    :data:`TABLE_SUFFIXES`): the one set of reading rules for local and remote files."""
    if suffix == ".csv":
        return pd.read_csv(source, keep_default_na=False, na_values=[""])
    if suffix in (".jsonl", ".ndjson"):
        return pd.read_json(source, lines=True, dtype=False)
    if suffix == ".json":
        return pd.read_json(source, dtype=False)
    if suffix == ".parquet":
        return pd.read_parquet(source)
    raise DataError(f"unknown data format {suffix!r} (use .csv, .jsonl, .json or .parquet)")


def to_cases(
    data: Any,
    *,
    mapping: Mapping[str, str] | None = None,
    need_response: bool = True,
    need_baseline: bool = False,
    check_files: bool = True,
    image_dirs: Sequence[str | os.PathLike[str]] | None = None,
    data_dir: str | os.PathLike[str] | None = None,
) -> list[Case]:
    """Validate rows into cases.

    ``mapping`` maps our field names to the user's columns, e.g. ``{"response": "answer"}``.
    Media columns (``image`` etc., or mapped with ``{"image": "photo"}``) accept URLs, data URIs,
    local files, lists of those, and the ``{"contents": [{"parts": [{"file_data": ...}]}]}`` JSON
    form of Vertex datasets.

    Local image files are data, and data may come from anyone: they are read relative to the
    data file's folder (``data_dir``; the working folder for data held in memory) and only
    from inside it or one of ``image_dirs`` (``~`` is not expanded), so a row cannot send
    the user's own files to a judge.
    """
    if data_dir is None and isinstance(data, str | os.PathLike):
        data_dir = Path(data).parent
    roots = image_roots(data_dir, image_dirs)
    frame = to_frame(data)
    mapping = dict(mapping or {})
    mappable = [*FIELDS, "image", "rubric", "conversation"]
    unknown = sorted(set(mapping) - set(mappable))
    if unknown:
        raise DataError(f"column mapping names unknown fields {unknown}; map any of {mappable}")
    for target, source in mapping.items():
        if source not in frame.columns:
            raise DataError(
                f"column mapping {target!r} -> {source!r}: there is no column {source!r} "
                f"(columns: {', '.join(map(str, frame.columns))})"
            )
    col = {f: mapping.get(f, f) for f in FIELDS}
    talk_col = mapping.get("conversation", "conversation")
    talks = talk_col in frame.columns  # prompt and response then default to the conversation's
    required = [] if talks else ["prompt"] + (["response"] if need_response else [])
    required += ["baseline_model_response"] if need_baseline else []
    for name in required:
        if col[name] not in frame.columns:
            hint = f"rename a column to {name!r} or pass mapping={{{name!r}: 'your_column'}}"
            raise DataError(f"the data has no {col[name]!r} column: {hint}")
    media_cols = _media_columns(frame, mapping.get("image"))
    rubric_col = mapping.get("rubric", "rubric")
    used = {*(c for c in col.values()), *media_cols, rubric_col, talk_col}
    extra_cols = [c for c in frame.columns if c not in used]

    # column by column: a cell that is already text (nearly all) is taken as it is, the rest
    # go through the checks; row dicts would cost more than the judging prep they feed
    labels = frame.index.tolist()
    fields = [(f, col[f], _cells(frame, col[f])) for f in FIELDS if col[f] in frame.columns]
    media = [(c, _cells(frame, c)) for c in media_cols]
    rubrics = _cells(frame, rubric_col) if rubric_col in frame.columns else None
    conversations = _cells(frame, talk_col) if talks else None
    extras = [(str(c), _cells(frame, c)) for c in extra_cols]
    cases: list[Case] = []
    for pos, label in enumerate(labels):
        problems: list[str] = []  # this row's content problems: its error, not the run's
        values: dict[str, str | None] = {}
        for f, column, cells in fields:
            value = cells[pos]
            if type(value) is not str:
                value = _content(problems, None, _text, value, _where(pos, label), column)
            values[f] = value
        talk = None
        if conversations is not None:
            talk = _content(
                problems, None, conversation_cell, conversations[pos], _where(pos, label), talk_col
            )
            if talk is not None:
                _defaults_from(talk, values)
        prompt = values.get("prompt")
        if talk is None and (prompt is None or not prompt.strip()):
            if conversations is None or col["prompt"] in frame.columns:
                problems.insert(0, f"no prompt (column {col['prompt']!r} is empty in this row)")
            elif _missing(conversations[pos]):
                problems.insert(0, f"no conversation (column {talk_col!r} is empty in this row)")
            # else the conversation cell could not be read: its problem is noted already
        row_media: list[Media] = []
        no_media: list[Media] = []
        for column, cells in media:
            where = _where(pos, label)
            row_media += _content(
                problems, no_media, _media, cells[pos], column, where, check_files, roots
            )
        rubric = None
        if rubrics is not None:
            rubric = _content(
                problems, None, rubric_cell, rubrics[pos], _where(pos, label), rubric_col
            )
        cases.append(
            Case(
                id=str(label),
                index=label,
                prompt=prompt or "",
                response=values.get("response"),
                baseline_model_response=values.get("baseline_model_response"),
                reference=values.get("reference"),
                context=values.get("context"),
                media=row_media,
                rubric=rubric,
                conversation=talk,
                extra={name: cells[pos] for name, cells in extras},
                error="; ".join(problems) or None,
            )
        )
    return cases


def _cells(frame: pd.DataFrame, column: Any) -> list[Any]:
    """One column's cells as Python values (what ``to_dict(orient="records")`` gives)."""
    series = frame[column]
    if isinstance(series, pd.DataFrame):  # two columns share the name
        raise DataError(f"the data has more than one column named {column!r}: rename one")
    cells: list[Any] = series.tolist()
    if series.dtype == object:  # numpy scalars kept in object columns become Python's
        cells = [c.item() if isinstance(c, np.generic) else c for c in cells]
    return cells


def cases_to_frame(cases: Sequence[Case], source: pd.DataFrame | None = None) -> pd.DataFrame:
    """The input columns again: the source frame when there is one, else the case fields."""
    if source is not None:
        return source.copy()
    rows = [
        {
            "prompt": c.prompt,
            "response": c.response,
            "baseline_model_response": c.baseline_model_response,
            "reference": c.reference,
            "context": c.context,
            **c.extra,
        }
        for c in cases
    ]
    frame = pd.DataFrame(rows, index=[c.index for c in cases])
    return frame.dropna(axis=1, how="all")


# -- helpers -------------------------------------------------------------------------------------


def _content(problems: list[str], default: _T, read: Callable[..., _T], *args: Any) -> _T:
    """``read(*args)``, or ``default`` with the problem noted: a bad cell fails its row only."""
    try:
        return read(*args)
    except DataError as exc:
        problems.append(str(exc))
        return default


def _where(pos: int, label: Any) -> str:
    return f"row {pos}" if label == pos else f"row {pos} (index {label!r})"


def _missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return value is pd.NA or value is pd.NaT


def _text(value: Any, where: str, column: str) -> str | None:
    """A cell as text; None only when it is missing (None/NaN). "" stays "": it was said."""
    if _missing(value):
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int | float | bool):
        return str(value)
    if isinstance(value, Mapping | list):
        return json.dumps(value, ensure_ascii=False)
    raise DataError(f"{where}, column {column!r}: expected text, got {type(value).__name__}")


def _media_columns(frame: pd.DataFrame, mapped: str | None) -> list[str]:
    if mapped:
        return [mapped]
    lower = {str(c).lower(): str(c) for c in frame.columns}
    return [lower[name] for name in MEDIA_COLUMNS if name in lower]


@dataclass(frozen=True)
class ImageRoots:
    """Where a data row's local images are read from: ``base`` for relative paths, and
    only files inside one of ``folders`` (resolved)."""

    base: Path
    folders: tuple[Path, ...]


def image_roots(
    data_dir: str | os.PathLike[str] | None,
    image_dirs: Sequence[str | os.PathLike[str]] | None = None,
) -> ImageRoots:
    """The data's folder (the working folder for data in memory), the folders the user
    allowed, and the shipped demo pictures."""
    base = Path(data_dir) if data_dir is not None else Path.cwd()
    if isinstance(image_dirs, str | os.PathLike):
        image_dirs = [image_dirs]
    folders = [base, *(Path(d).expanduser() for d in image_dirs or ()), _DEMO_IMAGES]
    resolved = []
    for folder in folders:
        try:
            resolved.append(folder.resolve())
        except (OSError, RuntimeError):
            continue
    return ImageRoots(base, tuple(resolved))


_DEMO_IMAGES = Path(__file__).resolve().parent / "demo_images"


def _confined(text: str, column: str, where: str, roots: ImageRoots) -> Path:
    """The file a row's image path names, refused when it is outside the allowed folders."""
    cell = f"{where}, column {column!r}: image file {_shown(text)}"
    if text.startswith("~"):
        raise DataError(
            f"{cell} starts with '~': paths in data are not expanded; give it relative to "
            f"the data's folder {roots.base}"
        )
    given = Path(text)
    try:
        real = (given if given.is_absolute() else roots.base / given).resolve()
    except (OSError, RuntimeError, ValueError):
        raise DataError(f"{cell} cannot be read (not a usable path)") from None
    if not any(real.is_relative_to(folder) for folder in roots.folders):
        raise DataError(
            f"{cell} is outside the data's folder {roots.base} and the allowed image "
            "folders; pass image_dirs=[...] (--allow-images DIR on the command line) to "
            "read images from elsewhere"
        )
    return real


def _shown(text: str) -> str:
    return repr(text if len(text) <= 200 else text[:100] + "…" + text[-60:])


def _media(
    value: Any, column: str, where: str, check_files: bool, roots: ImageRoots | None = None
) -> list[Media]:
    if roots is None:
        roots = image_roots(None)
    if _missing(value):
        return []
    if isinstance(value, list | tuple):
        return [m for v in value for m in _media(v, column, where, check_files, roots)]
    if isinstance(value, Mapping):
        return _media_from_contents(value, column, where, check_files, roots)
    if not isinstance(value, str):
        raise DataError(
            f"{where}, column {column!r}: an image must be text, got {type(value).__name__}"
        )
    text = value.strip()
    if not text:
        return []
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"{where}, column {column!r}: looks like JSON but does not parse ({exc.msg})"
            ) from None
        return _media_from_contents(parsed, column, where, check_files, roots)
    media = Media(source=text, mime_type=_guess_mime(text), column=column)
    if media.kind == "file":
        path = _confined(text, column, where, roots)
        try:
            found = path.is_file()
        except OSError:
            found = False
        if check_files and not found:
            raise DataError(
                f"{where}, column {column!r}: image file {_shown(text)} cannot be read "
                "(no such file)"
            )
        media = Media(source=str(path), mime_type=media.mime_type, column=column)
    if media.kind == "data" and "," not in text:
        raise DataError(f"{where}, column {column!r}: malformed data URI")
    return [media]


def _media_from_contents(
    value: Mapping[str, Any], column: str, where: str, check_files: bool, roots: ImageRoots
) -> list[Media]:
    """The Vertex dataset form: {"contents": [{"parts": [{"file_data": {...}}]}]}."""
    out: list[Media] = []
    contents = value.get("contents")
    if not isinstance(contents, list):
        raise DataError(f"{where}, column {column!r}: JSON media needs a 'contents' list")
    for content in contents:
        for part in (content or {}).get("parts", []) if isinstance(content, Mapping) else []:
            data = part.get("file_data") if isinstance(part, Mapping) else None
            if isinstance(data, Mapping) and data.get("file_uri"):
                for m in _media(str(data["file_uri"]), column, where, check_files, roots):
                    out.append(Media(m.source, data.get("mime_type") or m.mime_type, column))
            inline = part.get("inline_data") if isinstance(part, Mapping) else None
            if isinstance(inline, Mapping) and inline.get("data"):
                mime = inline.get("mime_type") or "application/octet-stream"
                out.append(Media(f"data:{mime};base64,{inline['data']}", mime, column))
    if not out:
        raise DataError(f"{where}, column {column!r}: no file_data found in the JSON media")
    return out


def _guess_mime(source: str) -> str | None:
    match = _DATA_URI.match(source)
    if match:
        return match.group(1)
    guessed, _ = mimetypes.guess_type(source.split("?", 1)[0])
    return guessed


def rubric_cell(value: Any, where: str, column: str) -> Rubric | None:
    """A rubric cell (Rubric, dict, list of questions, JSON or YAML text) as a Rubric; None
    when empty. ``where`` ("row 3") and ``column`` name the cell in the error."""
    if _missing(value):
        return None
    if isinstance(value, Rubric):
        return value
    try:
        if isinstance(value, Mapping):
            return Rubric.from_dict(value)
        if isinstance(value, list | tuple):
            return Rubric.checklist([str(v) if not isinstance(v, Mapping) else v for v in value])
        if isinstance(value, str) and value.strip():
            text = value.strip()
            if text.startswith("{"):
                return Rubric.from_json(text)
            if text.startswith("["):
                return Rubric.checklist(json.loads(text))
            return Rubric.from_yaml_text(text)  # a cell is text, never a path
    except (ValueError, TypeError) as exc:
        # the cell is someone else's text: say what is wrong without writing it out again
        raise DataError(
            f"{where}, column {column!r}: not a valid rubric: {error_text(exc)}"
        ) from None
    return None


# -- conversations -------------------------------------------------------------------------------

#: the roles a message may have (OpenAI's chat roles)
ROLES = ("system", "developer", "user", "assistant", "tool")


def conversation_cell(value: Any, where: str, column: str) -> list[dict[str, Any]] | None:
    """A conversation cell as messages ``{"role", "content", "tool_calls"}`` (plus ``name`` /
    ``tool_call_id`` when given); None when empty.

    Accepts a list of OpenAI-style messages, ``{"messages": [...]}``, or the JSON text of either
    (a CSV or JSONL cell). Content may be text or a list of parts (text parts are joined, other
    parts shown as ``[image]`` etc.); a tool call's arguments are kept as text. The text is the
    participants' and is never read as anything but text.
    """
    if _missing(value):
        return None
    cell = f"{where}, column {column!r}"
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"{cell}: a conversation must be a list of messages or its JSON text "
                f"(the text does not parse: {exc.msg} at character {exc.pos})"
            ) from None
    if isinstance(value, Mapping) and "messages" in value:
        value = value["messages"]
    if isinstance(value, np.ndarray):  # parquet hands lists back as arrays
        value = value.tolist()
    if not isinstance(value, list | tuple):
        raise DataError(
            f"{cell}: a conversation must be a list of messages, got {type(value).__name__}"
        )
    if not value:
        raise DataError(f"{cell}: the conversation has no messages")
    return [_message(m, f"{cell}, message {i + 1}") for i, m in enumerate(value)]


def _message(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise DataError(f"{where}: a message must be a dict with 'role' and 'content'")
    role = raw.get("role")
    if role not in ROLES:
        shown = "no 'role'" if role is None else f"role {_shown(str(role))}"
        raise DataError(f"{where}: {shown}; a role is one of {', '.join(ROLES)}")
    content = _message_text(raw.get("content"), where)
    calls = raw.get("tool_calls")
    if isinstance(calls, np.ndarray):
        calls = calls.tolist()
    if calls is None or (isinstance(calls, float) and math.isnan(calls)):
        calls = []
    if not isinstance(calls, list | tuple):
        raise DataError(f"{where}: 'tool_calls' must be a list")
    if calls and role != "assistant":
        raise DataError(f"{where}: only an assistant message makes tool calls (this is {role})")
    tool_calls = [_tool_call(c, f"{where}, tool call {j + 1}") for j, c in enumerate(calls)]
    if content is None and not tool_calls:
        raise DataError(f"{where}: the message has no 'content'")
    out: dict[str, Any] = {"role": role, "content": content or "", "tool_calls": tool_calls}
    for key in ("name", "tool_call_id"):
        if isinstance(raw.get(key), str) and raw[key]:
            out[key] = raw[key]
    return out


def _message_text(content: Any, where: str) -> str | None:
    if _missing(content):
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, np.ndarray):
        content = content.tolist()
    if isinstance(content, list | tuple):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, Mapping) and isinstance(part.get("type"), str):
                parts.append(f"[{part['type'].replace('_url', '')}]")
            else:
                raise DataError(f"{where}: a content part must be text or a typed part")
        return "\n".join(parts)
    raise DataError(f"{where}: 'content' must be text, got {type(content).__name__}")


def _tool_call(raw: Any, where: str) -> dict[str, Any]:
    """``{"name", "arguments"}`` from OpenAI's ``{"function": {"name", "arguments"}}`` form (or
    a flat ``{"name", "arguments"}``); arguments as text, as the model wrote them."""
    if not isinstance(raw, Mapping):
        raise DataError(f"{where}: a tool call must be a dict")
    fn = raw.get("function", raw)
    name = fn.get("name") if isinstance(fn, Mapping) else None
    if not isinstance(name, str) or not name:
        raise DataError(f"{where}: a tool call needs a function 'name'")
    args = fn.get("arguments", "")
    if not isinstance(args, str):
        args = json.dumps(args, ensure_ascii=False, default=str)
    out = {"name": name, "arguments": args}
    if isinstance(raw.get("id"), str):
        out["id"] = raw["id"]
    return out


def _defaults_from(messages: Sequence[Mapping[str, Any]], values: dict[str, str | None]) -> None:
    """No prompt or response column: the first user message and the last assistant one."""
    if values.get("prompt") is None:
        values["prompt"] = next((m["content"] for m in messages if m["role"] == "user"), "")
    if values.get("response") is None:
        said = [m for m in messages if m["role"] == "assistant"]
        values["response"] = said[-1]["content"] if said else ""


def transcript(messages: Sequence[Mapping[str, Any]]) -> str:
    """The conversation as a fixed block of text for a judge prompt.

    Each message starts with a header line at the margin (``[message 3] assistant (turn 2)``);
    every line of its text starts with ``| ``, and each tool call is one line of JSON, so
    nothing a participant wrote can start a line of its own: no message text can pose as
    another message, a role, or the end of the block.
    """
    lines: list[str] = []
    turn = 0
    for i, m in enumerate(messages, start=1):
        role = m["role"]
        head = f"[message {i}] {role}"
        if role == "assistant":
            turn += 1
            head += f" (turn {turn})"
        if role == "tool" and m.get("tool_call_id"):
            head += f" (result for call {json.dumps(m['tool_call_id'], ensure_ascii=False)})"
        lines.append(head)
        text = m.get("content") or ""
        if text or not m.get("tool_calls"):
            lines += ["| " + line for line in text.splitlines() or [""]]
        for call in m.get("tool_calls") or ():
            shown = {"name": call["name"], "arguments": call["arguments"]}
            lines.append("tool call: " + json.dumps(shown, ensure_ascii=False))
    return "\n".join(lines)
