"""Between Vertex's shapes and rubriclab's: datasets to DataFrames, rubric groups to Rubrics.

A dataset is read as the flat schema (``prompt``, ``response``, ``reference``, ``request``,
``rubric_groups`` ...). A ``rubric_groups`` cell maps a group name to Vertex ``Rubric``s (a
list, as ``generate_rubrics`` writes, or a ``RubricGroup``); each group becomes a rubriclab
checklist, one yes/no criterion per rubric.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ....columns import is_missing_cell
from ....rubric import Criterion
from ....rubric import Rubric as LabRubric
from .cases import EvaluationDataset, Rubric, RubricGroup, cases_frame

__all__ = [
    "RUBRIC_GROUPS",
    "as_dataset",
    "cases_frame",
    "dataset_frame",
    "group_rubric",
    "rubrics_of",
    "vertex_rubrics",
]

RUBRIC_GROUPS = "rubric_groups"
_SAFE_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


def as_dataset(value: Any, what: str = "dataset") -> EvaluationDataset:
    """An ``EvaluationDataset`` from one, a dict of its fields, or a DataFrame."""
    if isinstance(value, EvaluationDataset):
        return value
    if isinstance(value, pd.DataFrame):
        return EvaluationDataset(eval_dataset_df=value)
    if isinstance(value, Mapping):
        return EvaluationDataset.model_validate(dict(value))
    raise TypeError(
        f"{what} must be a pandas DataFrame or a types.EvaluationDataset, got {type(value).__name__}"
    )


def dataset_frame(dataset: EvaluationDataset, what: str = "dataset") -> pd.DataFrame:
    """The dataset as a DataFrame (a copy); cloud sources are refused with the alternative."""
    if dataset.eval_dataset_df is not None:
        return dataset.eval_dataset_df.reset_index(drop=True).copy()
    if dataset.eval_cases:
        return cases_frame(dataset.eval_cases)
    if dataset.gcs_source is not None or dataset.bigquery_source is not None:
        raise NotImplementedError(
            f"{what}: reading Cloud Storage or BigQuery is not offered by rubriclab's Vertex "
            "client; load the data with pandas (pd.read_json / pd.read_csv / pd.read_gbq) and "
            "pass it as eval_dataset_df"
        )
    raise ValueError(f"{what}: EvaluationDataset must have eval_dataset_df or eval_cases populated")


def rubrics_of(cell: Any, group: str) -> list[Rubric] | None:
    """The Vertex rubrics of ``group`` in one ``rubric_groups`` cell (None: no such group)."""
    if is_missing_cell(cell):
        return None
    if not isinstance(cell, Mapping):
        raise ValueError(
            f"a rubric_groups cell must map group names to rubrics, got {type(cell).__name__}"
        )
    found = cell.get(group)
    if found is None:
        return None
    if isinstance(found, RubricGroup):
        found = found.rubrics or []
    elif isinstance(found, Mapping) and "rubrics" in found:
        found = found.get("rubrics") or []
    if not isinstance(found, list | tuple):
        raise ValueError(f"rubric group {group!r} must be a list of rubrics")
    return [r if isinstance(r, Rubric) else Rubric.model_validate(r) for r in found]


def group_rubric(rubrics: Sequence[Rubric], group: str) -> LabRubric | None:
    """Vertex rubrics as a rubriclab checklist (None when there are none with text)."""
    criteria: list[Criterion] = []
    taken: set[str] = set()
    for i, r in enumerate(rubrics):
        text = r.text.strip()
        if not text:
            continue
        name = r.rubric_id if r.rubric_id and _SAFE_ID.match(r.rubric_id) else f"r{i + 1}"
        while name in taken:
            name = f"{name}_"
        taken.add(name)
        criteria.append(Criterion.yes_no(text, name=name, category=r.type or None))
    return LabRubric(criteria=criteria, name=group) if criteria else None


def vertex_rubrics(rubric: LabRubric | None) -> list[Rubric]:
    """A rubriclab rubric as Vertex rubrics (critical criteria get importance HIGH)."""
    if rubric is None:
        return []
    return [
        Rubric.of(
            c.description,
            rubric_id=c.name,
            type=c.category,
            importance="HIGH" if c.critical else None,
        )
        for c in rubric.criteria
    ]
