"""widgets/display.py: the MIME bundle EvalResult shows itself with, and the display functions."""

from __future__ import annotations

import pytest

from rubriclab.widgets import display
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


def test_runs_compare_as_an_inline_svg_with_a_text_form() -> None:
    a, b = pointwise_result(10), pointwise_result(20)
    bundle = display.runs_mimebundle([("run <b>A</b>", a), ("run B", b)])
    lines = bundle["text/plain"].splitlines()
    assert lines[0].startswith("run <b>A</b> · support: mean ") and "% std" in lines[0]
    html = bundle["text/html"]
    assert html.count("<rect") == 2 and "run &lt;b&gt;A&lt;/b&gt;" in html and "<b>A" not in html
    assert "<script" not in html and "100%" in html
    pair = display.runs_mimebundle([("p", pairwise_result(5))])
    assert " win" in pair["text/html"] and "win " in pair["text/plain"]
    with pytest.raises(ValueError, match="at least one"):
        display.runs_mimebundle([])


def test_a_live_run_in_a_kernel_fills_one_table_and_ends_with_the_result(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(display, "_in_kernel", lambda: True)
    monkeypatch.setattr(display, "LIVE_INTERVAL_S", 0.0)
    full = pointwise_result(12)
    seen: list[tuple[int, dict]] = []

    def run(on_rows: object) -> object:
        for start in range(0, 12, 5):
            on_rows(full.table.iloc[start : start + 5])  # type: ignore[operator]
            seen.append((live_view().total, dict(live_view().progress or {})))
        return full

    views: list[object] = []
    real = display._LiveRun.__init__

    def capture(self: object, total: object) -> None:
        real(self, total)  # type: ignore[arg-type]
        views.append(self.view)  # type: ignore[attr-defined]

    monkeypatch.setattr(display._LiveRun, "__init__", capture)

    def live_view() -> object:
        return views[0]

    assert display.live_evaluate(run, rows=12) is full
    assert [t for t, _ in seen[:2]] == [5, 10]
    assert seen[1][1] == {"done": 10, "total": 12, "errors": 1, "state": "running", "message": ""}
    view = live_view()
    assert view.total == 12 and view.progress["state"] == "finished" and view.live is None  # type: ignore[attr-defined]
    assert view.summary[0]["metric"] == "support"  # type: ignore[attr-defined]


def test_the_moved_display_module_is_still_rl_display() -> None:
    """``rl.display.last_live_rows()`` (named by earlier versions' live-run message) still works
    now that the module lives in ``rubriclab.widgets``."""
    import rubriclab as rl

    assert rl.display is display
    assert rl.display.last_live_rows is display.last_live_rows
