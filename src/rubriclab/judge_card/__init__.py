"""The judge card: rate a judge (with its prompt and rubric) against people before trusting it.

Calibration against shipped human data (LLMBar, MT-Bench, PandaLM, HHH in
``rubriclab.datasets``): ``rate_judge`` runs the suites through the normal evaluate path and
returns a ``JudgeCard`` with accuracy and its interval, position and length bias, ties, errors,
tokens, cost and time, and the published judges' figures beside them, cited.
"""

from __future__ import annotations

from .card import CARD_FORMAT, JudgeCard, load_judge_card
from .rate import GENERAL_RUBRIC, rate_judge, rate_judges
from .suites import SUITES

__all__ = [
    "CARD_FORMAT",
    "GENERAL_RUBRIC",
    "SUITES",
    "JudgeCard",
    "load_judge_card",
    "rate_judge",
    "rate_judges",
]
