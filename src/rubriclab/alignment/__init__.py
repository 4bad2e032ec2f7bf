"""Aligning a judge to people: few-shot examples, clearer criteria and calibrated pass marks,
each chosen on training/validation rows and proved on held-out test rows (``align``)."""

from __future__ import annotations

from .labels import LABEL_COLUMNS, People, people_labels
from .measure import AlignFigures, Gain
from .run import METHODS, Alignment, Change, align, split_rows

__all__ = [
    "LABEL_COLUMNS",
    "METHODS",
    "AlignFigures",
    "Alignment",
    "Change",
    "Gain",
    "People",
    "align",
    "people_labels",
    "split_rows",
]
