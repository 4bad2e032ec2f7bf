"""Many candidates at once: judge pairs in both orders, rank with Bradley-Terry and intervals.

Every pair of candidates is compared on a case with a pairwise metric (which judges both orders,
so position bias cancels and a flip is a tie). All pairs by default; ``pairs_per_case`` spreads a
budget over cases so that every pair is covered evenly and, once the budget allows, the
comparisons connect every candidate. Strengths come from one Bradley-Terry fit over all
outcomes (ties count half); intervals from refitting on cases resampled with replacement, so a
case's comparisons stay together.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..result import EvalResult, presentation
from ..scale import format_count
from .bradley_terry import DEFAULT_PRIOR, fit_strengths, to_elo

if TYPE_CHECKING:
    from ..judges import Judge
    from ..metrics.pairwise import PairwiseRubricMetric

__all__ = ["Arena", "aarena", "arena", "schedule_pairs"]

#: columns the arena adds to each judged pair row
CASE, FIRST, SECOND = "arena/case", "arena/a", "arena/b"


def schedule_pairs(
    n_cases: int, candidates: Sequence[str], pairs_per_case: int | None = None, seed: int = 0
) -> list[tuple[int, str, str]]:
    """``(case, a, b)`` comparisons: every pair on every case, or ``pairs_per_case`` pairs a case
    dealt round-robin from one shuffled list of all pairs, whose first ``k - 1`` pairs form a path
    through every candidate (so the comparisons connect everyone as soon as the budget reaches
    ``k - 1`` comparisons) and which covers each pair equally often."""
    k = len(candidates)
    every = list(combinations(range(k), 2))
    if pairs_per_case is None or pairs_per_case >= len(every):
        return [(i, candidates[a], candidates[b]) for i in range(n_cases) for a, b in every]
    if pairs_per_case < 1:
        raise ValueError(f"pairs_per_case must be at least 1, got {pairs_per_case}")
    if n_cases * pairs_per_case < k - 1:
        raise ValueError(
            f"{n_cases} cases x {pairs_per_case} pairs cannot connect {k} candidates "
            f"(at least {k - 1} comparisons are needed): raise pairs_per_case"
        )
    rng = np.random.default_rng(seed)
    order = [int(i) for i in rng.permutation(k)]
    path = [tuple(sorted((order[i], order[i + 1]))) for i in range(k - 1)]
    rest = [p for p in every if p not in set(path)]
    rest = [rest[int(i)] for i in rng.permutation(len(rest))]
    deck = path + rest
    out = []
    position = 0
    for case in range(n_cases):
        for _ in range(pairs_per_case):
            a, b = deck[position % len(deck)]
            position += 1
            if rng.random() < 0.5:  # which one sits in the candidate column does not matter
                a, b = b, a  # to the metric (both orders are judged); vary it anyway
            out.append((case, candidates[a], candidates[b]))
    return out


@dataclass
class Arena:
    """An arena run: the ranking with intervals, the win-rate matrix, per-criterion wins, swap
    inconsistency per pair, and ``result``, the pairwise run behind them (one row a comparison,
    with ``arena/case``, ``arena/a`` and ``arena/b``)."""

    candidates: list[str]
    metric: str
    result: EvalResult
    ranking: pd.DataFrame
    matrix: pd.DataFrame
    criteria: pd.DataFrame
    pairs: pd.DataFrame
    confidence: float
    n_boot: int
    prior: float
    errors: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def is_mock(self) -> bool:
        return bool(self.result.is_mock)

    @property
    def judge(self) -> str:
        return str(self.result.judge)

    def summary_text(self) -> str:
        pct = round(100 * self.confidence)
        mock = " (MOCK judge)" if self.is_mock else ""
        lines = [
            f"arena{mock}: {len(self.candidates)} candidates, "
            f"{format_count(len(self.result.table), 'comparison')} on metric {self.metric!r}, "
            f"{format_count(self.errors, 'error')}; Bradley-Terry "
            f"(ties half), {pct}% intervals from {self.n_boot} case resamples"
        ]
        for row in _records(self.ranking):
            lines.append(
                f"{row['rank']:>2}. {row['candidate']}: {row['elo']:.0f} [{row['elo_low']:.0f}, "
                f"{row['elo_high']:.0f}]  rank {row['rank_low']}-{row['rank_high']}  "
                f"win {100 * row['win_rate']:.0f}% of {row['comparisons']}"
            )
        lines += self.notes
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary_text()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return presentation().arena_mimebundle(self)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): v for k, v in r.items()} for r in frame.to_dict("records")]


def _outcome(score: Any) -> float | None:
    """1 when the candidate column won, 0.5 a tie, 0 the baseline column; None: no verdict."""
    if score is None or (isinstance(score, float) and math.isnan(score)):
        return None
    value = float(score)
    return 1.0 if value > 0 else 0.0 if value < 0 else 0.5


def _frame(data: Any, candidates: Sequence[str] | None) -> tuple[pd.DataFrame, list[str]]:
    """One row a case with one column a candidate's response."""
    if isinstance(data, Mapping):
        frames: dict[str, pd.DataFrame] = {}
        for name, run in data.items():
            frame = getattr(run, "table", run)
            if not isinstance(frame, pd.DataFrame):
                raise ValueError(
                    f"candidate {name!r}: give a result or a DataFrame, not {type(run).__name__}"
                )
            frames[str(name)] = frame
        names = list(frames)
        first = next(iter(frames.values()))
        wide = first.drop(columns=[c for c in first.columns if "/" in str(c) or c == "response"])
        for name, frame in frames.items():
            if "response" not in frame.columns:
                raise ValueError(f"candidate {name!r}: its table has no 'response' column")
            if len(frame) != len(first):
                raise ValueError(
                    f"candidate {name!r} has {len(frame)} rows, {names[0]!r} has {len(first)}: "
                    "the runs must be over the same cases"
                )
            if "prompt" in frame.columns and list(frame["prompt"]) != list(first["prompt"]):
                raise ValueError(f"candidate {name!r} was run on other prompts than {names[0]!r}")
            wide[name] = list(frame["response"])
        return wide.reset_index(drop=True), names
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    if not candidates:
        raise ValueError("name the candidates' response columns: candidates=['model_a', ...]")
    names = [str(c) for c in candidates]
    missing = [c for c in names if c not in frame.columns]
    if missing:
        raise ValueError(
            f"no column {missing[0]!r} in the data (columns: {', '.join(map(str, frame.columns))})"
        )
    return frame.reset_index(drop=True), names


def _default_metric() -> PairwiseRubricMetric:
    from ..metrics.pairwise import GENERAL_QUALITY

    return GENERAL_QUALITY


async def aarena(
    data: Any,
    candidates: Sequence[str] | None = None,
    metric: PairwiseRubricMetric | None = None,
    *,
    judge: Judge | str | None = None,
    pairs_per_case: int | None = None,
    n_boot: int = 1000,
    confidence: float = 0.95,
    prior: float = DEFAULT_PRIOR,
    seed: int = 0,
) -> Arena:
    """Async form of :func:`arena`."""
    from ..evaluation import aevaluate

    if len(set(candidates or ())) != len(candidates or ()):
        raise ValueError("candidates must be distinct")
    frame, names = _frame(data, candidates)
    if len(names) < 2:
        raise ValueError("an arena needs at least two candidates")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    metric = metric if metric is not None else _default_metric()
    if getattr(metric, "kind", None) != "pairwise":
        raise ValueError(
            f"metric {getattr(metric, 'name', metric)!r} is not pairwise: give a "
            "PairwiseRubricMetric (e.g. rl.metrics.pairwise.GENERAL_QUALITY)"
        )
    baseline = metric.baseline_column
    shared = frame.drop(columns=[c for c in names if c in frame.columns])
    shared = shared.drop(columns=[c for c in ("response", baseline) if c in shared.columns])
    plan = schedule_pairs(len(frame), names, pairs_per_case, seed)
    records = []
    for case, a, b in plan:
        row = shared.iloc[case].to_dict()
        row.update({"response": frame.at[case, a], baseline: frame.at[case, b]})
        row.update({CASE: case, FIRST: a, SECOND: b})
        records.append(row)
    result = await aevaluate(pd.DataFrame.from_records(records), [metric], judge=judge)
    return _rank(result, metric.name, names, len(frame), n_boot, confidence, prior, seed)


def arena(
    data: Any,
    candidates: Sequence[str] | None = None,
    metric: PairwiseRubricMetric | None = None,
    *,
    judge: Judge | str | None = None,
    pairs_per_case: int | None = None,
    n_boot: int = 1000,
    confidence: float = 0.95,
    prior: float = DEFAULT_PRIOR,
    seed: int = 0,
) -> Arena:
    """Rank several candidates' responses to the same cases.

    ``data`` holds one column per candidate (named in ``candidates``) beside the prompt and any
    other columns the metric reads, or is a mapping ``{name: result_or_table}`` of runs over the
    same cases (their ``response`` columns are the candidates). Each pair is judged with the
    pairwise ``metric`` (default ``rl.metrics.pairwise.GENERAL_QUALITY``) in both orders;
    ``pairs_per_case`` limits the comparisons a case gets (all pairs by default). The ranking
    is a Bradley-Terry fit (ties half, a small ``prior`` keeps a winless candidate finite) with
    ``confidence`` intervals from ``n_boot`` resamples of the cases.
    """
    from ..judges.sync import run_sync

    return run_sync(
        aarena(
            data,
            candidates,
            metric,
            judge=judge,
            pairs_per_case=pairs_per_case,
            n_boot=n_boot,
            confidence=confidence,
            prior=prior,
            seed=seed,
        )
    )


def _rank(
    result: EvalResult,
    metric: str,
    names: list[str],
    n_cases: int,
    n_boot: int,
    confidence: float,
    prior: float,
    seed: int,
) -> Arena:
    k = len(names)
    index = {name: i for i, name in enumerate(names)}
    table = result.table
    per_case = np.zeros((n_cases, k, k))
    games = np.zeros((k, k))
    pair_rows: dict[tuple[str, str], dict[str, int]] = {}
    errors = 0
    criteria: dict[tuple[str, str], list[float]] = {}
    scores = table[f"{metric}/score"].tolist()
    consistent = table[f"{metric}/swap_consistent"].tolist()
    judged = table[f"{metric}/criteria"].tolist()
    for case, a, b, score, same, crits in zip(
        table[CASE], table[FIRST], table[SECOND], scores, consistent, judged, strict=True
    ):
        key = (min(a, b), max(a, b))
        stats = pair_rows.setdefault(key, {"n": 0, "inconsistent": 0, "errors": 0})
        s = _outcome(score)
        if s is None:
            errors += 1
            stats["errors"] += 1
            continue
        i, j = index[a], index[b]
        per_case[int(case), i, j] += s
        per_case[int(case), j, i] += 1 - s
        games[i, j] += 1
        games[j, i] += 1
        stats["n"] += 1
        stats["inconsistent"] += int(same is False)
        for c in crits if isinstance(crits, list) else []:
            won = {"candidate": 1.0, "tie": 0.5, "baseline": 0.0}.get(str(c.get("winner")))
            if won is not None:
                criteria.setdefault((a, str(c.get("name"))), []).append(won)
                criteria.setdefault((b, str(c.get("name"))), []).append(1 - won)

    wins = per_case.sum(axis=0)
    theta = fit_strengths(wins, prior)
    rng = np.random.default_rng(seed)
    boot = np.empty((n_boot, k))
    for r in range(n_boot):
        weights = np.bincount(rng.integers(0, n_cases, n_cases), minlength=n_cases)
        boot[r] = fit_strengths(np.tensordot(weights, per_case, axes=1), prior)
    tail = (1 - confidence) / 2 * 100
    elo, boot_elo = to_elo(theta), to_elo(boot)
    low, high = np.percentile(boot_elo, [tail, 100 - tail], axis=0)
    # ranks: 1 + how many are stronger, so equal strengths share the better rank
    boot_rank = 1 + np.sum(boot[:, None, :] > boot[:, :, None] + 1e-9, axis=2)
    rank_low, rank_high = np.percentile(boot_rank, [tail, 100 - tail], axis=0)
    played = games.sum(axis=1)
    won = wins.sum(axis=1)
    ranking = pd.DataFrame(
        {
            "candidate": names,
            "elo": elo,
            "elo_low": low,
            "elo_high": high,
            "strength": theta,
            "rank_low": np.floor(rank_low).astype(int),
            "rank_high": np.ceil(rank_high).astype(int),
            "win_rate": np.divide(won, played, out=np.full(k, np.nan), where=played > 0),
            "comparisons": played.astype(int),
        }
    )
    ranking = ranking.sort_values("elo", ascending=False, kind="stable").reset_index(drop=True)
    elos = ranking["elo"].to_numpy()
    ranking.insert(0, "rank", 1 + np.sum(elos[None, :] > elos[:, None] + 1e-6, axis=1))
    matrix = pd.DataFrame(
        np.divide(wins, games, out=np.full((k, k), np.nan), where=games > 0),
        index=pd.Index(names, name="row beats column"),
        columns=names,
    )
    order = list(ranking["candidate"])
    matrix = matrix.loc[order, order]
    criterion_names = sorted({c for _, c in criteria})
    per_criterion = pd.DataFrame(
        [
            [
                float(np.mean(criteria[(n, c)])) if (n, c) in criteria else np.nan
                for c in criterion_names
            ]
            for n in order
        ],
        index=pd.Index(order, name="candidate"),
        columns=criterion_names,
    )
    pairs = pd.DataFrame(
        [
            {
                "a": a,
                "b": b,
                "comparisons": v["n"],
                "a_win_rate": matrix.at[a, b],
                "swap_inconsistent": v["inconsistent"],
                "swap_inconsistent_rate": v["inconsistent"] / v["n"] if v["n"] else np.nan,
                "errors": v["errors"],
            }
            for (a, b), v in sorted(pair_rows.items())
        ]
    )
    notes = []
    if errors:
        notes.append(f"{errors} comparisons had no verdict (errors) and are left out")
    return Arena(
        candidates=names,
        metric=metric,
        result=result,
        ranking=ranking,
        matrix=matrix,
        criteria=per_criterion,
        pairs=pairs,
        confidence=confidence,
        n_boot=n_boot,
        prior=prior,
        errors=errors,
        notes=notes,
    )
