"""Cut points for a scored criterion: the monotone reading of the judge's levels onto people's
levels that agrees with people most often, found by dynamic programming over answers already
paid for (arithmetic only, no judge calls).

A reading gives each judge level ``s_j`` a people level ``s_{a_j}`` with ``a`` non-decreasing
(a better answer from the judge never reads lower). Among the readings with the most exact
matches, the one nearest the identity is taken, so levels never seen keep their own reading.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["best_cuts", "cuts_of", "describe_cuts", "reading_of"]


def best_cuts(
    pairs: Sequence[tuple[int, int]], scores: Sequence[int]
) -> tuple[tuple[float, ...], int]:
    """The cut points best matching ``pairs`` of (judge level, people level), and the matches."""
    m = len(scores)
    index = {s: i for i, s in enumerate(scores)}
    counts = [[0] * m for _ in range(m)]
    for judge, people in pairs:
        if judge in index and people in index:
            counts[index[judge]][index[people]] += 1
    # best[j][a]: (matches, -distance) of judge levels 0..j read with judge level j read as a
    best: list[list[tuple[int, int]]] = []
    back: list[list[int]] = []
    for j in range(m):
        row: list[tuple[int, int]] = []
        came: list[int] = []
        for a in range(m):
            gain = (counts[j][a], -abs(a - j))
            if j == 0:
                row.append(gain)
                came.append(-1)
                continue
            prev = max(range(a + 1), key=lambda p: (best[j - 1][p], -p))
            before = best[j - 1][prev]
            row.append((before[0] + gain[0], before[1] + gain[1]))
            came.append(prev)
        best.append(row)
        back.append(came)
    a = max(range(m), key=lambda x: (best[m - 1][x], -x))
    matches = best[m - 1][a][0]
    reading = [0] * m
    for j in range(m - 1, -1, -1):
        reading[j] = a
        a = back[j][a]
    return cuts_of(reading, scores), matches


def cuts_of(reading: Sequence[int], scores: Sequence[int]) -> tuple[float, ...]:
    """Cut points from a reading (judge level index -> people level index, non-decreasing)."""
    out = []
    for i in range(1, len(scores)):
        first = next((j for j, a in enumerate(reading) if a >= i), None)
        out.append(float(scores[first]) if first is not None else float(scores[-1] + 1))
    return tuple(out)


def reading_of(cuts: Sequence[float], scores: Sequence[int]) -> list[int]:
    """Each judge level's reading (a level of ``scores``) through ``cuts``."""
    return [scores[sum(1 for c in cuts if c <= s)] for s in scores]


def describe_cuts(cuts: Sequence[float], scores: Sequence[int]) -> str:
    """``"judge 1→1, 2→3, 3→3"``: what each judge level reads as."""
    return "judge " + ", ".join(
        f"{s}→{r}" for s, r in zip(scores, reading_of(cuts, scores), strict=True)
    )
