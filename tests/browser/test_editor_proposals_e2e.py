"""In a real JupyterLab: a change rl.align proposed, applied with its button, reaches Python."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.lab import (
    ARTIFACTS,
    Lab,
    open_notebook,
    output_of,
    run_all,
    run_cell,
    wait_idle_after,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELLS = [
    "import rubriclab as rl\nfrom rubriclab.alignment import Change\n"
    "from tests._view_data import XSS\n"
    'new = rl.Criterion(name="q1", description="Does it give the date (August 15th)? " + XSS[1])\n'
    'editor = rl.RubricEditor(rl.Rubric.checklist(["States August 15th?", "Mentions late fees?"]),'
    ' proposals=[Change("rewrite", "q1", "States August 15th?", new.question, True, proposal=new,'
    ' note="validation agreement 60% -> 80%"), Change("pass_mark", "overall", "none", "50%", True,'
    ' proposal=0.5), Change("rewrite", "q9", "Gone?", "Still gone?", True,'
    ' proposal=rl.Criterion(name="q9"))])\neditor',
    'print("DESC=" + repr(editor.rubric.criteria[0].description), "PM=" + repr(editor.rubric.pass_mark))',
    'print("DESC=" + repr(editor.rubric.criteria[0].description), "PM=" + repr(editor.rubric.pass_mark))',
]


def test_apply_and_reject_a_proposed_change(lab: Lab, browser: Any) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    name = lab.write_notebook("proposals.ipynb", CELLS)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        open_notebook(page, lab, name)
        run_all(page)
        wait_idle_after(page)
        editor = output_of(page, 0).locator(".rl-editor")
        cards = editor.locator(".rl-proposal")
        cards.nth(2).locator("text=no longer in the rubric").wait_for()
        cards.nth(0).locator(".rl-apply").click()
        editor.locator(".rl-proposal-applied").wait_for()
        page.wait_for_function(
            "() => document.querySelector('.rl-editor [data-path=\"criteria.0.description\"]')"
            ".value.startsWith('Does it give the date')"
        )
        cards.nth(1).locator(".rl-reject").click()
        editor.locator(".rl-proposal-rejected").wait_for()
        assert page.evaluate("() => window.__rl_pwned === undefined")
        output_of(page, 0).screenshot(path=str(ARTIFACTS / "rubric_editor_proposals.png"))
        run_cell(page, 1)
        out = output_of(page, 1)
        out.locator("text=DESC=").wait_for()
        text = out.inner_text()
        assert "DESC='Does it give the date (August 15th)?" in text
        assert "PM=None" in text  # the pass mark was rejected
    finally:
        context.close()
