"""Judge vs people, straight from a result's labels (``rl.calibrate(result)``).

People label where they read (the views, the review page); their labels sit in
``result.labels``. This module sets each label beside the judge's own answer on the same row:
the overall verdict (pass/fail, or the pairwise winner) and every criterion's level. Per
(metric, criterion) it counts agreement (with a Wilson interval), Cohen's kappa (with a
bootstrap interval over rows, so ten labels are not over-read), the confusion table, and the
rows where judge and people disagree, with their texts. When rows have several reviewers it
also says how far the people agree among themselves (Cohen's kappa for two, Fleiss' kappa and
Krippendorff's alpha for any number): a judge cannot be expected to agree with people more than
they agree with each other.

Several reviewers on one row: the people's answer is their majority; a row where they split
evenly is counted in ``split`` and left out of the judge comparison.
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..columns import CRITERIA, ERROR, PASSED, SCORE, col, to_plain
from ..scoring import Interval, wilson_interval
from .measures import cohen_kappa, confusion_counts, fleiss_kappa, krippendorff_alpha

if TYPE_CHECKING:
    from ..result import EvalResult

__all__ = [
    "Calibration",
    "CriterionCalibration",
    "ReviewerAgreement",
    "calibrate",
    "judge_answer",
]

OVERALL = "overall"
#: texts shown beside each disagreement, at most this long
TEXT_CHARS = 600
_TEXT_COLUMNS = ("prompt", "question", "input", "response", "baseline_model_response", "reference")


@dataclass(frozen=True)
class ReviewerAgreement:
    """How far reviewers agree with each other on the rows two or more of them labelled."""

    reviewers: tuple[str, ...]
    units: int
    """Rows labelled by at least two reviewers."""
    agree: int
    """Of those, rows where every reviewer gave the same answer."""
    cohen_kappa: float | None
    """Cohen's kappa, when exactly two reviewers labelled (over the rows both labelled)."""
    fleiss_kappa: float | None
    """Fleiss' kappa over the rows every reviewer labelled (None if no such row)."""
    krippendorff_alpha: float
    """Krippendorff's alpha (nominal) over every row with two labels or more."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "reviewers": list(self.reviewers),
            "units": self.units,
            "agree": self.agree,
            "cohen_kappa": _finite(self.cohen_kappa),
            "fleiss_kappa": _finite(self.fleiss_kappa),
            "krippendorff_alpha": _finite(self.krippendorff_alpha),
        }


@dataclass(frozen=True, eq=False)
class CriterionCalibration:
    """Judge vs people on one metric's verdict (``criterion == "overall"``) or one criterion."""

    metric: str
    criterion: str
    n: int
    """Rows with both a judge answer and a people answer."""
    agree: int
    kappa: float
    kappa_low: float
    kappa_high: float
    """Percentile bootstrap 95% interval of kappa, resampling rows."""
    confusion: pd.DataFrame
    """Rows: the judge's answer; columns: the people's."""
    split: int = 0
    """Rows whose reviewers split evenly (left out)."""
    no_judge: int = 0
    """Labelled rows where the judge gave no answer (an error on the row)."""
    reviewers: ReviewerAgreement | None = None

    @property
    def rate(self) -> float:
        return self.agree / self.n if self.n else math.nan

    def interval(self) -> Interval:
        """Wilson 95% interval of the agreement rate."""
        return wilson_interval(self.agree, self.n)

    def to_dict(self) -> dict[str, Any]:
        iv = self.interval()
        return {
            "metric": self.metric,
            "criterion": self.criterion,
            "n": self.n,
            "agree": self.agree,
            "rate": _finite(self.rate),
            "rate_low": _finite(iv.low),
            "rate_high": _finite(iv.high),
            "kappa": _finite(self.kappa),
            "kappa_low": _finite(self.kappa_low),
            "kappa_high": _finite(self.kappa_high),
            "split": self.split,
            "no_judge": self.no_judge,
            "labels": [str(v) for v in self.confusion.index],
            "confusion": [[int(c) for c in row] for row in self.confusion.to_numpy()],
            "reviewers": None if self.reviewers is None else self.reviewers.to_dict(),
        }


@dataclass(frozen=True, eq=False)
class Calibration:
    """``rl.calibrate(result)``: judge vs people per metric and criterion, and the rows where
    they disagree (``disagreements``, with the rows' texts)."""

    items: list[CriterionCalibration]
    disagreements: pd.DataFrame
    """Columns: row, metric, criterion, judge, people, reviewers, comment, texts."""
    labels: int = 0
    reviewers: tuple[str, ...] = ()
    is_mock: bool = False
    judge: str = ""
    notes: list[str] = field(default_factory=list)

    def __getitem__(self, key: tuple[str, str] | str) -> CriterionCalibration:
        metric, criterion = (None, key) if isinstance(key, str) else key
        for item in self.items:
            if item.criterion == criterion and metric in (None, item.metric):
                return item
        raise KeyError(f"no labels compared for {key!r}")

    @property
    def table(self) -> pd.DataFrame:
        """One row per (metric, criterion): n, agreement with its interval, kappa with its
        interval, people split, and the reviewers' own agreement."""
        rows = []
        for item in self.items:
            d = item.to_dict()
            r = d.pop("reviewers") or {}
            d.pop("labels"), d.pop("confusion")
            d["reviewers_kappa"] = r.get("cohen_kappa")
            d["reviewers_fleiss"] = r.get("fleiss_kappa")
            d["reviewers_alpha"] = r.get("krippendorff_alpha")
            rows.append(d)
        return pd.DataFrame(rows).set_index(["metric", "criterion"]) if rows else pd.DataFrame()

    def to_dict(self) -> dict[str, Any]:
        return {
            "labels": self.labels,
            "reviewers": list(self.reviewers),
            "items": [item.to_dict() for item in self.items],
            "disagreements": [
                {str(k): to_plain(v) for k, v in rec.items()}
                for rec in self.disagreements.to_dict(orient="records")
            ],
            "notes": list(self.notes),
        }

    def _lines(self) -> list[str]:
        lines = []
        for item in self.items:
            iv = item.interval()
            line = (
                f"{item.metric} / {item.criterion}: agree {_pct(item.rate)} ({item.agree}/{item.n}, "
                f"95% {_pct(iv.low)}-{_pct(iv.high)}), kappa {_num(item.kappa)} "
                f"(95% {_num(item.kappa_low)} to {_num(item.kappa_high)})"
            )
            if item.reviewers is not None:
                r = item.reviewers
                line += (
                    f"; reviewers agree on {r.agree}/{r.units} rows, "
                    f"alpha {_num(r.krippendorff_alpha)}"
                )
            lines.append(line)
        return lines

    def __str__(self) -> str:
        mock = " [MOCK judge: not real judgments]" if self.is_mock else ""
        head = f"Judge vs people: {self.labels} labels by {len(self.reviewers)} reviewer(s){mock}"
        return "\n".join(
            [
                head,
                *[f"  {line}" for line in self._lines()],
                *self.notes,
                f"  disagreements: {len(self.disagreements)}",
            ]
        )

    def __repr__(self) -> str:
        return (
            f"<Calibration {len(self.items)} comparisons, {len(self.disagreements)} disagreements>"
        )

    def view(self, title: str | None = None) -> Any:
        """The interactive view (``CalibrationView``) of these figures."""
        from ..result import presentation

        return presentation().calibration_view(self, title)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        from ..result import presentation

        return dict(presentation().calibration_view(self, None)._repr_mimebundle_()[0])

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in self._lines())
        return f"<div class='rubriclab-calibration'><ul>{items}</ul></div>"


def calibrate(
    result: EvalResult,
    metric: str | Sequence[str] | None = None,
    *,
    reviewer: str | Sequence[str] | None = None,
    resamples: int = 1000,
    seed: int = 0,
) -> Calibration:
    """Compare the judge with people's labels in ``result.labels``.

    ``metric`` picks metrics (default: every metric with labels); ``reviewer`` keeps only those
    reviewers' labels. ``resamples`` and ``seed`` set the bootstrap of kappa's interval (the
    same seed gives the same interval).
    """
    labels = result.labels
    if reviewer is not None:
        wanted = [reviewer] if isinstance(reviewer, str) else list(reviewer)
        labels = labels[labels["reviewer"].isin(wanted)]
    if metric is not None:
        names = [metric] if isinstance(metric, str) else list(metric)
        for wanted_name in names:
            result.metric(wanted_name)
        labels = labels[labels["metric"].isin(names)]
    if labels.empty:
        raise ValueError(
            "no labels to compare with: label rows first (result.label(row, 'pass'), the views' "
            "labelling keys, or `rubriclab review RESULTS`)"
        )
    rng = np.random.default_rng(seed)
    items: list[CriterionCalibration] = []
    disagreements: list[dict[str, Any]] = []
    table = result.table
    groups = sorted(
        labels.groupby(["metric", "criterion"], sort=False),
        key=lambda g: (result.metric_names.index(str(g[0][0])), g[0][1] != OVERALL),
    )
    for (name, crit), group in groups:
        criterion = str(crit)
        info = result.metric(str(name))
        pairwise = info.kind == "pairwise"
        people, split = _people(group)
        judged: dict[int, Hashable] = {}
        no_judge = 0
        for row in people:
            answer = judge_answer(table.iloc[row], str(name), str(criterion), pairwise)
            if answer is None:
                no_judge += 1
            else:
                judged[row] = answer
        rows = sorted(judged)
        j = [judged[r] for r in rows]
        p = [people[r][0] for r in rows]
        scale = _scale(j, p, str(criterion), pairwise)
        item = _compare(str(name), str(criterion), j, p, scale, rng, resamples)
        items.append(
            CriterionCalibration(
                **item,
                split=split,
                no_judge=no_judge,
                reviewers=_reviewer_agreement(group),
            )
        )
        for r, jv, pv in zip(rows, j, p, strict=True):
            if jv != pv:
                disagreements.append(
                    {
                        "row": r,
                        "metric": str(name),
                        "criterion": str(criterion),
                        "judge": to_plain(jv),
                        "people": to_plain(pv),
                        "reviewers": ", ".join(people[r][1]),
                        "comment": " | ".join(c for c in people[r][2] if c),
                        "texts": _texts(table.iloc[r]),
                    }
                )
    columns = ["row", "metric", "criterion", "judge", "people", "reviewers", "comment", "texts"]
    return Calibration(
        items=items,
        disagreements=pd.DataFrame(disagreements, columns=columns),
        labels=len(labels),
        reviewers=tuple(sorted(labels["reviewer"].unique())),
        is_mock=bool(getattr(result, "is_mock", False)),
        judge=str(getattr(result, "judge", "")),
    )


def _people(group: pd.DataFrame) -> tuple[dict[int, tuple[Hashable, list[str], list[str]]], int]:
    """Per row: the reviewers' majority answer, who they are, their comments; and how many
    rows split evenly (left out)."""
    out: dict[int, tuple[Hashable, list[str], list[str]]] = {}
    split = 0
    for key, rows in group.groupby("row", sort=True):
        row = int(str(key))
        votes = Counter(_answer(v) for v in rows["value"])
        (top, count), *rest = votes.most_common()
        if rest and rest[0][1] == count:
            split += 1
            continue
        out[row] = (
            top,
            rows["reviewer"].astype(str).tolist(),
            rows["comment"].astype(str).tolist(),
        )
    return out, split


def _answer(value: Any) -> Hashable:
    """A person's answer in the judge's terms: yes/no as 1/0 levels; others as given."""
    if value == "yes":
        return 1
    if value == "no":
        return 0
    return value if isinstance(value, str) else int(value)


def judge_answer(row: pd.Series, metric: str, criterion: str, pairwise: bool) -> Hashable | None:
    """The judge's answer on one row: verdict, winner, or a criterion's level (None: none)."""
    error = row.get(col(metric, ERROR))
    if isinstance(error, str) and error:
        return None
    if criterion == OVERALL:
        if pairwise:
            score = row.get(col(metric, SCORE))
            if score is None or pd.isna(score):
                return None
            return "candidate" if score > 0 else "baseline" if score < 0 else "tie"
        passed = row.get(col(metric, PASSED))
        if passed is None or (isinstance(passed, float) and math.isnan(passed)):
            return None
        return "pass" if bool(passed) else "fail"
    crits = row.get(col(metric, CRITERIA))
    if not isinstance(crits, list | tuple):
        return None
    for c in crits:
        if isinstance(c, Mapping) and c.get("name") == criterion:
            value = c.get("winner") if pairwise else c.get("level")
            if value is None or (isinstance(value, bool) and not pairwise):
                return None if value is None else int(value)
            return str(value) if pairwise else int(value)
    return None


def _scale(j: list[Hashable], p: list[Hashable], criterion: str, pairwise: bool) -> list[Hashable]:
    if criterion == OVERALL or pairwise:
        base: list[Hashable] = ["candidate", "tie", "baseline"] if pairwise else ["pass", "fail"]
        return base + sorted({*j, *p} - set(base), key=str)
    return sorted(
        {*j, *p}, key=lambda v: (not isinstance(v, int), str(v) if not isinstance(v, int) else v)
    )


def _compare(
    metric: str,
    criterion: str,
    j: list[Hashable],
    p: list[Hashable],
    scale: list[Hashable],
    rng: np.random.Generator,
    resamples: int,
) -> dict[str, Any]:
    index = {v: i for i, v in enumerate(scale)}
    jc = np.array([index[v] for v in j], dtype=np.int64)
    pc = np.array([index[v] for v in p], dtype=np.int64)
    counts = confusion_counts(jc, pc, len(scale))
    kappa = cohen_kappa(counts) if len(j) else math.nan
    low = high = math.nan
    if len(j) >= 2 and resamples > 0:
        draws = rng.integers(0, len(j), size=(resamples, len(j)))
        boot = np.array(
            [cohen_kappa(confusion_counts(jc[d], pc[d], len(scale))) for d in draws],
            dtype=np.float64,
        )
        boot = boot[~np.isnan(boot)]
        if len(boot):
            low, high = (float(x) for x in np.percentile(boot, [2.5, 97.5]))
    shown = [str(v) for v in scale]
    return {
        "metric": metric,
        "criterion": criterion,
        "n": len(j),
        "agree": int(np.count_nonzero(jc == pc)),
        "kappa": kappa,
        "kappa_low": low,
        "kappa_high": high,
        "confusion": pd.DataFrame(
            counts,
            index=pd.Index(shown, name="judge"),
            columns=pd.Index(shown, name="people"),
        ),
    }


def _reviewer_agreement(group: pd.DataFrame) -> ReviewerAgreement | None:
    """People vs people on this metric and criterion, if any row has two reviewers."""
    reviewers = sorted(group["reviewer"].astype(str).unique())
    if len(reviewers) < 2:
        return None
    wide = group.pivot_table(
        index="row", columns="reviewer", values="value", aggfunc="last"
    ).reindex(columns=reviewers)
    shared = wide[wide.notna().sum(axis=1) >= 2]
    if shared.empty:
        return None
    answers = shared.map(lambda v: None if pd.isna(v) else _answer(v))
    values = sorted({v for v in answers.to_numpy().ravel() if v is not None}, key=str)
    code = {v: float(i) for i, v in enumerate(values)}
    coded = answers.map(lambda v: math.nan if v is None else code[v]).to_numpy(dtype=np.float64)
    agree = sum(1 for row in coded if len(set(row[~np.isnan(row)].tolist())) == 1)
    full = coded[~np.isnan(coded).any(axis=1)]
    cohen: float | None = None
    if len(reviewers) == 2 and len(full):
        k = len(values)
        cohen = cohen_kappa(
            confusion_counts(full[:, 0].astype(np.int64), full[:, 1].astype(np.int64), k)
        )
    return ReviewerAgreement(
        reviewers=tuple(reviewers),
        units=len(coded),
        agree=agree,
        cohen_kappa=cohen,
        fleiss_kappa=fleiss_kappa(full) if len(full) else None,
        krippendorff_alpha=krippendorff_alpha(coded.T, "nominal"),
    )


def _texts(row: pd.Series) -> list[dict[str, str]]:
    out = []
    for name in _TEXT_COLUMNS:
        if name in row.index and isinstance(row[name], str) and row[name]:
            text = row[name]
            out.append(
                {"name": name, "text": text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS] + "…"}
            )
    return out


def _finite(value: Any) -> Any:
    if value is None:
        return None
    number = float(value)
    return None if math.isnan(number) or math.isinf(number) else number


def _pct(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.0%}"


def _num(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.2f}"
