"""Ranking many candidates: the arena (pairs judged in both orders) and Bradley-Terry strengths.

``rl.arena(df, candidates=[...], metric=...)`` returns an :class:`Arena` with ``.ranking``
(Elo-style scores with intervals), ``.matrix`` (win rates), ``.criteria`` (per-criterion wins)
and ``.pairs`` (swap inconsistency per pair).
"""

from __future__ import annotations

from .arena import Arena, aarena, arena, schedule_pairs
from .bradley_terry import fit_strengths, to_elo, win_matrix

__all__ = ["Arena", "aarena", "arena", "fit_strengths", "schedule_pairs", "to_elo", "win_matrix"]
