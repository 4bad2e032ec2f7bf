"""Labelling in JupyterLab: a reviewer labels 10 rows of a ResultTable's drill-down with the
keyboard, the kernel restarts, the result is loaded again and the 10 labels are there, and
``rl.calibrate`` on them equals the hand computation. Screenshots go to tests/browser/artifacts/."""

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
    "import rubriclab as rl\n"
    "from tests._view_data import pointwise_result\n"
    'path = pointwise_result(20).save("labelling_run.jsonl")\n'
    "result = rl.load_result(path)\n"
    "table = rl.ResultTable(result)\n"
    'table.reviewer = "ana"',
    "table",
    "import rubriclab as rl\n"
    'again = rl.load_result("labelling_run.jsonl")\n'
    "ov = rl.calibrate(again)['support', 'overall']\n"
    'print("LABELS", len(again.labels), sorted(set(again.labels["reviewer"])), '
    "again.labels['value'].tolist(), (ov.n, ov.agree, round(ov.kappa, 6)))",
]

# the judge on rows 0-9: fail fail pass fail pass fail (error) fail pass fail
KEYS = ["f", "p", "p", "f", "f", "f", "p", "f", "p", "f"]


def test_keyboard_labels_survive_a_kernel_restart(lab: Lab, browser: Any) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    name = lab.write_notebook("labelling.ipynb", [*CELLS[:2], "# after the restart"])
    context = browser.new_context(viewport={"width": 1400, "height": 1400})
    page = context.new_page()
    open_notebook(page, lab, name)
    run_all(page)
    wait_idle_after(page)
    table = output_of(page, 1).locator(".rl-table")
    table.locator('.rl-tr[data-pos="0"]').click()
    table.locator(".rl-detail .rl-label-form").wait_for()
    table.locator(".rl-detail .rl-pos").click()  # the keyboard goes to the labelling pane
    for i, key in enumerate(KEYS):
        page.wait_for_function(
            """(i) => {
              const d = document.querySelector('.rl-detail');
              return d && d.querySelector('.rl-pos')?.textContent.startsWith(`case ${i + 1} of`)
                && d.querySelector('.rl-label-form') && d.contains(document.activeElement);
            }""",
            arg=i,
        )
        page.keyboard.press(key)
        if i == 1:
            table.locator(".rl-detail").screenshot(path=str(ARTIFACTS / "labelling_drilldown.png"))
        page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('.rl-detail .rl-pos')?.textContent.startsWith('case 11 of')"
    )
    # the disagreement filter keeps rows 1 and 4 (row 6 has no judge verdict)
    table.locator(".rl-disagree-only").check()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.rl-tr[data-row]')].filter(r => r.dataset.row)"
        ".map(r => r.dataset.row).join(',') === '1,4'"
    )
    output_of(page, 1).screenshot(path=str(ARTIFACTS / "labelling_disagree_filter.png"))

    page.evaluate(
        "async () => { await window.jupyterapp.shell.currentWidget.sessionContext.session"
        ".kernel.restart(); }"
    )
    open_notebook(page, lab, name)
    page.evaluate(
        """(src) => {
          const cell = window.jupyterapp.shell.currentWidget.content.widgets[2];
          cell.model.sharedModel.setSource(src);
        }""",
        CELLS[2],
    )
    run_cell(page, 2)
    out = output_of(page, 2)
    out.locator("text=LABELS").wait_for(timeout=60_000)
    text = out.inner_text()
    values = [{"f": "fail", "p": "pass"}[k] for k in KEYS]
    # 9 rows compared (row 6 is a judge error), 7 agree, kappa 0.5 (tests/test_calibration_people)
    assert f"LABELS 10 ['ana'] {values} (9, 7, 0.5)" in text, text
    context.close()


def test_pairwise_view_labels_winners_with_the_keyboard(lab: Lab, browser: Any) -> None:
    cells = [
        "import rubriclab as rl\n"
        "from tests._view_data import pairwise_result\n"
        "pair = pairwise_result(6, xss=True)\n"
        "view = rl.PairwiseView(pair)\n"
        'view.reviewer = "bo"\n'
        "view",
        'print("PAIR", pair.labels[["row", "criterion", "value"]].values.tolist())',
    ]
    name = lab.write_notebook("pair_labelling.ipynb", cells)
    context = browser.new_context(viewport={"width": 1400, "height": 1400})
    page = context.new_page()
    open_notebook(page, lab, name)
    run_cell(page, 0)
    view = output_of(page, 0).locator(".rl-pairwise")
    view.locator(".rl-label-form").wait_for(timeout=60_000)
    view.locator(".rl-label-form .rl-h").click()  # the keyboard goes to the labelling pane
    for i, key in enumerate(["b", "t", "c"]):
        page.wait_for_function(
            """(i) => {
              const v = document.querySelector('.rl-pairwise');
              return v && v.querySelector('.rl-pos')?.textContent.startsWith(`case ${i + 1} of`)
                && v.querySelector('.rl-label-form') && v.contains(document.activeElement);
            }""",
            arg=i,
        )
        page.keyboard.press(key)
        if i == 0:
            page.keyboard.press("1")  # no level keys for a pairwise criterion: ignored
            output_of(page, 0).screenshot(path=str(ARTIFACTS / "labelling_pairwise.png"))
        page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('.rl-pairwise .rl-pos')?.textContent.startsWith('case 4 of')"
    )
    assert page.evaluate("window.__rl_pwned") is None
    run_cell(page, 1)
    out = output_of(page, 1)
    out.locator("text=PAIR").wait_for(timeout=60_000)
    assert (
        "PAIR [[0, 'overall', 'baseline'], [1, 'overall', 'tie'], [2, 'overall', 'candidate']]"
        in out.inner_text()
    )
    context.close()


def test_calibration_view_of_labels(lab: Lab, browser: Any) -> None:
    cells = [
        "import rubriclab as rl\n"
        "from tests._view_data import pointwise_result, XSS\n"
        "r = pointwise_result(10, xss=True)\n"
        f"for i, v in enumerate({[{'f': 'fail', 'p': 'pass'}[k] for k in KEYS]!r}):\n"
        "    r.label(i, v, reviewer='ana', comment=XSS[i % len(XSS)])\n"
        "for i, v in enumerate(['fail', 'fail', 'pass', 'pass']):\n"
        "    r.label(i, v, reviewer='bo')\n"
        "rl.CalibrationView(rl.calibrate(r), title='Judge vs people')",
    ]
    name = lab.write_notebook("people_calibration.ipynb", cells)
    context = browser.new_context(viewport={"width": 1300, "height": 1200})
    page = context.new_page()
    open_notebook(page, lab, name)
    run_cell(page, 0)
    view = output_of(page, 0).locator(".rl-people")
    view.wait_for(timeout=60_000)
    row = view.locator('.rl-people-table tr[data-criterion="overall"]')
    # ana and bo split on rows 1 and 3; the 7 compared rows agree on 6 (tests/test_calibration_people)
    assert "86% (6/7)" in row.inner_text()
    assert "2/4" in row.inner_text()
    assert view.locator(".rl-people-disagreement").count() == 1  # row 4
    assert page.evaluate("window.__rl_pwned") is None
    output_of(page, 0).screenshot(path=str(ARTIFACTS / "calibration_people.png"))
    context.close()
