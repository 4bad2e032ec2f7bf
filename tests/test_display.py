"""display.py: the MIME bundle EvalResult shows itself with, and the display functions."""

from __future__ import annotations

import pytest

from rubriclab import display
from tests._view_data import XSS, pairwise_result, pointwise_result


def test_result_bundle_outside_a_kernel_is_static_and_stable() -> None:
    result = pointwise_result(12, xss=True)
    bundle = display.result_mimebundle(result)
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle == display.result_mimebundle(result)
    assert bundle["text/plain"].splitlines()[0] == "EvalResult: 12 rows; metrics: support"
    for payload in XSS:
        assert payload not in bundle["text/html"]


def test_eval_result_displays_itself_as_its_table() -> None:
    result = pointwise_result(3, is_mock=True)
    bundle = result._repr_mimebundle_()
    assert bundle["text/plain"].startswith("MOCK judge")
    assert "rl-table-static" in bundle["text/html"]


def test_result_bundle_in_a_kernel_carries_the_live_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(display, "_in_kernel", lambda: True)
    bundle = display.result_mimebundle(pointwise_result(3), title="Run 1")
    assert "model_id" in bundle["application/vnd.jupyter.widget-view+json"]
    assert bundle["text/plain"].splitlines()[0] == "Run 1"


def test_display_functions_print_the_text_form_in_a_script(
    capsys: pytest.CaptureFixture[str],
) -> None:
    display.display_eval_result(pointwise_result(3), title="Support run")
    out = capsys.readouterr().out
    assert out.startswith("Support run\nEvalResult: 3 rows")
    display.display_explanations(pointwise_result(5), num=2)
    out = capsys.readouterr().out
    assert "case 1 of 5" in out and "case 2 of 5" in out and "case 3 of 5" not in out


def test_explanations_for_a_pairwise_metric_are_pairwise_views() -> None:
    views = display.explanation_views(pairwise_result(4), num=3)
    assert [type(v).__name__ for v in views] == ["PairwiseView"] * 3
    assert [v.index for v in views] == [0, 1, 2]
    with pytest.raises(ValueError, match="num must be at least 1"):
        display.explanation_views(pairwise_result(4), num=0)
