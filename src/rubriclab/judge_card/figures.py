"""The card's figures from per-item verdicts: accuracy with its interval, swap inconsistency,
first-slot preference, tie rate, length bias, and MT-Bench agreement as its Table 5 counts it.

A verdict is ``"1"``, ``"2"`` (the dataset's numbering, whichever slot the output was shown in)
or ``"tie"``. Order 1 shows output 1 first; order 2 shows output 2 first. An item whose judge
call failed is counted in ``errors`` and left out of every rate (an error is not a wrong answer).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..calibration import pairwise_agreement

__all__ = ["group_figures", "item_scores", "mt_bench_agreement", "wilson"]

_Z = 1.959963984540054


def wilson(k: float, n: int) -> tuple[float | None, float | None]:
    """Wilson 95% interval for ``k`` successes in ``n`` (``k`` may be fractional: an item right
    in one order of two counts a half, and the interval treats items, not orders, as the unit)."""
    if n <= 0:
        return None, None
    p = k / n
    denom = 1 + _Z * _Z / n
    centre = (p + _Z * _Z / (2 * n)) / denom
    half = _Z * math.sqrt(max(p * (1 - p), 0.0) / n + _Z * _Z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def item_scores(v1: Sequence[Any], v2: Sequence[Any], label: Sequence[Any]) -> list[float]:
    """Per item: the share of its two orders whose verdict is the human label (0, 0.5 or 1)."""
    return [((a == g) + (b == g)) / 2 for a, b, g in zip(v1, v2, label, strict=True)]


def _rate(k: float, n: int) -> dict[str, Any]:
    low, high = wilson(k, n)
    return {"k": k, "n": n, "rate": k / n if n else None, "low": low, "high": high}


def group_figures(rows: pd.DataFrame) -> dict[str, Any]:
    """Figures for one group of items (a subset, or a whole suite).

    ``rows`` has ``v1``, ``v2``, ``label``, ``error``, ``len_1``, ``len_2``.
    """
    judged = rows[rows["error"].isna()]
    n = len(judged)
    v1, v2 = judged["v1"].tolist(), judged["v2"].tolist()
    out: dict[str, Any] = {"items": len(rows), "errors": int(rows["error"].notna().sum())}
    out["judged"] = n
    inconsistent = [a != b for a, b in zip(v1, v2, strict=True)]
    k_inc = sum(inconsistent)
    out["swap_inconsistency"] = _rate(k_inc, n)
    first = sum(1 for a, b in zip(v1, v2, strict=True) if a == "1" and b == "2")
    second = sum(1 for a, b in zip(v1, v2, strict=True) if a == "2" and b == "1")
    out["first_slot"] = _rate(first, k_inc)
    out["second_slot"] = _rate(second, k_inc)
    ties = sum(v == "tie" for v in v1) + sum(v == "tie" for v in v2)
    out["tie_rate"] = {"k": ties, "n": 2 * n, "rate": ties / (2 * n) if n else None}
    labelled = judged[judged["label"].notna()]
    if len(labelled):
        scores = item_scores(
            labelled["v1"].tolist(), labelled["v2"].tolist(), labelled["label"].tolist()
        )
        out["accuracy"] = _rate(sum(scores), len(scores))
        both = sum(1 for s in scores if s == 1.0)
        out["accuracy_both_orders"] = _rate(both, len(scores))
        out["length_bias"] = _length_bias(labelled, scores)
    return out


def _length_bias(labelled: pd.DataFrame, scores: list[float]) -> dict[str, Any]:
    """Accuracy where the human-preferred output is the shorter one vs the longer one."""
    shorter: list[float] = []
    longer: list[float] = []
    for (g, l1, l2), s in zip(
        labelled[["label", "len_1", "len_2"]].itertuples(index=False), scores, strict=True
    ):
        if g not in ("1", "2") or l1 == l2:
            continue
        preferred, other = (l1, l2) if g == "1" else (l2, l1)
        (shorter if preferred < other else longer).append(s)
    return {
        "preferred_shorter": _rate(sum(shorter), len(shorter)),
        "preferred_longer": _rate(sum(longer), len(longer)),
    }


def combined(v1: Any, v2: Any) -> str:
    """One verdict from both orders, as MT-Bench's GPT-4 pair judge: a winner when both orders
    agree, else ``tie (inconsistent)``."""
    return str(v1) if v1 == v2 else "tie (inconsistent)"


def mt_bench_agreement(
    items: pd.DataFrame, verdicts: Mapping[str, str | None], human: pd.DataFrame
) -> dict[str, Any]:
    """Agreement with the expert votes on the judged pairs, with and without ties (Table 5's
    S1 and S2), by ``pairwise_agreement``'s MT-Bench counting; also expert vs expert."""
    rows = []
    for r in items.itertuples(index=False):
        v = verdicts.get(str(r.item))
        if v is None:
            continue
        winner = "model_a" if v == "1" else "model_b" if v == "2" else v
        rows.append(
            {
                "question_id": r.question_id,
                "turn": r.turn,
                "model_a": r.model_1,
                "model_b": r.model_2,
                "winner": winner,
            }
        )
    if not rows:
        return {}
    judge = pd.DataFrame(rows)
    result = pairwise_agreement(judge, human, on=["question_id", "turn"])
    hvh = result.human_vs_human
    out: dict[str, Any] = {
        "with_ties": _rate(result.with_ties.agree, result.with_ties.total),
        "without_ties": _rate(result.without_ties.agree, result.without_ties.total),
        "pairs": result.pairs,
    }
    if hvh is not None:
        out["human_with_ties"] = _rate(hvh.with_ties.agree, hvh.with_ties.total)
        out["human_without_ties"] = _rate(hvh.without_ties.agree, hvh.without_ties.total)
    return out
