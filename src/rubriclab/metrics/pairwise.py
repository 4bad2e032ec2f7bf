"""Pairwise rubric metrics: candidate vs baseline per criterion, judged in both orders.

Also the pairwise twins of the predefined metrics (``rl.metrics.pairwise.TEXT_QUALITY`` ...),
which compare the response with ``baseline_model_response``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import pandas as pd

from ..critique import Outcome, critique_pairwise
from .base import Rows
from .rubric import GENERATORS, RubricMetric

if TYPE_CHECKING:
    from ..judges import Judge
    from ..rubric import Rubric

__all__ = [
    "GENERAL_QUALITY",
    "INSTRUCTION_FOLLOWING",
    "MULTIMODAL_UNDERSTANDING",
    "TEXT_QUALITY",
    "PairwiseRubricMetric",
]


@dataclass(frozen=True)
class PairwiseRubricMetric(RubricMetric):
    """Pairwise: candidate vs baseline per criterion, judged in both orders.

    A winner stands only when both orders agree; otherwise the criterion (or the overall choice)
    is a tie and ``swap_consistent`` is False. The score is on the 5-point scale 1.0 ... -1.0.
    """

    name: str = "pairwise_rubric"
    baseline_column: str = "baseline_model_response"

    kind: ClassVar[Literal["pointwise", "pairwise", "template"]] = "pairwise"

    async def _critique(
        self,
        rows: Rows,
        rubrics: Sequence[Rubric | None],
        missing: Sequence[str | None],
        judge: Callable[[], Judge],
    ) -> tuple[list[Outcome], dict[str, list[Any]], list[Judge]]:
        critic = judge()
        outcomes = await critique_pairwise(
            rows.cases, rubrics, self, critic, baselines=self._baselines(rows), missing=missing
        )
        return outcomes, {}, [critic]

    def check_data(self, columns: Collection[Any], mapping: Mapping[str, str]) -> None:
        """Stop before any call when the baseline column is missing (a shape problem, not
        a row's): naming the column and how to point at another one."""
        default = self.baseline_column == "baseline_model_response"
        column = (
            mapping.get("baseline_model_response", self.baseline_column)
            if default
            else (self.baseline_column)
        )
        if column in columns:
            return
        hint = (
            "rename a column to 'baseline_model_response' or pass "
            "mapping={'baseline_model_response': 'your_column'}"
            if default and column == "baseline_model_response"
            else "name an existing column"
        )
        raise ValueError(
            f"metric {self.name!r} compares each response with a baseline, but the data has "
            f"no {column!r} column (columns: {', '.join(map(str, columns))}): {hint}"
        )

    def _baselines(self, rows: Rows) -> list[str | None] | None:
        """The baseline of each row from ``baseline_column`` (None: the cases' own baseline)."""
        column = self.baseline_column
        if column == "baseline_model_response":
            return None
        if column not in rows.table.columns:
            raise ValueError(f"metric {self.name!r}: no baseline column {column!r} in the data")
        return [None if pd.isna(v) else str(v) for v in rows.table[column].tolist()]


GENERAL_QUALITY = PairwiseRubricMetric(
    name="pairwise_general_quality", generator=GENERATORS["general_quality"]
)
TEXT_QUALITY = PairwiseRubricMetric(
    name="pairwise_text_quality", generator=GENERATORS["text_quality"]
)
INSTRUCTION_FOLLOWING = PairwiseRubricMetric(
    name="pairwise_instruction_following", generator=GENERATORS["instruction_following"]
)
MULTIMODAL_UNDERSTANDING = PairwiseRubricMetric(
    name="pairwise_multimodal_understanding", generator=GENERATORS["multimodal_understanding"]
)
