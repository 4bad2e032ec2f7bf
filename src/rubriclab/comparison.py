"""``compare(a, b)``: two runs on the same cases, paired per case, metric and criterion.

The lesson's exercise (seed 003: "compare prompt versions per criterion; see where each version
is better or worse") as statistics a reviewer can trust. Cases are paired by id; a case in one
run only is listed, never paired; a row that errored on either side is listed with both
errors and left out of every figure (an error is not a 0). Differences are B minus A.

* Mean difference with a seeded paired bootstrap interval. Resampling n pairs with replacement
  is the same as drawing multinomial counts over the distinct differences, so judge scores
  (few distinct values) are resampled as 10,000 x k counts instead of 10,000 x n indices: the
  same distribution, and 100k pairs take a fraction of a second. With more than 2,048 distinct
  values (ROUGE, BLEU) the sorted differences are cut into 256 strata: the draws per stratum are
  exact and the sum within a stratum is drawn from its exact mean and variance.
* Pass-rate difference with an exact McNemar test: the two-sided binomial test on the
  discordant pairs (equal to ``scipy.stats.binomtest(b, b + c, 0.5)``).
* Per criterion: better / same / worse counts and the mean level difference with its interval.
"""

from __future__ import annotations

import math
import sys
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
import pandas as pd

from .columns import CRITERIA, ERROR, PASSED, SCORE, VERDICT, col, to_plain
from .result import EvalResult, load_result, presentation
from .scale import format_count, format_percent

__all__ = ["Comparison", "compare", "mcnemar_exact", "paired_bootstrap", "parse_gate", "percent"]

#: resample through multinomial counts while the distinct values are at most this many
_MULTINOMIAL_MAX_VALUES = 2048
#: strata of neighbouring values when there are more distinct values than that
_STRATA = 256
#: pairwise criteria: the candidate's side of each winner
_WINNER_VALUE = {"candidate": 1.0, "tie": 0.0, "baseline": -1.0}


# -- statistics ----------------------------------------------------------------------------------


def paired_bootstrap(
    diffs: Sequence[float] | np.ndarray,
    *,
    n_boot: int = 10_000,
    seed: int | Sequence[int] = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of paired differences (``nan`` when empty)."""
    d = np.asarray(diffs, dtype=np.float64)
    n = len(d)
    if n == 0:
        return math.nan, math.nan
    if not 0 < confidence < 1 or n_boot < 1:
        raise ValueError("need 0 < confidence < 1 and n_boot >= 1")
    rng = np.random.default_rng(seed)
    values, counts = np.unique(d, return_counts=True)
    if len(values) == 1:
        return float(values[0]), float(values[0])
    if len(values) <= _MULTINOMIAL_MAX_VALUES:
        draws = rng.multinomial(n, counts / n, size=n_boot)
        means = (draws @ values) / n
    else:
        means = _stratified_means(np.sort(d), n_boot, rng)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def _stratified_means(d: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Resampled means for many distinct values: sorted values cut into equal-count strata.

    How many draws land in each stratum is drawn exactly (multinomial); the sum of the C draws
    inside a stratum of neighbouring values is drawn with its exact mean and variance (C mu,
    C sigma^2) as a normal, which its narrow range makes indistinguishable from resampling
    (tests compare it with the index bootstrap).
    """
    n = len(d)
    strata = np.array_split(d, min(_STRATA, n))
    sizes = np.array([len(s) for s in strata], dtype=np.float64)
    mu = np.array([s.mean() for s in strata])
    sigma = np.array([s.std() for s in strata])
    counts = rng.multinomial(n, sizes / n, size=n_boot).astype(np.float64)
    noise = rng.standard_normal(counts.shape) * np.sqrt(counts) * sigma
    means: np.ndarray = (counts @ mu + noise.sum(axis=1)) / n
    return means


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts (A passes only, B only)."""
    if a_only < 0 or b_only < 0:
        raise ValueError("discordant counts must be 0 or more")
    n = a_only + b_only
    if n == 0:
        return 1.0
    m = min(a_only, b_only)
    if 2 * m >= n:
        return 1.0
    k = np.arange(m, dtype=np.float64)
    # log P(X = 0..m) for X ~ Binomial(n, 1/2), built by the ratio C(n, k+1) / C(n, k)
    log_pmf = -n * math.log(2) + np.concatenate([[0.0], np.cumsum(np.log((n - k) / (k + 1)))])
    top = float(log_pmf.max())
    tail = math.exp(top) * float(np.exp(log_pmf - top).sum())
    return min(1.0, 2.0 * tail)


# -- the result ----------------------------------------------------------------------------------


@dataclass
class Comparison:
    """Run B against run A on the cases both have; every difference is B minus A.

    ``summary`` has one row per metric, ``criteria`` one row per (metric, criterion) sorted by
    the largest change, ``table`` one row per case with both sides and the difference,
    ``errored`` the rows left out because either side failed, and ``only_a`` / ``only_b`` the
    cases in one run only.
    """

    a: EvalResult
    b: EvalResult
    names: tuple[str, str]
    key: list[str]
    summary: pd.DataFrame
    criteria: pd.DataFrame
    table: pd.DataFrame
    errored: pd.DataFrame
    only_a: list[Any]
    only_b: list[Any]
    metrics_only_in_one: list[str] = field(default_factory=list)
    confidence: float = 0.95
    n_boot: int = 10_000
    seed: int = 0

    @property
    def metric_names(self) -> list[str]:
        return [str(m) for m in self.summary.index]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (``nan`` becomes None)."""
        return {
            "names": list(self.names),
            "key": self.key,
            "confidence": self.confidence,
            "n_boot": self.n_boot,
            "seed": self.seed,
            "metrics": _records(self.summary.reset_index()),
            "criteria": _records(self.criteria),
            "errored": _records(self.errored),
            "only_a": [to_plain(v) for v in self.only_a],
            "only_b": [to_plain(v) for v in self.only_b],
            "metrics_only_in_one": self.metrics_only_in_one,
        }

    def regression(self, metric: str, margin: float = 0.0) -> str | None:
        """Why B counts as worse than A on ``metric`` (mean more than ``margin`` below), or None.

        A metric with no scored pair counts as worse: there is no evidence it held up.
        """
        if metric not in self.summary.index:
            raise ValueError(
                f"--fail-if-worse: no metric {metric!r} in both runs "
                f"(compared: {', '.join(self.metric_names)})"
            )
        row = {str(k): v for k, v in self.summary.loc[metric].to_dict().items()}
        a, b = self.names
        if int(row["pairs"]) == 0:
            return f"{metric}: no case scored in both runs ({int(row['errored'])} errored)"
        if float(row["diff"]) < -margin:
            return (
                f"{metric}: {b} is {percent(-float(row['diff']))} below {a} "
                f"({percent(row['mean_b'])} vs {percent(row['mean_a'])}; margin {percent(margin)})"
            )
        return None

    def summary_text(self) -> str:
        """The comparison as fixed-width text for terminals and CI logs."""
        a, b = self.names
        mock = "  [MOCK judge: not real judgments]" if self.a.is_mock or self.b.is_mock else ""
        lines = [f"== {b} vs {a}: {format_count(len(self.table), 'case')} =={mock}"]
        pct = round(100 * self.confidence)
        for name, row in self.summary.iterrows():
            signed = self._pairwise(str(name))  # a preference on -100%..+100%: its sign shows
            lines.append(
                f"{name}: {percent(row['mean_a'], signed=signed)} -> "
                f"{percent(row['mean_b'], signed=signed)}, "
                f"diff {percent(row['diff'], signed=True)} "
                f"[{pct}% CI {percent(row['ci_low'], signed=True)}, "
                f"{percent(row['ci_high'], signed=True)}] over {int(row['pairs'])} pairs; "
                f"better {int(row['better'])} / same {int(row['same'])} / "
                f"worse {int(row['worse'])}"
                + (f"; {int(row['errored'])} errored" if row["errored"] else "")
            )
            if not _missing(row.get("pass_a")):
                lines.append(
                    f"  pass rate {percent(row['pass_a'])} -> {percent(row['pass_b'])} "
                    f"({percent(row['pass_diff'], signed=True)}), McNemar exact p = "
                    f"{row['mcnemar_p']:.3g} ({int(row['pass_a_only'])} pass in {a} only, "
                    f"{int(row['pass_b_only'])} in {b} only)"
                )
        if len(self.criteria):
            lines.append("largest per-criterion changes (level difference):")
            for _, c in self.criteria.head(8).iterrows():
                lines.append(
                    f"  {c['metric']}/{c['criterion']}: {_num(c['diff'])} "
                    f"[{_num(c['ci_low'])}, {_num(c['ci_high'])}], better {int(c['better'])} / "
                    f"same {int(c['same'])} / worse {int(c['worse'])}"
                )
        if self.only_a or self.only_b:
            lines.append(f"cases only in {a}: {len(self.only_a)}; only in {b}: {len(self.only_b)}")
        if self.metrics_only_in_one:
            lines.append(f"metrics in one run only: {', '.join(self.metrics_only_in_one)}")
        return "\n".join(lines)

    def _pairwise(self, metric: str) -> bool:
        for run in (self.a, self.b):
            if metric in run.metric_names:
                return run.metric(metric).kind == "pairwise"
        return False

    def __repr__(self) -> str:
        return self.summary_text()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return presentation().comparison_mimebundle(self)

    def case_rows(self, key: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """Both runs' rows for one case key (None for a side without it)."""
        return _row_of(self.a, self.key, key), _row_of(self.b, self.key, key)


# -- compare ----------------------------------------------------------------------------------


def compare(
    a: EvalResult | str | Path,
    b: EvalResult | str | Path,
    key: str | Sequence[str] | None = None,
    *,
    metrics: Sequence[str] | None = None,
    names: tuple[str, str] | None = None,
    n_boot: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Comparison:
    """Compare run ``b`` with run ``a`` case by case (results, or saved result files).

    Cases are paired by ``key`` (a column or columns); by default the ``id`` column when both
    tables have one, else the table index. ``metrics`` limits the comparison to some metrics
    (default: every metric both runs have). Each metric and criterion draws its bootstrap from
    its own stream (``seed`` and its name), so adding a metric does not move another's interval.
    """
    res_a = load_result(a) if isinstance(a, str | Path) else a
    res_b = load_result(b) if isinstance(b, str | Path) else b
    caller = sys._getframe(1) if a is not b else None  # one result twice: "A" and "B"
    label_a, label_b = names or (_label(a, "A", caller), _label(b, "B", caller))
    if label_a == label_b:
        label_b = f"{label_b} (2)"
    keys = _key_columns(res_a.table, res_b.table, key)
    ka, kb = _keyed(res_a.table, keys, label_a), _keyed(res_b.table, keys, label_b)
    common = [m for m in res_a.metric_names if m in res_b.metric_names]
    in_one = sorted(set(res_a.metric_names) ^ set(res_b.metric_names))
    if metrics is not None:
        unknown = [m for m in metrics if m not in common]
        if unknown:
            raise ValueError(
                f"metric(s) {', '.join(unknown)} not in both runs; both have: {', '.join(common)}"
            )
        common = list(metrics)
    if not common:
        raise ValueError(
            f"the two runs share no metric ({label_a}: {', '.join(res_a.metric_names)}; "
            f"{label_b}: {', '.join(res_b.metric_names)})"
        )
    in_b = ka.index.isin(kb.index)
    both = ka.index[in_b].tolist()
    only_a = ka.index[~in_b].tolist()
    only_b = kb.index[~kb.index.isin(ka.index)].tolist()
    pa, pb = ka.loc[both], kb.loc[both]
    table = pd.DataFrame(index=pd.Index(both, name="+".join(keys)))
    rows, crit_rows, err_rows = [], [], []
    for m in common:
        sa, sb = _scores(pa, m), _scores(pb, m)
        ea, eb = _errors(pa, m, sa), _errors(pb, m, sb)
        bad = ea.notna().to_numpy() | eb.notna().to_numpy()
        for k, x, y in zip(np.asarray(both, dtype=object)[bad], ea[bad], eb[bad], strict=True):
            err_rows.append({"key": k, "metric": m, f"error_{label_a}": x, f"error_{label_b}": y})
        ok = ~bad
        diff = (sb - sa).where(ok)
        table[col(m, "score_a")] = sa.where(~ea.notna().to_numpy()).to_numpy()
        table[col(m, "score_b")] = sb.where(~eb.notna().to_numpy()).to_numpy()
        table[col(m, "diff")] = diff.to_numpy()
        table[col(m, "verdict_a")] = _column(pa, col(m, VERDICT))
        table[col(m, "verdict_b")] = _column(pb, col(m, VERDICT))
        table[col(m, "error_a")] = ea.to_numpy()
        table[col(m, "error_b")] = eb.to_numpy()
        d = diff[ok].to_numpy(dtype=np.float64)
        low, high = paired_bootstrap(d, n_boot=n_boot, seed=_stream(seed, m), confidence=confidence)
        row: dict[str, Any] = {
            "metric": m,
            "pairs": int(ok.sum()),
            "errored": int(bad.sum()),
            "mean_a": _mean(sa[ok]),
            "mean_b": _mean(sb[ok]),
            "diff": _mean(diff[ok]),
            "ci_low": low,
            "ci_high": high,
            "better": int((d > 0).sum()),
            "same": int((d == 0).sum()),
            "worse": int((d < 0).sum()),
        }
        row.update(_pass_figures(pa, pb, m, ok))
        rows.append(row)
        crit_rows.extend(_criteria_rows(pa, pb, m, ok, seed, n_boot, confidence))
    summary = pd.DataFrame(rows).set_index("metric")
    criteria = pd.DataFrame(
        crit_rows,
        columns=[
            "metric",
            "criterion",
            "pairs",
            "mean_a",
            "mean_b",
            "diff",
            "ci_low",
            "ci_high",
            "better",
            "same",
            "worse",
        ],
    )
    if len(criteria):
        order = criteria["diff"].abs().fillna(-1).sort_values(ascending=False, kind="stable")
        criteria = criteria.loc[order.index].reset_index(drop=True)
    errored = pd.DataFrame(
        err_rows, columns=["key", "metric", f"error_{label_a}", f"error_{label_b}"]
    )
    return Comparison(
        a=res_a,
        b=res_b,
        names=(label_a, label_b),
        key=keys,
        summary=summary,
        criteria=criteria,
        table=table,
        errored=errored,
        only_a=only_a,
        only_b=only_b,
        metrics_only_in_one=in_one,
        confidence=confidence,
        n_boot=n_boot,
        seed=seed,
    )


def parse_gate(text: str) -> tuple[str, float]:
    """``METRIC[:MARGIN]`` -> (metric, margin as a fraction); MARGIN is 0.05 or 5%."""
    metric, _, raw = text.partition(":")
    metric = metric.strip()
    if not metric:
        raise ValueError(f"--fail-if-worse {text!r}: give METRIC or METRIC:MARGIN, e.g. support:2%")
    if not raw.strip():
        return metric, 0.0
    value = raw.strip()
    try:
        number = float(value.removesuffix("%"))
    except ValueError:
        raise ValueError(
            f"--fail-if-worse {text!r}: the margin {value!r} is not a number (0.05 or 5%)"
        ) from None
    margin = number / 100 if value.endswith("%") else number
    if not 0 <= margin <= 1 or math.isnan(margin):
        raise ValueError(f"--fail-if-worse {text!r}: the margin must be 0-1 (or 0-100%)")
    return metric, margin


# -- pieces ----------------------------------------------------------------------------------------


def _label(source: Any, default: str, caller: FrameType | None = None) -> str:
    """A run's name: a file's stem, the result's title, else the one name the caller's code
    gives it (``rl.compare(v1, v2)`` compares "v1" and "v2"), else ``default``."""
    if isinstance(source, str | Path):
        return Path(source).stem
    title = getattr(source, "meta", {}).get("title") if hasattr(source, "meta") else None
    if title:
        return str(title)
    name = _variable_name(source, caller)
    # ``compare(a, b)`` keeps "A" and "B" (and the errored table's error_A / error_B)
    return name if name is not None and name.upper() != default else default


def _variable_name(value: Any, frame: FrameType | None) -> str | None:
    """The single public name bound to ``value`` in ``frame``'s locals, else its globals
    (None when there is none, or more than one: a guess would mislabel the run)."""
    if frame is None:
        return None
    for scope in (frame.f_locals, frame.f_globals):
        found = [k for k, v in list(scope.items()) if v is value and not k.startswith("_")]
        if len(found) == 1 and found[0].isidentifier():
            return found[0][:60]
        if found:
            return None
    return None


def _key_columns(ta: pd.DataFrame, tb: pd.DataFrame, key: str | Sequence[str] | None) -> list[str]:
    if key is None:
        return ["id"] if "id" in ta.columns and "id" in tb.columns else []
    keys = [key] if isinstance(key, str) else list(key)
    for side, t in (("A", ta), ("B", tb)):
        missing = [k for k in keys if k not in t.columns]
        if missing:
            raise ValueError(
                f"key column(s) {', '.join(map(repr, missing))} not in run {side}'s table"
            )
    return keys


def _keyed(t: pd.DataFrame, keys: list[str], label: str) -> pd.DataFrame:
    """The table indexed by the pairing key; a repeated key is an error (pairing is ambiguous)."""
    if keys:
        index: pd.Index = (
            # object dtype: hashing plain Python keys beats arrow strings for pairing (isin)
            pd.Index([to_plain(v) for v in t[keys[0]].tolist()], dtype=object, name=keys[0])
            if len(keys) == 1
            else pd.MultiIndex.from_frame(t[keys].map(to_plain))
        )
    else:
        index = pd.Index([to_plain(v) for v in t.index], dtype=object, name="row")
    dup = index[index.duplicated()]
    if len(dup):
        shown = ", ".join(repr(v) for v in list(dict.fromkeys(dup))[:5])
        raise ValueError(
            f"run {label} has repeated case keys ({shown}); pairing needs one row per case: "
            "pass key='your_id_column'"
        )
    out = t.copy()
    out.index = index
    return out


def _column(t: pd.DataFrame, column: str) -> list[Any]:
    return t[column].tolist() if column in t.columns else [None] * len(t)


def _scores(t: pd.DataFrame, m: str) -> pd.Series:
    return pd.to_numeric(t[col(m, SCORE)], errors="coerce").astype(np.float64)


def _errors(t: pd.DataFrame, m: str, scores: pd.Series) -> pd.Series:
    """The row's error text, or 'no score' for a row with neither score nor error."""
    column = col(m, ERROR)
    raw = t[column] if column in t.columns else pd.Series([None] * len(t), index=t.index)
    out = [
        str(e) if not _missing(e) and str(e) else ("no score" if math.isnan(s) else None)
        for e, s in zip(raw.tolist(), scores.tolist(), strict=True)
    ]
    return pd.Series(out, index=t.index, dtype=object)


def _pass_figures(pa: pd.DataFrame, pb: pd.DataFrame, m: str, ok: np.ndarray) -> dict[str, Any]:
    column = col(m, PASSED)
    empty = {
        "pass_pairs": 0,
        "pass_a": math.nan,
        "pass_b": math.nan,
        "pass_diff": math.nan,
        "pass_a_only": 0,
        "pass_b_only": 0,
        "mcnemar_p": math.nan,
    }
    if column not in pa.columns or column not in pb.columns:
        return empty
    fa, fb = pa[column].tolist(), pb[column].tolist()
    pairs = [
        (bool(x), bool(y))
        for x, y, keep in zip(fa, fb, ok, strict=True)
        if keep and isinstance(x, bool | np.bool_) and isinstance(y, bool | np.bool_)
    ]
    if not pairs:
        return empty
    n = len(pairs)
    a_only = sum(x and not y for x, y in pairs)
    b_only = sum(y and not x for x, y in pairs)
    rate_a = sum(x for x, _ in pairs) / n
    rate_b = sum(y for _, y in pairs) / n
    return {
        "pass_pairs": n,
        "pass_a": rate_a,
        "pass_b": rate_b,
        "pass_diff": rate_b - rate_a,
        "pass_a_only": a_only,
        "pass_b_only": b_only,
        "mcnemar_p": mcnemar_exact(a_only, b_only),
    }


def _criterion_values(cell: Any) -> dict[str, float]:
    """Criterion -> value of one case: the level, or a pairwise winner as +1 / 0 / -1."""
    if type(cell) is not list:  # the common case (a list of dicts) is checked cheaply
        return {}
    out: dict[str, float] = {}
    for r in cell:
        if type(r) is not dict:
            if not isinstance(r, Mapping):
                continue
            r = dict(r)
        name = r.get("name")
        if name is None:
            continue
        level = r.get("level")
        if isinstance(level, int | float) and type(level) is not bool:
            out[str(name)] = float(level)
        else:
            winner = r.get("winner")
            if winner in _WINNER_VALUE:
                out[str(name)] = _WINNER_VALUE[str(winner)]
    return out


def _criteria_rows(
    pa: pd.DataFrame,
    pb: pd.DataFrame,
    m: str,
    ok: np.ndarray,
    seed: int,
    n_boot: int,
    confidence: float,
) -> list[dict[str, Any]]:
    column = col(m, CRITERIA)
    if column not in pa.columns or column not in pb.columns:
        return []
    pairs: dict[str, list[tuple[float, float]]] = {}
    for x, y, keep in zip(pa[column].tolist(), pb[column].tolist(), ok, strict=True):
        if not keep:
            continue
        va, vb = _criterion_values(x), _criterion_values(y)
        for name in va:
            if name in vb:
                pairs.setdefault(name, []).append((va[name], vb[name]))
    rows = []
    for name, values in pairs.items():
        arr = np.asarray(values, dtype=np.float64)
        d = arr[:, 1] - arr[:, 0]
        low, high = paired_bootstrap(
            d, n_boot=n_boot, seed=_stream(seed, f"{m}/{name}"), confidence=confidence
        )
        rows.append(
            {
                "metric": m,
                "criterion": name,
                "pairs": len(d),
                "mean_a": float(arr[:, 0].mean()),
                "mean_b": float(arr[:, 1].mean()),
                "diff": float(d.mean()),
                "ci_low": low,
                "ci_high": high,
                "better": int((d > 0).sum()),
                "same": int((d == 0).sum()),
                "worse": int((d < 0).sum()),
            }
        )
    return rows


def _row_of(result: EvalResult, keys: list[str], key: Any) -> dict[str, Any] | None:
    t = result.table
    if keys:
        parts = key if isinstance(key, tuple) else (key,)
        mask = np.ones(len(t), dtype=bool)
        for k, v in zip(keys, parts, strict=True):
            mask &= t[k].map(to_plain).to_numpy() == v
        hits = np.flatnonzero(mask)
    else:
        hits = np.array([i for i, v in enumerate(t.index) if to_plain(v) == key], dtype=int)
    return result.case(int(hits[0])) if len(hits) else None


def _stream(seed: int, name: str) -> list[int]:
    return [seed, zlib.crc32(name.encode("utf-8"))]


def _mean(values: pd.Series) -> float:
    return float(values.mean()) if len(values) else math.nan


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): to_plain(v) for k, v in r.items()} for r in frame.to_dict(orient="records")]


def percent(value: Any, signed: bool = False) -> str:
    """0.75 -> '75.0%' (the one scale: data in 0-1, shown as percent); missing -> 'n/a'."""
    return "n/a" if _missing(value) else format_percent(float(value), signed=signed)


def _num(value: Any) -> str:
    return "n/a" if _missing(value) else f"{float(value):+.2f}"
