"""Explanation: one case with levels, evidence, rationale, raw output, errors; next/previous."""

from __future__ import annotations

import base64
from pathlib import Path

import pandas as pd
import pytest

from rubriclab.widgets import Explanation
from tests._view_data import XSS, pointwise_result

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def test_a_case_carries_what_the_judge_said() -> None:
    view = Explanation(pointwise_result(10), index=2)
    case = view.case
    assert case["heading"] == "case 3 of 10 · id case-00002"
    assert [f["name"] for f in case["fields"]][:2] == ["prompt", "response"]
    support = case["metrics"][0]
    assert support["score"] == 1.0 and support["verdict"] == "pass"
    accuracy, deadline = support["criteria"]
    assert (
        accuracy["level"] == 3
        and accuracy["max_level"] == 3
        and accuracy["label"] == "All facts correct"
    )
    assert accuracy["critical"] == 2 and accuracy["passed_critical"] is True
    assert deadline["label"] == "YES" and deadline["evidence"] == "August 15th"
    assert support["rationale"] == "Rationale for case 2. "
    assert support["raw_output"] == ['{"raw": "judge said 2"} ']
    assert support["tokens"] == 102 and support["latency"] == 0.25 and support["attempts"] == 1


def test_an_error_row_keeps_its_raw_output() -> None:
    view = Explanation(pointwise_result(10), index=6)
    support = view.case["metrics"][0]
    assert support["error"] == "HTTP 503 from judge after 3 attempts"
    assert support["score"] is None and support["criteria"] == []
    assert support["raw_output"] == ['{"raw": "judge said 6"} ']
    assert "ERROR: HTTP 503" in repr(view)


def test_next_and_previous_move_through_cases() -> None:
    view = Explanation(pointwise_result(3))
    view.set_state({"index": 1})
    assert view.case["heading"].startswith("case 2 of 3")
    view.set_state({"index": 99})  # clamped, not an exception in the browser's face
    assert view.index == 2 and view.case["heading"].startswith("case 3 of 3")
    with pytest.raises(IndexError, match="the result has 3 rows"):
        Explanation(pointwise_result(3), index=3)


def test_images_from_files_bytes_urls_and_unsafe_schemes(tmp_path: Path) -> None:
    png = tmp_path / "chart.png"
    png.write_bytes(PNG)
    frame = pd.DataFrame(
        {
            "prompt": ["What does the chart show?"],
            "image": [
                [
                    str(png),
                    PNG,
                    "https://example.com/a.png",
                    "javascript:alert(1)",
                    str(tmp_path / "missing.png"),
                ]
            ],
            "m/score": [0.5],
        }
    )
    images = Explanation(frame).case["images"]
    assert images[0]["src"].startswith("data:image/png;base64,")
    assert images[1]["src"] == images[0]["src"]
    assert images[2]["src"] == "https://example.com/a.png"
    assert "src" not in images[3] and "unsupported URL scheme" in images[3]["note"]
    assert "no image file" in images[4]["note"]


def test_static_html_escapes_every_payload() -> None:
    result = pointwise_result(10, xss=True, is_mock=True)
    for i in range(5):
        bundle, _ = Explanation(result, index=i)._repr_mimebundle_()
        html = bundle["text/html"]
        assert XSS[i] not in html
        assert (
            "<script" not in html
            and "<iframe" not in html
            and "<svg" not in html
            and "<a " not in html
        )
        assert "MOCK judge" in html and bundle["text/plain"].startswith("MOCK judge")


def test_metric_selection() -> None:
    view = Explanation(pointwise_result(3), metrics=["support"])
    assert [m["name"] for m in view.case["metrics"]] == ["support"]
    with pytest.raises(KeyError, match="no metric 'other'"):
        Explanation(pointwise_result(3), metrics=["other"])
