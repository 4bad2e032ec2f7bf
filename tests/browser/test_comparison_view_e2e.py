"""ComparisonView in a real JupyterLab: deltas render, a metric lists its cases, a case opens
both critiques side by side, and model text with XSS payloads stays inert text.
Screenshots go to tests/browser/artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.lab import ARTIFACTS, Lab, open_notebook, output_of, run_all, wait_idle_after

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELLS = [
    "import rubriclab as rl\n"
    "from tests.test_widgets_comparison_view import _run\n"
    'a = _run([0.5, 0.25, None], [0.5, 0.5, 0.5], "old")\n'
    'b = _run([1.0, 0.0, 0.5], [0.52, 0.5, 0.49], "new")\n'
    'comparison = rl.compare(a, b, names=("prompt v1", "prompt v2"))',
    "view = rl.ComparisonView(comparison); view",
    "comparison  # shows itself as its static HTML",
    # issue 26: the runs named as the code names them, and the axes
    'v1 = _run([0.5, 0.25, None], [0.5, 0.5, 0.5], "old")\n'
    'v2 = _run([1.0, 0.0, 0.5], [0.52, 0.5, 0.49], "new")\n'
    "rl.ComparisonView(rl.compare(v1, v2))",
    # issue 26: agreement figures made from a mock run's table carry the MOCK banner
    "import pandas as pd\n"
    "rub = rl.Rubric.analytic({'accuracy': {'levels': {1: 'wrong', 2: 'partly', 3: 'right'}},"
    " 'clarity': {'levels': {1: 'unclear', 2: 'fair', 3: 'clear'}}})\n"
    "run = rl.evaluate(pd.DataFrame({'prompt': [f'q{i}' for i in range(8)], 'response': ['an answer'] * 8}),"
    " [rl.metrics.RubricMetric(rubric=rub, name='m')], judge='mock')\n"
    "people = pd.Series([{'accuracy': 2 + i % 2, 'clarity': 3} for i in range(8)])\n"
    "rl.CalibrationView(criteria=rl.criterion_agreement(run.table['m/criteria'], people, rubric=rub, n_boot=200))",
]


@pytest.fixture(scope="module")
def notebook(lab: Lab, browser: Any) -> Iterator[Any]:
    ARTIFACTS.mkdir(exist_ok=True)
    name = lab.write_notebook("comparison.ipynb", CELLS)
    context = browser.new_context(viewport={"width": 1300, "height": 1400})
    page = context.new_page()
    open_notebook(page, lab, name)
    run_all(page)
    wait_idle_after(page)
    yield page
    context.close()


def test_comparison_view_renders_selects_and_shows_both_sides(notebook: Any) -> None:
    page = notebook
    view = output_of(page, 1).locator(".rl-comparison")
    view.locator(".rl-metric-bars").wait_for()
    assert "MOCK judge" in view.locator(".rl-mock").inner_text()
    assert view.locator(".rl-metric").all_inner_texts() == ["support", "rouge_l"]
    assert "+12.5%" in view.locator(".rl-metric-bars").inner_text()
    assert "support · accuracy" in view.locator(".rl-criterion-bars").inner_text()
    view.locator(".rl-item").first.wait_for()
    assert view.locator(".rl-item").count() == 3
    view.locator(".rl-item").first.click()
    sides = view.locator(".rl-side")
    sides.first.wait_for()
    assert sides.count() == 2
    assert "prompt v1" in sides.nth(0).inner_text()
    assert "prompt v2" in sides.nth(1).inner_text()
    assert "<script>" in sides.nth(0).inner_text()  # the payload is shown as text
    output_of(page, 1).screenshot(path=str(ARTIFACTS / "comparison_view.png"))
    view.locator('.rl-metric[data-metric="rouge_l"]').click()
    view.locator(".rl-listing .rl-h", has_text="rouge_l").wait_for()
    # the kernel answers the new metric by closing the open case
    view.locator(".rl-side").first.wait_for(state="detached")
    assert view.locator(".rl-item").first.inner_text().startswith("c1")
    assert page.evaluate("() => window.__rl_pwned") is None


def test_comparison_static_html_renders_without_scripts(notebook: Any) -> None:
    page = notebook
    static = output_of(page, 2).locator(".rl-comparison-static")
    static.wait_for()
    assert "the most changed cases" in static.inner_text()
    assert static.locator("script").count() == 0
    output_of(page, 2).screenshot(path=str(ARTIFACTS / "comparison_static.png"))
    assert page.evaluate("() => window.__rl_pwned") is None


def test_the_runs_are_named_and_the_bars_have_axes(notebook: Any) -> None:
    view = output_of(notebook, 3).locator(".rl-comparison")
    view.locator(".rl-metric-bars").wait_for()
    assert view.locator(".rl-title").inner_text() == "v2 vs v1"
    axis = view.locator(".rl-metric-bars .rl-cmp-axis .rl-tick")
    assert axis.count() == 5 and axis.nth(2).inner_text() == "0%"
    assert view.locator(".rl-metric-bars .rl-axis-title").inner_text() == "v2 − v1"
    assert "v1 better" in view.locator(".rl-metric-bars .rl-axis-sides").inner_text()
    assert view.locator(".rl-criterion-bars .rl-cmp-axis .rl-tick").count() == 5
    output_of(notebook, 3).screenshot(path=str(ARTIFACTS / "comparison_named_axes.png"))


def test_calibration_of_a_mock_run_carries_the_mock_banner(notebook: Any) -> None:
    view = output_of(notebook, 4).locator(".rl-calibration")
    view.locator(".rl-bars").first.wait_for()
    assert "MOCK judge" in view.locator(".rl-mock").inner_text()
    output_of(notebook, 4).screenshot(path=str(ARTIFACTS / "calibration_mock.png"))
