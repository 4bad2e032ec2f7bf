"""Judge text -> typed results: tolerant while reading, strict in the end.

Judges wrap JSON in fences, add prose, leave trailing commas and write ``True`` for ``true``.
We read all of that (repair is for syntax noise), but anything we cannot read for certain
raises :class:`ParseError` carrying the full raw text, so the failure lands on its row with the
evidence kept: JSON that stops before it is closed (a cut-off answer: its missing tail is never
guessed) and an object that gives one key twice with different values (which one did the
judge mean?). Nothing here ever returns a silent 0 or a guessed verdict.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

import json_repair

__all__ = [
    "IdMismatch",
    "ParseError",
    "extract_json",
    "match_ids",
    "parse_choice",
    "parse_result_score",
    "parse_verdict",
    "require_text",
]

_PREVIEW = 200
_MAX_SCAN_STARTS = 200  # bracket positions tried when looking for JSON inside prose


class ParseError(ValueError):
    """Judge output could not be read. ``raw`` is the full text; ``reason`` says why."""

    def __init__(self, reason: str, raw: str | None) -> None:
        self.reason = reason
        self.raw = raw if isinstance(raw, str) else ("" if raw is None else repr(raw))
        preview = self.raw if len(self.raw) <= _PREVIEW else self.raw[:_PREVIEW] + "…"
        super().__init__(f"{reason} (raw output: {preview!r})")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.reason, self.raw))


def require_text(text: object) -> str:
    """``text`` itself, or a ParseError when the judge gave something other than a str."""
    if not isinstance(text, str):
        raise ParseError(
            f"judge output is not text (got {type(text).__name__})",
            None if text is None else repr(text),
        )
    return text


# --------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------

# An opening fence with an optional language tag, its body, then a closing fence or the end
# of the text (a reply cut off inside its fence still yields its body).
_FENCE_OPEN = re.compile(r"```[ \t]*[A-Za-z0-9_+.-]*[^\n`]*\n")


class _Conflict(ValueError):
    """One JSON object gives the same key twice with different values."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(key)


def _no_conflicts(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: identical repeats merge; a key repeated with another value is an
    ambiguity (``{"q1": "YES", "q1": "NO"}``) that must not be settled by "last one wins"."""
    out = dict(pairs)
    if len(out) == len(pairs):  # no key twice (every answer read, nearly): nothing to check
        return out
    out = {}
    for key, value in pairs:
        if key in out and out[key] != value:
            raise _Conflict(key)
        out[key] = value
    return out


_DECODER = json.JSONDecoder(object_pairs_hook=_no_conflicts)
_Kind = type[dict] | type[list] | None  # type: ignore[type-arg]


def _fences(text: str) -> list[tuple[int, str]]:
    """``(offset of the body, body)`` of each fenced block, in order."""
    if "```" not in text:  # a bare JSON answer: no regex scan
        return []
    out = []
    pos = 0
    while (m := _FENCE_OPEN.search(text, pos)) is not None:
        close = text.find("```", m.end())  # str.find: a lazy regex body costs ~0.1 ms a reply
        out.append((m.end(), text[m.end() : len(text) if close < 0 else close]))
        if close < 0:
            break
        pos = close + 3
    return out


def _kind_ok(value: Any, expect: _Kind) -> bool:
    if expect is None:
        return isinstance(value, (dict, list))
    return isinstance(value, expect)


def _strict(candidate: str) -> Iterator[Any]:
    try:
        yield _DECODER.decode(candidate)
    except _Conflict:
        raise
    except (ValueError, RecursionError):
        return


def _openers(expect: _Kind) -> str:
    if expect is dict:
        return "{"
    if expect is list:
        return "["
    return "{["


def _brackets(text: str) -> Iterator[tuple[int, str, int]]:
    """``(index, bracket, depth before it)`` for each bracket outside strings.

    Strings are tracked only inside brackets, so a quote in the prose around the JSON does
    not hide the brackets after it.
    """
    depth = 0
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch in "{[":
            yield i, ch, depth
            depth += 1
        elif ch in "}]":
            yield i, ch, depth
            depth = max(depth - 1, 0)
        elif ch == '"' and depth > 0:
            in_string = True


_OPENER = re.compile(r"[{\[]")
_SPAN_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\Z)|[{}\[\]]', re.DOTALL)
# how JSON itself goes on after an opening bracket: a later text that starts like this is an
# answer (maybe cut off), not braces in prose like "{a, b}" or "[note]"
_JSON_START = re.compile(r'\{\s*["}]|\[\s*(?:[{\["\]\d-]|true\b|false\b|null\b)')


def _span_end(text: str, start: int) -> int | None:
    """Index just past the bracket that closes the one at ``start`` (string-aware); None
    when it is never closed."""
    depth = 0
    for m in _SPAN_TOKEN.finditer(text, start):
        ch = m.group()[0]
        if ch == '"':
            continue
        depth += 1 if ch in "{[" else -1
        if depth <= 0:
            return m.end()
    return None


_Found = tuple[int, int, Any]  # (start, end, value) of a JSON value in the text


def _scan(
    text: str, known: Mapping[int, tuple[int, Any]]
) -> tuple[list[_Found], list[tuple[int, int | None]]]:
    """JSON values in ``text`` outside any other bracket, in order: the strictly decoded ones,
    and the starts of the others (``end`` None when a bracket never closes: the scan stops).

    ``known`` holds values already decoded (fenced blocks) by their start, so a fenced
    answer is not decoded twice.
    """
    found: list[_Found] = []
    loose: list[tuple[int, int | None]] = []
    pos = 0
    for _ in range(_MAX_SCAN_STARTS):
        m = _OPENER.search(text, pos)
        if m is None:
            break
        start = m.start()
        hit = known.get(start)
        if hit is not None:
            found.append((start, *hit))
            pos = hit[0]
            continue
        try:
            value, pos = _DECODER.raw_decode(text, start)
        except _Conflict:
            raise
        except (ValueError, RecursionError):
            end = _span_end(text, start)
            loose.append((start, end))
            if end is None:
                break
            pos = end
            continue
        found.append((start, pos, value))
    return found, loose


_STRING_OR_COMMA = re.compile(r'"(?:[^"\\]|\\.)*"|,\s*[}\]]', re.DOTALL)


def _drop_trailing_commas(text: str) -> str:
    """Remove commas before a closing bracket, leaving string contents alone."""
    return _STRING_OR_COMMA.sub(
        lambda m: m.group(0) if m.group(0).startswith('"') else m.group(0)[1:], text
    )


def _fix_surrogates(value: Any) -> Any:
    """json-repair leaves escaped surrogate pairs (emoji as \\ud83d\\ude00) split; join them."""
    if isinstance(value, str):
        if any("\ud800" <= ch <= "\udfff" for ch in value):
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return value
    if isinstance(value, list):
        return [_fix_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_fix_surrogates(k): _fix_surrogates(v) for k, v in value.items()}
    return value


def _repaired(candidate: str, expect: _Kind, unclosed: list[str]) -> Iterator[Any]:
    """Near-JSON from a first opening bracket on; only containers come back.

    Trailing commas (the commonest slip, shown in Vertex's own prompt) are removed
    exactly first; anything else goes to json-repair. With no expected kind an object is
    tried before an array: a stray "[note]" in prose must not win over the object. JSON that
    never closes is not repaired (its opener is added to ``unclosed``).
    """
    starts = [i for i in (candidate.find("{"), candidate.find("[")) if i >= 0]
    if starts and not _closes(candidate[min(starts) :]):
        unclosed.append(candidate[min(starts)])  # cut off: the objects inside are not the answer
        return
    for opener in _openers(expect):
        start = candidate.find(opener)
        if start < 0:
            continue
        body = candidate[start:]
        for value in _strict(_drop_trailing_commas(body).strip()):
            if isinstance(value, dict if opener == "{" else list):
                yield value
        for value, _end in _raw_decode_at(_drop_trailing_commas(body)):
            if isinstance(value, dict if opener == "{" else list):
                yield value
        try:
            value = _fix_surrogates(json_repair.loads(body))
        except Exception:  # json-repair is best effort; any failure means "not repairable"
            continue
        # json-repair may turn '{hello' into ['hello']: the repaired value must be the kind
        # of container the text opened with.
        if isinstance(value, dict if opener == "{" else list):
            yield value


def _raw_decode_at(text: str) -> Iterator[tuple[Any, int]]:
    try:
        yield _DECODER.raw_decode(text, 0)
    except _Conflict:
        raise
    except (ValueError, RecursionError):
        return


def _closes(body: str) -> bool:
    """Whether the container opening ``body`` is closed again (string-aware).

    A reply cut off at max_tokens ends inside its JSON; json-repair would close it and keep
    whatever came first, scoring a verdict the judge never finished. Only closed JSON is
    repaired.
    """
    return any(ch in "}]" and depth <= 1 for _, ch, depth in _brackets(body))


def extract_json(text: str, *, expect: _Kind = None) -> Any:
    """The JSON object or array a judge wrote, wherever it put it: its last complete answer.

    1. strict ``json.loads`` of the whole text (a bare JSON answer: nothing else is looked at);
    2. strict decoding of every fenced block (```json, ```JSON, bare ```) and every JSON value
       embedded in prose; the **last** one of the expected kind is the answer, because judges
       that reason first write drafts before their final verdict;
    3. JSON that starts after that answer (``{"`` or ``[{``...) and needs repair is a later
       answer still: it wins when repair reads it, is an error when it cannot be read, and
       an error when it stops before it is closed (a cut-off final answer is never replaced
       by the draft before it);
    4. with no strict value at all, near-JSON repair (``json-repair``: trailing commas, single
       quotes, unquoted keys, Python ``True``/``None``, comments) of the last JSON-looking
       value, then of each fenced block and of the text from its first opening bracket, and
       only when that JSON is closed: a cut-off answer is an error, never completed by
       guesswork.

    A key given twice in one object with different values is an error at every step.

    ``expect`` is ``dict``, ``list`` or ``None`` (either container; an object then beats a
    stray array in the prose). A bare string or number is never accepted from repair, and
    with ``expect=None`` only a whole-text strict parse may return a scalar.
    """
    raw = require_text(text)
    if expect not in (None, dict, list):
        raise TypeError("expect must be dict, list or None")
    try:
        return _extract(raw, expect)
    except _Conflict as exc:
        raise ParseError(
            f"the answer gives {exc.key!r} twice with different values; say it once", raw
        ) from None


def _what(expect: _Kind) -> str:
    if expect is dict:
        return "JSON object"
    return "JSON array" if expect is list else "JSON object or array"


def _extract(raw: str, expect: _Kind) -> Any:
    fences = _fences(raw)
    stripped = raw.strip()
    for value in _strict(stripped):  # the hot path: a bare JSON answer
        if _kind_ok(value, expect) or (expect is None and not fences):
            return value
    in_fences: dict[int, tuple[int, Any]] = {}
    for offset, body in fences:
        for value in _strict(body):
            start = offset + len(body) - len(body.lstrip())
            in_fences[start] = (offset + len(body.rstrip()), value)
    found, loose = _scan(raw, in_fences)
    scanned = {start for start, _, _ in found}
    found += [(s, *hit) for s, hit in in_fences.items() if s not in scanned]
    fits = sorted((f for f in found if _kind_ok(f[2], expect)), key=lambda f: f[0])
    if expect is None and any(isinstance(f[2], dict) for f in fits):
        fits = [f for f in fits if isinstance(f[2], dict)]  # a stray "[1]" is not the answer
    after = fits[-1][1] if fits else 0
    later = [(s, e) for s, e in loose if s >= after and _json_like(raw, s, expect)]
    if fits or len(later) > 1:
        if later:
            return _later_answer(raw, later[-1], expect)
        return fits[-1][2]
    unclosed: list[str] = []
    for candidate in [*(body for _, body in fences), raw]:
        for value in _repaired(candidate, expect, unclosed):
            if _kind_ok(value, expect):
                return value
    what = _what(expect)
    if not stripped:
        raise ParseError(f"expected a {what}, got an empty reply", raw)
    if unclosed:
        raise ParseError(
            f"the {what} stops before it is closed: the answer looks cut off, and a missing "
            "end is never guessed",
            raw,
        )
    raise ParseError(f"no readable {what} found in the judge output", raw)


def _json_like(text: str, start: int, expect: _Kind) -> bool:
    return text[start] in _openers(expect) and _JSON_START.match(text, start) is not None


def _later_answer(raw: str, span: tuple[int, int | None], expect: _Kind) -> Any:
    """The judge's last answer, which needs repair: read it, or say why it cannot be read
    (an earlier draft is never taken for it)."""
    start, end = span
    what = _what(expect)
    if end is None:
        raise ParseError(
            f"the last {what} stops before it is closed: the answer looks cut off, and an "
            "earlier draft is never taken for the final answer",
            raw,
        )
    body = raw[start:end]
    for value in _strict(_drop_trailing_commas(body)):
        if _kind_ok(value, expect):
            return value
    try:
        value = _fix_surrogates(json_repair.loads(body))
    except Exception:  # json-repair is best effort; any failure means "not repairable"
        value = None
    if isinstance(value, dict if body[0] == "{" else list) and _kind_ok(value, expect):
        return value
    raise ParseError(
        f"the last {what} in the answer cannot be read, and an earlier draft is never taken "
        "for the final answer",
        raw,
    )


# --------------------------------------------------------------------------------------
# Verdict lines
# --------------------------------------------------------------------------------------

_YES = {"yes", "y", "true", "pass", "passed", "met", "1"}
_NO = {"no", "n", "false", "fail", "failed", "not met", "unmet", "0"}

# "Verdict: [[YES]]", "**Verdict:** No", "Verdict - yes.", "Final verdict: **NO**".
# The value must not be followed by '|' so an echoed "[[YES|NO]]" is not a verdict.
_VERDICT_LINE = re.compile(
    r"verdict[\s*_]*[:：=\-][\s*_]*(?:\[\[|\[|\()?\s*\**\s*"
    r"(yes|no|true|false|pass|fail|not met|met)\b(?!\s*[|/])",
    re.IGNORECASE,
)
_BRACKETED = re.compile(r"\[\[\s*(yes|no)\s*\]\]", re.IGNORECASE)


def parse_verdict(text: str) -> bool:
    """A yes/no verdict: the last ``Verdict: ...`` line, else the last ``[[YES]]``/``[[NO]]``.

    The last one counts because judges reason first and conclude last; an echoed
    ``[[YES|NO]]`` from the instructions is ignored.
    """
    raw = require_text(text)
    matches = list(_VERDICT_LINE.finditer(raw)) or list(_BRACKETED.finditer(raw))
    if not matches:
        raise ParseError("no verdict found (expected a line like 'Verdict: [[YES]]')", raw)
    word = matches[-1].group(1).lower()
    return word in _YES


_RESULT = re.compile(
    r"\[\s*RESULT\s*\][\s*:=\-]*\(?\s*(-?\d+(?:\.0+)?)\s*\)?(?:\s*/\s*\d+)?", re.IGNORECASE
)


def parse_result_score(text: str, *, scale: tuple[int, int] | None = None) -> int:
    """The integer after the last ``[RESULT]`` marker (``[RESULT] 4``, ``[RESULT]: 4/5``).

    With ``scale=(low, high)`` a score outside it is an error, not a clipped value.
    """
    raw = require_text(text)
    matches = list(_RESULT.finditer(raw))
    if not matches:
        raise ParseError("no '[RESULT] <score>' marker found", raw)
    value = int(float(matches[-1].group(1)))
    if scale is not None and not scale[0] <= value <= scale[1]:
        raise ParseError(f"[RESULT] {value} is outside the scale {scale[0]}-{scale[1]}", raw)
    return value


Choice = Literal["A", "B", "tie"]

_CHOICE_WORD = (
    r"(?:(?:response|answer|output|assistant|model)?\s*(a|b)\b"
    r"|(tie|equal|same|both|neither|none|draw|c)\b)"
)
_CHOICE_LINE = re.compile(
    r"(?:choice|winner|verdict|preference|preferred|better(?: response)?|final answer|answer)"
    r"[\s*_]*[:：=\-][\s*_]*(?:\[\[|\[|\(|\")?\s*\**\s*" + _CHOICE_WORD + r"(?!\s*[|/])",
    re.IGNORECASE,
)
_CHOICE_BRACKETED = re.compile(r"\[\[\s*" + _CHOICE_WORD + r"\s*\]\]", re.IGNORECASE)


def parse_choice(text: str) -> Choice:
    """A pairwise answer: ``"A"``, ``"B"`` or ``"tie"``.

    Reads the last labelled line (``Choice: A``, ``Winner: Response B``, ``Verdict: tie``),
    else the last ``[[A]]``/``[[B]]``/``[[C]]`` (C meaning a tie, as in MT-Bench).
    """
    raw = require_text(text)
    matches = list(_CHOICE_LINE.finditer(raw)) or list(_CHOICE_BRACKETED.finditer(raw))
    if not matches:
        raise ParseError("no pairwise choice found (expected e.g. 'Choice: A' or '[[B]]')", raw)
    letter, tie = matches[-1].group(1), matches[-1].group(2)
    if letter:
        return "A" if letter.lower() == "a" else "B"
    assert tie is not None
    return "tie"


# --------------------------------------------------------------------------------------
# Matching results to rubric ids
# --------------------------------------------------------------------------------------


class IdMismatch(ParseError):
    """Judge results do not line up with the rubric ids; the lists say exactly how."""

    def __init__(
        self,
        raw: str,
        *,
        missing: Sequence[str] = (),
        unknown: Sequence[str] = (),
        duplicates: Sequence[str] = (),
        expected: Sequence[str] = (),
    ) -> None:
        self.missing = list(missing)
        self.unknown = list(unknown)
        self.duplicates = list(duplicates)
        parts = []
        if self.missing:
            parts.append(f"missing ids: {', '.join(self.missing)}")
        if self.unknown:
            parts.append(f"unknown ids: {', '.join(self.unknown)}")
        if self.duplicates:
            parts.append(f"ids given more than once: {', '.join(self.duplicates)}")
        reason = "judge results do not match the rubric ids (" + "; ".join(parts) + ")"
        if expected:
            reason += f"; expected exactly: {', '.join(expected)}"
        super().__init__(reason, raw)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_id_mismatch, (self.raw, self.missing, self.unknown, self.duplicates))


def _rebuild_id_mismatch(
    raw: str, missing: list[str], unknown: list[str], duplicates: list[str]
) -> IdMismatch:
    return IdMismatch(raw, missing=missing, unknown=unknown, duplicates=duplicates)


def _raw_of(value: object, raw: str | None) -> str:
    if raw is not None:
        return raw
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def match_ids(
    results: Mapping[str, Any] | Sequence[Any],
    ids: Sequence[str],
    *,
    id_key: str = "id",
    raw: str | None = None,
) -> dict[str, Any]:
    """Line judge results up with rubric ``ids``: ``{id: result}`` in the order of ``ids``.

    ``results`` is either a mapping keyed by id (``{"q1": {...}, "q2": {...}}``) or a list
    of objects carrying the id under ``id_key`` (``[{"id": "q1", ...}]``). Ids are compared
    as text with surrounding whitespace ignored; question text the judge echoed is never
    used to match. Missing, unknown and repeated ids are all reported in one
    :class:`IdMismatch`.
    """
    raw_text = _raw_of(results, raw)
    wanted = [str(i) for i in ids]
    dup_wanted = [k for k, n in Counter(wanted).items() if n > 1]
    if dup_wanted:
        raise ValueError(f"rubric ids must be unique; repeated: {', '.join(dup_wanted)}")
    pairs: list[tuple[str, Any]] = []
    if isinstance(results, Mapping):
        pairs = [(str(k).strip(), v) for k, v in results.items()]
    elif isinstance(results, Sequence) and not isinstance(results, (str, bytes)):
        for index, item in enumerate(results):
            if not isinstance(item, Mapping) or id_key not in item:
                raise ParseError(
                    f"result #{index + 1} has no {id_key!r} field; each result must name "
                    f"its rubric id",
                    raw_text,
                )
            pairs.append((str(item[id_key]).strip(), item))
    else:
        raise ParseError(
            f"judge results must be an object keyed by id or a list of objects with "
            f"{id_key!r}, got {type(results).__name__}",
            raw_text,
        )
    counts = Counter(key for key, _ in pairs)
    wanted_set = set(wanted)
    duplicates = [k for k, n in counts.items() if n > 1]
    unknown = [k for k in counts if k not in wanted_set]
    missing = [k for k in wanted if k not in counts]
    if duplicates or unknown or missing:
        raise IdMismatch(
            raw_text, missing=missing, unknown=unknown, duplicates=duplicates, expected=wanted
        )
    found = dict(pairs)
    return {key: found[key] for key in wanted}
