"""``Explanation``: one case at a time, with everything the judge said about it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import traitlets

from ._assets import EsmBundle
from ._base import RubricView
from ._cells import case_payload
from ._source import as_source
from ._static.case import case_html, case_text

__all__ = ["Explanation"]


class Explanation(RubricView):
    """Prompt, responses, images, per-criterion levels with evidence, rationale, raw output."""

    _esm = EsmBundle("explanation")

    index = traitlets.Int(0).tag(sync=True)
    count = traitlets.Int(0).tag(sync=True)
    case = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)

    def __init__(
        self,
        result: Any,
        index: int = 0,
        *,
        metrics: Sequence[str] | None = None,
        title: str | None = None,
    ) -> None:
        self._source = as_source(result, metrics)
        n = len(self._source.table)
        if n == 0:
            raise ValueError("the result has no rows to explain")
        if not 0 <= index < n:
            raise IndexError(f"index {index} is out of range: the result has {n} rows (0..{n - 1})")
        super().__init__(
            count=n,
            index=index,
            case=case_payload(self._source, index),
            is_mock=self._source.is_mock,
            judge=self._source.judge,
            title=title or "",
        )

    @traitlets.validate("index")
    def _valid_index(self, proposal: Any) -> int:
        value = int(proposal["value"])
        n = len(self._source.table)
        return min(max(value, 0), n - 1)

    @traitlets.observe("index")
    def _on_index(self, change: Any) -> None:
        self.case = case_payload(self._source, int(change["new"]))

    def static_text(self) -> str:
        return case_text(self.case or {}, self.is_mock)

    def static_html(self) -> str:
        return case_html(self.case or {}, self.is_mock, self.judge)
