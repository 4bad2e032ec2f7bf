"""``PairwiseView``: candidate and baseline side by side for one pairwise metric."""

from __future__ import annotations

from typing import Any

import pandas as pd
import traitlets

from ..columns import SWAP_CONSISTENT, col
from ..result import EvalResult
from ..result.labels import default_reviewer
from ._assets import EsmBundle
from ._base import RubricView
from ._cells import case_payload, is_missing, text_of
from ._source import MetricRef, Source, as_source
from ._static.pairwise import pairwise_html, pairwise_text
from .labelling import label_form, save_labels

__all__ = ["PairwiseView"]

CANDIDATE_COLUMNS = ("response", "candidate", "candidate_response")
BASELINE_COLUMNS = ("baseline_model_response", "baseline", "baseline_response")


class PairwiseView(RubricView):
    """Per-criterion winners with evidence, the 5-point choice, order agreement, run totals."""

    _esm = EsmBundle("pairwise_view")

    index = traitlets.Int(0).tag(sync=True)
    count = traitlets.Int(0).tag(sync=True)
    case = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    totals = traitlets.List(traitlets.Dict()).tag(sync=True)
    metric = traitlets.Unicode("").tag(sync=True)
    #: the view offers labelling (an EvalResult was shown, not a bare DataFrame)
    labelling = traitlets.Bool(False).tag(sync=True)
    reviewer = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self,
        result: Any,
        metric: str | None = None,
        index: int = 0,
        *,
        title: str | None = None,
    ) -> None:
        source = as_source(result)
        pairwise = [m for m in source.metrics if m.kind == "pairwise"]
        if not pairwise:
            raise ValueError(
                "this result has no pairwise metric: PairwiseView needs one evaluated with a "
                "PairwiseRubricMetric (candidate vs baseline)"
            )
        ref = source.metric(metric) if metric is not None else pairwise[0]
        if ref.kind != "pairwise":
            names = ", ".join(m.name for m in pairwise)
            raise ValueError(f"metric {ref.name!r} is {ref.kind}, not pairwise (pairwise: {names})")
        n = len(source.table)
        if n == 0:
            raise ValueError("the result has no rows to compare")
        if not 0 <= index < n:
            raise IndexError(f"index {index} is out of range: the result has {n} rows (0..{n - 1})")
        self._source = source
        self._ref = ref
        self._result = result if isinstance(result, EvalResult) else None
        super().__init__(
            labelling=self._result is not None,
            reviewer=default_reviewer(),
            metric=ref.name,
            count=n,
            index=index,
            case=self._payload(index),
            totals=[_totals(source, ref)],
            is_mock=source.is_mock,
            judge=source.judge,
            title=title or "",
        )

        self._register("label_form", self._label_form)
        self._register("save_labels", self._save_labels)

    def _label_form(self, request: Any) -> dict[str, Any]:
        if self._result is None:
            raise ValueError("labels need an EvalResult (this view shows a bare DataFrame)")
        return {"form": label_form(self._result, int(request.get("row", -1)), [self._ref.name])}

    def _save_labels(self, request: Any) -> dict[str, Any]:
        if self._result is None:
            raise ValueError("labels need an EvalResult (this view shows a bare DataFrame)")
        return {"saved": save_labels(self._result, request.get("labels"), self.reviewer)}

    def _payload(self, pos: int) -> dict[str, Any]:
        table = self._source.table
        base = case_payload(self._source, pos, [self._ref])
        row = table.iloc[pos]
        cand_col = next((c for c in CANDIDATE_COLUMNS if c in table.columns), None)
        base_col = next((c for c in BASELINE_COLUMNS if c in table.columns), None)
        sides = {cand_col, base_col}
        fields = [f for f in base["fields"] if f["name"] not in sides]
        if base.get("conversation"):  # this view has no transcript: the cell as a field
            fields.append({"name": "conversation", "text": text_of(row["conversation"])})
        return {
            "row": pos,
            "heading": base["heading"],
            "fields": fields,
            "images": base["images"],
            "candidate": {"name": cand_col, "text": _text(row, cand_col)},
            "baseline": {"name": base_col, "text": _text(row, base_col)},
            "metric": base["metrics"][0],
        }

    @traitlets.validate("index")
    def _valid_index(self, proposal: Any) -> int:
        return min(max(int(proposal["value"]), 0), len(self._source.table) - 1)

    @traitlets.observe("index")
    def _on_index(self, change: Any) -> None:
        self.case = self._payload(int(change["new"]))

    def static_text(self) -> str:
        return pairwise_text(self.case or {}, self.totals, self.is_mock)

    def static_html(self) -> str:
        return pairwise_html(self.case or {}, self.totals, self.is_mock, self.judge)


def _text(row: pd.Series, column: str | None) -> str | None:
    if column is None or is_missing(row[column]):
        return None
    return text_of(row[column])


def _totals(source: Source, ref: MetricRef) -> dict[str, Any]:
    """The run's win/tie/loss rates (with intervals) and how often the two orders disagreed."""
    summary = next((s for s in source.summary if s.get("metric") == ref.name), {})
    out = dict(summary)
    column = col(ref.name, SWAP_CONSISTENT)
    if column in source.table.columns:
        flags = [v for v in source.table[column].tolist() if not is_missing(v)]
        out["swap_checked"] = len(flags)
        out["swap_inconsistent"] = sum(1 for v in flags if not bool(v))
    return out
