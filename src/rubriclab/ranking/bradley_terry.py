"""Bradley-Terry strengths from pairwise outcomes, ties counted as half a win each way.

P(i beats j) = 1 / (1 + exp(-(theta_i - theta_j))). The fit maximises the log-likelihood of the
win counts ``W[i, j]`` (i beat j; a tie adds 0.5 to both ``W[i, j]`` and ``W[j, i]``) minus a
ridge ``prior * sum(theta ** 2)``, which keeps a candidate that never won finite and fixes the
scale's origin; strengths are reported centred (mean 0). The problem is convex, so Newton's
method with a step-halving line search reaches the optimum to machine precision in a few
iterations for the handful of candidates an arena compares; numpy is all it needs.

The objective is choix's ``opt_pairwise`` on the same data with every decided comparison counted
twice and a tie as one win each way (``alpha = 2 * prior``): tests check the two agree to 1e-6.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["DEFAULT_PRIOR", "ELO_BASE", "ELO_SCALE", "fit_strengths", "to_elo", "win_matrix"]

#: ridge on strengths: small enough not to move well-measured candidates, large enough to keep
#: an undefeated or winless candidate finite
DEFAULT_PRIOR = 0.01
#: the Elo-style scale leaderboards use (Chatbot Arena): 400 points per factor of 10 in odds
ELO_SCALE = 400 / math.log(10)
ELO_BASE = 1000.0

Float = NDArray[np.float64]


def win_matrix(outcomes: Sequence[tuple[int, int, float]], n: int) -> Float:
    """``W[i, j]``: how often i beat j, from ``(i, j, s)`` with s = 1 (i won), 0.5 (tie) or 0."""
    wins = np.zeros((n, n))
    for i, j, s in outcomes:
        wins[i, j] += s
        wins[j, i] += 1.0 - s
    return wins


def _neg_log_likelihood(theta: Float, wins: Float, prior: float) -> float:
    diff = theta[:, None] - theta[None, :]
    # -log sigmoid(d) = log(1 + exp(-d)), stable for large |d|
    return float(np.sum(wins * np.logaddexp(0.0, -diff)) + prior * np.sum(theta**2))


def fit_strengths(
    wins: Float, prior: float = DEFAULT_PRIOR, *, tol: float = 1e-12, max_iter: int = 100
) -> Float:
    """Maximum (penalised) likelihood strengths, centred to mean 0.

    ``wins`` is the n x n matrix of :func:`win_matrix` (or its bootstrap re-weighting). With
    ``prior=0`` the strengths exist only when every candidate both won and lost within a
    connected comparison graph; a ValueError says so instead of returning infinities.
    """
    wins = np.asarray(wins, dtype=float)
    n = wins.shape[0]
    if wins.shape != (n, n):
        raise ValueError(f"wins must be a square matrix, got shape {wins.shape}")
    if prior < 0:
        raise ValueError(f"prior must be >= 0, got {prior}")
    if n == 1:
        return np.zeros(1)
    if prior == 0 and not _strongly_connected(wins > 0):
        raise ValueError(
            "some candidates won (or lost) every comparison against the rest, so their "
            "strengths are unbounded; give a prior > 0"
        )
    games = wins + wins.T
    theta = np.zeros(n)
    value = _neg_log_likelihood(theta, wins, prior)
    for _ in range(max_iter):
        diff = theta[:, None] - theta[None, :]
        p = 1.0 / (1.0 + np.exp(-diff))  # p[i, j] = P(i beats j)
        # gradient of the negative log-likelihood: expected minus observed wins
        grad = np.sum(games * p - wins, axis=1) + 2 * prior * theta
        weight = games * p * (1.0 - p)
        hess = -weight
        np.fill_diagonal(hess, 0.0)
        np.fill_diagonal(hess, -hess.sum(axis=1) + 2 * prior)
        if prior == 0:  # the likelihood is flat along theta + c: solve in the mean-0 subspace
            hess = hess + 1.0 / n
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError as exc:  # pragma: no cover - excluded by the check above
            raise ValueError("the comparisons do not connect every candidate") from exc
        size = 1.0
        while True:
            candidate = theta - size * step
            new_value = _neg_log_likelihood(candidate, wins, prior)
            if new_value <= value + 1e-15 or size < 1e-10:
                break
            size /= 2
        theta, moved = candidate, value - new_value
        value = new_value
        if np.max(np.abs(size * step)) < tol or abs(moved) < tol * max(1.0, abs(value)):
            break
    centred: Float = theta - theta.mean()
    return centred


def _strongly_connected(beat: NDArray[np.bool_]) -> bool:
    """Whether every candidate beat (at least partly) a path to every other: the condition for
    the unpenalised maximum likelihood to exist (Zermelo; Ford 1957)."""
    n = beat.shape[0]
    for edges in (beat, beat.T):
        seen = {0}
        todo = [0]
        while todo:
            i = todo.pop()
            for j in np.flatnonzero(edges[i]):
                if int(j) not in seen:
                    seen.add(int(j))
                    todo.append(int(j))
        if len(seen) < n:
            return False
    return True


def to_elo(theta: Float) -> Float:
    """Strengths on the Elo-style scale: 1000 at the mean, +400 per tenfold odds."""
    return ELO_BASE + ELO_SCALE * np.asarray(theta)
