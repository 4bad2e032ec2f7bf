"""Calibrate a judge against people on real labels: pairwise verdicts and per-criterion levels.

Two questions, one module: "when the judge picks a winner, do people pick the same one?"
(``pairwise_agreement``, counted the way the MT-Bench paper counts it, so its Table 5 comes out
exactly) and "which rubric criteria does the judge score too high or too low?"
(``criterion_agreement``, with bootstrap intervals so a small sample is not over-read).
"""

from __future__ import annotations

import html
import math
import numbers
import zlib
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..columns import mock_judge_of
from ..columns import to_plain as _py
from ..rubric import Rubric
from ..scale import format_count
from ..scoring import Interval, ScoreError, coerce_level, wilson_interval
from .measures import Agreement, agreement, cohen_kappa, confusion_counts, pearson, spearman
from .people import Calibration, CriterionCalibration, ReviewerAgreement, calibrate

__all__ = [
    "VERDICTS",
    "Agreement",
    "Calibration",
    "CriterionAgreement",
    "CriterionCalibration",
    "PairwiseAgreement",
    "Rate",
    "ReviewerAgreement",
    "agreement",
    "calibrate",
    "criterion_agreement",
    "human_agreement",
    "pairwise_agreement",
]

#: Canonical verdicts: "A" is the pair member that sorts first, "B" the other one.
VERDICTS: tuple[str, str, str] = ("A", "B", "tie")


@dataclass(frozen=True)
class Rate:
    """An agreement figure with the counts behind it."""

    agree: int
    total: int

    @property
    def rate(self) -> float:
        return self.agree / self.total if self.total else math.nan

    def interval(self) -> Interval:
        """Wilson 95% interval for the rate."""
        return wilson_interval(self.agree, self.total)

    def __str__(self) -> str:
        if not self.total:
            return "n/a (0 compared)"
        return f"{self.rate:.1%} ({self.agree}/{self.total})"


# -- pairwise verdicts ------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class PairwiseAgreement:
    """Agreement between two sources of A / B / tie verdicts on the same pairs.

    ``with_ties`` counts a tie as a verdict (the paper's setup S1); ``without_ties`` keeps only
    comparisons where neither side says tie (S2). ``comparisons`` has one row per compared pair
    of verdicts (keys, ``first``/``second`` pair members, both verdicts in the canonical
    orientation, the raw verdicts and the source rows); ``confusion`` counts them by verdict.
    """

    sides: tuple[str, str]
    """Column names of the two verdicts: ("judge", "human") or ("human_1", "human_2")."""
    with_ties: Rate
    without_ties: Rate
    kappa: float
    """Cohen's kappa over A / B / tie (for human vs human: the pooled-marginal form, as the two
    votes of a pair have no fixed roles)."""
    kappa_without_ties: float
    confusion: pd.DataFrame
    comparisons: pd.DataFrame
    pairs: int
    """Distinct pairs (keys) that gave at least one comparison."""
    dropped: int
    """Rows left out because their verdict was missing."""
    unmatched: int
    """Rows with no counterpart: judged by one side only (or by a single human)."""
    judge_inconsistent: Rate | None = None
    """Judge rows whose raw verdict says the two answer orders disagreed ("inconsistent")."""
    human_vs_human: PairwiseAgreement | None = field(default=None)
    mock_judge: str | None = None
    """The mock judge the judge's verdicts came from (their frame said so), else None."""

    random_with_ties: ClassVar[float] = 1 / 3
    """Expected agreement of a judge that picks A, B or tie uniformly at random (paper's R)."""
    random_without_ties: ClassVar[float] = 1 / 2

    @property
    def disagreements(self) -> pd.DataFrame:
        """Comparisons whose verdicts differ; opposite winners first, then win-vs-tie."""
        left, right = self.sides
        out = self.comparisons[~self.comparisons["agree"]]
        opposite = (out[left] != "tie") & (out[right] != "tie")
        ordered: pd.DataFrame = out.assign(opposite=opposite).sort_values(
            "opposite", ascending=False, kind="stable"
        )
        return ordered

    def to_dict(self) -> dict[str, Any]:
        """The figures as plain values (no tables); ``nan`` becomes ``None``."""
        out: dict[str, Any] = {
            "sides": list(self.sides),
            "with_ties": {"agree": self.with_ties.agree, "total": self.with_ties.total},
            "without_ties": {"agree": self.without_ties.agree, "total": self.without_ties.total},
            "random_with_ties": self.random_with_ties,
            "random_without_ties": self.random_without_ties,
            "kappa": _py(self.kappa),
            "kappa_without_ties": _py(self.kappa_without_ties),
            "confusion": [[int(c) for c in row] for row in self.confusion.to_numpy()],
            "pairs": self.pairs,
            "dropped": self.dropped,
            "unmatched": self.unmatched,
        }
        if self.judge_inconsistent is not None:
            out["judge_inconsistent"] = {
                "agree": self.judge_inconsistent.agree,
                "total": self.judge_inconsistent.total,
            }
        if self.human_vs_human is not None:
            out["human_vs_human"] = self.human_vs_human.to_dict()
        return out

    def _title(self) -> str:
        return f"{self.sides[0]} vs {self.sides[1]}: {format_count(self.pairs, 'pair')}"

    def _lines(self) -> list[tuple[str, str]]:
        lines = [
            ("with ties", f"{self.with_ties}  (random {self.random_with_ties:.0%})"),
            ("without ties", f"{self.without_ties}  (random {self.random_without_ties:.0%})"),
            ("Cohen's kappa", f"{_fmt(self.kappa)} (without ties {_fmt(self.kappa_without_ties)})"),
            ("disagreements", str(int((~self.comparisons["agree"]).sum()))),
        ]
        if self.judge_inconsistent is not None:
            lines.append(("judge swap-inconsistent", str(self.judge_inconsistent)))
        if self.dropped or self.unmatched:
            lines.append(("left out", f"{self.dropped} missing, {self.unmatched} unmatched rows"))
        return lines

    def __str__(self) -> str:
        out = [self._title()] + [f"  {k:<24}{v}" for k, v in self._lines()]
        out += [f"confusion (rows: {self.sides[0]}, columns: {self.sides[1]}):"]
        out += [self.confusion.to_string()]
        if self.human_vs_human is not None:
            out += ["", str(self.human_vs_human)]
        return "\n".join(out)

    def __repr__(self) -> str:
        return (
            f"PairwiseAgreement({self.sides[0]} vs {self.sides[1]}, with_ties={self.with_ties}, "
            f"without_ties={self.without_ties})"
        )

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
            for k, v in self._lines()
        )
        extra = self.human_vs_human._repr_html_() if self.human_vs_human is not None else ""
        return (
            "<div class='rubriclab-pairwise-agreement'>"
            f"<strong>{html.escape(self._title())}</strong><table>{rows}</table>"
            f"<p>{html.escape(f'Confusion (rows: {self.sides[0]}, columns: {self.sides[1]})')}"
            f"</p>{self.confusion.to_html(escape=True, border=0)}{extra}</div>"
        )


def pairwise_agreement(
    judge: pd.DataFrame,
    human: pd.DataFrame,
    on: str | Sequence[str],
    *,
    pair: tuple[str, str] | None = ("model_a", "model_b"),
    verdict: str = "winner",
    rater: str | None = "judge",
) -> PairwiseAgreement:
    """How often the judge's A / B / tie verdict matches people's, counted as MT-Bench does.

    Both frames have one verdict per row: the key columns ``on`` (e.g. ``["question_id",
    "turn"]``), the two compared items in the ``pair`` columns, and the ``verdict`` column.
    A verdict names the winner as ``"model_a"`` / ``"model_b"`` (the pair column names), ``"A"``
    / ``"B"``, or the winner's own value (e.g. ``"gpt-4"``); anything containing "tie" is a tie
    (so ``"tie (inconsistent)"`` counts as a tie). A pair seen in either order is the same
    pair: rows are turned to one orientation (``first`` = the member that sorts first) and
    their verdict flipped with them. With ``pair=None`` the order is fixed and verdicts must be
    A / B / tie. A missing verdict drops the row (counted in ``dropped``).

    Every (judge verdict, human vote) on the same key is one comparison, so a pair three people
    judged counts three times, as in the paper. ``human_vs_human`` counts every two votes by
    different people (``rater`` column) on the pairs the judge was compared on; the human
    frame should hold one kind of rater (MT-Bench's "human" is the ``expert_*`` votes).
    ``rater`` names the human frame's column saying who voted (MT-Bench's ``judge``; ignored
    when that default column is absent): it labels disagreements and keeps a person from being
    compared with themselves.
    """
    keys = _key_list(on)
    j = _normalise_verdicts(judge, "judge", keys, pair, verdict, None)
    h = _normalise_verdicts(human, "human", keys, pair, verdict, rater)
    full = [*keys, "first", "second"]
    merged = j.merge(h, on=full, how="inner", suffixes=("_judge", "_human"))
    comparisons = pd.DataFrame(
        {
            **{k: merged[k] for k in full},
            "judge": merged["verdict_judge"],
            "human": merged["verdict_human"],
            "judge_raw": merged["raw_judge"],
            "human_raw": merged["raw_human"],
            "judge_row": merged["row_judge"],
            "human_row": merged["row_human"],
            "human_rater": merged["rater_human"],
        }
    )
    comparisons["agree"] = comparisons["judge"] == comparisons["human"]
    matched_keys = merged[full].drop_duplicates()
    unmatched = _unmatched(j, matched_keys, full) + _unmatched(h, matched_keys, full)
    inconsistent = j["raw"].astype(str).str.contains("inconsistent", case=False)
    hvh_votes = h.merge(matched_keys, on=full, how="inner")
    result = _summarise(
        comparisons,
        ("judge", "human"),
        pairs=len(matched_keys),
        dropped=int(j.attrs["dropped"] + h.attrs["dropped"]),
        unmatched=unmatched,
        pooled=False,
    )
    return replace(
        result,
        judge_inconsistent=Rate(int(inconsistent.sum()), len(j)),
        human_vs_human=_human_pairs(hvh_votes, full, dropped=int(h.attrs["dropped"])),
        mock_judge=mock_judge_of(judge),
    )


def human_agreement(
    human: pd.DataFrame,
    on: str | Sequence[str],
    *,
    pair: tuple[str, str] | None = ("model_a", "model_b"),
    verdict: str = "winner",
    rater: str | None = "judge",
) -> PairwiseAgreement:
    """Agreement among people alone: every two votes by different raters on the same pair.

    Same input shape and counting as ``pairwise_agreement``'s ``human_vs_human``, over all the
    pairs in ``human`` (not only those a judge saw).
    """
    keys = _key_list(on)
    h = _normalise_verdicts(human, "human", keys, pair, verdict, rater)
    return _human_pairs(h, [*keys, "first", "second"], dropped=int(h.attrs["dropped"]))


def _human_pairs(votes: pd.DataFrame, full: list[str], dropped: int) -> PairwiseAgreement:
    votes = votes.reset_index(drop=True).assign(_pos=lambda d: np.arange(len(d)))
    both = votes.merge(votes, on=full, suffixes=("_1", "_2"))
    both = both[both["_pos_1"] < both["_pos_2"]]
    rater_known = both["rater_1"].notna() & both["rater_2"].notna()
    both = both[~(rater_known & (both["rater_1"] == both["rater_2"]))]
    # the two votes of a pair have no roles: put them in verdict order (A < B < tie) so each
    # unordered combination lands in one cell of the confusion matrix
    order = {v: i for i, v in enumerate(VERDICTS)}
    swap = both["verdict_1"].map(order) > both["verdict_2"].map(order)
    comparisons = pd.DataFrame({k: both[k] for k in full})
    for name, col in (("verdict", ""), ("raw", "_raw"), ("row", "_row"), ("rater", "_rater")):
        a, b = both[f"{name}_1"], both[f"{name}_2"]
        comparisons[f"human_1{col}"] = a.where(~swap, b)
        comparisons[f"human_2{col}"] = b.where(~swap, a)
    comparisons["agree"] = comparisons["human_1"] == comparisons["human_2"]
    compared = comparisons[full].drop_duplicates()
    return _summarise(
        comparisons.reset_index(drop=True),
        ("human_1", "human_2"),
        pairs=len(compared),
        dropped=dropped,
        unmatched=_unmatched(votes, compared, full),
        pooled=True,
    )


def _summarise(
    comparisons: pd.DataFrame,
    sides: tuple[str, str],
    *,
    pairs: int,
    dropped: int,
    unmatched: int,
    pooled: bool,
) -> PairwiseAgreement:
    left, right = sides
    code = {v: i for i, v in enumerate(VERDICTS)}
    lc = comparisons[left].map(code).to_numpy(dtype=np.int64)
    rc = comparisons[right].map(code).to_numpy(dtype=np.int64)
    counts = confusion_counts(lc, rc, 3)
    no_tie = counts[:2, :2]
    kappa_of = _pooled_kappa if pooled else cohen_kappa
    confusion = pd.DataFrame(
        counts, index=pd.Index(VERDICTS, name=left), columns=pd.Index(VERDICTS, name=right)
    )
    return PairwiseAgreement(
        sides=sides,
        with_ties=Rate(int(np.trace(counts)), int(counts.sum())),
        without_ties=Rate(int(np.trace(no_tie)), int(no_tie.sum())),
        kappa=kappa_of(counts),
        kappa_without_ties=kappa_of(no_tie),
        confusion=confusion,
        comparisons=comparisons,
        pairs=pairs,
        dropped=dropped,
        unmatched=unmatched,
    )


def _pooled_kappa(counts: np.ndarray) -> float:
    """Kappa with chance agreement from both votes pooled (Scott's pi / Fleiss for two raters)."""
    counts = np.asarray(counts, dtype=np.float64)
    total = counts.sum()
    if total == 0:
        return math.nan
    share = (counts.sum(axis=0) + counts.sum(axis=1)) / (2 * total)
    expected = float((share**2).sum())
    if expected == 1:
        return math.nan
    return float((np.trace(counts) / total - expected) / (1 - expected))


def _unmatched(rows: pd.DataFrame, matched: pd.DataFrame, full: list[str]) -> int:
    hit = rows[full].merge(matched.assign(_hit=True), on=full, how="left")["_hit"]
    return int(hit.isna().sum())


def _key_list(on: str | Sequence[str]) -> list[str]:
    keys = [on] if isinstance(on, str) else list(on)
    reserved = {"first", "second", "verdict", "raw", "row", "rater"}
    clash = [k for k in keys if k in reserved]
    if clash:
        raise ValueError(f"on: rename key column(s) {clash}; those names are used in the result")
    return keys


def _normalise_verdicts(
    frame: pd.DataFrame,
    side: str,
    keys: list[str],
    pair: tuple[str, str] | None,
    verdict: str,
    rater: str | None,
) -> pd.DataFrame:
    """One row per verdict: keys, first, second, verdict (A/B/tie, canonical), raw, row, rater."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{side}: expected a DataFrame with one verdict per row")
    needed = [*keys, *(pair or ()), verdict]
    missing_cols = [c for c in needed if c not in frame.columns]
    if missing_cols:
        raise ValueError(
            f"{side}: no column(s) {missing_cols} (has {list(frame.columns)}); "
            "pass on=, pair= and verdict= naming your columns"
        )
    if rater is not None and rater not in frame.columns and rater != "judge":
        raise ValueError(f"{side}: no rater column {rater!r}; pass rater=None if there is none")
    for k in keys:
        bad = frame.index[frame[k].isna()]
        if len(bad):
            raise ValueError(f"{side} row {bad[0]!r}: key column {k!r} is missing a value")
    present = frame[frame[verdict].notna()]
    firsts: list[Any] = []
    seconds: list[Any] = []
    verdicts: list[str] = []
    a_col, b_col = pair if pair is not None else (None, None)
    a_vals = present[a_col].tolist() if a_col else [None] * len(present)
    b_vals = present[b_col].tolist() if b_col else [None] * len(present)
    for row, raw, a, b in zip(
        present.index, present[verdict].tolist(), a_vals, b_vals, strict=True
    ):
        won = _winner(raw, a, b, pair)
        if won is None:
            names = f" or the pair's names ({a!r}, {b!r})" if pair else ""
            cols = f"{pair[0]!r} / {pair[1]!r}, " if pair else ""
            raise ValueError(
                f"{side} row {row!r}: {verdict} {raw!r} is not {cols}'A' / 'B'{names}, nor a tie"
            )
        if pair is not None and (pd.isna(a) or pd.isna(b) or a == b):
            raise ValueError(
                f"{side} row {row!r}: a pair needs two different items, got {a!r}, {b!r}"
            )
        if pair is not None and str(a) > str(b):
            a, b = b, a
            won = {"A": "B", "B": "A"}.get(won, won)
        firsts.append(a)
        seconds.append(b)
        verdicts.append(won)
    out = pd.DataFrame({k: present[k].to_numpy() for k in keys})
    out["first"] = firsts
    out["second"] = seconds
    out["verdict"] = verdicts
    out["raw"] = present[verdict].to_numpy()
    out["row"] = present.index.to_numpy()
    has_rater = rater is not None and rater in present.columns
    out["rater"] = present[rater].to_numpy() if has_rater else None
    out.attrs["dropped"] = len(frame) - len(present)
    normalised: pd.DataFrame = out
    return normalised


def _winner(raw: Any, a: Any, b: Any, pair: tuple[str, str] | None) -> str | None:
    text = str(raw).strip()
    low = text.lower()
    if "tie" in low:
        return "tie"
    if low == "a" or (pair is not None and low == pair[0].lower()):
        return "A"
    if low == "b" or (pair is not None and low == pair[1].lower()):
        return "B"
    if pair is not None and raw == a:
        return "A"
    if pair is not None and raw == b:
        return "B"
    return None


# -- per-criterion levels ---------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CriterionAgreement:
    """Per-criterion calibration of a rubric judge against people.

    ``criteria`` holds one ``Agreement`` per criterion. ``table`` has one row per criterion
    (and ``overall`` when an overall score was compared): pairs compared, both means, the mean
    signed difference judge minus human in that criterion's levels (> 0: the judge
    over-scores), its bootstrap interval, the ``tendency`` read from it, and the agreement
    figures.
    """

    criteria: dict[str, Agreement]
    table: pd.DataFrame
    items: int
    """Items present on both sides."""
    unmatched_judge: int
    unmatched_human: int
    n_boot: int
    seed: int
    confidence: float
    mock_judge: str | None = None
    """The mock judge the judge's levels came from (their frame or column said so), else None."""

    def __getitem__(self, criterion: str) -> Agreement:
        try:
            return self.criteria[criterion]
        except KeyError:
            raise KeyError(f"no criterion {criterion!r}; compared: {list(self.criteria)}") from None

    def to_dict(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "unmatched_judge": self.unmatched_judge,
            "unmatched_human": self.unmatched_human,
            "n_boot": self.n_boot,
            "seed": self.seed,
            "confidence": self.confidence,
            "criteria": {name: a.to_dict() for name, a in self.criteria.items()},
            "table": [
                {"criterion": name, **{k: _py(v) for k, v in row.items()}}
                for name, row in self.table.iterrows()
            ],
        }

    def _title(self) -> str:
        left_out = ""
        if self.unmatched_judge or self.unmatched_human:
            left_out = (
                f" ({self.unmatched_judge} judged only by the judge, "
                f"{self.unmatched_human} only by people)"
            )
        pct = f"{self.confidence:.0%}"
        return (
            f"Per-criterion calibration on {self.items} items{left_out}; "
            f"mean difference = judge - human, {pct} bootstrap interval"
        )

    def _display_table(self) -> pd.DataFrame:
        t = self.table
        shown: pd.DataFrame = pd.DataFrame(
            {
                "n": t["n"],
                "judge mean": t["judge_mean"].round(2),
                "human mean": t["human_mean"].round(2),
                "difference": [
                    f"{d:+.2f} [{lo:+.2f}, {hi:+.2f}]" if not math.isnan(d) else "n/a"
                    for d, lo, hi in zip(t["mean_diff"], t["ci_low"], t["ci_high"], strict=True)
                ],
                "tendency": t["tendency"],
                "exact": t["exact"].round(2),
                "within one": t["within_one"].round(2),
                "kappa (quadratic)": t["kappa_quadratic"].round(2),
                "Spearman": t["spearman"].round(2),
            },
            index=t.index,
        )
        return shown

    def __str__(self) -> str:
        return f"{self._title()}\n{self._display_table().to_string()}"

    def __repr__(self) -> str:
        return f"CriterionAgreement(items={self.items}, criteria={list(self.criteria)})"

    def _repr_html_(self) -> str:
        body = self._display_table().to_html(escape=True, border=0, na_rep="n/a")
        return (
            "<div class='rubriclab-criterion-agreement'>"
            f"<strong>{html.escape(self._title())}</strong>{body}</div>"
        )


def criterion_agreement(
    judge: pd.DataFrame | pd.Series,
    human: pd.DataFrame | pd.Series,
    *,
    on: str | Sequence[str] | None = None,
    criteria: Sequence[str] | None = None,
    rubric: Rubric | None = None,
    overall: str | None = None,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> CriterionAgreement:
    """Compare a judge's per-criterion levels with people's, criterion by criterion.

    ``judge`` and ``human`` are wide DataFrames, one row per item and one column per criterion
    holding its level, or Series whose values are ``{criterion: level}`` mappings (a result
    table's ``{metric}/criteria`` column; a level may itself be ``{"level": 3, ...}`` or YES/NO).
    Rows are matched on the key columns ``on``, or on the (unique) index when ``on`` is None;
    items on one side only are counted, not compared. Disagreements are listed by that key.

    ``criteria`` defaults to the rubric's names, else every column both sides share. With a
    ``rubric``, levels are checked against each criterion's scale and the overall score is the
    rubric's score of each side's levels (items with a missing level get none). ``overall``
    names a column holding an overall score instead. Intervals are percentile bootstraps over
    items, ``n_boot`` resamples from ``seed``: the same call gives the same intervals.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    keys = _key_list(on) if on is not None else []
    jw = _wide(judge, "judge", keys)
    hw = _wide(human, "human", keys)
    names = _criterion_names(criteria, rubric, jw, hw, overall)
    for side, wide in (("judge", jw), ("human", hw)):
        absent = [c for c in names + ([overall] if overall else []) if c not in wide.columns]
        if absent:
            raise ValueError(
                f"{side}: no column for {absent} (has {list(wide.columns)}); "
                "pass criteria= naming the criteria both sides scored"
            )
    common = jw.index.intersection(hw.index, sort=False)
    unmatched_judge, unmatched_human = len(jw) - len(common), len(hw) - len(common)
    jw, hw = jw.loc[common], hw.loc[common]
    jl = _levels(jw, names, rubric, "judge")
    hl = _levels(hw, names, rubric, "human")

    results: dict[str, Agreement] = {}
    rows: dict[str, dict[str, Any]] = {}
    for name in names:
        scale = rubric[name].scores if rubric is not None else None
        both = jl[name].notna() & hl[name].notna()
        if not both.any():
            raise ValueError(f"criterion {name!r}: no item has both a judge and a human level")
        res = agreement(jl[name], hl[name], labels=scale)
        results[name] = res
        diffs = (jl[name][both] - hl[name][both]).to_numpy(dtype=np.float64)
        rows[name] = {
            **_bias(name, diffs, jl[name][both], hl[name][both], n_boot, seed, confidence),
            "exact": res.exact,
            "within_one": res.within_one,
            "kappa_quadratic": res.kappa_quadratic,
            "spearman": res.spearman,
            "pearson": res.pearson,
        }
    js, hs = _overall(jw, hw, jl, hl, names, rubric, overall)
    if js is not None and hs is not None:
        if "overall" in rows:
            raise ValueError("a criterion named 'overall' clashes with the overall score row")
        both = js.notna() & hs.notna()
        x, y = js[both].to_numpy(dtype=np.float64), hs[both].to_numpy(dtype=np.float64)
        rows["overall"] = {
            **_bias("overall", x - y, js[both], hs[both], n_boot, seed, confidence),
            "exact": math.nan,
            "within_one": math.nan,
            "kappa_quadratic": math.nan,
            "spearman": spearman(x, y) if len(x) else math.nan,
            "pearson": pearson(x, y) if len(x) else math.nan,
        }
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "criterion"
    return CriterionAgreement(
        criteria=results,
        table=table,
        items=len(common),
        unmatched_judge=unmatched_judge,
        unmatched_human=unmatched_human,
        n_boot=n_boot,
        seed=seed,
        confidence=confidence,
        mock_judge=mock_judge_of(judge),
    )


def _wide(data: pd.DataFrame | pd.Series, side: str, keys: list[str]) -> pd.DataFrame:
    """One row per item, indexed by the item key, one column per criterion."""
    if isinstance(data, pd.Series):
        if keys:
            raise ValueError(f"{side}: on= needs DataFrames with key columns, got a Series")
        records: list[dict[str, Any]] = []
        for row, value in data.items():
            if value is None or (isinstance(value, float) and math.isnan(value)):
                records.append({})
            elif isinstance(value, Mapping):
                records.append(dict(value))
            elif isinstance(value, list) and all(
                isinstance(c, Mapping) and "name" in c and "level" in c for c in value
            ):  # a result's {metric}/criteria cell: [{"name": ..., "level": ...}, ...]
                records.append({str(c["name"]): c["level"] for c in value})
            else:
                raise TypeError(
                    f"{side} row {row!r}: expected a {{criterion: level}} mapping or a "
                    f"{{metric}}/criteria list, got {value!r}"
                )
        wide = pd.DataFrame.from_records(records, index=data.index)
    elif isinstance(data, pd.DataFrame):
        wide = data
        if keys:
            absent = [k for k in keys if k not in data.columns]
            if absent:
                raise ValueError(f"{side}: no key column(s) {absent} (has {list(data.columns)})")
            wide = data.set_index(keys)
    else:
        raise TypeError(f"{side}: expected a DataFrame or a Series of mappings")
    if not wide.index.is_unique:
        dup = wide.index[wide.index.duplicated()][0]
        raise ValueError(f"{side}: item {dup!r} appears twice; each item needs one row")
    checked: pd.DataFrame = wide
    return checked


def _criterion_names(
    criteria: Sequence[str] | None,
    rubric: Rubric | None,
    jw: pd.DataFrame,
    hw: pd.DataFrame,
    overall: str | None,
) -> list[str]:
    if criteria is not None:
        names = list(criteria)
        if rubric is not None:
            unknown = [c for c in names if c not in rubric.names]
            if unknown:
                raise ValueError(f"criteria {unknown} are not in the rubric ({rubric.names})")
    elif rubric is not None:
        names = rubric.names
    else:
        shared = set(hw.columns)
        names = [str(c) for c in jw.columns if c in shared and c != overall]
    if not names:
        raise ValueError("no criterion to compare: pass criteria= or a rubric=")
    return names


def _levels(wide: pd.DataFrame, names: list[str], rubric: Rubric | None, side: str) -> pd.DataFrame:
    """Numeric levels (NaN where missing), checked against the rubric's scales when given."""
    out: dict[str, list[float]] = {}
    for name in names:
        values: list[float] = []
        for item, value in zip(wide.index, wide[name].tolist(), strict=True):
            values.append(_level(value, name, item, side, rubric))
        out[name] = values
    levels: pd.DataFrame = pd.DataFrame(out, index=wide.index, dtype=np.float64)
    return levels


def _level(value: Any, name: str, item: Hashable, side: str, rubric: Rubric | None) -> float:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return math.nan
    if rubric is not None:
        level = coerce_level(rubric[name], value)
        if isinstance(level, str):
            raise ValueError(f"{side} item {item!r}: {level}")
        return float(level)
    if isinstance(value, Mapping):
        for key in ("score", "level", "verdict", "answer"):
            if key in value:
                return _level(value[key], name, item, side, rubric)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in ("yes", "no"):
            return 1.0 if word == "yes" else 0.0
        try:
            return float(word)
        except ValueError:
            pass
    if isinstance(value, numbers.Real) and math.isfinite(float(value)):
        return float(value)
    raise ValueError(
        f"{side} item {item!r}, criterion {name!r}: {value!r} is not a level "
        "(use numbers, YES/NO, or pass rubric= to check levels against the scale)"
    )


def _overall(
    jw: pd.DataFrame,
    hw: pd.DataFrame,
    jl: pd.DataFrame,
    hl: pd.DataFrame,
    names: list[str],
    rubric: Rubric | None,
    overall: str | None,
) -> tuple[pd.Series | None, pd.Series | None]:
    if overall is not None:
        return (
            pd.to_numeric(jw[overall], errors="raise").astype(np.float64),
            pd.to_numeric(hw[overall], errors="raise").astype(np.float64),
        )
    if rubric is None or names != rubric.names:
        return None, None
    return _rubric_scores(jl, rubric), _rubric_scores(hl, rubric)


def _rubric_scores(levels: pd.DataFrame, rubric: Rubric) -> pd.Series:
    values: list[float] = []
    for _, row in levels.iterrows():
        if row.isna().any():
            values.append(math.nan)
            continue
        try:
            values.append(rubric.score({str(k): int(v) for k, v in row.items()}).value)
        except ScoreError:  # pragma: no cover - levels were checked against the rubric above
            values.append(math.nan)
    scores: pd.Series = pd.Series(values, index=levels.index, dtype=np.float64)
    return scores


def _bias(
    name: str,
    diffs: np.ndarray,
    judge: pd.Series,
    human: pd.Series,
    n_boot: int,
    seed: int,
    confidence: float,
) -> dict[str, Any]:
    """Mean signed difference with a percentile bootstrap interval over items.

    Each criterion draws from its own stream (seed and the criterion's name), so its interval
    does not change when other criteria are added or removed.
    """
    n = len(diffs)
    if n == 0:
        mean = low = high = math.nan
    else:
        mean = float(diffs.mean())
        rng = np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])
        draws = rng.integers(0, n, size=(n_boot, n))
        means = diffs[draws].mean(axis=1)
        tail = (1 - confidence) / 2
        low, high = (float(q) for q in np.quantile(means, [tail, 1 - tail]))
    if n and low > 0:
        tendency = "over-scores"
    elif n and high < 0:
        tendency = "under-scores"
    else:
        tendency = "no clear difference"
    return {
        "n": n,
        "judge_mean": float(judge.mean()) if n else math.nan,
        "human_mean": float(human.mean()) if n else math.nan,
        "mean_diff": mean,
        "ci_low": low,
        "ci_high": high,
        "tendency": tendency,
    }


def _fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}"
