"""Issue 26's numbers in a real JupyterLab: a metric without a pass mark shows "no pass mark"
(never a 0% pass rate), pairwise cards give a signed-percent mean and denominators, the score
filter never mixes pointwise and pairwise scales, and per-row rubrics' q1, q2 ... are not
added up. Screenshots go to tests/browser/artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.lab import ARTIFACTS, Lab, open_notebook, output_of, run_all, wait_idle_after

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELLS = [
    "import warnings\nwarnings.simplefilter('ignore')\n"
    "import rubriclab as rl\nfrom rubriclab.demo import summary_frame, car_damage_frame\n"
    "from rubriclab.testing import FakeJudgeServer\n"
    "df = summary_frame().head(6)\ndf['response'] = df['prompt'].str[:120]\n"
    "tq = rl.evaluate(df, metrics=rl.metrics.TEXT_QUALITY, judge='mock')\n"
    "cars = rl.evaluate(car_damage_frame(), metrics=[rl.metrics.pairwise.MULTIMODAL_UNDERSTANDING,"
    " rl.metrics.MULTIMODAL_UNDERSTANDING], judge='mock')",
    'rl.ResultTable(tq, title="generated checklists")',
    'rl.ResultTable(cars, title="car damage")',
    "rl.PairwiseView(cars)",
]


@pytest.fixture(scope="module")
def notebook(lab: Lab, browser: Any) -> Iterator[Any]:
    ARTIFACTS.mkdir(exist_ok=True)
    name = lab.write_notebook("semantics.ipynb", CELLS)
    context = browser.new_context(viewport={"width": 1400, "height": 1600})
    page = context.new_page()
    open_notebook(page, lab, name)
    run_all(page)
    wait_idle_after(page)
    yield page
    context.close()


def test_no_pass_mark_card_and_per_row_criteria(notebook: Any) -> None:
    out = output_of(notebook, 1)
    card = out.locator(".rl-card").first
    card.locator(".rl-no-pass-mark").wait_for()
    text = card.inner_text()
    assert "no pass mark" in text and "pass 0%" not in text
    out.locator(".rl-tr:not(.rl-loading)").first.wait_for()
    out.screenshot(path=str(ARTIFACTS / "issue26_no_pass_mark.png"))


def test_pairwise_units_denominators_and_score_filter(notebook: Any) -> None:
    out = output_of(notebook, 2)
    out.locator(".rl-tr:not(.rl-loading)").first.wait_for()
    pair_card = out.locator('.rl-card[data-metric="pairwise_multimodal_understanding"]')
    big = pair_card.locator(".rl-card-big").inner_text()
    assert big.endswith("%") and "fail" not in pair_card.inner_text()
    assert "win " in pair_card.inner_text() and "/5)" in pair_card.inner_text()
    assert out.locator(".rl-score-hint").inner_text() == "pick a metric to filter by score"
    out.screenshot(path=str(ARTIFACTS / "issue26_pairwise_table.png"))
    view = output_of(notebook, 3).locator(".rl-pairwise")
    view.locator(".rl-totals").wait_for()
    totals = view.locator(".rl-totals").inner_text()
    assert "candidate wins" in totals and "/5)" in totals and "mean preference" in totals
    output_of(notebook, 3).screenshot(path=str(ARTIFACTS / "issue26_pairwise_view.png"))
