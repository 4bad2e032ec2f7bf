"""Judge-vs-human agreement on ordinal levels (seed 003, "Checking the Judge Against People").

A judge nobody has compared with people is a guess. ``agreement`` puts the lesson's two simple
figures (exact and within-one agreement) next to the chance-corrected ones (Cohen's kappa,
unweighted and weighted), rank and linear correlation, the confusion matrix and the list of
large disagreements, which are the cases worth reading.

Kappa follows ``sklearn.metrics.cohen_kappa_score`` exactly (same arithmetic, same ``nan`` for
the undefined cases) without importing scikit-learn at run time.
"""

from __future__ import annotations

import html
import math
import numbers
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..columns import to_plain
from ..scale import format_count

__all__ = [
    "Agreement",
    "PanelTally",
    "agreement",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha",
    "panel_agreement",
    "pearson",
    "spearman",
    "to_python",
]

#: the old name of :func:`rubriclab.columns.to_plain`, kept for code that imports it from here
to_python = to_plain

Weights = Literal["linear", "quadratic"] | None


@dataclass(frozen=True, eq=False)
class Agreement:
    """Judge-vs-human agreement on one set of paired levels.

    ``confusion`` has the judge's level in rows and the human's in columns, over every level of
    the scale (``labels``). ``disagreements`` lists the pairs more than one level apart, indexed
    by the inputs' own labels: the pandas index for a Series, the 0-based position otherwise
    (as a result table numbers its rows).
    """

    n: int
    """Pairs compared (both scores present)."""
    dropped: int
    """Pairs left out because the judge's or the human's score was missing."""
    exact: float
    within_one: float
    kappa: float
    kappa_linear: float
    kappa_quadratic: float
    spearman: float
    pearson: float
    labels: tuple[float | int, ...]
    """The scale: every level, in order (rows and columns of ``confusion``)."""
    confusion: pd.DataFrame
    disagreements: pd.DataFrame
    """Columns ``judge``, ``human``, ``difference`` (judge minus human)."""

    @property
    def exact_count(self) -> int:
        """How many pairs agree exactly (the 7 of "7 of 10")."""
        return int(np.trace(self.confusion.to_numpy()))

    @property
    def within_one_count(self) -> int:
        return round(self.within_one * self.n)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values; an undefined statistic (``nan``) becomes ``None``."""
        return {
            "n": self.n,
            "dropped": self.dropped,
            "exact": _none_if_nan(self.exact),
            "within_one": _none_if_nan(self.within_one),
            "kappa": _none_if_nan(self.kappa),
            "kappa_linear": _none_if_nan(self.kappa_linear),
            "kappa_quadratic": _none_if_nan(self.kappa_quadratic),
            "spearman": _none_if_nan(self.spearman),
            "pearson": _none_if_nan(self.pearson),
            "labels": [to_plain(v) for v in self.labels],
            "confusion": [[int(c) for c in row] for row in self.confusion.to_numpy()],
            "disagreements": [
                {
                    "item": to_plain(item),
                    "judge": to_plain(row["judge"]),
                    "human": to_plain(row["human"]),
                    "difference": to_plain(row["difference"]),
                }
                for item, row in self.disagreements.iterrows()
            ],
        }

    def _lines(self) -> list[tuple[str, str]]:
        return [
            ("exact", f"{_fmt(self.exact)} ({self.exact_count}/{self.n})"),
            ("within one", f"{_fmt(self.within_one)} ({self.within_one_count}/{self.n})"),
            (
                "Cohen's kappa",
                f"{_fmt(self.kappa)} (linear {_fmt(self.kappa_linear)}, "
                f"quadratic {_fmt(self.kappa_quadratic)})",
            ),
            ("Spearman", _fmt(self.spearman)),
            ("Pearson", _fmt(self.pearson)),
        ]

    def _title(self) -> str:
        dropped = f", {self.dropped} dropped for a missing score" if self.dropped else ""
        return f"Agreement on {format_count(self.n, 'pair')}{dropped}"

    def __str__(self) -> str:
        lines = [self._title()]
        lines += [f"  {name:<15}{value}" for name, value in self._lines()]
        k = len(self.disagreements)
        lines.append(f"  disagreements larger than one level: {k}")
        for item, row in self.disagreements.iterrows():
            lines.append(
                f"    {item}: judge {to_plain(row['judge'])}, human {to_plain(row['human'])}"
            )
        lines.append("confusion (rows: judge, columns: human):")
        lines.append(self.confusion.to_string())
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"Agreement(n={self.n}, dropped={self.dropped}, exact={_fmt(self.exact)}, "
            f"within_one={_fmt(self.within_one)}, kappa={_fmt(self.kappa)}, "
            f"disagreements={len(self.disagreements)})"
        )

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(name)}</th>"
            f"<td>{html.escape(value)}</td></tr>"
            for name, value in self._lines()
        )
        if len(self.disagreements):
            listed = self.disagreements.to_html(escape=True, border=0)
        else:
            listed = "<p>none</p>"
        return (
            "<div class='rubriclab-agreement'>"
            f"<strong>{html.escape(self._title())}</strong>"
            f"<table>{rows}</table>"
            "<p>Confusion (rows: judge, columns: human)</p>"
            f"{self.confusion.to_html(escape=True, border=0)}"
            f"<p>Disagreements larger than one level: {len(self.disagreements)}</p>{listed}"
            "</div>"
        )


def agreement(
    judge_scores: Sequence[Any] | pd.Series | np.ndarray | Mapping[Any, Any],
    human_scores: Sequence[Any] | pd.Series | np.ndarray | Mapping[Any, Any],
    labels: Sequence[float | int] | None = None,
) -> Agreement:
    """Compare a judge's levels with people's levels on the same items.

    ``judge_scores`` and ``human_scores`` hold one number per item (lists, arrays, pandas Series
    or mappings of item to level). Items are named by the inputs' own labels: a Series' index (two
    Series with the same labels in another order are aligned), a mapping's keys, or the 0-based
    position for lists and arrays, as a result table numbers its rows (so the judge levels of
    ``result.table`` rows 0..n-1 are reported as rows 0..n-1, and a list's 7th item as 6). A missing value
    (None, NaN, pd.NA) on either side drops that item, and ``dropped`` counts it. Inputs of
    different lengths are an error, not a silent truncation.

    ``labels`` is the scale (every possible level, as in scikit-learn's ``labels``). Pass it when
    some level was never used: the confusion matrix then shows that row and column, and the
    weighted kappas count distances along the full scale (they use a level's *position* in the
    scale, as scikit-learn does). By default the scale is the levels seen in either input.
    """
    judge, human, item_labels = _paired(judge_scores, human_scores)
    missing = pd.isna(judge.to_numpy()) | pd.isna(human.to_numpy())
    keep = ~missing
    items = item_labels[keep]
    j = _numbers(judge[keep], "judge_scores", items)
    h = _numbers(human[keep], "human_scores", items)
    if len(j) == 0:
        raise ValueError(
            f"no item has both a judge score and a human score ({int(missing.sum())} dropped "
            "for a missing value); nothing to compare"
        )
    scale = _scale(labels, j, h, items)
    index = {v: i for i, v in enumerate(scale)}
    jc = np.array([index[v] for v in j.tolist()], dtype=np.int64)
    hc = np.array([index[v] for v in h.tolist()], dtype=np.int64)
    counts = confusion_counts(jc, hc, len(scale))

    diff = j - h
    n = len(j)
    shown = tuple(_as_level(v) for v in scale)
    confusion = pd.DataFrame(
        counts,
        index=pd.Index(shown, name="judge"),
        columns=pd.Index(shown, name="human"),
    )
    large = np.abs(diff) > 1
    disagreements = pd.DataFrame(
        {
            "judge": [_as_level(v) for v in j[large]],
            "human": [_as_level(v) for v in h[large]],
            "difference": [_as_level(v) for v in diff[large]],
        },
        index=items[large],
    )
    return Agreement(
        n=n,
        dropped=int(missing.sum()),
        exact=float(np.count_nonzero(diff == 0) / n),
        within_one=float(np.count_nonzero(np.abs(diff) <= 1) / n),
        kappa=cohen_kappa(counts),
        kappa_linear=cohen_kappa(counts, "linear"),
        kappa_quadratic=cohen_kappa(counts, "quadratic"),
        spearman=spearman(j, h),
        pearson=pearson(j, h),
        labels=shown,
        confusion=confusion,
        disagreements=disagreements,
    )


# -- the statistics ---------------------------------------------------------------------------


def confusion_counts(rows: np.ndarray, cols: np.ndarray, k: int) -> np.ndarray:
    """k x k counts of (row code, column code) pairs; codes are 0..k-1."""
    counts = np.zeros((k, k), dtype=np.int64)
    np.add.at(counts, (rows, cols), 1)
    return counts


def cohen_kappa(confusion: np.ndarray, weights: Weights = None) -> float:
    """Cohen's kappa of a confusion matrix, computed as scikit-learn computes it.

    Weighted forms use the distance between the classes' positions (``|i - j|`` or its square).
    Undefined cases (no pairs, or no disagreement possible by chance) give ``nan``, as
    ``cohen_kappa_score`` does by default.
    """
    confusion = np.asarray(confusion, dtype=np.float64)
    k = confusion.shape[0]
    sum0 = confusion.sum(axis=0)
    sum1 = confusion.sum(axis=1)
    total = sum0.sum()
    if total == 0:
        return math.nan
    expected = np.outer(sum0, sum1) / total
    if weights is None:
        w = np.ones((k, k), dtype=np.float64)
        np.fill_diagonal(w, 0)
    elif weights in ("linear", "quadratic"):
        w = np.zeros((k, k), dtype=np.float64)
        w += np.arange(k)
        w = np.abs(w - w.T) if weights == "linear" else (w - w.T) ** 2
    else:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', not {weights!r}")
    denominator = (w * expected).sum()
    if denominator == 0:
        return math.nan
    return float(1 - (w * confusion).sum() / denominator)


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r; ``nan`` when either side is constant or there are fewer than two pairs."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    xm = x - x.mean()
    ym = y - y.mean()
    r = float(np.dot(xm, ym) / math.sqrt(float(np.dot(xm, xm)) * float(np.dot(ym, ym))))
    return max(-1.0, min(1.0, r))


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho: Pearson's r of the average ranks (ties share their mean rank)."""
    rx = pd.Series(np.asarray(x, dtype=np.float64)).rank(method="average").to_numpy()
    ry = pd.Series(np.asarray(y, dtype=np.float64)).rank(method="average").to_numpy()
    return pearson(rx, ry)


# -- input handling ---------------------------------------------------------------------------


def _as_series(values: Any, name: str) -> tuple[pd.Series, bool]:
    """The values as a Series, and whether their labels are the user's own (not positions)."""
    if isinstance(values, pd.DataFrame):
        raise TypeError(f"{name}: got a DataFrame; pass one column of scores (e.g. df['accuracy'])")
    if isinstance(values, pd.Series):
        return values, True
    if isinstance(values, Mapping):
        return pd.Series(list(values.values()), index=list(values.keys()), dtype=object), True
    if isinstance(values, str | bytes):
        raise TypeError(f"{name}: got a string; pass one score per item (a list or a Series)")
    array = np.asarray(values, dtype=object)
    if array.ndim != 1:
        raise ValueError(f"{name}: expected one score per item, got shape {array.shape}")
    return pd.Series(array, index=pd.RangeIndex(len(array), name="position")), False


def _paired(judge_scores: Any, human_scores: Any) -> tuple[pd.Series, pd.Series, pd.Index]:
    judge, judge_own = _as_series(judge_scores, "judge_scores")
    human, human_own = _as_series(human_scores, "human_scores")
    if len(judge) != len(human):
        raise ValueError(
            f"judge_scores has {len(judge)} items but human_scores has {len(human)}; "
            "pass the judge's and the human's score for the same items"
        )
    if judge_own and human_own and not judge.index.equals(human.index):
        if not (judge.index.is_unique and human.index.is_unique):
            raise ValueError(
                "judge_scores and human_scores have different, non-unique labels; "
                "give both the same index or pass plain lists"
            )
        only_judge = judge.index.difference(human.index)
        only_human = human.index.difference(judge.index)
        if len(only_judge) or len(only_human):
            raise ValueError(
                "judge_scores and human_scores label different items "
                f"(only in judge_scores: {list(only_judge[:5])}; only in human_scores: "
                f"{list(only_human[:5])}); align them, or pass .to_numpy() to pair by position"
            )
        human = human.reindex(judge.index)
    labels = judge.index if judge_own else (human.index if human_own else judge.index)
    return (
        pd.Series(judge.to_numpy(dtype=object), dtype=object),
        pd.Series(human.to_numpy(dtype=object), dtype=object),
        labels,
    )


def _numbers(values: pd.Series, name: str, items: pd.Index) -> np.ndarray:
    out = np.empty(len(values), dtype=np.float64)
    for i, (item, value) in enumerate(zip(items, values.tolist(), strict=True)):
        if not isinstance(value, numbers.Real):
            raise TypeError(
                f"{name}: item {item!r} is {value!r}, not a number; "
                "levels must be numbers (map text labels to levels first)"
            )
        f = float(value)
        if not math.isfinite(f):
            raise ValueError(f"{name}: item {item!r} is {value!r}, not a finite number")
        out[i] = f
    return out


def _scale(
    labels: Sequence[float | int] | None, j: np.ndarray, h: np.ndarray, items: pd.Index
) -> list[float]:
    if labels is None:
        return sorted(set(j.tolist()) | set(h.tolist()))
    scale = [float(v) for v in labels]
    if len(set(scale)) != len(scale):
        raise ValueError(f"labels: each level must appear once, got {list(labels)}")
    if sorted(scale) != scale:
        raise ValueError(f"labels: list the levels in order, got {list(labels)}")
    known = set(scale)
    for side, values in (("judge", j), ("human", h)):
        for item, value in zip(items, values.tolist(), strict=True):
            if value not in known:
                raise ValueError(
                    f"{side} score {_as_level(value)} for item {item!r} is not on the scale "
                    f"{[_as_level(v) for v in scale]}; fix the score or widen labels"
                )
    return scale


def _as_level(value: float) -> float | int:
    f = float(value)
    return int(f) if f.is_integer() else f


def _none_if_nan(value: float) -> float | None:
    return None if math.isnan(value) else value


def _fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.2f}"


# -- many raters (judge panels) ---------------------------------------------------------------


def fleiss_kappa(ratings: Any) -> float:
    """Fleiss' kappa for items rated by the same number of raters.

    ``ratings`` is items x raters (category labels; every item needs every rater, so drop
    incomplete items first). ``nan`` when chance agreement is total (one category only).
    """
    table = np.asarray(ratings, dtype=object)
    if table.ndim != 2 or table.shape[0] == 0 or table.shape[1] < 2:
        raise ValueError("fleiss_kappa needs items x raters with at least 2 raters and 1 item")
    categories = sorted(set(table.ravel().tolist()), key=repr)
    index = {v: i for i, v in enumerate(categories)}
    codes = np.vectorize(index.__getitem__, otypes=[np.int64])(table)
    n_items, n_raters = codes.shape
    counts = np.zeros((n_items, len(categories)), dtype=np.float64)
    np.add.at(counts, (np.repeat(np.arange(n_items), n_raters), codes.ravel()), 1.0)
    p_item = ((counts**2).sum(axis=1) - n_raters) / (n_raters * (n_raters - 1))
    p_bar = float(p_item.mean())
    p_cat = counts.sum(axis=0) / (n_items * n_raters)
    p_e = float((p_cat**2).sum())
    if math.isclose(p_e, 1.0):
        return math.nan
    return (p_bar - p_e) / (1.0 - p_e)


def krippendorff_alpha(
    reliability_data: Any, level: Literal["nominal", "ordinal", "interval"] = "nominal"
) -> float:
    """Krippendorff's alpha over raters x units (``nan`` = not rated), as Krippendorff (2011).

    Same arithmetic as the ``krippendorff`` package's ``alpha`` (coincidence matrix over the
    values seen, units with fewer than two ratings contribute nothing); ``nan`` when fewer than
    two distinct values or no unit has two ratings.
    """
    data = np.asarray(reliability_data, dtype=np.float64)
    if data.ndim != 2:
        raise ValueError("krippendorff_alpha needs a raters x units table")
    seen = data[~np.isnan(data)]
    domain = np.unique(seen)
    if len(domain) < 2:
        return math.nan
    # units x values: how many raters gave each value to each unit
    counts = (data.T[:, :, None] == domain[None, None, :]).sum(axis=1).astype(np.float64)
    per_unit = counts.sum(axis=1)
    keep = per_unit >= 2
    if not keep.any():
        return math.nan
    counts, per_unit = counts[keep], per_unit[keep]
    pairs = counts[:, :, None] * counts[:, None, :]
    pairs -= counts[:, :, None] * np.eye(len(domain))[None, :, :]
    o = (pairs / (per_unit - 1)[:, None, None]).sum(axis=0)
    return _alpha(o, domain, level)


def _alpha(o: Any, domain: Any, level: str) -> float:
    """Krippendorff's alpha from the coincidence matrix ``o`` over the sorted values ``domain``."""
    n_v = o.sum(axis=0)
    e = (np.outer(n_v, n_v) - np.diag(n_v)) / (n_v.sum() - 1)
    if level == "nominal":
        d = (domain[:, None] != domain[None, :]).astype(np.float64)
    elif level == "interval":
        d = (domain[:, None] - domain[None, :]) ** 2
    elif level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_v)])
        lo = np.minimum.outer(np.arange(len(domain)), np.arange(len(domain)))
        hi = np.maximum.outer(np.arange(len(domain)), np.arange(len(domain)))
        d = (cum[hi + 1] - cum[lo] - (n_v[lo] + n_v[hi]) / 2) ** 2
    else:
        raise ValueError(f"level must be 'nominal', 'ordinal' or 'interval', got {level!r}")
    expected = float((e * d).sum())
    if expected == 0:
        return math.nan
    return float(1 - (o * d).sum() / expected)


def panel_agreement(verdicts: Sequence[Any]) -> dict[str, Any]:
    """Inter-judge agreement of a judge panel, over every (case, criterion) as a unit.

    ``verdicts`` is a panel metric's ``{metric}/judges`` column: per case, a list of
    ``{"judge": name, "levels": {criterion: level}}``. Fleiss' kappa uses the units every judge
    rated; Krippendorff's alpha (nominal and ordinal) uses every unit with two ratings or more.
    """
    tally = PanelTally()
    tally.add(verdicts)
    return tally.result()


@dataclass
class PanelTally:
    """What :func:`panel_agreement` needs, kept in memory that does not grow with the rows
    and added up block by block: a streamed run of millions of rows tallies each chunk and
    its summary never reads the table back.

    Units (a case's criterion) never span two blocks, so sums over units add up exactly:
    Krippendorff's coincidence matrix, and for Fleiss' kappa, per number of raters in a unit,
    the units, their sum of squared category counts and the category totals (the units every
    judge rated are known only once every judge is: a judge may fail a whole block).
    """

    judges: list[str] = field(default_factory=list)
    units: int = 0
    values: set[float] = field(default_factory=set)
    #: (value, value) -> coincidences, over the units with two ratings or more
    coincidences: defaultdict[tuple[float, float], float] = field(
        default_factory=lambda: defaultdict(float)
    )
    #: raters in a unit -> [units, sum of squared category counts, Counter(value: count)]
    by_raters: dict[int, list[Any]] = field(default_factory=dict)

    def add(self, verdicts: Sequence[Any]) -> None:
        """Fold in a block of a ``{metric}/judges`` column (one cell per case)."""
        for entries in verdicts:
            if not isinstance(entries, list):
                continue
            units: dict[str, dict[str, float]] = {}
            for entry in entries:
                if not isinstance(entry, Mapping):
                    continue
                name = str(entry.get("judge"))
                if name not in self.judges:
                    self.judges.append(name)
                for criterion, level in (entry.get("levels") or {}).items():
                    if isinstance(level, int | float) and not isinstance(level, bool):
                        units.setdefault(str(criterion), {})[name] = float(level)
            for rated in units.values():
                self._unit(list(rated.values()))

    def _unit(self, ratings: list[float]) -> None:
        self.units += 1
        self.values.update(ratings)
        counts = Counter(ratings)
        m = len(ratings)
        self._group(m, 1, sum(c * c for c in counts.values()), counts)
        if m < 2:
            return
        for v, cv in counts.items():
            for w, cw in counts.items():
                pairs = cv * (cw - 1) if v == w else cv * cw
                if pairs:
                    self.coincidences[(v, w)] += pairs / (m - 1)

    def _group(self, raters: int, units: int, squares: float, counts: Mapping[float, int]) -> None:
        """Add units with ``raters`` ratings each (one unit, or a merged block's group)."""
        group = self.by_raters.setdefault(raters, [0, 0.0, Counter()])
        group[0] += units
        group[1] += squares
        group[2].update(counts)

    def merge(self, other: PanelTally) -> None:
        """Fold in another block's tally (of other cases)."""
        for name in other.judges:
            if name not in self.judges:
                self.judges.append(name)
        self.units += other.units
        self.values |= other.values
        for pair, weight in other.coincidences.items():
            self.coincidences[pair] += weight
        for m, (units, squares, counts) in other.by_raters.items():
            self._group(m, units, squares, counts)

    def result(self) -> dict[str, Any]:
        """``judges``, ``units``, ``fleiss_kappa``, ``alpha_nominal``, ``alpha_ordinal``."""
        out: dict[str, Any] = {
            "judges": len(self.judges),
            "units": self.units,
            "fleiss_kappa": None,
            "alpha_nominal": None,
            "alpha_ordinal": None,
        }
        if len(self.judges) < 2 or not self.units:
            return out
        n = len(self.judges)
        complete = self.by_raters.get(n)
        if complete is not None:
            out["fleiss_kappa"] = _none_if_nan(_fleiss(n, *complete))
        domain = np.array(sorted(self.values))
        if len(domain) >= 2 and self.coincidences:
            index = {v: i for i, v in enumerate(domain.tolist())}
            o = np.zeros((len(domain), len(domain)))
            for (v, w), weight in self.coincidences.items():
                o[index[v], index[w]] = weight
            out["alpha_nominal"] = _none_if_nan(_alpha(o, domain, "nominal"))
            out["alpha_ordinal"] = _none_if_nan(_alpha(o, domain, "ordinal"))
        return out

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON (for a streamed run's state file)."""
        return {
            "judges": self.judges,
            "units": self.units,
            "values": sorted(self.values),
            "coincidences": [[v, w, c] for (v, w), c in self.coincidences.items()],
            "by_raters": [
                [m, items, squares, [[v, c] for v, c in cats.items()]]
                for m, (items, squares, cats) in self.by_raters.items()
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PanelTally:
        return cls(
            judges=list(data["judges"]),
            units=int(data["units"]),
            values={float(v) for v in data["values"]},
            coincidences=defaultdict(
                float, {(float(v), float(w)): float(c) for v, w, c in data["coincidences"]}
            ),
            by_raters={
                int(m): [int(items), float(squares), Counter({float(v): int(c) for v, c in cats})]
                for m, items, squares, cats in data["by_raters"]
            },
        )


def _fleiss(n_raters: int, n_items: int, squares: float, cats: Mapping[float, int]) -> float:
    """Fleiss' kappa from sums over the items every rater rated (as :func:`fleiss_kappa`)."""
    p_bar = (squares - n_items * n_raters) / (n_items * n_raters * (n_raters - 1))
    p_e = math.fsum((c / (n_items * n_raters)) ** 2 for c in cats.values())
    if math.isclose(p_e, 1.0):
        return math.nan
    return (p_bar - p_e) / (1.0 - p_e)
