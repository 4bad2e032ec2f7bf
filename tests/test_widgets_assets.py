"""The views' built front end: one JS bundle per view, one stylesheet shipped through ``_css``."""

from __future__ import annotations

import re

import pytest

from rubriclab.widgets import Explanation, ResultTable
from rubriclab.widgets._assets import STATIC, STYLESHEET, read_bundle

from ._view_data import pointwise_result

VIEWS = [
    "result_table",
    "explanation",
    "rubric_editor",
    "pairwise_view",
    "calibration_view",
    "comparison_view",
]


def test_every_view_gets_the_stylesheet_in_its_css_trait() -> None:
    result = pointwise_result(3)
    sheet = (STATIC / STYLESHEET).read_text(encoding="utf-8")
    for view in (ResultTable(result), Explanation(result, index=0)):
        state = view.get_state()
        assert state["_css"] == sheet  # anywidget adds it to the page once per view class
        assert ".rl-grid" in state["_css"] and ".rl-mock" in state["_css"]


@pytest.mark.parametrize("name", VIEWS)
def test_bundles_no_longer_carry_the_stylesheet(name: str) -> None:
    """Each bundle used to inline the whole stylesheet as a string (55% of its size)."""
    bundle = read_bundle(name)
    assert not re.search(r"\.rl-grid-head\s*\{|\.rl-md-toggle\[aria-pressed", bundle)
