"""``align``: make a rubric metric's judge agree with people, and prove it on rows it never saw.

The labelled rows are split once, by seed, into training, validation and test rows. Three
methods, each choosing on training/validation rows only:

1. clearer criteria: per criterion, the optimizer judge sees the training disagreements and
   proposes rewrites; the best on the training rows is kept only if it also beats the current
   wording on the validation rows;
2. few-shot examples: training rows (stratified by people's labels, disagreements first) are
   tried one at a time and kept greedily while they raise exact agreement on validation rows;
3. cut points (criteria with levels): the monotone reading of the judge's levels onto people's
   that best matches people on answers already paid for (``metrics.cuts``), kept only if it
   also does no worse on the validation rows: no new calls;
4. the pass mark: the one that best matches people's overall pass/fail on answers already paid
   for (the final wording's training answers, else its validation answers): no new calls.

Only then are the test rows judged, with the original and the aligned metric: ``before`` and
``after`` are agreement there, ``gain`` the paired difference with bootstrap intervals. No test
row is ever an example or shown to the optimizer, and none is sent before every choice is made.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..columns import CRITERIA, ERROR, SCORE, col
from ..data import to_frame
from ..evaluation import aevaluate
from ..fewshot import Example
from ..judges import Judge, get_judge
from ..judges.sync import run_sync
from ..metrics.cuts import Cuts, as_cuts, check_cuts, identity_cuts, read_level
from ..metrics.pairwise import PairwiseRubricMetric
from ..metrics.rubric import RubricMetric
from ..rubric import Criterion, Rubric
from ..scoring import score
from .cutpoints import best_cuts, describe_cuts
from .labels import People, people_labels
from .measure import AlignFigures, Gain, figures, gain
from .rewrite import propose, wording

__all__ = ["METHODS", "Alignment", "Change", "align"]

METHODS = ("rewrite", "examples", "cut_points", "pass_mark")
Answers = dict[int, dict[str, Any]]


@dataclass(frozen=True)
class Change:
    """One change tried: what it was, its figures where it was judged, and whether it stayed."""

    kind: str  # "rewrite" | "example" | "cut_points" | "pass_mark"
    criterion: str | None
    before: str
    after: str
    kept: bool
    train: float | None = None
    validation: float | None = None
    note: str = ""
    #: what applying it sets: the rewritten ``Criterion``, or the pass mark (a float); None for
    #: examples and cut points, which belong to the metric, not to the rubric
    proposal: Criterion | float | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "criterion": self.criterion,
            "before": self.before,
            "after": self.after,
            "kept": self.kept,
            "train": self.train,
            "validation": self.validation,
            "note": self.note,
        }


@dataclass
class Alignment:
    """What ``align`` found: agreement on the test rows before and after, the gain with its
    interval, the aligned metric, every change tried, and the split."""

    original: RubricMetric
    metric: RubricMetric
    before: AlignFigures
    after: AlignFigures
    gain: Gain
    changes: list[Change]
    train_rows: list[int]
    validation_rows: list[int]
    test_rows: list[int]
    calls: int
    max_calls: int
    seed: int
    test_answers: dict[str, Answers] = field(default_factory=dict, repr=False)

    @property
    def kept(self) -> list[Change]:
        return [c for c in self.changes if c.kept]

    @property
    def summary(self) -> str:
        """In words: what changed and what it did on the test rows."""
        b, a = self.before, self.after
        kinds = sorted({c.kind for c in self.kept})
        changed = (
            f"{len(self.kept)} change(s) kept ({', '.join(kinds)})" if kinds else "no change kept"
        )
        return (
            f"{self.metric.name}: {changed}; on {len(self.test_rows)} held-out rows agreement "
            f"went from {_pct(b.exact)} to {_pct(a.exact)} exact, kappa {_k(b.kappa)} to "
            f"{_k(a.kappa)}: {self.gain.words}. {self.calls} judge calls of {self.max_calls}."
        )

    def __repr__(self) -> str:
        return f"Alignment({self.summary})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """Shown at the end of a cell as the ``AlignmentView`` (through the results layer's
        one presentation hook: this layer never imports the views)."""
        from ..result import presentation

        return dict(presentation().alignment_mimebundle(self))

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric.name,
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
            "gain": self.gain.to_dict(),
            "changes": [c.to_dict() for c in self.changes],
            "train_rows": self.train_rows,
            "validation_rows": self.validation_rows,
            "test_rows": self.test_rows,
            "calls": self.calls,
            "max_calls": self.max_calls,
            "seed": self.seed,
        }


def _k(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{round(value, 2) + 0.0:.2f}"  # never -0.00


def _pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.0%}"


@dataclass(frozen=True)
class _Variant:
    rubric: Rubric
    examples: tuple[Example, ...]

    @property
    def key(self) -> str:
        return json.dumps(
            [self.rubric.model_dump(exclude={"pass_mark"}), [e.to_dict() for e in self.examples]],
            sort_keys=True,
            default=str,
        )


class BudgetExceeded(Exception):
    """A step would need more calls than ``max_calls`` leaves."""


class _Runner:
    """Judges rows under a variant of the metric, once each (memo + the judge's cache), within
    the call budget, and reads each row's answers per criterion."""

    def __init__(
        self,
        metric: RubricMetric,
        frame: pd.DataFrame,
        judge: Judge,
        max_calls: int,
        reserve: int,
    ) -> None:
        self.metric = metric
        self.frame = frame
        self.judge = judge
        self.max_calls = max_calls
        self.reserve = reserve
        self.calls = 0
        self.pairwise = isinstance(metric, PairwiseRubricMetric)
        self.per_row = 2 if self.pairwise else metric.samples
        self.levels: dict[str, dict[int, dict[str, int] | None]] = {}
        self.answers: dict[str, Answers] = {}
        self.bar: Any = None

    def metric_for(self, v: _Variant) -> RubricMetric:
        # the judge's own levels: cut points are read afterwards, from answers already paid for
        return self.metric.with_options(
            rubric=v.rubric, examples=v.examples, judge=None, level_cuts=()
        )

    def spent(self, calls: int) -> None:
        self.calls += calls
        if self.bar is not None:
            self.bar.n = min(self.calls, self.max_calls)
            self.bar.refresh()

    def cost(self, v: _Variant, rows: Iterable[int]) -> int:
        done = self.answers.get(v.key, {})
        return sum(self.per_row for r in rows if r not in done)

    def affordable(self, v: _Variant, rows: Iterable[int]) -> bool:
        return self.calls + self.cost(v, rows) + self.reserve <= self.max_calls

    def judge_rows(self, v: _Variant, rows: Sequence[int], *, final: bool = False) -> Answers:
        """Each row's answers under ``v`` (row -> criterion -> value, with ``overall``)."""
        done = self.answers.setdefault(v.key, {})
        levels = self.levels.setdefault(v.key, {})
        todo = [r for r in rows if r not in done]
        if todo:
            if not final and not self.affordable(v, todo):
                raise BudgetExceeded
            sub = self.frame.iloc[todo].reset_index(drop=True)
            # one block, through the run's own judge: no per-run bars (align shows its own)
            result = run_sync(
                aevaluate(
                    sub,
                    metrics=[self.metric_for(v)],
                    judge=self.judge,
                    on_rows=_ignore,
                    chunk_rows=len(todo),
                )
            )
            self.spent(int(result.stats.calls.get(self.metric.name, 0)))
            table = result.table
            errors = table[col(self.metric.name, ERROR)].tolist()
            if all(isinstance(e, str) and e for e in errors):  # nothing to learn from: say why
                raise ValueError(f"align: every row failed to be judged, e.g.: {errors[0]}")
            for i, r in enumerate(todo):
                done[r], levels[r] = self._read(table.iloc[i], v.rubric)
        return {r: done[r] for r in rows}

    def _read(self, row: pd.Series, rubric: Rubric) -> tuple[dict[str, Any], dict[str, int] | None]:
        name = self.metric.name
        err = row.get(col(name, ERROR))
        cells = row.get(col(name, CRITERIA))
        if (isinstance(err, str) and err) or not isinstance(cells, list | np.ndarray):
            return {}, None
        out: dict[str, Any] = {}
        if self.pairwise:
            for cell in cells:
                out[str(cell["name"])] = str(cell.get("winner"))
            value = row.get(col(name, SCORE))
            if isinstance(value, int | float) and not math.isnan(value):
                out["overall"] = "candidate" if value > 0 else "baseline" if value < 0 else "tie"
            return out, None
        levels = {str(cell["name"]): int(cell["level"]) for cell in cells}
        out.update(levels)
        passed = score(rubric, levels).passed
        if passed is not None:
            out["overall"] = "pass" if passed else "fail"
        return out, levels

    def reread(
        self, v: _Variant, rows: Sequence[int], pass_mark: float | None, cuts: Cuts = ()
    ) -> Answers:
        """Answers already paid for under ``v``: levels read through ``cuts``, ``overall`` at
        ``pass_mark`` (arithmetic, no calls)."""
        rubric = v.rubric.model_copy(update={"pass_mark": pass_mark})
        out: Answers = {}
        for r in rows:
            base = dict(self.answers[v.key][r])
            levels = self.levels[v.key].get(r)
            if levels is not None:
                read = read_levels(levels, cuts, rubric)
                base.update(read)
                passed = score(rubric, read).passed
                base.pop("overall", None)
                if passed is not None:
                    base["overall"] = "pass" if passed else "fail"
            out[r] = base
        return out


def read_levels(levels: dict[str, int], cuts: Cuts, rubric: Rubric) -> dict[str, int]:
    """The judge's levels read through ``cuts`` (criteria without cuts as they are)."""
    table = dict(cuts)
    by_name = {c.name: c for c in rubric.criteria}
    return {
        n: read_level(lv, table[n], by_name[n].scores) if n in table and n in by_name else lv
        for n, lv in levels.items()
    }


def _ignore(part: pd.DataFrame) -> None:
    """A finished block (align reads the whole result when the run ends)."""


def split_rows(
    rows: Sequence[int], seed: int, shares: tuple[float, float, float]
) -> tuple[list[int], list[int], list[int]]:
    """Training, validation and test rows: one shuffle by ``seed``, cut by ``shares``."""
    order = list(np.random.default_rng(seed).permutation(sorted(rows)))
    n = len(order)
    n_test = max(1, round(n * shares[2]))
    n_val = max(1, round(n * shares[1]))
    test = sorted(int(r) for r in order[:n_test])
    val = sorted(int(r) for r in order[n_test : n_test + n_val])
    train = sorted(int(r) for r in order[n_test + n_val :])
    return train, val, test


def _agree(
    people: People, answers: Answers, rows: Iterable[int], criterion: str | None = None
) -> float:
    hits = total = 0
    for r in rows:
        for name, value in people.values.get(r, {}).items():
            if criterion is not None and name != criterion:
                continue
            total += 1
            hits += answers.get(r, {}).get(name) == value
    return hits / total if total else math.nan


def align(
    metric: RubricMetric,
    data: Any,
    labels: pd.DataFrame,
    judge: Judge | str | None = None,
    optimizer: Judge | str | None = None,
    *,
    seed: int = 0,
    max_calls: int = 5_000,
    methods: Sequence[str] = METHODS,
    k: int = 4,
    pool: int = 8,
    split: tuple[float, float, float] = (0.4, 0.3, 0.3),
    n_boot: int = 2_000,
    progress: bool = True,
) -> Alignment:
    """Align ``metric``'s judge with people's ``labels`` on ``data``; see the module docstring.

    ``judge`` judges (default: the metric's judge, else the session's); ``optimizer`` proposes
    rewrites (default: the judge). ``methods`` picks among rewrite, examples and pass_mark;
    ``k`` is the most examples kept, ``pool`` how many training rows are tried as examples.
    ``max_calls`` bounds new judge calls (answers from the cache are free, so a re-run with the
    same judge costs nothing); the test rows' calls are reserved first. ``progress`` shows the
    calls used of ``max_calls`` as a bar.
    """
    if not isinstance(metric, RubricMetric) or metric.rubric is None:
        raise ValueError("align needs a RubricMetric or PairwiseRubricMetric with a fixed rubric=")
    if metric.judges:
        raise ValueError(f"metric {metric.name!r}: align works on one judge, not a panel")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(
            f"methods: {', '.join(unknown)} unknown (choose from {', '.join(METHODS)})"
        )
    if len(split) != 3 or any(s <= 0 for s in split):
        raise ValueError("split must be three positive shares (train, validation, test)")
    if k < 0 or pool < 0:
        raise ValueError("k and pool must be 0 or more")
    frame = to_frame(data).reset_index(drop=True)
    if "response" not in frame.columns:
        raise ValueError("the data has no 'response' column to judge")
    pairwise = isinstance(metric, PairwiseRubricMetric)
    people = people_labels(labels, metric.name, metric.rubric, len(frame), pairwise=pairwise)
    if len(people.rows) < 6:
        raise ValueError(f"align needs at least 6 labelled rows, got {len(people.rows)}")
    train, val, test = split_rows(people.rows, seed, split)
    the_judge = get_judge(judge if judge is not None else metric.judge)
    opt = get_judge(optimizer) if optimizer is not None else the_judge
    per_row = 2 if pairwise else metric.samples
    reserve = 2 * len(test) * per_row
    start = _Variant(metric.rubric, tuple(metric.examples))
    start_cuts = as_cuts(metric.level_cuts, metric.name)
    runner = _Runner(metric, frame, the_judge, max_calls, reserve)
    if runner.cost(start, [*train, *val]) + reserve > max_calls:
        raise ValueError(
            f"max_calls={max_calls} is too small: judging the training and validation rows "
            f"once and the test rows twice needs {runner.cost(start, [*train, *val]) + reserve}"
        )
    changes: list[Change] = []
    current = start
    runner.bar = _bar(metric.name, max_calls, progress)
    try:
        current, cuts, pass_mark = _choose(
            runner, people, frame, start, start_cuts, train, val, opt, methods, k, pool, changes
        )
        # every choice is made: only now are the test rows judged
        before = runner.judge_rows(start, test, final=True)
        after = runner.judge_rows(current, test, final=True)
    finally:
        if runner.bar is not None:
            runner.bar.close()
    if not pairwise:
        before = runner.reread(start, test, start.rubric.pass_mark, start_cuts)
        after = runner.reread(current, test, pass_mark, cuts)
    aligned = current.rubric.model_copy(update={"pass_mark": pass_mark})
    result_metric = metric.with_options(
        rubric=aligned, examples=current.examples, level_cuts=() if pairwise else cuts
    )
    return Alignment(
        original=metric,
        metric=result_metric,
        before=figures(people.values, before, test),
        after=figures(people.values, after, test),
        gain=gain(people.values, before, after, test, seed=seed, n_boot=n_boot),
        changes=changes,
        train_rows=train,
        validation_rows=val,
        test_rows=test,
        calls=runner.calls,
        max_calls=max_calls,
        seed=seed,
        test_answers={"before": before, "after": after},
    )


def _bar(name: str, max_calls: int, progress: bool) -> Any:
    """The progress bar: judge calls used of the budget."""
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=max_calls, desc=f"align {name}: calls of max_calls", unit="call")


def _choose(
    runner: _Runner,
    people: People,
    frame: pd.DataFrame,
    start: _Variant,
    start_cuts: Cuts,
    train: Sequence[int],
    val: Sequence[int],
    opt: Judge,
    methods: Sequence[str],
    k: int,
    pool: int,
    changes: list[Change],
) -> tuple[_Variant, Cuts, float | None]:
    """Every choice, on training and validation rows only: the wording, examples, cut points,
    pass mark."""
    current = start
    runner.judge_rows(current, [*train, *val])
    if "rewrite" in methods:
        current = _rewrites(runner, people, current, train, val, opt, changes)
    if "examples" in methods and k > 0:
        current = _examples(runner, people, frame, current, train, val, k, pool, changes)
    cuts = _still_valid(start_cuts, current.rubric, runner.metric.name)
    if runner.pairwise:
        return current, (), start.rubric.pass_mark
    if "cut_points" in methods:
        cuts = _cut_points(runner, people, current, cuts, train, val, changes)
    pass_mark = start.rubric.pass_mark
    if "pass_mark" in methods:
        pass_mark = _pass_mark(runner, people, current, cuts, train, val, changes)
    return current, cuts, pass_mark


def _rewrites(
    runner: _Runner,
    people: People,
    current: _Variant,
    train: Sequence[int],
    val: Sequence[int],
    optimizer: Judge,
    changes: list[Change],
) -> _Variant:
    for criterion in current.rubric.criteria:
        answers = runner.judge_rows(current, train)
        shown = [
            {
                "response": str(runner.frame.iloc[r]["response"]),
                "people": people.values[r][criterion.name],
                "judge": answers[r].get(criterion.name, "(no answer)"),
                "reason": people.comments.get(r, {}).get(criterion.name, ""),
                **({"baseline": _baseline(runner, r)} if runner.pairwise else {}),
            }
            for r in train
            if criterion.name in people.values.get(r, {})
            and isinstance(runner.frame.iloc[r]["response"], str)
            and answers[r].get(criterion.name) != people.values[r][criterion.name]
        ]
        if not shown:
            continue
        if runner.calls + 1 + runner.reserve > runner.max_calls:
            changes.append(
                Change(
                    "rewrite",
                    criterion.name,
                    wording(criterion),
                    "",
                    False,
                    note="not tried: max_calls reached",
                )
            )
            break
        candidates, calls, error = propose(optimizer, criterion, shown)
        runner.spent(calls)
        if error and not candidates:
            changes.append(
                Change("rewrite", criterion.name, wording(criterion), "", False, note=error)
            )
            continue
        base_train = _agree(people, answers, train, criterion.name)
        tried: list[tuple[float, _Variant, Criterion]] = []
        for cand in candidates:
            variant = _replace(current, cand)
            try:
                got = runner.judge_rows(variant, train)
            except BudgetExceeded:
                changes.append(
                    Change(
                        "rewrite",
                        criterion.name,
                        wording(criterion),
                        wording(cand),
                        False,
                        proposal=cand,
                        note="not tried: max_calls reached",
                    )
                )
                continue
            tried.append((_agree(people, got, train, criterion.name), variant, cand))
        if not tried:
            continue
        agree, variant, cand = max(tried, key=lambda t: t[0])  # the first of equals
        for other_agree, _, other in tried:
            if other is not cand:
                changes.append(
                    Change(
                        "rewrite",
                        criterion.name,
                        wording(criterion),
                        wording(other),
                        False,
                        train=other_agree,
                        proposal=other,
                        note="another rewrite did better on the training rows",
                    )
                )
        if not agree > base_train:
            changes.append(
                Change(
                    "rewrite",
                    criterion.name,
                    wording(criterion),
                    wording(cand),
                    False,
                    train=agree,
                    proposal=cand,
                    note=f"no better than the wording on the training rows ({base_train:.0%})",
                )
            )
            continue
        try:
            got_val = runner.judge_rows(variant, val)
        except BudgetExceeded:
            changes.append(
                Change(
                    "rewrite",
                    criterion.name,
                    wording(criterion),
                    wording(cand),
                    False,
                    train=agree,
                    proposal=cand,
                    note="not validated: max_calls reached",
                )
            )
            continue
        base_val = _agree(people, runner.judge_rows(current, val), val, criterion.name)
        new_val = _agree(people, got_val, val, criterion.name)
        kept = new_val > base_val
        note = "" if kept else f"no better on the validation rows ({new_val:.0%} vs {base_val:.0%})"
        changes.append(
            Change(
                "rewrite",
                criterion.name,
                wording(criterion),
                wording(cand),
                kept,
                train=agree,
                validation=new_val,
                proposal=cand,
                note=note,
            )
        )
        if kept:
            current = variant
    return current


def _baseline(runner: _Runner, r: int) -> str:
    column = getattr(runner.metric, "baseline_column", "baseline_model_response")
    value = runner.frame.iloc[r].get(column)
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _replace(v: _Variant, criterion: Criterion) -> _Variant:
    criteria = [criterion if c.name == criterion.name else c for c in v.rubric.criteria]
    return _Variant(v.rubric.model_copy(update={"criteria": criteria}), v.examples)


def _examples(
    runner: _Runner,
    people: People,
    frame: pd.DataFrame,
    current: _Variant,
    train: Sequence[int],
    val: Sequence[int],
    k: int,
    pool: int,
    changes: list[Change],
) -> _Variant:
    answers = runner.judge_rows(current, train)
    criteria = {c.name for c in current.rubric.criteria}
    usable = [
        r
        for r in train
        if any(n in criteria for n in people.values.get(r, {}))
        and isinstance(frame.iloc[r]["response"], str)  # a row with no response shows nothing
    ]
    groups: dict[str, list[int]] = {}
    for r in usable:
        signature = json.dumps(
            sorted((n, str(v)) for n, v in people.values[r].items() if n in criteria)
        )
        groups.setdefault(signature, []).append(r)
    for members in groups.values():  # disagreements first, then row order
        members.sort(key=lambda r: (_agree(people, answers, [r]) == 1.0, r))
    shortlist: list[int] = []
    queues = [list(m) for _, m in sorted(groups.items())]
    while len(shortlist) < pool and any(queues):
        for q in queues:
            if q and len(shortlist) < pool:
                shortlist.append(q.pop(0))
    best_val = _agree(people, runner.judge_rows(current, val), val)
    chosen: list[Example] = list(current.examples)
    for _ in range(k):
        step: tuple[float, int, _Variant] | None = None
        for r in shortlist:
            if any(e.row == r for e in chosen):
                continue
            variant = _Variant(
                current.rubric, (*chosen, _example(people, frame, r, criteria, runner))
            )
            try:
                got = runner.judge_rows(variant, val)
            except BudgetExceeded:
                changes.append(
                    Change(
                        "example", None, "", f"row {r}", False, note="not tried: max_calls reached"
                    )
                )
                continue
            agree = _agree(people, got, val)
            if step is None or agree > step[0]:
                step = (agree, r, variant)
        if step is None or not step[0] > best_val:
            break
        agree, r, variant = step
        changes.append(
            Change(
                "example",
                None,
                "",
                _describe(variant.examples[-1]),
                True,
                validation=agree,
                note=f"validation agreement {best_val:.0%} -> {agree:.0%}",
            )
        )
        best_val, current = agree, variant
        chosen = list(variant.examples)
    return current


def _example(
    people: People, frame: pd.DataFrame, r: int, criteria: set[str], runner: _Runner
) -> Example:
    rec = frame.iloc[r]
    levels = {n: v for n, v in people.values[r].items() if n in criteria}
    reasons = [t for n, t in sorted(people.comments.get(r, {}).items()) if t]
    prompt = rec.get("prompt")
    baseline = None
    if runner.pairwise:
        column = getattr(runner.metric, "baseline_column", "baseline_model_response")
        value = rec.get(column)
        baseline = (
            None
            if value is None or (isinstance(value, float) and math.isnan(value))
            else str(value)
        )
    return Example(
        response=str(rec["response"]),
        levels=levels,
        reason="; ".join(reasons),
        prompt=str(prompt) if isinstance(prompt, str) else None,
        baseline=baseline,
        row=r,
    )


def _describe(ex: Example) -> str:
    levels = ", ".join(f"{n}={v}" for n, v in ex.levels.items())
    text = ex.response if len(ex.response) <= 80 else ex.response[:77] + "..."
    return f"row {ex.row}: {text!r} ({levels})"


def _still_valid(cuts: Cuts, rubric: Rubric, metric: str) -> Cuts:
    """The metric's own cut points that still fit the (maybe rewritten) criteria."""
    kept = []
    for name, numbers in cuts:
        try:
            check_cuts(((name, numbers),), rubric, metric)
        except ValueError:
            continue
        kept.append((name, numbers))
    return tuple(kept)


def _paid_rows(
    runner: _Runner, v: _Variant, train: Sequence[int], val: Sequence[int]
) -> tuple[list[int], str]:
    """Rows with answers already paid for under ``v``: training ones, else validation ones."""
    paid = runner.levels.get(v.key, {})
    used = [r for r in train if r in paid and paid[r] is not None]
    if used:
        return used, "training"
    return [r for r in val if r in paid and paid[r] is not None], "validation"


def _cut_points(
    runner: _Runner,
    people: People,
    current: _Variant,
    cuts: Cuts,
    train: Sequence[int],
    val: Sequence[int],
    changes: list[Change],
) -> Cuts:
    """Per criterion with levels: the cut points best matching people on paid-for answers."""
    paid = runner.levels.get(current.key, {})
    used, where = _paid_rows(runner, current, train, val)
    check = [r for r in val if paid.get(r) is not None] if where == "training" else []
    table = dict(cuts)
    for criterion in current.rubric.criteria:
        name, scores = criterion.name, criterion.scores
        if criterion.is_yes_no:
            continue

        def pairs(rows: Sequence[int], name: str = name) -> list[tuple[int, int]]:
            return [
                (int((paid[r] or {})[name]), int(people.values[r][name]))
                for r in rows
                if name in (paid[r] or {}) and name in people.values.get(r, {})
            ]

        fit = pairs(used)
        if not fit:
            continue
        base = table.get(name, identity_cuts(criterion))
        new, matches = best_cuts(fit, scores)

        def hits(ps: Sequence[tuple[int, int]], c: Sequence[float], s: list[int] = scores) -> int:
            return sum(read_level(j, c, s) == p for j, p in ps)

        base_hits = hits(fit, base)
        held = pairs(check)
        new_val = hits(held, new) / len(held) if held else None
        base_val = hits(held, base) / len(held) if held else None
        better = matches > base_hits
        holds = new_val is None or base_val is None or new_val >= base_val
        kept = better and holds and tuple(new) != tuple(base)
        if tuple(new) == tuple(base):
            note = f"the current reading is already the best on the {where} rows"
        elif not better:
            note = f"no better on the {where} rows"
        elif not holds:
            note = f"worse on the validation rows ({new_val:.0%} vs {base_val:.0%})"
        else:
            note = (
                f"{criterion.name} agreement on the {where} rows' answers "
                f"{base_hits / len(fit):.0%} -> {matches / len(fit):.0%} (no new calls)"
            )
        changes.append(
            Change(
                "cut_points",
                name,
                describe_cuts(base, scores),
                describe_cuts(new, scores),
                kept,
                train=matches / len(fit) if where == "training" else None,
                validation=new_val if where == "training" else matches / len(fit),
                note=note,
            )
        )
        if kept:
            table[name] = tuple(new)
    return as_cuts(table, runner.metric.name)


def _pass_mark(
    runner: _Runner,
    people: People,
    current: _Variant,
    cuts: Cuts,
    train: Sequence[int],
    val: Sequence[int],
    changes: list[Change],
) -> float | None:
    original = current.rubric.pass_mark
    paid = runner.levels.get(current.key, {})
    used, where = _paid_rows(runner, current, train, val)
    used = [r for r in used if "overall" in people.values.get(r, {})]
    if not used:
        return original
    scores = sorted(
        {
            score(current.rubric, read_levels(paid[r] or {}, cuts, current.rubric)).value
            for r in used
        }
    )
    marks = {original} if original is not None else set()
    marks |= {round((a + b) / 2, 6) for a, b in itertools.pairwise(scores)}
    marks |= {0.0, min(1.0, scores[-1] + 1e-6)}

    def agree(p: float | None) -> float:
        got = runner.reread(current, used, p, cuts)
        return _agree(people, got, used, "overall")

    base = agree(original)
    best = max(
        sorted(m for m in marks if m is not None),
        key=lambda p: (agree(p), -abs(p - (original or 0.0))),
    )
    new = agree(best)
    kept = new > base
    changes.append(
        Change(
            "pass_mark",
            "overall",
            "none" if original is None else f"{original:.0%}",
            f"{best:.0%}",
            kept,
            train=new if where == "training" else None,
            validation=new if where == "validation" else None,
            proposal=best,
            note=f"overall agreement on the {where} rows' answers {base:.0%} -> {new:.0%} (no new calls)",
        )
    )
    return best if kept else original
