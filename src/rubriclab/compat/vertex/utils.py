"""``utils`` of the Vertex surface: ``load_dataset``, and the parsers that turn judge text
into Vertex's result dicts.

Same names, arguments and result keys as Vertex's, read with :mod:`.formats` (which
is tolerant of the ways judges drift from the format). One deliberate difference: where Vertex
returns a score of 0 (or an empty rubric) for text it cannot read, these return ``score: None``
(``questions: None``) and say why under ``"error"``, so an unreadable answer is never counted as
a failing response.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pandas as pd

from ...data import TABLE_SUFFIXES, DataError, read_table, read_table_file
from ...parse import ParseError
from ...rubric import Rubric
from .formats import (
    RATINGS,
    PairwiseRubricResult,
    PointwiseRubricResult,
    parse_pairwise,
    parse_pointwise,
    parse_sxs_rating,
)
from .formats import parse_rubrics as _parse_rubric_list

__all__ = [
    "CHOICE_SENTENCES",
    "format_rubrics",
    "load_dataset",
    "parse_pairwise_rubric_result",
    "parse_pointwise_rubric_result",
    "parse_rubrics",
    "read_verdict_pairs",
]


def load_dataset(source: pd.DataFrame | Mapping[str, Any] | str | Path) -> pd.DataFrame:
    """vertexai's ``utils.load_dataset``: a DataFrame (copied), a dict of columns, or a
    ``.jsonl`` / ``.csv`` / ``.parquet`` / ``.json`` file, local or at any fsspec URL
    (``gs://`` with gcsfs installed, ``s3://`` with s3fs, ``memory://`` ...). A missing
    file-system package is an ImportError naming it; ``bq://`` tables are refused
    (NotImplementedError saying how to export one)."""
    if isinstance(source, pd.DataFrame):
        return source.copy()
    if isinstance(source, Mapping):
        return pd.DataFrame(dict(source))
    if isinstance(source, str | Path):
        text = str(source)
        if text.startswith("bq://"):
            raise NotImplementedError(
                f"load_dataset({text!r}): rubriclab does not read BigQuery; export the table "
                "to a file (e.g. `bq extract --destination_format NEWLINE_DELIMITED_JSON "
                "...`, or pandas-gbq's read_gbq) and pass that file or DataFrame"
            )
        remote = _URL.match(text) if isinstance(source, str) else None
        name = text.split("?", 1)[0] if remote else text.removeprefix("file://")
        suffix = PurePosixPath(name).suffix.lower()
        if suffix not in TABLE_SUFFIXES:
            raise ValueError(
                f"Unsupported file type: {suffix.lstrip('.') or '(none)'} from {text}. "
                "Give a .jsonl, .csv, .parquet or .json file"
            )
        if remote and remote.group(1).lower() != "file":
            return _load_remote(text, remote.group(1).lower(), suffix)
        return read_table(Path(name).expanduser())
    raise TypeError(
        "Unsupported dataset type: load_dataset takes a pandas DataFrame, a dict of columns "
        f"or a .jsonl/.csv/.parquet/.json path or URL, not a {type(source).__name__}"
    )


_URL = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.IGNORECASE)


def _load_remote(url: str, scheme: str, suffix: str) -> pd.DataFrame:
    """A table at an fsspec URL; a missing package or file is a one-line error."""
    try:
        import fsspec
    except ImportError:
        raise ImportError(
            f"load_dataset({url!r}): reading {scheme}:// needs fsspec: "
            "pip install 'rubriclab[remote]' (or pip install fsspec)"
        ) from None
    try:
        fsspec.get_filesystem_class(scheme)
    except ImportError:  # fsspec knows the store; its package is not installed
        from fsspec.registry import known_implementations

        known = known_implementations.get(scheme, {})
        package = str(known.get("class", "")).split(".", 1)[0] or f"the package for {scheme}://"
        raise ImportError(
            f"load_dataset({url!r}): reading {scheme}:// needs {package}: pip install {package}"
        ) from None
    except ValueError:
        raise ValueError(
            f"load_dataset({url!r}): {scheme}:// is not a file system fsspec knows; give a "
            "local path or a URL such as gs://bucket/data.jsonl"
        ) from None
    try:
        with fsspec.open(url, "rb") as handle:
            return read_table_file(handle, suffix)
    except FileNotFoundError:
        raise DataError(f"data file {url} does not exist") from None
    except (OSError, RuntimeError) as exc:  # permissions, network, credentials
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise DataError(f"data file {url} cannot be read ({reason})") from None


#: candidate-side score on the 5-point scale -> the sentence Vertex puts in ``pairwise_choice``
CHOICE_SENTENCES: dict[float, str] = {
    1.0: "Candidate response is better than the baseline response.",
    0.5: "Candidate response is slightly better than the baseline response.",
    0.0: "Both responses are equally good.",
    -0.5: "Baseline response is slightly better than the candidate response.",
    -1.0: "Baseline response is better than the candidate response.",
}


def parse_rubrics(rubric_generation_response: str) -> dict[str, Any]:
    """``{"questions": [...], **other keys}`` from a rubric-generation reply.

    Reads fenced or bare JSON, prose around it and near-JSON such as trailing commas. With
    several fences, the last one holding questions wins (prompts ask judges to revise their
    answer, and the final draft comes last). Unreadable text gives
    ``{"questions": None, "error": "..."}`` (Vertex: ``{"questions": ""}``).
    """
    if not isinstance(rubric_generation_response, str):
        raise TypeError("parse_rubrics takes the judge's reply text (a str)")
    drafts = []
    for block in _FENCED.findall(rubric_generation_response):
        try:
            drafts.append(_parse_rubric_list(block))
        except ParseError:
            continue
    try:
        found = drafts[-1] if drafts else _parse_rubric_list(rubric_generation_response)
    except ParseError as exc:
        return {"questions": None, "error": f"unreadable rubric: {exc.reason}"}
    return {**found.extra, "questions": list(found.questions)}


_FENCED = re.compile(r"```[\w-]*[ \t]*\n(.*?)```", re.S)


def _key(question: str, position: int) -> str:
    text = re.sub(r"\s+", " ", question).strip().rstrip("?.:").strip().lower()
    return text or f"#{position + 1}"


@dataclass
class _Tally:
    """Verdict votes per question across samples, in first-seen order."""

    questions: dict[str, str]
    yes: dict[str, int]
    no: dict[str, int]

    @classmethod
    def of(cls, results: Iterable[PointwiseRubricResult]) -> _Tally:
        tally = cls({}, {}, {})
        for result in results:
            for pos, v in enumerate(result.verdicts):
                name = v.question or _step_text(v.reasoning) or f"question {pos + 1}"
                key = _key(name, pos)
                tally.questions.setdefault(key, name)
                store = tally.yes if v.verdict else tally.no
                store[key] = store.get(key, 0) + 1
        return tally

    def majority(self) -> dict[str, bool]:
        """YES only with more YES than NO votes: a tie counts as NO (as in Vertex)."""
        return {q: self.yes.get(k, 0) > self.no.get(k, 0) for k, q in self.questions.items()}


_STEP = re.compile(r"^\W*step\s*\d+\s*[:.)-]\s*", re.IGNORECASE)


def _step_text(reasoning: str) -> str:
    """A block with no ``Question:`` line is named by its first line, ``STEP 1: ...`` less
    the step label (as vertexai names it)."""
    for line in reasoning.splitlines():
        text = _STEP.sub("", line).strip(" \t*_#>")
        if text:
            return text
    return ""


def _pairs_text(pairs: Mapping[str, bool]) -> str:
    return "\n".join(f"{q}: {v}" for q, v in pairs.items())


def _read_all(results: Sequence[str], read: Any, what: str) -> tuple[list[Any], list[str]]:
    if isinstance(results, str):
        raise TypeError(f"{what} takes the list of raw judge outputs (one per sample), not a str")
    parsed: list[Any] = []
    errors: list[str] = []
    for n, text in enumerate(results, 1):
        try:
            parsed.append(read(text))
        except ParseError as exc:
            errors.append(f"sample {n}: {exc.reason}")
    return parsed, errors


def parse_pointwise_rubric_result(results: Sequence[str]) -> dict[str, Any]:
    """Score and ``question: verdict`` pairs from pointwise critiques, one text per sample.

    Each question's verdict is the majority across the samples that could be read (a tie is
    NO); the score is the share of YES. Keys: ``score``, ``rubric_verdict_pairs``,
    ``raw_outputs``, ``error`` (None unless no sample could be read).
    """
    parsed, errors = _read_all(results, parse_pointwise, "parse_pointwise_rubric_result")
    out: dict[str, Any] = {"score": None, "rubric_verdict_pairs": None}
    if not parsed:
        reason = "; ".join(errors) if errors else "no judge output"
        out.update(raw_outputs=list(results), error=f"unreadable critique: {reason}")
        return out
    pairs = _Tally.of(parsed).majority()
    out["score"] = sum(pairs.values()) / len(pairs)
    out["rubric_verdict_pairs"] = _pairs_text(pairs)
    out.update(raw_outputs=list(results), error=None)
    return out


def _snap(value: float) -> float:
    """Round toward zero onto the 5-point grid (a split vote never grows stronger)."""
    steps = min(int(abs(value) * 2 + 1e-9), 2)
    if steps == 0:
        return 0.0
    return (1 if value > 0 else -1) * steps / 2


@dataclass(frozen=True)
class _RatingOnly:
    """A pairwise answer whose SxS rating reads but whose verdict sections do not."""

    rating: str
    reason: str


def _read_pairwise(text: str) -> PairwiseRubricResult | _RatingOnly:
    """The full answer, or (as vertexai, which needs only ``[[SxS Rating: ...]]``) its rating."""
    try:
        return parse_pairwise(text)
    except ParseError as exc:
        try:
            rating = parse_sxs_rating(text)
        except ParseError:
            raise exc from None
        return _RatingOnly(rating, exc.reason)


def parse_pairwise_rubric_result(predictions: Sequence[str]) -> dict[str, Any]:
    """Pairwise choice, score and both sides' verdict pairs, one text per sample.

    Response A is the baseline and B the candidate. Across samples the most frequent SxS
    rating wins; when ratings tie, their mean rounded toward zero decides (B>A and A>B give a
    tie). An answer whose rating reads but whose verdict sections do not still counts for the
    score, as in vertexai (its verdict pairs are then None). Keys: ``pairwise_choice``
    (Vertex's sentences), ``score`` (1.0 ... -1.0, candidate's side),
    ``baseline_rubric_verdict_pairs``, ``candidate_rubric_verdict_pairs``, ``raw_outputs``,
    ``error``.
    """
    parsed, errors = _read_all(predictions, _read_pairwise, "parse_pairwise_rubric_result")
    out: dict[str, Any] = {
        "pairwise_choice": None,
        "score": None,
        "baseline_rubric_verdict_pairs": None,
        "candidate_rubric_verdict_pairs": None,
    }
    if not parsed:
        reason = "; ".join(errors) if errors else "no judge output"
        out.update(raw_outputs=list(predictions), error=f"unreadable critique: {reason}")
        return out
    counts: dict[str, int] = {}
    for p in parsed:
        counts[p.rating] = counts.get(p.rating, 0) + 1
    top = max(counts.values())
    leaders = [RATINGS[r] for r, c in counts.items() if c == top]
    score = _snap(sum(leaders) / len(leaders))
    out["score"] = score
    out["pairwise_choice"] = CHOICE_SENTENCES[score]
    full = [p for p in parsed if isinstance(p, PairwiseRubricResult)]
    if full:
        out["baseline_rubric_verdict_pairs"] = _pairs_text(_Tally.of(p.a for p in full).majority())
        out["candidate_rubric_verdict_pairs"] = _pairs_text(_Tally.of(p.b for p in full).majority())
    out.update(raw_outputs=list(predictions), error=None)
    return out


# -- helpers the Vertex layer and users share ------------------------------------------------------


def format_rubrics(questions: Any) -> str:
    """How a ``rubrics`` cell fills ``{rubrics}``: one numbered question per line.

    A list (or our :class:`~rubriclab.Rubric`) is numbered; text is used as written, so a
    hand-edited rubric string goes to the judge unchanged.
    """
    if isinstance(questions, Rubric):
        questions = [c.question for c in questions.criteria]
    if isinstance(questions, str):
        return questions
    if isinstance(questions, Iterable):
        items = [str(q).strip() for q in questions if str(q).strip()]
        return "\n".join(f"{n}. {q}" for n, q in enumerate(items, 1))
    raise TypeError(f"rubrics must be a list of questions or text, got {type(questions).__name__}")


_PAIR_LINE = re.compile(r"^(.*\S)\s*:\s*(true|false|yes|no)\s*$", re.IGNORECASE)


def read_verdict_pairs(value: Any) -> list[tuple[str, bool]]:
    """``[(question, verdict)]`` from Vertex's ``"question: True"`` lines or a dict; else []."""
    if isinstance(value, Mapping):
        return [(str(q), bool(v)) for q, v in value.items()]
    if not isinstance(value, str):
        return []
    pairs = []
    for line in value.splitlines():
        match = _PAIR_LINE.match(line.strip())
        if match:
            pairs.append((match.group(1), match.group(2).lower() in ("true", "yes")))
    return pairs
