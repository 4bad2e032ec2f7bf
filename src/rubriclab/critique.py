"""Critique: render -> call -> parse -> validate -> score, for pointwise and pairwise metrics.

Every failure lands on its row as an :class:`Outcome` with the error and the raw judge text; a
parse failure is asked once more (``metric.reask``) before the row is given up as unscored.
Pairwise runs both orders and keeps a winner only when the two orders agree.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from . import schemas
from .ask import Ask, InvalidAnswer, ask_all, user_messages
from .checks import ParsedJson
from .fewshot import Example, prefix_examples
from .judges.base import CallTally
from .judges.media import MediaError
from .parse import extract_json
from .rubric import CheckError, Criterion, Rubric
from .scoring import Figures, Score, Scorer, coerce_level, score
from .templates import Template, TemplateError, builtin_names, compile_template, load_builtin

if TYPE_CHECKING:
    from .data import Case
    from .judges import Judge, Reply

__all__ = [
    "CHOICE_LABELS",
    "CritiqueOptions",
    "Outcome",
    "critique_pairwise",
    "critique_pointwise",
    "critique_variables",
]

T = TypeVar("T")

#: pairwise score (candidate's side) -> label shown in tables
CHOICE_LABELS: dict[float, str] = {
    1.0: "candidate much better",
    0.5: "candidate better",
    0.0: "tie",
    -0.5: "baseline better",
    -1.0: "baseline much better",
}
_CHOICE_VALUE = dict(zip(schemas.PAIRWISE_CHOICES, (1.0, 0.5, 0.0, -0.5, -1.0), strict=True))


class CritiqueOptions(Protocol):
    """What a critique reads from its metric (a rubric metric has all of these)."""

    @property
    def name(self) -> str: ...
    @property
    def template(self) -> str | None: ...
    @property
    def samples(self) -> int: ...
    @property
    def reask(self) -> int: ...
    @property
    def max_prompt_chars(self) -> int: ...
    @property
    def render_timeout(self) -> float: ...
    @property
    def examples(self) -> Sequence[Example]: ...


@dataclass
class Outcome:
    """One case under one metric: the scored result, or the error with the raw text kept."""

    score: float | None = None
    passed: bool | None = None
    verdict: str | None = None
    criteria: list[dict[str, Any]] = field(default_factory=list)
    rationale: str = ""
    raw_output: str | list[str] | None = None
    error: str | None = None
    usage: CallTally = field(default_factory=CallTally)
    pairwise_choice: str | None = None
    candidate_criteria: list[dict[str, Any]] | None = None
    baseline_criteria: list[dict[str, Any]] | None = None
    swap_consistent: bool | None = None
    candidate_score: float | None = None
    baseline_score: float | None = None

    def account(self, replies: Sequence[Reply]) -> None:
        for reply in replies:
            self.usage.add(reply)


def template_for(name_or_source: str) -> Template:
    """A built-in prompt by name, or a user's template source compiled once (in the sandbox)."""
    if name_or_source in _builtin_set():
        return load_builtin(name_or_source)
    return compile_template(name_or_source, name="custom critique template")


@functools.cache
def _builtin_set() -> frozenset[str]:
    return frozenset(builtin_names())


# -- building requests -------------------------------------------------------------------------------


def _template_for(metric: CritiqueOptions, rubric: Rubric, pairwise: bool) -> str:
    if metric.template:
        return metric.template
    if pairwise:
        return "critique_pairwise"
    return "critique_checklist" if rubric.is_checklist else "critique_analytic"


def critique_variables(case: Case, rubric: Rubric) -> dict[str, Any]:
    """What a critique template sees: the case's fields, the rubric and its criteria."""
    variables = case.variables()
    variables["criteria"] = rubric.criteria
    variables["rubric"] = rubric
    variables.setdefault("media_description", case.extra.get("image_description"))
    return variables


# -- parsing answers -----------------------------------------------------------------------------------


def _entries(data: Any, key: str, names: Sequence[str]) -> dict[str, Any]:
    """The per-id entries of a judge answer, checked against the rubric's ids."""
    if not isinstance(data, Mapping):
        raise InvalidAnswer("the answer is not a JSON object")
    block = data.get(key)
    if block is None and all(name in data for name in names):
        block = data  # a judge that dropped the wrapper key
    if isinstance(block, list):  # [{"id": "q1", ...}] is a common variant
        by_id: dict[str, Any] = {}
        for item in block:
            if isinstance(item, Mapping) and ("id" in item or "name" in item):
                item_id = str(item.get("id", item.get("name")))
                if item_id in by_id and by_id[item_id] != item:
                    # last-one-wins would pick a verdict at random: ask again instead
                    raise InvalidAnswer(f"{item_id} is answered twice with different verdicts")
                by_id[item_id] = item
        block = by_id
    if not isinstance(block, Mapping):
        raise InvalidAnswer(f"no '{key}' object with an entry per id")
    missing = [n for n in names if n not in block]
    if missing:
        raise InvalidAnswer(f"missing criteria: {', '.join(missing)}")
    return {n: block[n] for n in names}


def _text_of(entry: Any, *keys: str) -> str:
    if type(entry) is dict or isinstance(entry, Mapping):  # (parsed JSON: no ABC check)
        for key in keys:
            value = entry.get(key)
            if isinstance(value, str) and value.strip():
                return value
    return ""


_LEVEL_KEYS = ("verdict", "level", "score", "answer")


def _level_of(criterion: Criterion, entry: Any, exact: Mapping[Any, int]) -> int:
    """The level an entry gives; ``exact`` maps the answers the schema asks for ("YES", or a
    level as an int) straight to their level, anything else goes through ``coerce_level``."""
    value = entry
    if type(entry) is dict or isinstance(entry, Mapping):
        value = None
        for key in _LEVEL_KEYS:
            if key in entry:
                value = entry[key]
                break
        if value is None:
            raise InvalidAnswer(f"{criterion.name}: no {' or '.join(_LEVEL_KEYS)} given")
    if type(value) is str or type(value) is int:  # (not bool: True is not level 1 of 1-4)
        level = exact.get(value)
        if level is not None:
            return level
    coerced = coerce_level(criterion, value)
    if isinstance(coerced, str):
        raise InvalidAnswer(coerced)
    return coerced


def _label(criterion: Criterion, level: int) -> str:
    if criterion.is_yes_no:
        return "YES" if level == 1 else "NO"
    return criterion.descriptor(level)


def _criterion_row(
    criterion: Criterion, level: int, evidence: str, reasoning: str, label: str | None = None
) -> dict[str, Any]:
    """One criterion's entry in a row's ``criteria`` list (``label`` when already known)."""
    row = {
        "name": criterion.name,
        "question": criterion.question,
        "level": level,
        "label": _label(criterion, level) if label is None else label,
        "evidence": evidence,
        "reasoning": reasoning,
        "weight": criterion.weight,
        "critical": criterion.critical,
        "passed_critical": None if criterion.critical is None else level >= criterion.critical,
    }
    if criterion.code is not None:
        row["checked_by"] = "code"
        row["check"] = criterion.code.label
    return row


class _CodeChecks:
    """A rubric's code checks made ready once: each row runs them and gets levels and rows.

    A check that raises is an error on this row for that criterion (its row says so), never
    a level: the row is not scored.
    """

    def __init__(self, rubric: Rubric) -> None:
        self.checks = []
        parse = ParsedJson()  # one parse of a row's response for all its JSON checks
        for c in rubric.coded:
            assert c.code is not None
            base = {
                "name": c.name,
                "question": c.question,
                "weight": c.weight,
                "critical": c.critical,
                "checked_by": "code",
                "check": c.code.label,
            }
            labels = _labels(c)
            # a checked row differs by level only in its reason: its rows are made ready per level
            done = {
                level: {
                    **base,
                    "level": level,
                    "label": label,
                    "evidence": "",
                    "reasoning": "",
                    "passed_critical": None if c.critical is None else level >= c.critical,
                }
                for level, label in labels.items()
            }
            self.checks.append((c.name, c.code.runner(c, parse), c.code.wants_row, base, done))
        self.wants_row = any(w for _, _, w, _, _ in self.checks)
        self.judged = bool(rubric.judged)

    def __call__(self, case: Case) -> tuple[dict[str, int], dict[str, dict[str, Any]], list[str]]:
        levels: dict[str, int] = {}
        rows: dict[str, dict[str, Any]] = {}
        problems: list[str] = []
        response = case.response or ""
        variables = case.variables() if self.wants_row else None
        for name, run, wants_row, base, done in self.checks:
            try:
                level, reason = run(response, variables if wants_row else None)
            except CheckError as exc:
                problems.append(f"{name} (checked by code): {exc}")
                rows[name] = {
                    **base,
                    "level": None,
                    "label": None,
                    "evidence": "",
                    "reasoning": f"check failed: {exc}",
                    "passed_critical": None,
                    "error": str(exc),
                }
                continue
            levels[name] = level
            row = done[level].copy()
            row["reasoning"] = "checked by code: " + reason
            rows[name] = row
        return levels, rows, problems


@dataclass
class _Pointwise:
    levels: dict[str, int]
    rows: list[dict[str, Any]]
    rationale: str
    score: Figures


class _PointwiseReader:
    """Reads one rubric's pointwise answers into levels, rows and a score.

    A run reads thousands of answers against one rubric, so what reading needs from the
    rubric (names, questions, labels, the scorer) is worked out once, when the reader is made.
    """

    def __init__(self, rubric: Rubric) -> None:
        self.rubric = rubric
        self.names = [c.name for c in rubric.criteria if c.code is None]  # what the judge answers
        self.scorer = Scorer(rubric)
        self._criteria = [(c, _labels(c), _exact_answers(c)) for c in rubric.criteria]

    def __call__(
        self,
        text: str,
        coded: tuple[dict[str, int], dict[str, dict[str, Any]]] | None = None,
    ) -> _Pointwise:
        """Read one answer; ``coded`` holds the levels and rows of the code-checked criteria."""
        data = extract_json(text, expect=dict)
        key = "verdicts" if isinstance(data, Mapping) and "verdicts" in data else "criteria"
        entries = _entries(data, key, self.names)
        levels: dict[str, int] = {}
        rows = []
        problems = []
        for c, labels, exact in self._criteria:
            if coded is not None and c.name in coded[1]:
                levels[c.name] = coded[0][c.name]
                rows.append(coded[1][c.name])
                continue
            entry = entries[c.name]
            try:
                level = _level_of(c, entry, exact)
            except InvalidAnswer as exc:
                problems.append(str(exc))
                continue
            levels[c.name] = level
            evidence = _text_of(entry, "evidence", "quote")
            reasoning = _text_of(entry, "reasoning", "rationale", "explanation")
            rows.append(_criterion_row(c, level, evidence, reasoning, labels[level]))
        if problems:
            raise InvalidAnswer("; ".join(problems))
        rationale = _text_of(data, "rationale", "explanation", "summary")
        # scored now, so an answer that cannot be scored is asked again
        return _Pointwise(levels, rows, rationale, self.scorer.figures(levels))


def _exact_answers(criterion: Criterion) -> dict[Any, int]:
    """The answers a schema asks for, each with its level: "YES"/"NO", or the level itself."""
    if criterion.is_yes_no:
        return {"YES": 1, "NO": 0}
    return {score: score for score in criterion.scores}


def _labels(criterion: Criterion) -> dict[int, str]:
    return {lv.score: _label(criterion, lv.score) for lv in criterion.levels}


@dataclass
class _PairwiseRead:
    winners: dict[str, str]  # criterion -> "A" | "B" | "tie"
    a: dict[str, int]
    b: dict[str, int]
    evidence: dict[str, str]
    choice: float  # A's side, 5-point
    reasoning: str


def _read_pairwise(text: str, rubric: Rubric) -> _PairwiseRead:
    data = extract_json(text, expect=dict)
    entries = _entries(data, "criteria", rubric.names)
    winners: dict[str, str] = {}
    a: dict[str, int] = {}
    b: dict[str, int] = {}
    evidence: dict[str, str] = {}
    problems = []
    for c in rubric.criteria:
        entry = entries[c.name]
        win = (
            str(entry.get("winner", "")).strip().strip("[]").strip()
            if isinstance(entry, Mapping)
            else ""
        )
        norm = {"a": "A", "b": "B", "tie": "tie", "equal": "tie", "none": "tie"}.get(win.lower())
        if norm is None:
            problems.append(f"{c.name}: winner {win!r} is not A, B or tie")
            continue
        winners[c.name] = norm
        evidence[c.name] = _text_of(entry, "evidence", "reasoning")
        for side, store in (("a", a), ("b", b)):
            if isinstance(entry, Mapping) and side in entry:
                level = coerce_level(c, entry[side])
                if isinstance(level, str):
                    problems.append(f"response {side.upper()}: {level}")
                else:
                    store[c.name] = level
    overall = data.get("overall") if isinstance(data, Mapping) else None
    raw_choice = overall.get("choice") if isinstance(overall, Mapping) else None
    choice = _choice_value(raw_choice)
    if choice is None:
        problems.append(
            f"overall choice {raw_choice!r} is not one of {list(schemas.PAIRWISE_CHOICES)}"
        )
    if problems:
        raise InvalidAnswer("; ".join(problems))
    assert choice is not None
    read = _PairwiseRead(winners, a, b, evidence, choice, _text_of(overall, "reasoning"))
    why = _contradiction(read, rubric)
    if why is not None:  # asked again; still so after the last re-ask: an inconsistent row
        raise InvalidAnswer(why, answer=read)
    return read


def _contradiction(read: _PairwiseRead, rubric: Rubric) -> str | None:
    """Why an overall choice for one side contradicts the answer's own criteria, or None.

    A side chosen overall that wins no criterion while the other wins some, or whose levels
    are nowhere better and somewhere worse than the other's (a criterion of negative weight
    counts the other way), is not a win the judge argued for. A tie is never flagged.
    """
    if read.choice == 0:
        return None
    side, other = ("A", "B") if read.choice > 0 else ("B", "A")
    lost = [n for n, w in read.winners.items() if w == other]
    if lost and not any(w == side for w in read.winners.values()):
        return (
            f"the overall choice favours {side}, but {other} wins {', '.join(lost)} and "
            f"{side} wins no criterion; make the overall choice agree with the criteria"
        )
    mine, theirs = (read.a, read.b) if side == "A" else (read.b, read.a)
    gaps = [
        (mine[c.name] - theirs[c.name]) * (1 if c.weight >= 0 else -1)
        for c in rubric.criteria
        if c.name in mine and c.name in theirs
    ]
    if gaps and all(g <= 0 for g in gaps) and any(g < 0 for g in gaps):
        return (
            f"the overall choice favours {side}, but {side}'s levels are nowhere better and "
            f"somewhere worse than {other}'s; make the overall choice agree with the levels"
        )
    return None


def _choice_value(raw: Any) -> float | None:
    if isinstance(raw, int | float) and not isinstance(raw, bool) and float(raw) in CHOICE_LABELS:
        return float(raw)
    if not isinstance(raw, str):
        return None
    text = " ".join(raw.strip().lower().replace("_", " ").split())
    for label, value in _CHOICE_VALUE.items():
        if text == label.lower():
            return value
    aliases = {"a>>b": 1.0, "a>b": 0.5, "a=b": 0.0, "b>a": -0.5, "b>>a": -1.0}
    return aliases.get(text.replace(" ", ""))


# -- the per-case driver shared by pointwise and pairwise -------------------------------------------


async def _critique(
    cases: Sequence[Case],
    rubrics: Sequence[Rubric | None],
    metric: CritiqueOptions,
    judge: Judge | None,
    *,
    missing: Sequence[str | None] | None,
    need_baseline: bool,
    plan: Callable[[Case, Rubric], list[Ask] | Outcome],
    finish: Callable[[Sequence[Ask], Rubric], Outcome],
    desc: str,
    per_case: int,
) -> list[Outcome]:
    """Plan each judgeable case's jobs, run them all through the engine, finish each case.

    A case that cannot be judged (no rubric, no response) or whose prompt cannot be rendered
    (template error, over-long prompt) gets its error without any call; a case whose plan is
    already an outcome (a rubric of code checks only) is finished without one. With no call
    to make at all, the judge is never used (``judge`` may then be None).
    """
    outcomes: list[Outcome | None] = [None] * len(cases)
    jobs: list[list[Ask]] = [[] for _ in cases]
    why = [
        _unjudgeable(case, rubric, missing[i] if missing else None, need_baseline=need_baseline)
        for i, (case, rubric) in enumerate(zip(cases, rubrics, strict=True))
    ]
    case_of: dict[int, int] = {}  # id(ask) -> its case
    unsettled = [0] * len(cases)

    def planned() -> Iterator[Ask]:
        # rendered as the engine asks for the next request, so the first calls leave at once
        for i, (case, rubric) in enumerate(zip(cases, rubrics, strict=True)):
            if why[i] or rubric is None:
                outcomes[i] = Outcome(error=why[i])
                continue
            try:
                planned_i = plan(case, rubric)
            except (TemplateError, MediaError) as exc:  # this row only: the run goes on
                outcomes[i] = Outcome(error=str(exc))
                continue
            if isinstance(planned_i, Outcome):
                outcomes[i] = planned_i
                continue
            jobs[i] = planned_i
            unsettled[i] = len(jobs[i])
            for job in jobs[i]:
                case_of[id(job)] = i
            yield from jobs[i]

    def settled(job: Ask) -> None:
        # a case is finished (scored) as its last answer arrives, while others are in flight
        i = case_of[id(job)]
        unsettled[i] -= 1
        rubric = rubrics[i]
        if unsettled[i] == 0 and rubric is not None:
            outcomes[i] = finish(jobs[i], rubric)

    judgeable = sum(1 for i, r in enumerate(rubrics) if not why[i] and r is not None and r.judged)
    if judgeable and judge is not None:
        await ask_all(
            planned(), judge, metric.reask, desc=desc, total=judgeable * per_case, done=settled
        )
    else:  # code checks only: every case is finished by its plan, no call is made
        for _ in planned():
            raise AssertionError("a case planned a call, but there is no judged criterion")
    out: list[Outcome] = []
    for outcome, js, rubric in zip(outcomes, jobs, rubrics, strict=True):
        if outcome is None:
            assert rubric is not None  # a case without a rubric got its error above
            outcome = finish(js, rubric)
        out.append(outcome)
    return out


class _PerRubric(Generic[T]):
    """What a run builds once per rubric (a fixed rubric is shared by every row)."""

    def __init__(self, build: Callable[[Rubric], T]) -> None:
        self._build = build
        self._by_rubric: dict[int, tuple[Rubric, T]] = {}

    def __call__(self, rubric: Rubric) -> T:
        hit = self._by_rubric.get(id(rubric))
        if hit is None:
            hit = (rubric, self._build(rubric))
            self._by_rubric[id(rubric)] = hit  # the rubric is kept so its id is never reused
        return hit[1]


def _formats(name: str, schema: Callable[[Rubric], dict[str, Any]]) -> _PerRubric[dict[str, Any]]:
    """One response_format per rubric."""
    return _PerRubric(lambda rubric: schemas.response_format(name, schema(rubric)))


# -- pointwise ---------------------------------------------------------------------------------------


async def critique_pointwise(
    cases: Sequence[Case],
    rubrics: Sequence[Rubric | None],
    metric: CritiqueOptions,
    judge: Judge | None,
    *,
    missing: Sequence[str | None] | None = None,
) -> list[Outcome]:
    """One call per case (``samples`` calls with ``samples=k``), all judged criteria in each
    call. Criteria checked by code are run here, never sent; a rubric of code checks only
    makes no call (``judge`` may be None when no rubric has a judged criterion)."""
    checklist_formats = _formats(f"{metric.name}_critique", schemas.checklist_schema)
    analytic_formats = _formats(f"{metric.name}_critique", schemas.analytic_schema)
    readers = _PerRubric(_PointwiseReader)
    asked = _PerRubric(_judged_part)
    code_checks = _PerRubric(_CodeChecks)

    def plan(case: Case, rubric: Rubric) -> list[Ask] | Outcome:
        coded: tuple[dict[str, int], dict[str, dict[str, Any]]] | None = None
        checks = code_checks(rubric)
        if checks.checks:
            levels, rows, problems = checks(case)
            if problems or not checks.judged:
                return _coded_outcome(rubric, readers(rubric).scorer, levels, rows, problems)
            coded = (levels, rows)
        full, rubric = rubric, asked(rubric)  # the judge sees only its own criteria
        template = _template_for(metric, rubric, pairwise=False)
        text = template_for(template).render(
            critique_variables(case, rubric),
            max_prompt_chars=metric.max_prompt_chars,
            render_timeout=metric.render_timeout,
        )
        text = prefix_examples(
            text,
            metric.examples,
            rubric,
            pairwise=False,
            max_prompt_chars=metric.max_prompt_chars,
            render_timeout=metric.render_timeout,
        )
        checklist = template == "critique_checklist"
        fmt = checklist_formats(rubric) if checklist else analytic_formats(rubric)
        messages = user_messages(text, case)
        reader = readers(full)
        read: Callable[[str], _Pointwise] = (
            reader if coded is None else functools.partial(reader, coded=coded)
        )
        return [Ask(messages, fmt, s, read) for s in range(metric.samples)]

    return await _critique(
        cases,
        rubrics,
        metric,
        judge,
        missing=missing,
        need_baseline=False,
        plan=plan,
        finish=_pointwise_outcome,
        desc=f"{metric.name}: critique",
        per_case=metric.samples,
    )


def _judged_part(rubric: Rubric) -> Rubric:
    """The rubric the judge is shown: its judged criteria only (the rubric itself when none is
    checked by code). Built without validation: the whole rubric was validated, and a part may
    lack a positive weight; it is only rendered and asked, never scored."""
    if not rubric.coded:
        return rubric
    return Rubric.model_construct(
        criteria=rubric.judged,
        pass_mark=rubric.pass_mark,
        name=rubric.name,
        description=rubric.description,
    )


def _coded_outcome(
    rubric: Rubric,
    scorer: Scorer,
    levels: dict[str, int],
    rows: dict[str, dict[str, Any]],
    problems: Sequence[str],
) -> Outcome:
    """A row finished by code alone: scored from its checks, or the error of a failed check."""
    out = Outcome(criteria=[rows[c.name] for c in rubric.criteria if c.name in rows])
    if problems:
        out.error = "; ".join(problems)
        return out
    result = scorer.figures(levels)
    out.score, out.passed, out.verdict = result.value, result.passed, result.verdict
    out.rationale = "checked by code (no judge call)"
    return out


def _pointwise_outcome(jobs: Sequence[Ask], rubric: Rubric) -> Outcome:
    out = Outcome()
    out.account([r for j in jobs for r in j.replies])
    raws = [j.raw or "" for j in jobs]
    out.raw_output = raws[0] if len(raws) == 1 else raws
    good = [j.parsed for j in jobs if j.error is None and j.parsed is not None]
    if not good:
        out.error = next(j.error for j in jobs if j.error)
        return out
    if len(good) == 1:
        chosen = good[0]
        rows, rationale = chosen.rows, chosen.rationale
        result: Figures | Score = chosen.score
    else:
        levels, rows, rationale = _majority(good, rubric)
        result = score(rubric, levels)
    out.score, out.passed, out.verdict = result.value, result.passed, result.verdict
    out.criteria, out.rationale = rows, rationale
    return out


def _majority(
    reads: Sequence[_Pointwise], rubric: Rubric
) -> tuple[dict[str, int], list[dict[str, Any]], str]:
    """Majority level per criterion across samples; a tie takes the lower level (conservative)."""
    levels: dict[str, int] = {}
    rows = []
    for idx, c in enumerate(rubric.criteria):
        counts = Counter(r.levels[c.name] for r in reads)
        top = max(counts.values())
        level = min(lv for lv, n in counts.items() if n == top)
        levels[c.name] = level
        source = next(r for r in reads if r.levels[c.name] == level)
        row = dict(source.rows[idx])
        row["votes"] = {str(k): v for k, v in sorted(counts.items())}
        rows.append(row)
    rationale = next((r.rationale for r in reads if r.rationale), "")
    return levels, rows, rationale


def _unjudgeable(
    case: Case, rubric: Rubric | None, missing: str | None, *, need_baseline: bool
) -> str | None:
    if case.error:  # the row's own content could not be read (no prompt, bad image...)
        return case.error
    if rubric is None:
        return missing or "no rubric for this case (give one, a rubric column, or a generator)"
    if case.response is None:  # "" is what the model said, and is judged
        note = case.extra.get("response_error")
        return f"no response to judge{f': {note}' if note else ''}"
    if need_baseline and case.baseline_model_response is None:
        return "no baseline response to compare against"
    return None


# -- pairwise ----------------------------------------------------------------------------------------


async def critique_pairwise(
    cases: Sequence[Case],
    rubrics: Sequence[Rubric | None],
    metric: CritiqueOptions,
    judge: Judge,
    *,
    baselines: Sequence[str | None] | None = None,
    missing: Sequence[str | None] | None = None,
) -> list[Outcome]:
    """Two calls per case: (candidate, baseline) as (A, B), then swapped."""
    if baselines is not None:
        cases = [
            _with_baseline(c, b) if b is not None and b != c.baseline_model_response else c
            for c, b in zip(cases, baselines, strict=True)
        ]
    formats = _formats(f"{metric.name}_pairwise", schemas.pairwise_schema)

    def plan(case: Case, rubric: Rubric) -> list[Ask] | Outcome:
        if rubric.coded:
            names = ", ".join(c.name for c in rubric.coded)
            return Outcome(
                error=f"criteria checked by code ({names}) are for pointwise metrics: a "
                "pairwise comparison asks the judge about every criterion"
            )
        template = template_for(_template_for(metric, rubric, pairwise=True))

        def read(raw: str) -> _PairwiseRead:
            return _read_pairwise(raw, rubric)

        jobs = []
        for a, b in (
            (case.response, case.baseline_model_response),
            (case.baseline_model_response, case.response),
        ):
            variables = critique_variables(case, rubric)
            variables.update(response_a=a, response_b=b, checklist=rubric.is_checklist)
            text = template.render(
                variables,
                max_prompt_chars=metric.max_prompt_chars,
                render_timeout=metric.render_timeout,
            )
            text = prefix_examples(
                text,
                metric.examples,
                rubric,
                pairwise=True,
                max_prompt_chars=metric.max_prompt_chars,
                render_timeout=metric.render_timeout,
            )
            jobs.append(Ask(user_messages(text, case), formats(rubric), 0, read))
        return jobs

    return await _critique(
        cases,
        rubrics,
        metric,
        judge,
        missing=missing,
        need_baseline=True,
        plan=plan,
        finish=_pairwise_outcome,
        desc=f"{metric.name}: pairwise critique",
        per_case=2,
    )


def _with_baseline(case: Case, baseline: str) -> Case:
    from dataclasses import replace

    return replace(case, baseline_model_response=baseline)


_FLIP = {"A": "B", "B": "A", "tie": "tie"}
_SIDE = {"A": "candidate", "B": "baseline", "tie": "tie"}


def _pairwise_outcome(jobs: Sequence[Ask], rubric: Rubric) -> Outcome:
    out = Outcome()
    out.account([r for j in jobs for r in j.replies])
    out.raw_output = [j.raw or "" for j in jobs]
    orders = [f"order {n} ({'candidate first' if n == 1 else 'baseline first'})" for n in (1, 2)]
    errors = [f"{o}: {j.error}" for o, j in zip(orders, jobs, strict=True) if j.error]
    flagged = [f"{o}: {j.error}" for o, j in zip(orders, jobs, strict=True) if j.flagged]
    if len(errors) > len(flagged):  # a failed or unreadable order: no comparison at all
        out.error = "; ".join(errors)
        return out
    # an order still contradicting itself after its re-asks is read, but never a confident win
    first: _PairwiseRead = jobs[0].parsed or jobs[0].flagged
    second: _PairwiseRead = jobs[1].parsed or jobs[1].flagged  # A = baseline here
    consistent_all = True
    rows: list[dict[str, Any]] = []
    cand_rows: list[dict[str, Any]] = []
    base_rows: list[dict[str, Any]] = []
    cand_levels: dict[str, int] = {}
    base_levels: dict[str, int] = {}
    for c in rubric.criteria:
        w1 = first.winners[c.name]
        w2 = _FLIP[second.winners[c.name]]  # back to candidate=A terms
        agree = w1 == w2
        consistent_all &= agree
        winner = _SIDE[w1] if agree else "tie"
        rows.append(
            {
                "name": c.name,
                "question": c.question,
                "winner": winner,
                "winner_candidate_first": _SIDE[w1],
                "winner_baseline_first": _SIDE[w2],
                "swap_consistent": agree,
                "evidence": first.evidence.get(c.name, ""),
                "evidence_swapped": second.evidence.get(c.name, ""),
                "weight": c.weight,
                "critical": c.critical,
            }
        )
        for store, rows_out, o1, o2 in (
            (cand_levels, cand_rows, first.a, second.b),
            (base_levels, base_rows, first.b, second.a),
        ):
            if c.name in o1 or c.name in o2:
                seen = [lv for lv in (o1.get(c.name), o2.get(c.name)) if lv is not None]
                level = min(seen)  # the two orders disagreeing: keep the conservative reading
                store[c.name] = level
                row = _criterion_row(c, level, first.evidence.get(c.name, ""), "")
                row["consistent"] = len(set(seen)) == 1
                rows_out.append(row)
    c1, c2 = first.choice, -second.choice
    if flagged:
        choice, choice_consistent = 0.0, False
    elif c1 == c2 or (c1 > 0 and c2 > 0) or (c1 < 0 and c2 < 0):
        choice = c1 if abs(c1) <= abs(c2) else c2  # agree on direction: the milder strength
        choice_consistent = True
    else:
        choice, choice_consistent = 0.0, False
    out.swap_consistent = choice_consistent and consistent_all
    out.score = choice
    out.pairwise_choice = CHOICE_LABELS[choice]
    out.verdict = "candidate wins" if choice > 0 else "baseline wins" if choice < 0 else "tie"
    out.criteria = rows
    out.rationale = first.reasoning + (
        f"\n\n(swapped order) {second.reasoning}" if second.reasoning else ""
    )
    if flagged:
        out.rationale = (
            "(inconsistent, scored as a tie) "
            + "; ".join(flagged)
            + (f"\n\n{out.rationale}" if out.rationale else "")
        )
    if cand_rows and len(cand_levels) == len(rubric):
        out.candidate_criteria = cand_rows
        out.candidate_score = score(rubric, cand_levels).value
    if base_rows and len(base_levels) == len(rubric):
        out.baseline_criteria = base_rows
        out.baseline_score = score(rubric, base_levels).value
    return out
