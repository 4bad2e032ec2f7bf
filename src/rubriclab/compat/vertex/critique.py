"""Running Vertex-style metrics on our engine: render ``{placeholders}``, call, parse, tabulate.

Every call goes through a :class:`~rubriclab.Judge` (so retries, cache and the mock apply), a
row's images travel as content parts, and whatever fails (a call, a parser, a missing rubric)
is recorded on that row with the judge's raw text; no row is dropped and none scores 0 by
default. Columns follow both contracts: Vertex's (``{metric}/rubric_verdict_pairs`` ...) and
ours (``{metric}/criteria``, ``{metric}/error`` ...) so our views work on the result.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from ...data import DataError, Media, to_cases
from ...judges import (
    CallError,
    CallTally,
    Judge,
    MediaError,
    Reply,
    Request,
    get_judge,
    image_part,
)
from ...judges.specs import PROVIDERS
from ...result import RunStats
from ...templates import TemplateError, format_braces
from . import utils
from .classic import CHOICES
from .metrics import AutoraterConfig, PairwiseMetric, RubricBasedMetric

if TYPE_CHECKING:
    from .metrics import _CritiqueMetric

__all__ = [
    "RUBRICS",
    "CallPolicy",
    "Critiqued",
    "add_rubrics",
    "critique",
    "model_for",
    "pick_judge",
    "stats_for",
    "with_model",
]

RUBRICS = "rubrics"
GEN_ERROR = "rubric_generation_error"
GEN_RAW = "rubric_generation_raw_output"


# -- judges -------------------------------------------------------------------------------------


def pick_judge(*candidates: Judge | str | None) -> Judge:
    """The first judge given (a Judge, a spec, or a bare model name such as Vertex's
    ``"gemini-2.5-pro"``, asked on the next judge's endpoint), else the session judge /
    ``RUBRICLAB_JUDGE``."""
    for i, candidate in enumerate(candidates):
        if candidate is None:
            continue
        if isinstance(candidate, str) and candidate.strip() and not _is_spec(candidate.strip()):
            return with_model(pick_judge(*candidates[i + 1 :]), candidate.strip())
        return get_judge(candidate)
    return get_judge()


def _is_spec(text: str) -> bool:
    head, sep, _ = text.partition(":")
    return (
        text == "mock"
        or text.startswith(("http://", "https://"))
        or (bool(sep) and (head in PROVIDERS or head == "mock"))
    )


def with_model(judge: Judge, model: str) -> Judge:
    """The same endpoint, settings and cache as ``judge``, asking ``model`` instead.

    This is how ``evaluate(model="gemini-2.5-flash")`` works without a Google project: the bare
    model name is sent to the judge's own endpoint (the mock answers as ``mock:<model>``).
    """
    return judge.with_options(model=model)


def model_for(
    model: Judge | str | Callable[[str], Any], default: Judge | None
) -> Judge | Callable[[str], Any]:
    """What writes responses: a Judge, a spec, a bare model name on the judge's endpoint, or a
    Python function of the prompt."""
    if isinstance(model, Judge):
        return model
    if isinstance(model, str):
        name = model.strip()
        if not name:
            raise ValueError("model must be a judge spec, a model name or a function, not ''")
        if _is_spec(name):
            return Judge(name)
        base = default if default is not None else get_judge()
        return with_model(base, name)
    if callable(model):
        return model
    raise TypeError(
        f"model must be a judge spec, a model name, a Judge or a function, "
        f"got {type(model).__name__}"
    )


# -- how calls are sent ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CallPolicy:
    """``EvalTask.evaluate``'s ``evaluation_service_qps`` and ``retry_timeout``, on our judge.

    ``qps``: calls start at most this many per second (vertexai's rate limiter on the
    evaluation service). ``retry_timeout``: seconds one request may take with all its retries;
    past that it is that row's error (vertexai's retry deadline). Neither: the judge's own
    concurrency and retry settings alone.
    """

    qps: float | None = None
    retry_timeout: float | None = None

    def __post_init__(self) -> None:
        if self.qps is not None and not self.qps > 0:
            raise ValueError(f"evaluation_service_qps must be more than 0, got {self.qps}")
        if self.retry_timeout is not None and not self.retry_timeout > 0:
            raise ValueError(f"retry_timeout must be more than 0 seconds, got {self.retry_timeout}")

    async def send(self, judge: Judge, requests: Sequence[Request], desc: str) -> list[Reply]:
        if self.qps is None and self.retry_timeout is None:
            return await judge.amap(requests, desc=desc)
        loop = asyncio.get_running_loop()
        start = loop.time()

        async def one(i: int, request: Request) -> Reply:
            if self.qps is not None:  # pace the starts: request i at start + i / qps
                await asyncio.sleep(max(0.0, start + i / self.qps - loop.time()))
            try:
                (reply,) = await asyncio.wait_for(
                    judge.amap([request], progress=False), self.retry_timeout
                )
            except TimeoutError:
                error = CallError(
                    "timeout", f"no answer within retry_timeout={self.retry_timeout:g}s"
                )
                return Reply(text=None, error=error, model=judge.model, is_mock=judge.is_mock)
            return reply

        return list(await asyncio.gather(*(one(i, r) for i, r in enumerate(requests))))


# -- rows -> prompts ------------------------------------------------------------------------------


def _missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, str) and not value.strip():
        return True
    if isinstance(value, list | tuple) and not value:
        return True
    return value is pd.NA


def _text(value: Any) -> str:
    return "" if _missing(value) else str(value)


def _media_per_row(frame: pd.DataFrame) -> list[list[Media]]:
    """Each row's images (URLs, files, data URIs or Vertex's ``file_data`` JSON)."""
    if "prompt" not in frame.columns:
        return [[] for _ in range(len(frame))]
    cases = to_cases(frame, need_response=False)
    for case in cases:
        if case.error:  # an unreadable image must not become a row judged without it
            raise DataError(f"row {case.id}: {case.error}")
    return [c.media for c in cases]


def _messages(text: str, media: Sequence[Media], system: str | None) -> list[dict[str, Any]]:
    content: str | list[dict[str, Any]] = text
    if media:
        content = [{"type": "text", "text": text}, *(image_part(m.source) for m in media)]
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": content})
    return messages


def _variables(
    row: Mapping[Any, Any], defaults: Mapping[str, str], swap: bool = False
) -> dict[str, str]:
    out = dict(defaults)
    for key, value in row.items():
        if key == RUBRICS:
            if not _missing(value):
                out[key] = utils.format_rubrics(value)
        elif not _missing(value):
            out[str(key)] = str(value)
    if swap:
        out["response"], out["baseline_model_response"] = (
            out.get("baseline_model_response", ""),
            out.get("response", ""),
        )
    return out


# -- rubric generation ----------------------------------------------------------------------------


async def add_rubrics(
    metric: RubricBasedMetric,
    data: pd.DataFrame,
    judge: Judge,
    calls: CallPolicy = CallPolicy(),
) -> tuple[pd.DataFrame, CallTally]:
    """``data`` plus ``rubrics`` (and the parser's extra keys) per row; an existing ``rubrics``
    column means nothing is generated."""
    frame = data.copy()
    usage = CallTally()
    if RUBRICS in frame.columns:
        return frame, usage
    config = metric.generation_config
    media = _media_per_row(frame)
    rows = frame.to_dict(orient="records")
    errors: list[str | None] = [None] * len(rows)
    requests: list[tuple[int, Request]] = []
    for i, row in enumerate(rows):
        try:
            text = format_braces(
                config.prompt_template,
                _variables(row, {}),
                name=f"rubric generation prompt (row {i})",
            )
            messages = _messages(text, media[i], None)
        except (TemplateError, MediaError) as exc:
            errors[i] = str(exc)
            continue
        requests.append((i, Request(messages)))
    replies = await calls.send(
        judge, [r for _, r in requests], desc=f"{metric.metric_name}: rubrics"
    )
    values: dict[str, list[Any]] = {RUBRICS: [None] * len(rows)}
    raws: list[str | None] = [None] * len(rows)
    for (i, _), reply in zip(requests, replies, strict=True):
        usage.add(reply)
        raws[i] = reply.text
        if reply.error is not None:
            errors[i] = f"judge call failed: {reply.error}"
            continue
        try:
            parsed = config.parser(reply.text or "")
        except Exception as exc:  # a user's parser failing is that row's error
            errors[i] = f"parsing_fn raised {type(exc).__name__}: {exc}"
            continue
        extra: dict[str, Any] = {}
        if isinstance(parsed, Mapping):
            extra = dict(parsed)
            questions = extra.pop("questions", None)
            errors[i] = extra.pop("error", None) or None
        else:
            questions = parsed
        for key, value in extra.items():
            values.setdefault(str(key), [None] * len(rows))[i] = value
        if errors[i] is None:
            if _missing(questions) or not isinstance(questions, list | str):
                errors[i] = f"the parser returned no questions (got {questions!r:.80})"
            else:
                values[RUBRICS][i] = questions
    for key, column in values.items():
        frame[key] = pd.Series(column, index=frame.index, dtype=object)
    frame[GEN_ERROR] = pd.Series(errors, index=frame.index, dtype=object)
    frame[GEN_RAW] = pd.Series(raws, index=frame.index, dtype=object)
    return frame, usage


# -- critique -------------------------------------------------------------------------------------


@dataclass
class Critiqued:
    """One metric's new columns, keyed by column name, plus what the calls cost."""

    name: str
    kind: str
    columns: dict[str, list[Any]] = field(default_factory=dict)
    usage: CallTally = field(default_factory=CallTally)


@dataclass
class _Row:
    error: str | None = None
    parsed: list[Mapping[str, Any]] = field(default_factory=list)  # one per order
    raw: list[str] = field(default_factory=list)
    usage: CallTally = field(default_factory=CallTally)


def _needs(metric: _CritiqueMetric, row: Mapping[Any, Any]) -> str | None:
    wanted = set(metric.placeholders)
    if RUBRICS in wanted and _missing(row.get(RUBRICS)):
        why = row.get(GEN_ERROR)
        return "no rubrics for this row" + (f" (generation failed: {why})" if why else "")
    for column in ("response", "baseline_model_response"):
        needed = column in wanted or (
            column == "baseline_model_response" and isinstance(metric, PairwiseMetric)
        )
        if needed and _missing(row.get(column)):
            note = row.get("response_error") if column == "response" else None
            return f"no {column} to judge" + (f": {note}" if note else "")
    return None


def _parse(metric: _CritiqueMetric, texts: list[str]) -> Mapping[str, Any]:
    try:
        parsed = metric.parser(list(texts))
    except Exception as exc:  # a user's parser failing is that row's error
        return {"score": None, "error": f"parsing_fn raised {type(exc).__name__}: {exc}"}
    if not isinstance(parsed, Mapping):
        return {"score": None, "error": f"parsing_fn returned {type(parsed).__name__}, not a dict"}
    score = parsed.get("score")
    if score is not None and (
        isinstance(score, bool) or not isinstance(score, int | float) or math.isnan(score)
    ):
        return {
            **parsed,
            "score": None,
            "error": f"parsing_fn returned a non-numeric score {score!r}",
        }
    return parsed


async def critique(
    metric: _CritiqueMetric,
    frame: pd.DataFrame,
    judge: Judge,
    autorater: AutoraterConfig | None = None,
    calls: CallPolicy = CallPolicy(),
) -> Critiqued:
    """Judge every row of ``frame`` with ``metric`` and return its result columns."""
    config = metric.autorater_config or autorater or AutoraterConfig()
    pairwise = isinstance(metric, PairwiseMetric)
    orders = (False, True) if pairwise and config.flip_enabled else (False,)
    media = _media_per_row(frame)
    rows = frame.to_dict(orient="records")
    state = [_Row() for _ in rows]
    batch: list[tuple[int, int, Request]] = []
    for i, row in enumerate(rows):
        state[i].error = _needs(metric, row)
        if state[i].error:
            continue
        try:
            for order, swap in enumerate(orders):
                text = format_braces(
                    metric.metric_prompt_template,
                    _variables(row, metric.template_defaults, swap=swap),
                    name=f"metric {metric.metric_name!r} template (row {i})",
                )
                messages = _messages(text, media[i], metric.system_instruction)
                for s in range(config.sampling_count):
                    batch.append((i, order, Request(messages, sample=s)))
        except (TemplateError, MediaError) as exc:  # this row's error; the run goes on
            state[i].error = str(exc)
            batch = [b for b in batch if b[0] != i]
    replies = await calls.send(
        judge, [r for _, _, r in batch], desc=f"{metric.metric_name}: critique"
    )
    texts: dict[tuple[int, int], list[str]] = {}
    for (i, order, _), reply in zip(batch, replies, strict=True):
        st = state[i]
        st.usage.add(reply)
        st.raw.append(reply.text or "")
        if reply.error is not None:
            st.error = st.error or f"judge call failed: {reply.error}"
        texts.setdefault((i, order), []).append(reply.text or "")
    for i, st in enumerate(state):
        if st.error is None:
            st.parsed = [_parse(metric, texts[(i, order)]) for order in range(len(orders))]
    out = Critiqued(metric.metric_name, metric.kind)
    for st in state:
        out.usage.merge(st.usage)
    _tabulate(out, metric, state, pairwise)
    return out


_POINTWISE_KEYS = ("score", "rubric_verdict_pairs")
_CLASSIC_CHOICE = {v: k for k, v in CHOICES.items()}
_PAIRWISE_KEYS = (
    "pairwise_choice",
    "score",
    "baseline_rubric_verdict_pairs",
    "candidate_rubric_verdict_pairs",
)


def _criteria(pairs: Any) -> list[dict[str, Any]]:
    return [
        {
            "name": f"q{n}",
            "question": q,
            "level": int(v),
            "label": "YES" if v else "NO",
            "evidence": "",
            "reasoning": "",
        }
        for n, (q, v) in enumerate(utils.read_verdict_pairs(pairs), 1)
    ]


def _combine(first: float | None, second: float | None) -> tuple[float | None, bool | None]:
    """Candidate-side scores of the two orders -> the kept score and whether they agree."""
    if first is None or second is None:
        return None, None
    if first == second or first * second > 0:
        return (first if abs(first) <= abs(second) else second), True
    return 0.0, False


def _tabulate(out: Critiqued, metric: _CritiqueMetric, state: list[_Row], pairwise: bool) -> None:
    m = metric.metric_name
    n = len(state)
    known = _PAIRWISE_KEYS if pairwise else _POINTWISE_KEYS
    cols: dict[str, list[Any]] = {f"{m}/{key}": [None] * n for key in known}

    def put(key: str, i: int, value: Any) -> None:
        cols.setdefault(key, [None] * n)[i] = value

    for i, st in enumerate(state):
        first = st.parsed[0] if st.parsed else {}
        for key, value in first.items():
            if key == "error" or (key == "raw_outputs" and not metric.return_raw_output):
                continue
            put(f"{m}/{key}", i, value)
        if metric.return_raw_output:
            put(f"{m}/raw_outputs", i, list(st.raw))
        errors = [str(p["error"]) for p in st.parsed if p.get("error")]
        error = st.error or ("; ".join(errors) if errors else None)
        score = None if error else first.get("score")
        put(f"{m}/raw_output", i, list(st.raw) if st.raw else None)
        put(f"{m}/rationale", i, first.get("explanation") or "")  # classic metrics explain
        put(f"{m}/passed", i, None)
        if pairwise:
            swapped = st.parsed[1] if len(st.parsed) > 1 else None
            consistent: bool | None = None
            if swapped is not None and score is not None:
                other = swapped.get("score")
                score, consistent = _combine(score, None if other is None else -float(other))
                if score is None:
                    error = "the swapped-order critique has no score"
            cand = _criteria(first.get("candidate_rubric_verdict_pairs"))
            base = _criteria(first.get("baseline_rubric_verdict_pairs"))
            if score is not None and first.get("pairwise_choice") in CHOICES:  # classic
                put(f"{m}/pairwise_choice", i, _CLASSIC_CHOICE[float(score)])
            elif score is not None:
                put(f"{m}/pairwise_choice", i, utils.CHOICE_SENTENCES.get(float(score)))
            put(f"{m}/swap_consistent", i, consistent)
            put(f"{m}/candidate_criteria", i, cand or None)
            put(f"{m}/baseline_criteria", i, base or None)
            put(f"{m}/candidate_score", i, _share(cand))
            put(f"{m}/baseline_score", i, _share(base))
            put(f"{m}/criteria", i, _winners(cand, base))
            verdict = None
            if score is not None:
                verdict = "candidate wins" if score > 0 else "baseline wins" if score < 0 else "tie"
            put(f"{m}/verdict", i, verdict)
        else:
            put(f"{m}/criteria", i, _criteria(first.get("rubric_verdict_pairs")))
            put(f"{m}/verdict", i, None)
        put(f"{m}/score", i, None if score is None else float(score))
        put(f"{m}/error", i, error)
        put(f"{m}/tokens", i, st.usage.tokens)
        put(f"{m}/latency", i, round(st.usage.latency, 4))
        put(f"{m}/attempts", i, st.usage.attempts)
    out.columns = cols


def _share(rows: list[dict[str, Any]]) -> float | None:
    return sum(r["level"] for r in rows) / len(rows) if rows else None


def _winners(cand: list[dict[str, Any]], base: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per question, who met it: the candidate alone, the baseline alone, or a tie."""
    if len(cand) != len(base):
        return []
    rows = []
    for c, b in zip(cand, base, strict=True):
        winner = "tie" if c["level"] == b["level"] else "candidate" if c["level"] else "baseline"
        rows.append(
            {
                "name": c["name"],
                "question": c["question"],
                "winner": winner,
                "candidate": c["label"],
                "baseline": b["label"],
            }
        )
    return rows


def stats_for(stats: RunStats, name: str, usage: CallTally) -> None:
    stats.add(name, usage)
