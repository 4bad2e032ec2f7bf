"""Rubric generation: a judge writes a checklist per case, which people then revise.

Generated questions are de-duplicated and capped; extra fields the generator returns (an image
description) become columns; the raw output is kept, and a case that already has a rubric is
never regenerated, so a revised rubric survives re-running the notebook.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import pandas as pd

from . import schemas
from .ask import Ask, ask_all, user_messages
from .data import Case, to_cases, to_frame
from .judges import get_judge
from .judges.base import CallTally
from .judges.media import MediaError
from .judges.sync import run_sync
from .parse import ParseError
from .rubric import Criterion, Rubric
from .templates import TemplateError, load_builtin

if TYPE_CHECKING:
    from .judges import Judge


class WithGenerator(Protocol):
    """A metric that writes its rubrics with a generator (a rubric metric)."""

    @property
    def name(self) -> str: ...
    @property
    def generator(self) -> RubricGenerator | None: ...
    @property
    def judge(self) -> Judge | str | None: ...


__all__ = [
    "Generated",
    "RubricGenerator",
    "agenerate_rubrics",
    "generate_for_cases",
    "generate_rubrics",
]


@dataclass(frozen=True)
class RubricGenerator:
    """How a judge writes a checklist for one prompt: what to focus on, and how many items."""

    name: str
    focus_name: str
    focus: str
    max_items: int = 12
    describe_media: bool = False
    template: str = "generate_checklist"

    def __post_init__(self) -> None:
        if not 1 <= self.max_items <= 100:
            raise ValueError(f"RubricGenerator {self.name!r}: max_items must be 1-100")


@dataclass
class Generated:
    """One case's generation: the rubric (or the error), extra fields and the raw output."""

    rubric: Rubric | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    raw_output: str | None = None
    error: str | None = None
    usage: CallTally = field(default_factory=CallTally)


def _norm(question: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", question.lower()).strip()


def rubric_from_answer(data: Any, generator: RubricGenerator) -> tuple[Rubric, dict[str, Any]]:
    """Build a checklist from the generator's JSON: dedupe, cap, keep extra keys."""
    if isinstance(data, list):
        data = {"questions": data}
    if not isinstance(data, Mapping):
        raise ParseError("the answer is not a JSON object with 'questions'", raw=str(data))
    items = data.get("questions", data.get("rubrics"))
    if not isinstance(items, list) or not items:
        raise ParseError("no 'questions' list in the answer", raw=str(data))
    seen: set[str] = set()
    criteria: list[Criterion] = []
    for item in items:
        spec = item if isinstance(item, Mapping) else {"question": item}
        question = str(spec.get("question") or spec.get("text") or "").strip()
        key = _norm(question)
        if not key or key in seen:
            continue
        seen.add(key)
        category = spec.get("category")
        criteria.append(
            Criterion.yes_no(
                question,
                name=f"q{len(criteria) + 1}",
                critical=bool(spec.get("critical", False)),
                category=str(category) if category else None,
            )
        )
        if len(criteria) >= generator.max_items:
            break
    if not criteria:
        raise ParseError("the answer has no usable questions", raw=str(data))
    extras = {k: v for k, v in data.items() if k not in ("questions", "rubrics")}
    return Rubric(criteria=criteria, name=generator.name), extras


async def generate_for_cases(
    cases: Sequence[Case],
    generator: RubricGenerator,
    judge: Judge,
    *,
    reask: int = 1,
    max_prompt_chars: int = 100_000,
) -> list[Generated]:
    """Generate a rubric for every case that has none (cases with one are returned as they are)."""
    out: list[Generated] = [Generated() for _ in cases]
    jobs: list[Ask | None] = [None] * len(cases)
    formats = {
        flag: schemas.response_format(
            f"{generator.name}_rubric", schemas.generation_schema(generator.max_items, flag)
        )
        for flag in (False, True)
    }
    template = load_builtin(generator.template)
    for i, case in enumerate(cases):
        if case.rubric is not None:
            out[i].rubric = case.rubric
            continue
        if case.error:  # e.g. no prompt: nothing to write a rubric for
            out[i].error = case.error
            continue
        variables = case.variables()
        describe = generator.describe_media and bool(case.media)
        variables.update(
            focus=generator.focus,
            focus_name=generator.focus_name,
            max_items=generator.max_items,
            describe_media=describe,
        )
        try:
            text = template.render(variables, max_prompt_chars=max_prompt_chars)
        except TemplateError as exc:
            out[i].error = str(exc)
            continue

        def read(raw: str) -> tuple[Rubric, dict[str, Any]]:
            from .parse import extract_json

            return rubric_from_answer(extract_json(raw, expect=dict), generator)

        try:
            messages = user_messages(text, case)
        except MediaError as exc:  # an unreadable image fails this row, not the run
            out[i].error = str(exc)
            continue
        jobs[i] = Ask(messages, formats[describe], 0, read)
    await ask_all(
        [j for j in jobs if j is not None], judge, reask, desc=f"{generator.name}: rubrics"
    )
    for i, job in enumerate(jobs):
        if job is None:
            continue
        g = out[i]
        g.raw_output = job.raw
        for r in job.replies:
            g.usage.add(r)
        if job.error is None and job.parsed is not None:
            g.rubric, g.extras = job.parsed
        else:
            g.error = job.error
    return out


async def agenerate_rubrics(
    data: Any,
    metric: WithGenerator | RubricGenerator,
    *,
    judge: Judge | str | None = None,
    mapping: Mapping[str, str] | None = None,
    column: str = "rubric",
    image_dirs: Sequence[str | os.PathLike[str]] | None = None,
) -> pd.DataFrame:
    """Async form of :func:`generate_rubrics`."""
    generator = metric if isinstance(metric, RubricGenerator) else metric.generator
    if generator is None:
        raise ValueError(f"metric {metric.name!r} has no rubric generator")
    own = None if isinstance(metric, RubricGenerator) else metric.judge
    judge_obj = get_judge(judge if judge is not None else own)
    frame = to_frame(data).copy()
    cases = to_cases(
        frame,
        mapping={**(mapping or {}), "rubric": column} if column in frame else mapping,
        need_response=False,
        image_dirs=image_dirs,  # local images: the data's folder and these only
        data_dir=os.path.dirname(os.fspath(data)) or "."
        if isinstance(data, str | os.PathLike)
        else None,
    )
    results = await generate_for_cases(cases, generator, judge_obj)
    frame[column] = pd.Series([g.rubric for g in results], index=frame.index, dtype=object)
    extra_keys = sorted({k for g in results for k in g.extras})
    for key in extra_keys:
        frame[key] = [g.extras.get(key) for g in results]
    frame[f"{column}_raw_output"] = [g.raw_output for g in results]
    frame[f"{column}_error"] = [g.error for g in results]
    return frame


def generate_rubrics(
    data: Any,
    metric: WithGenerator | RubricGenerator,
    *,
    judge: Judge | str | None = None,
    mapping: Mapping[str, str] | None = None,
    column: str = "rubric",
    image_dirs: Sequence[str | os.PathLike[str]] | None = None,
) -> pd.DataFrame:
    """Return a copy of ``data`` with a ``rubric`` column holding a :class:`Rubric` per case.

    Rows that already have a rubric keep it. Extra fields the generator returns (e.g.
    ``image_description``) become columns; ``rubric_raw_output`` and ``rubric_error`` keep what
    the judge said, so a failed row can be read and fixed by hand. Local images are read from
    the data file's folder (the working folder for data in memory) and ``image_dirs`` only.
    """
    return run_sync(
        agenerate_rubrics(
            data, metric, judge=judge, mapping=mapping, column=column, image_dirs=image_dirs
        )
    )
