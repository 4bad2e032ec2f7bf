"""``assert_rubric``: judge a case (or a table) with a metric and fail a test with the reasons.

What DeepEval's ``assert_test`` and promptfoo's assertions give people, over rubriclab's own
metrics: the assertion message names each failing row, its score against the threshold, the
criteria that failed it with the judge's evidence and reasoning, and the judge's rationale, so
a CI log says why without opening a notebook. A row the judge could not score fails the test
with its error (never read as a score of 0).

Inside a pytest session with rubriclab's plugin loaded (``rubriclab.testing.pytest_plugin``),
every call shares one judge (``--rubriclab-judge``) and so one cache: the same case under the
same metric is judged once per session, and the session ends with a summary of every judged
case. Outside pytest it uses the judge given, else the default one (``rl.set_judge``,
``$RUBRICLAB_JUDGE``).
"""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from ..judges import Judge
    from ..metrics import Metric
    from ..result import EvalResult
    from ..rubric import Rubric

__all__ = ["Judgement", "RubricSession", "Threshold", "assert_rubric", "current_session"]

Threshold = float | Mapping[str, float] | None
_MAX_ROWS_SHOWN = 5
_MAX_TEXT = 400


@dataclass
class Judgement:
    """One row judged by one metric in a test: what the session summary lists."""

    test: str
    metric: str
    row: int
    score: float | None
    threshold: float | None
    passed: bool
    error: str | None = None


@dataclass
class RubricSession:
    """What a pytest session shares: one judge (so one cache) and every judged row."""

    judge_spec: str | None = None
    model: str | None = None
    judgements: list[Judgement] = field(default_factory=list)
    current_test: str = ""
    #: each test's outcome as pytest reported it ("failed", "passed", "xfailed", "skipped"):
    #: a rubric not met inside ``pytest.raises`` is no failing test, and the summary says so
    outcomes: dict[str, str] = field(default_factory=dict)
    calls: int = 0
    cached: int = 0
    _judge: Judge | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def judge(self, given: Judge | str | None = None) -> Judge:
        """The judge for a call: the one given, else the session's, made once (one cache)."""
        from ..judges import Judge, get_judge

        if given is not None:
            return get_judge(given)
        with self._lock:
            if self._judge is None:
                if self.judge_spec:
                    self._judge = Judge(self.judge_spec, model=self.model)
                else:
                    self._judge = get_judge()
            return self._judge

    def record_outcome(self, test: str, outcome: str) -> None:
        """Note a test's outcome; a failure in any phase (setup, call, teardown) sticks."""
        if self.outcomes.get(test) != "failed":
            self.outcomes[test] = outcome

    def summary_lines(self) -> list[str]:
        """The end-of-session summary: per metric, rows judged and rubrics not met; then each
        case whose rubric was not met, with whether its test failed (it may have expected it)."""
        if not self.judgements:
            return []
        by_metric: dict[str, list[Judgement]] = {}
        for j in self.judgements:
            by_metric.setdefault(j.metric, []).append(j)
        tests = len({j.test for j in self.judgements})
        lines = [f"{len(self.judgements)} case(s) judged in {tests} test(s)"]
        if self._judge is not None:
            lines[0] += f" by {self._judge!r}"  # spec and model; never the key
        lines.append(
            f"judge calls: {self.calls} made, {self.cached} answered from the session's cache"
        )
        for metric, rows in by_metric.items():
            failed = [j for j in rows if not j.passed]
            scores = [j.score for j in rows if j.score is not None]
            mean = f", mean score {sum(scores) / len(scores):.2f}" if scores else ""
            lines.append(f"  {metric}: {len(rows)} judged, {len(failed)} rubric not met{mean}")
        for j in self.judgements:
            if not j.passed:
                outcome = self.outcomes.get(j.test, "outcome unknown")
                lines.append(
                    f"  rubric not met: {j.test} [{j.metric}, row {j.row}]: {_why(j)}"
                    f" (test {outcome})"
                )
        return lines

    def close(self) -> None:
        """Close the judge the session made (its connections); a judge given stays open."""
        if self._judge is not None and self.judge_spec:
            from ..judges.sync import run_sync

            run_sync(self._judge.aclose())
        self._judge = None


#: running sessions, innermost last (pytester's in-process runs nest one inside another)
_sessions: list[RubricSession] = []


def current_session() -> RubricSession | None:
    """The pytest session's shared state, when rubriclab's plugin is running one."""
    return _sessions[-1] if _sessions else None


def start_session(session: RubricSession) -> None:
    """The pytest plugin starts a session (cheap: the judge is made when first used)."""
    _sessions.append(session)


def end_session(session: RubricSession) -> None:
    """The pytest plugin ends its session and closes the judge it made."""
    if session in _sessions:
        _sessions.remove(session)
    session.close()


def assert_rubric(
    data: Any,
    metric: Metric | Rubric | str | Sequence[Metric | Rubric | str],
    *,
    threshold: Threshold = None,
    judge: Judge | str | None = None,
    mapping: Mapping[str, str] | None = None,
) -> EvalResult:
    """Judge ``data`` (a dict for one case, records or a DataFrame) and fail if a row fails.

    ``metric`` is a metric, a rubric (judged as a rubric metric named ``rubric``), a predefined
    metric's name, or a list of them. ``threshold`` is a minimum score in [0, 1] for every
    metric, or a mapping from metric name to its minimum; a metric without one passes a row
    on its own verdict (its rubric's pass mark and critical criteria). Returns the result when
    every row passes; raises ``AssertionError`` naming each failing row otherwise.
    """
    __tracebackhide__ = True  # pytest shows the failing test's line, not this function
    from ..evaluation import evaluate

    metrics = _metrics(metric)
    limits = _thresholds(threshold, [m.name for m in metrics])
    frame = _frame(data)
    session = current_session()
    run_judge = session.judge(judge) if session is not None else judge
    with warnings.catch_warnings():
        from ..result import RowErrorWarning

        # a row's error is told in the assertion message; a warning would say it twice
        warnings.simplefilter("ignore", RowErrorWarning)
        result = evaluate(frame, metrics, judge=run_judge, mapping=mapping)
    if session is not None:
        with session._lock:
            session.calls += sum(result.stats.calls.values())
            session.cached += sum(result.stats.cached.values())
    rubrics = {m.name: m.rubric for m in metrics}
    problems: list[str] = []
    test = session.current_test if session is not None else ""
    for m in metrics:
        failed = _check_metric(result.table, m.name, limits.get(m.name), rubrics[m.name])
        for row, score, ok, error, text in failed:
            if session is not None:
                with session._lock:
                    session.judgements.append(
                        Judgement(test, m.name, row, score, limits.get(m.name), ok, error)
                    )
            if not ok:
                problems.append(text)
    if problems:
        n = len(frame)
        header = f"rubric check failed: {len(problems)} of {n * len(metrics)} judged row(s) failed"
        shown = problems[:_MAX_ROWS_SHOWN]
        more = len(problems) - len(shown)
        tail = [f"... and {more} more failing row(s)"] if more else []
        raise AssertionError("\n".join([header, *shown, *tail]))
    return result


# -- inputs ------------------------------------------------------------------------------------


def _metrics(metric: Any) -> list[Metric]:
    from ..metrics import Metric, by_name
    from ..metrics.rubric import RubricMetric
    from ..rubric import Rubric

    items = list(metric) if isinstance(metric, list | tuple) else [metric]
    if not items:
        raise ValueError("assert_rubric: give at least one metric")
    out: list[Metric] = []
    for item in items:
        if isinstance(item, Rubric):
            out.append(RubricMetric(name="rubric", rubric=item))
        elif isinstance(item, str):
            out.append(by_name(item))
        elif isinstance(item, Metric):
            out.append(item)
        else:
            raise TypeError(
                "assert_rubric: metric must be a metric, a Rubric or a predefined metric's "
                f"name, not {type(item).__name__}"
            )
    names = [m.name for m in out]
    if len(set(names)) != len(names):
        raise ValueError(f"assert_rubric: metric names must differ, got {names}")
    return out


def _thresholds(threshold: Threshold, names: Sequence[str]) -> dict[str, float]:
    if threshold is None:
        return {}
    if isinstance(threshold, Mapping):
        unknown = sorted(set(threshold) - set(names))
        if unknown:
            raise ValueError(
                f"assert_rubric: threshold for {', '.join(map(repr, unknown))}, which is not "
                f"a metric of this check ({', '.join(names)})"
            )
        limits = {str(k): v for k, v in threshold.items()}
    else:
        limits = dict.fromkeys(names, threshold)
    for name, value in limits.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"assert_rubric: threshold for {name!r} must be a number in [0, 1]")
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(
                f"assert_rubric: threshold for {name!r} must be in [0, 1], got {value}"
            )
    return {k: float(v) for k, v in limits.items()}


def _frame(data: Any) -> pd.DataFrame:
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, Mapping):
        return pd.DataFrame([dict(data)])
    if isinstance(data, list | tuple) and all(isinstance(r, Mapping) for r in data):
        return pd.DataFrame([dict(r) for r in data])
    raise TypeError(
        "assert_rubric: data must be a dict (one case), a list of dicts or a DataFrame, "
        f"not {type(data).__name__}"
    )


# -- reading the result --------------------------------------------------------------------------


def _check_metric(
    table: pd.DataFrame, name: str, limit: float | None, rubric: Rubric | None
) -> list[tuple[int, float | None, bool, str | None, str]]:
    """Each row: (position, score, passed, error, the failure's text)."""
    from ..columns import CRITERIA, ERROR, PASSED, RATIONALE, RUBRIC, SCORE, col

    out: list[tuple[int, float | None, bool, str | None, str]] = []
    for pos, (_, row) in enumerate(table.iterrows()):
        error = _text(row.get(col(name, ERROR)))
        score = _number(row.get(col(name, SCORE)))
        passed_cell = row.get(col(name, PASSED))
        own = _rubric_of(row.get(col(name, RUBRIC))) or rubric
        if error or score is None:
            why = error or "the judge gave no score"
            out.append((pos, None, False, why, f"row {pos} [{name}]: not scored: {why}"))
            continue
        if limit is not None:
            ok = score + 1e-9 >= limit
            reason = f"score {score:.2f} below threshold {limit:.2f}"
        else:
            ok = passed_cell is not False  # no verdict (no pass mark) fails nothing
            reason = f"score {score:.2f}, verdict {_text(row.get(col(name, 'verdict'))) or 'fail'}"
        text = ""
        if not ok:
            lines = [f"row {pos} [{name}]: {reason}"]
            for c in _failing_criteria(row.get(col(name, CRITERIA)), own):
                lines.append(f"    failing criterion {c}")
            rationale = _text(row.get(col(name, RATIONALE)))
            if rationale:
                lines.append(f"    judge's rationale: {_cut(rationale)}")
            text = "\n".join(lines)
        out.append((pos, score, ok, None, text))
    return out


def _failing_criteria(cell: Any, rubric: Rubric | None) -> list[str]:
    """The criteria that cost the row: a critical one below its minimum, a NO, a level below
    the top (or an undesirable behaviour found), each with the judge's evidence and reasons."""
    if not isinstance(cell, list):
        return []
    out = []
    for entry in cell:
        if not isinstance(entry, Mapping):
            continue
        name = str(entry.get("name", "?"))
        level = entry.get("level")
        crit = None
        if rubric is not None:
            try:
                crit = rubric[name]
            except KeyError:
                crit = None
        failing = entry.get("passed_critical") is False
        if crit is not None and isinstance(level, int):
            top = crit.max_score if crit.weight >= 0 else crit.min_score
            failing = failing or level != top
        elif str(entry.get("label", "")).upper() == "NO" or level == 0:
            failing = True  # no rubric to read the top level from: a NO, or level 0 (RAG items)
        if not failing:
            continue
        label = _text(entry.get("label")) or str(level)
        question = _text(entry.get("question"))
        asked = f" ({_cut(question)})" if question and question != name else ""
        head = f"{name!r}{asked}: {label}"
        if entry.get("passed_critical") is False:
            head += f" (critical: needs level {entry.get('critical')})"
        parts = [head]
        evidence = _text(entry.get("evidence"))
        reasoning = _text(entry.get("reasoning"))
        if evidence:
            parts.append(f"evidence: {_cut(evidence)}")
        if reasoning:
            parts.append(f"reason: {_cut(reasoning)}")
        out.append("; ".join(parts))
    return out


def _rubric_of(cell: Any) -> Rubric | None:
    from ..rubric import Rubric

    return cell if isinstance(cell, Rubric) else None


def _number(value: Any) -> float | None:
    """A score cell as a number (a bool is a pass flag, not a score)."""
    from ..scoring import score_value  # here: the plugin loads this module in every pytest run

    return None if isinstance(value, bool) else score_value(value)


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return " ".join(str(value).split())


def _cut(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _why(j: Judgement) -> str:
    if j.error:
        return f"not scored: {_cut(j.error)}"
    if j.score is None:
        return "no score"
    if j.threshold is not None:
        return f"score {j.score:.2f} below threshold {j.threshold:.2f}"
    return f"score {j.score:.2f}, failed its rubric"
