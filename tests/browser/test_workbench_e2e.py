"""rl.Workbench in a real JupyterLab against the fake judge server (started here, in the test
process, so the test reads exactly which requests reached it): edit one row's criterion in the
grid, press Re-judge, and the server sees that row's request and nothing else; the comparison
lists the flipped row first and opens both answers side by side. Ctrl-Enter re-judges too, and
an unchanged re-judge sends nothing. Screenshots go to tests/browser/artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from rubriclab.testing import FakeJudgeServer
from tests.browser.lab import ARTIFACTS, Lab, open_notebook, output_of, run_all, wait_idle_after
from tests.judge_scripts import realistic

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WEEKLY = "Does the response mention weekly progress reports?"


def _cells(url: str) -> list[str]:
    return [
        "import pandas as pd\n"
        "import rubriclab as rl\n"
        "from tests.test_workbench import DEADLINE, MARKETING, RESPONSES\n"
        "cases = pd.DataFrame({'id': [f'c{i}' for i in range(4)],\n"
        "    'prompt': [f'Summarise the meeting notes, part {i}.' for i in range(4)],\n"
        "    'response': RESPONSES})\n"
        "cases.loc[3, 'response'] = '<img src=x onerror=\"window.__xss=1\"> Nothing useful here.'\n"
        "cases['rubric'] = [rl.Rubric.checklist([DEADLINE, MARKETING], pass_mark=1.0)] * 4\n"
        f"judge = rl.Judge({url!r}, model='judge-model', max_retries=0)\n"
        "wb = rl.Workbench(cases, [rl.metrics.RubricMetric(name='notes')], judge=judge)\n"
        "v1 = wb.rejudge()",
        "wb",
        "print([v.name for v in wb.versions], [v.calls for v in wb.versions])",
    ]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeJudgeServer]:
    with FakeJudgeServer(realistic) as s:
        yield s


@pytest.fixture(scope="module")
def notebook(lab: Lab, browser: Any, server: FakeJudgeServer) -> Iterator[Any]:
    ARTIFACTS.mkdir(exist_ok=True)
    name = lab.write_notebook("workbench.ipynb", _cells(server.url))
    context = browser.new_context(viewport={"width": 1400, "height": 1500})
    page = context.new_page()
    open_notebook(page, lab, name)
    run_all(page)
    wait_idle_after(page)
    yield page
    context.close()


def _prompts(server: FakeJudgeServer) -> list[str]:
    return [str(body["messages"][0]["content"]) for body in server.requests]


def test_edit_one_rows_criterion_rejudge_sends_only_that_row(
    notebook: Any, server: FakeJudgeServer
) -> None:
    page = notebook
    out = output_of(page, 1)
    view = out.locator(".rl-workbench")
    view.locator(".rl-version").first.wait_for()
    assert server.calls == 4  # v1, judged in the first cell
    assert view.locator(".rl-pos").inner_text() == "rubric 1 of 4"
    assert "c0" in view.locator(".rl-heading").inner_text()
    out.screenshot(path=str(ARTIFACTS / "workbench_before.png"))

    server.reset()
    question = view.locator('textarea[data-path="criteria.1.description"]')
    question.fill(WEEKLY)
    view.locator(".rl-rejudge").click()  # the click commits the edit first (blur)
    view.locator(".rl-wb-compare-title", has_text="v2 vs v1").wait_for(timeout=60_000)
    prompts = _prompts(server)
    assert len(prompts) == 1  # row 0's request, nothing else
    assert WEEKLY in prompts[0] and "marketing is led by Ana" in prompts[0]
    assert "1 verdict flipped" in view.locator(".rl-wb-flipped").inner_text()
    first = view.locator(".rl-item").first
    assert "c0" in first.inner_text() and "pass → fail" in first.inner_text()
    assert (
        "1 call · 0 cached · 3 kept" in view.locator('.rl-version[data-version="v2"]').inner_text()
    )
    first.click()
    sides = view.locator(".rl-side")
    sides.first.wait_for()
    assert sides.count() == 2
    assert "v1" in sides.nth(0).inner_text() and "v2" in sides.nth(1).inner_text()
    assert page.evaluate("() => window.__xss") is None  # model text stayed text
    out.screenshot(path=str(ARTIFACTS / "workbench_after.png"))


def test_ctrl_enter_rejudges_and_an_unchanged_rejudge_sends_nothing(
    notebook: Any, server: FakeJudgeServer
) -> None:
    page = notebook
    view = output_of(page, 1).locator(".rl-workbench")
    view.locator(".rl-wb-compare-title", has_text="v2 vs v1").wait_for(timeout=60_000)
    server.reset()
    view.locator('textarea[data-path="criteria.1.description"]').focus()
    page.keyboard.press("Control+Enter")
    view.locator(".rl-wb-compare-title", has_text="v3 vs v2").wait_for(timeout=60_000)
    assert server.calls == 0
    assert "0 calls" in view.locator('.rl-version[data-version="v3"]').inner_text()
    # the cell itself did not run again: the notebook still has three cells, one output each
    assert page.locator(".jp-Notebook .jp-Cell").count() == 3
    view.locator('.rl-version[data-version="v1"] .rl-undo').click()
    view.locator(".rl-wb-compare-title", has_text="v4 vs v3").wait_for(timeout=60_000)
    assert server.calls == 0
    assert view.locator('textarea[data-path="criteria.1.description"]').input_value() != WEEKLY
