"""Scores from levels, in code: validation, weights, critical gating, pass marks, summaries.

The judge gives a level per criterion; everything after that is exact arithmetic here, so the
rules are the same on every row and every run (seed 003, "Combining Scores in Code").
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from .scale import format_count, format_percent, format_spread

if TYPE_CHECKING:
    from .rubric import Criterion, Rubric

__all__ = [
    "NO_PASS_MARK",
    "PAIRWISE_SCALE",
    "PASS_RULE",
    "Figures",
    "Interval",
    "Score",
    "ScoreError",
    "Scorer",
    "Summary",
    "WinTieLoss",
    "cell_flag",
    "coerce_level",
    "criterion_tallies",
    "score",
    "score_value",
    "summarize",
    "unshared_criteria",
    "wilson_interval",
]

_EPS = 1e-9

#: candidate much better ... baseline much better
PAIRWISE_SCALE: tuple[float, ...] = (1.0, 0.5, 0.0, -0.5, -1.0)


class ScoreError(ValueError):
    """Levels that cannot be scored against the rubric; ``problems`` lists every one."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


class Score(BaseModel):
    """One case's result against one rubric."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float
    """Weighted score in [0, 1]."""
    levels: dict[str, int]
    """The validated level per criterion."""
    parts: dict[str, float]
    """Each criterion's level normalised onto [0, 1]."""
    critical_failures: list[str]
    """Criteria below their critical minimum, as ``"accuracy below 2"`` (``"q1 is NO"``)."""
    passed: bool | None
    """True only for a pass (score at or above the pass mark, every critical criterion met);
    False for a fail (below the pass mark, or a critical criterion below its minimum); None
    when there is no pass/fail verdict: no pass mark and no failed critical criterion (the
    verdict then reads ``"critical met"`` or is None). See :func:`summarize` for the rate."""
    verdict: str | None

    @property
    def percent(self) -> float:
        """The score on 0-100, rounded to one decimal as people read it."""
        return round(100 * self.value + 0.0, 1)

    def __str__(self) -> str:
        shown = format_percent(self.value)
        return f"{shown} {self.verdict}" if self.verdict else shown

    def __repr__(self) -> str:
        levels = ", ".join(f"{k}={v}" for k, v in self.levels.items())
        return f"Score({self}; {levels})"

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(k)}</td><td>{v}</td><td>{format_percent(self.parts[k])}</td>"
            "</tr>"
            for k, v in self.levels.items()
        )
        verdict = html.escape(self.verdict or "no verdict")
        return (
            f"<div><b>{format_percent(self.value)}</b> {verdict}"
            "<table><tr><th>criterion</th><th>level</th><th>share</th></tr>"
            f"{rows}</table></div>"
        )


_YES = {"yes", "y", "true", "pass", "met", "1"}
_NO = {"no", "n", "false", "fail", "not met", "unmet", "0"}


def coerce_level(criterion: Criterion, value: Any) -> int | str:
    """Turn a judge's answer for one criterion into a level, or a problem text.

    Accepts integers (and integral floats or digit strings), booleans and YES/NO words for
    yes/no criteria, and ``{"score": n}`` / ``{"level": n}`` / ``{"verdict": "YES"}`` mappings.
    """
    if type(value) is int:  # the common case (a level already read): no ABC checks, no list
        for known in criterion.levels:
            if known.score == value:
                return value
        return f"{criterion.name}: {value} outside {_range_text(criterion)}"
    if type(value) is not str and isinstance(value, Mapping):  # (a "YES": no ABC check)
        for key in ("score", "level", "verdict", "answer"):
            if key in value:
                return coerce_level(criterion, value[key])
        return f"{criterion.name}: no score in {dict(value)!r}"
    if isinstance(value, bool):
        if criterion.is_yes_no:
            return int(value)
        return f"{criterion.name}: {value!r} is not a level ({_range_text(criterion)})"
    if isinstance(value, str):
        word = value.strip().strip("[]*.").strip().lower()
        if (word in _YES or word in _NO) and criterion.is_yes_no:
            return 1 if word in _YES else 0
        try:
            value = float(word)
        except ValueError:
            return f"{criterion.name}: {value!r} is not a level ({_range_text(criterion)})"
    if isinstance(value, int | float):
        if not math.isfinite(value) or value != int(value):
            return f"{criterion.name}: {value} is not a whole level ({_range_text(criterion)})"
        level = int(value)
        if level not in criterion.scores:
            return f"{criterion.name}: {level} outside {_range_text(criterion)}"
        return level
    return f"{criterion.name}: {value!r} is not a level ({_range_text(criterion)})"


def _range_text(criterion: Criterion) -> str:
    scores = criterion.scores
    if scores == list(range(scores[0], scores[-1] + 1)):
        return f"{scores[0]}-{scores[-1]}"
    return "one of " + ", ".join(str(s) for s in scores)


def score(rubric: Rubric, levels: Mapping[str, Any]) -> Score:
    """Validate ``levels`` against ``rubric`` and combine them.

    score = clip(sum(w_i * norm_i) / sum(w_i for w_i > 0), 0, 1), where norm_i = (s_i - min_i) /
    (max_i - min_i). With positive weights that sum to one this is the lesson's weighted score; a
    checklist gives the weighted share of YES; a negative weight (only on a yes/no criterion: an
    undesirable behaviour, HealthBench style) subtracts its points when the answer is YES. The
    clip keeps the score in [0, 1] and it stays monotone: a better level never lowers it, a
    penalty met never raises it. Critical criteria are checked before the total.
    """
    return Scorer(rubric)(levels)


class Scorer:
    """:func:`score` for one rubric, with what it reads from the rubric worked out once.

    A run scores thousands of answers against one rubric; the rubric must not change while a
    scorer made from it is in use (build a new one after editing the rubric).
    """

    __slots__ = ("_allowed", "_by_name", "_critical", "_pass_mark", "_positive", "_spans")

    def __init__(self, rubric: Rubric) -> None:
        criteria = rubric.criteria
        self._by_name = {c.name: c for c in criteria}
        self._allowed = {c.name: frozenset(c.scores) for c in criteria}
        #: name -> (weight, min level, max - min), in the rubric's order
        self._spans = {c.name: (c.weight, c.min_score, c.max_score - c.min_score) for c in criteria}
        self._positive = math.fsum(c.weight for c in criteria if c.weight > 0)
        self._critical = [
            (c.name, c.critical, c.is_yes_no) for c in criteria if c.critical is not None
        ]
        self._pass_mark = rubric.pass_mark

    def __call__(self, levels: Mapping[str, Any]) -> Score:
        return Score(**self.figures(levels)._asdict())

    def figures(self, levels: Mapping[str, Any]) -> Figures:
        """What :class:`Score` holds, as a plain tuple (no model validation: a run that
        only reads the value and verdict of thousands of answers skips that cost)."""
        by_name, allowed = self._by_name, self._allowed
        checked: dict[str, int] = {}
        bad: list[str] = []
        unknown: list[str] = []
        for name, value in levels.items():
            ok = allowed.get(name)
            if ok is None:
                unknown.append(f"{name}: not in the rubric")
            elif type(value) is int and value in ok:  # a level already read: nothing to coerce
                checked[name] = value
            else:
                level = coerce_level(by_name[name], value)
                if isinstance(level, str):
                    bad.append(level)
                else:
                    checked[name] = level
        if bad or unknown or len(checked) < len(by_name):
            missing = [f"{name}: missing" for name in by_name if name not in levels]
            raise ScoreError(missing + bad + unknown)

        # Criterion.normalise, with each criterion's lowest level and span read once
        parts = {name: (checked[name] - low) / span for name, (_, low, span) in self._spans.items()}
        total = math.fsum(w * parts[name] for name, (w, _, _) in self._spans.items())
        value = min(1.0, max(0.0, total / self._positive))
        if abs(value - round(value, 12)) < _EPS:
            value = round(value, 12)  # 0.7500000000000001 -> 0.75: the lesson's numbers, exactly

        failures = [
            f"{name} is NO" if yes_no else f"{name} below {minimum}"
            for name, minimum, yes_no in self._critical
            if checked[name] < minimum
        ]
        passed: bool | None
        verdict: str | None
        if failures:
            passed, verdict = False, f"fail ({'; '.join(failures)})"
        elif self._pass_mark is not None:
            passed = value + _EPS >= self._pass_mark
            verdict = "pass" if passed else "fail (score below pass mark)"
        elif self._critical:
            # no pass mark to pass: say only what was checked, so a low score never reads or
            # counts as a pass
            passed, verdict = None, "critical met"
        else:
            passed, verdict = None, None
        return Figures(value, checked, parts, failures, passed, verdict)


class Figures(NamedTuple):
    """A :class:`Score`'s fields, as :meth:`Scorer.figures` computes them."""

    value: float
    levels: dict[str, int]
    parts: dict[str, float]
    critical_failures: list[str]
    passed: bool | None
    verdict: str | None


# -- summaries -------------------------------------------------------------------------------------


class Interval(BaseModel):
    """A rate with its Wilson 95% interval and the counts behind it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rate: float | None
    low: float | None
    high: float | None
    k: int
    n: int

    def __str__(self) -> str:
        if self.rate is None or self.low is None or self.high is None:
            return f"n/a (0 of {self.n})"
        return f"{self.rate:.1%} [{self.low:.1%}, {self.high:.1%}] ({self.k}/{self.n})"


def wilson_interval(k: int, n: int, z: float = 1.959963984540054) -> Interval:
    """Wilson score interval for k successes in n trials (good at small n and near 0 or 1)."""
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Interval(rate=None, low=None, high=None, k=0, n=0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # at k = 0 (k = n) the bound is exactly 0 (1); the float sum leaves 5.55e-17 (0.99999...),
    # which summaries, summary.json and MLflow would print as if it meant something
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return Interval(rate=p, low=low, high=high, k=k, n=n)


#: what counts as a pass, in one line for every view that shows a pass rate (see ``Summary``)
PASS_RULE = (
    "pass = verdict 'pass' (score at or above the pass mark, every critical criterion met), "
    "over rows with a pass/fail verdict; a metric without a pass mark has no pass rate"
)
_COUNT_KEYS = {"win": "wins", "tie": "ties", "loss": "losses"}

#: what a metric whose rubrics have no pass mark shows instead of a pass rate
NO_PASS_MARK = "no pass mark"


class WinTieLoss(BaseModel):
    """How often one pairwise criterion went to the candidate, was a tie, or went to the
    baseline (a criterion whose two orders disagreed counts as a tie)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    win: int = 0
    tie: int = 0
    loss: int = 0


class Summary(BaseModel):
    """What a metric's column of results comes to.

    The pass rule: a row passes when its verdict is "pass" (score at or above the rubric's pass
    mark and every critical criterion met) and fails on any "fail ..." verdict. A scored row
    with no pass/fail verdict (no pass mark: "critical met", or no verdict at all) is neither;
    ``pass_rate`` is ``passed / verdicts`` and ``scored - verdicts`` rows are shown as "without a
    verdict", never dropped silently. Rows with an error are in ``errors`` only.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    n: int
    """Rows attempted."""
    scored: int
    """Rows with a score (errors and unscored rows are excluded from means and rates)."""
    errors: int
    mean: float | None
    std: float | None
    pass_rate: Interval | None
    passed: int | None = None
    """Scored rows whose verdict is a pass (None when no pass flags were given)."""
    verdicts: int | None = None
    """Scored rows with a pass/fail verdict: the pass rate's denominator."""
    win: Interval | None = None
    tie: Interval | None = None
    loss: Interval | None = None
    swap_inconsistent: int | None = None
    """Pairwise: scored rows whose two orders disagreed (overall or on some criterion)."""
    swap_inconsistent_rate: float | None = None
    criteria: dict[str, WinTieLoss] | None = None
    """Pairwise: per criterion, how many rows it went to the candidate, a tie, the baseline."""
    has_pass_mark: bool | None = None
    """False when the metric's rubrics have no pass mark (generated checklists): no row can
    pass, so there is no pass rate ("no pass mark"); None when not known (kept as given)."""
    critical_fails: int | None = None
    """Without a pass mark: scored rows that failed a critical criterion."""

    @property
    def no_verdict(self) -> int:
        """Scored rows without a pass/fail verdict (counted, not in the pass rate)."""
        return 0 if self.verdicts is None else self.scored - self.verdicts

    def as_flat_dict(self, prefix: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {
            f"{prefix}n": self.n,
            f"{prefix}scored": self.scored,
            f"{prefix}errors": self.errors,
            f"{prefix}mean": self.mean,
            f"{prefix}std": self.std,
        }
        for key in ("pass_rate", "win", "tie", "loss"):
            iv: Interval | None = getattr(self, key)
            if iv is None:
                continue
            name = key if key == "pass_rate" else f"{key}_rate"
            out[f"{prefix}{name}"] = iv.rate
            out[f"{prefix}{name}_low"] = iv.low
            out[f"{prefix}{name}_high"] = iv.high
            if key != "pass_rate":  # the counts behind the rate: "win 33% (1/3)"
                out[f"{prefix}{_COUNT_KEYS[key]}"] = iv.k
        if self.verdicts is not None:
            out[f"{prefix}passed"] = self.passed
            out[f"{prefix}verdicts"] = self.verdicts
        if self.swap_inconsistent is not None:
            out[f"{prefix}swap_inconsistent"] = self.swap_inconsistent
            out[f"{prefix}swap_inconsistent_rate"] = self.swap_inconsistent_rate
        if self.has_pass_mark is False:
            out[f"{prefix}has_pass_mark"] = False
            out[f"{prefix}critical_fails"] = self.critical_fails
        return out

    def pass_text(self) -> str | None:
        """The pass rate as people read it (``"75.0% (3/4), 2 without a verdict"``), ``"no pass
        mark"`` for a metric that cannot pass, None for a metric with no pass/fail at all."""
        if self.has_pass_mark is False:
            fails = self.critical_fails or 0
            return NO_PASS_MARK + (f" ({fails} failed a critical item)" if fails else "")
        if self.pass_rate is not None and self.pass_rate.rate is not None:
            text = f"{format_percent(self.pass_rate.rate)} ({self.passed}/{self.verdicts})"
            return text + (f", {self.no_verdict} without a verdict" if self.no_verdict else "")
        return None

    def text(self) -> str:
        """One line as people read it: percents with ``%``, counts beside every rate."""
        pairwise = self.win is not None  # a preference on -100%..+100%: show its sign
        parts = [f"mean {format_percent(self.mean, signed=pairwise)}"]
        if self.std is not None:
            parts[0] += f" {format_spread(self.std)}"
        if self.has_pass_mark is False:
            parts.append(self.pass_text() or NO_PASS_MARK)
        elif self.pass_rate is not None and self.pass_rate.rate is not None:
            parts.append(
                f"pass {format_percent(self.pass_rate.rate)} ({self.passed}/{self.verdicts})"
            )
        if self.verdicts is not None and self.no_verdict:
            parts.append(f"{self.no_verdict} without a verdict")
        for key in ("win", "tie", "loss"):
            iv: Interval | None = getattr(self, key)
            if iv is not None and iv.rate is not None:
                parts.append(f"{key} {format_percent(iv.rate)} ({iv.k}/{iv.n})")
        if self.swap_inconsistent is not None:
            parts.append(
                f"swap-inconsistent {format_percent(self.swap_inconsistent_rate)} "
                f"({self.swap_inconsistent}/{self.scored})"
            )
        parts.append(f"{self.scored}/{self.n} scored, {format_count(self.errors, 'error')}")
        return "; ".join(parts)


def summarize(
    values: Iterable[float | None],
    passed: Iterable[bool | None] | None = None,
    choices: Iterable[float | None] | None = None,
    *,
    swap_consistent: Iterable[bool | None] | None = None,
    criteria: Iterable[Any] | None = None,
    has_pass_mark: bool | None = None,
) -> Summary:
    """Mean, sample std, pass rate and (for pairwise) win/tie/loss rates with Wilson intervals.

    ``None`` (or NaN) marks a row without a score: it counts in ``n`` and ``errors`` but in no mean
    or rate. ``passed`` holds each row's pass flag (True pass, False fail, None no verdict; see
    :class:`Summary` for the rule). ``choices`` are pairwise choices on the 5-point scale; > 0 is
    a win for the candidate. ``swap_consistent`` and ``criteria`` (each row's per-criterion
    list with a ``winner``) give the pairwise flip count and per-criterion win/tie/loss counts.
    ``has_pass_mark=False`` (no rubric of the metric has a pass mark): no pass rate, since no
    row can pass; the rows that failed a critical criterion are counted instead.
    """
    vals = [score_value(v) for v in values]
    n = len(vals)
    scored_vals = [v for v in vals if v is not None]
    mean = math.fsum(scored_vals) / len(scored_vals) if scored_vals else None
    std: float | None = None
    if mean is not None and len(scored_vals) >= 2:
        var = math.fsum((v - mean) ** 2 for v in scored_vals) / (len(scored_vals) - 1)
        std = math.sqrt(var)
    pass_iv: Interval | None = None
    n_passed = n_verdicts = None
    if passed is not None:
        flags = [cell_flag(p) for p, v in zip(passed, vals, strict=True) if v is not None]
        decided = [f for f in flags if f is not None]
        n_passed, n_verdicts = sum(decided), len(decided)
        if decided and has_pass_mark is not False:
            pass_iv = wilson_interval(n_passed, n_verdicts)
    critical_fails = None
    if has_pass_mark is False:
        critical_fails = (
            n_verdicts - n_passed if n_verdicts is not None and n_passed is not None else 0
        )
        n_passed = n_verdicts = None
    win = tie = loss = None
    if choices is not None:
        picked = [c for c in (score_value(c) for c in choices) if c is not None]
        m = len(picked)
        win = wilson_interval(sum(c > 0 for c in picked), m)
        tie = wilson_interval(sum(c == 0 for c in picked), m)
        loss = wilson_interval(sum(c < 0 for c in picked), m)
    flips = flip_rate = None
    if swap_consistent is not None:
        marks = [cell_flag(f) for f, v in zip(swap_consistent, vals, strict=True) if v is not None]
        known = [m for m in marks if m is not None]
        flips = sum(not m for m in known)
        flip_rate = flips / len(known) if known else None
    per_criterion = None
    if criteria is not None:
        per_criterion = _criterion_counts(
            [c for c, v in zip(criteria, vals, strict=True) if v is not None]
        )
    return Summary(
        n=n,
        scored=len(scored_vals),
        errors=n - len(scored_vals),
        mean=mean,
        std=std,
        pass_rate=pass_iv,
        passed=n_passed,
        verdicts=n_verdicts,
        win=win,
        tie=tie,
        loss=loss,
        swap_inconsistent=flips,
        swap_inconsistent_rate=flip_rate,
        criteria=per_criterion,
        has_pass_mark=has_pass_mark,
        critical_fails=critical_fails,
    )


def cell_flag(value: Any) -> bool | None:
    """A pass or consistency flag from a table cell (bools, numpy bools; None for None/NaN)."""
    if value is None or isinstance(value, str):
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    try:
        return bool(value)
    except (TypeError, ValueError):
        return None


_SIDES = {"candidate": "win", "tie": "tie", "baseline": "loss"}


def _criterion_counts(rows: Sequence[Any]) -> dict[str, WinTieLoss]:
    unshared = unshared_criteria(rows)
    return {
        name: WinTieLoss(**c) for name, c in criterion_tallies(rows).items() if name not in unshared
    }


def unshared_criteria(rows: Iterable[Any]) -> set[str]:
    """Criterion names that ask different questions on different rows (per-row generated
    rubrics all name their items q1, q2, ...): adding them up would add unrelated questions,
    so per-criterion figures leave them out."""
    questions: dict[str, str] = {}
    unshared: set[str] = set()
    for row in rows:
        if not isinstance(row, Sequence) or isinstance(row, str):
            continue
        for item in row:
            if not isinstance(item, Mapping) or "name" not in item:
                continue
            question = item.get("question")
            if not isinstance(question, str) or not question:
                continue
            name = str(item["name"])
            seen = questions.setdefault(name, question)
            if seen != question:
                unshared.add(name)
    return unshared


def criterion_tallies(
    rows: Iterable[Any], into: dict[str, dict[str, int]] | None = None
) -> dict[str, dict[str, int]]:
    """Per criterion, ``{"win", "tie", "loss"}`` counts from pairwise rows' criteria lists
    (added to ``into`` when given: chunks of a streamed run add up)."""
    counts: dict[str, dict[str, int]] = {} if into is None else into
    for row in rows:
        if not isinstance(row, Sequence) or isinstance(row, str):
            continue
        for item in row:
            if not isinstance(item, Mapping) or item.get("winner") not in _SIDES:
                continue
            tally = counts.setdefault(str(item.get("name", "")), {"win": 0, "tie": 0, "loss": 0})
            tally[_SIDES[item["winner"]]] += 1
    return counts


def score_value(value: Any) -> float | None:
    """A table cell as a score: a float, or None for a missing, NaN or non-numeric cell."""
    if value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f
