"""Code-checked criteria in a real JupyterLab: the explanation says "checked by code", names
the check and shows its reason; model text in the reason stays text. Screenshot:
tests/browser/artifacts/explanation_code_checks.png."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.lab import ARTIFACTS, Lab, open_notebook, output_of, run_all, wait_idle_after

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELLS = [
    "import pandas as pd\nimport rubriclab as rl\n"
    "rubric = rl.Rubric(criteria=[\n"
    "    rl.Criterion.check('regex', r'\\b30 days\\b', name='window', weight=2, critical=True),\n"
    "    rl.Criterion.check('max_words', 12, name='short'),\n"
    "    rl.Criterion.check('contains', '<img', name='markup'),\n"
    "    rl.Criterion.yes_no('Is the tone polite?', name='tone'),\n"
    "], pass_mark=0.7)\n"
    "df = pd.DataFrame({'prompt': ['Return window?'] * 2, 'response': [\n"
    "    'Returns within 30 days <img src=x onerror=alert(1)>.',\n"
    "    'Whenever you like, really, any time at all is perfectly fine with us here.']})\n"
    "result = rl.evaluate(df, [rl.metrics.RubricMetric(rubric=rubric, name='policy')], judge='mock')",
    "rl.Explanation(result, index=1)",
]


@pytest.fixture(scope="module")
def notebook(lab: Lab, browser: Any) -> Iterator[Any]:
    ARTIFACTS.mkdir(exist_ok=True)
    name = lab.write_notebook("checks.ipynb", CELLS)
    context = browser.new_context(viewport={"width": 1200, "height": 1200})
    page = context.new_page()
    page.dialogs = []  # type: ignore[attr-defined]
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
    open_notebook(page, lab, name)
    run_all(page)
    wait_idle_after(page)
    yield page
    context.close()


def test_the_explanation_shows_checked_by_code_and_the_reason(notebook: Any) -> None:
    view = output_of(notebook, 1).locator(".rl-explanation")
    view.locator(".rl-crit-row").first.wait_for()
    window = view.locator('.rl-crit-row[data-criterion="window"]')
    assert (
        window.locator(".rl-code-check").inner_text() == "checked by code · regex /\\b30 days\\b/"
    )
    assert "checked by code: no match for /\\b30 days\\b/" in window.inner_text()
    short = view.locator('.rl-crit-row[data-criterion="short"]')
    assert "checked by code: 14 words, over 12" in short.inner_text()
    tone = view.locator('.rl-crit-row[data-criterion="tone"]')
    assert tone.locator(".rl-code-check").count() == 0  # judged by the (mock) judge
    output_of(notebook, 1).screenshot(path=str(ARTIFACTS / "explanation_code_checks.png"))
    view.locator(".rl-prev").click()
    notebook.wait_for_function(
        "() => document.querySelector('.rl-explanation .rl-pos')?.textContent.includes('case 1')"
    )
    markup = view.locator('.rl-crit-row[data-criterion="markup"]')
    assert "checked by code: contains '<img'" in markup.inner_text()
    # the response's <img onerror> is shown as text, never made an element
    assert "<img src=x onerror=alert(1)>" in view.inner_text()
    assert view.locator("img[src='x']").count() == 0
    assert notebook.dialogs == []
