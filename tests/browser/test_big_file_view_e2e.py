"""A 120,000-row result file shown in a real JupyterLab pages from the file: rows appear,
the last row is reached, sorting by score works, sorting by text and search are disabled
saying they need the table, and the table is never loaded. Screenshot: tests/browser/artifacts/result_table_big_file.png."""

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
    "import tempfile, pathlib\nimport rubriclab as rl\n"
    "from rubriclab.result import EvalResult, MetricInfo\n"
    "from tests.test_file_rows import big_table\nfrom tests._view_data import SUPPORT\n"
    "path = pathlib.Path(tempfile.mkdtemp()) / 'big.parquet'\n"
    "EvalResult(big_table(120_000), [MetricInfo('support', 'pointwise', SUPPORT)], "
    "judge='test-judge').save(path)\n"
    "opened = rl.open_result(path)",
    "rl.display_eval_result(opened, title='A streamed run of 120,000 rows')",
]


def test_a_big_file_pages_in_the_browser(lab: Lab, browser: Any) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    name = lab.write_notebook("big_file.ipynb", CELLS)
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    page = context.new_page()
    try:
        open_notebook(page, lab, name)
        run_all(page)
        wait_idle_after(page)
        table = output_of(page, 1).locator(".rl-table")
        table.locator(".rl-tr:not(.rl-loading)").first.wait_for()
        assert table.locator(".rl-count").inner_text() == "120,000 rows"
        table.locator('.rl-th[data-key="support/score"]').click()
        table.locator('.rl-th[data-key="support/score"]').click()  # descending
        page.wait_for_function(
            """() => { const r = document.querySelector('.rl-table .rl-tr[data-pos="0"] [data-key="support/score"]');
                       return r && r.textContent.includes('100.0'); }"""
        )
        output_of(page, 1).screenshot(path=str(ARTIFACTS / "result_table_big_file.png"))
        # what the file refuses is disabled beforehand, its reason as the tooltip and a line
        prompt = table.locator('.rl-th[data-key="prompt"]')
        assert "rl-sort-refused" in (prompt.get_attribute("class") or "")
        assert "sorting by 'prompt' needs the whole table" in (prompt.get_attribute("title") or "")
        prompt.click()  # does nothing: never asked, never "loading…"
        assert table.locator(".rl-status.rl-bad").count() == 0
        assert table.locator(".rl-count").inner_text() == "120,000 rows"
        assert table.locator('input[type="search"]').is_disabled()
        assert table.locator(".rl-export-csv").is_disabled()
        assert "result.table loads it" in (
            table.locator(".rl-export-csv").get_attribute("title") or ""
        )
        assert (
            table.locator(".rl-file-note")
            .inner_text()
            .startswith("Read from big.parquet, a file of 120,000 rows")
        )
        assert not table.locator(".rl-errors-only").is_disabled()  # scores' columns are small
        output_of(page, 1).screenshot(path=str(ARTIFACTS / "result_table_big_file_sort_text.png"))
    finally:
        context.close()


SWITCHED = [
    CELLS[0] + "\nsmall = EvalResult(big_table(50), [MetricInfo('support', 'pointwise', SUPPORT)], "
    "judge='test-judge')\n"
    "view = rl.widgets.ResultTable(small, title='A run shown in memory, then from its big file')",
    "view",
    "view.update(opened)",
]


def test_a_refused_page_says_why_where_the_rows_go(lab: Lab, browser: Any) -> None:
    """A sort chosen on a table in memory, then the view switched to the big file (a run's
    final result): the kernel refuses the page, and the rows' area says why instead of
    'loading…' for ever. Screenshot: result_table_big_file_refused.png."""
    ARTIFACTS.mkdir(exist_ok=True)
    name = lab.write_notebook("big_file_switched.ipynb", SWITCHED)
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    page = context.new_page()
    try:
        open_notebook(page, lab, name)
        run_cell(page, 0)
        run_cell(page, 1)
        table = output_of(page, 1).locator(".rl-table")
        table.locator(".rl-tr:not(.rl-loading)").first.wait_for()
        table.locator('.rl-th[data-key="prompt"]').click()
        table.locator('.rl-th[data-key="prompt"] .rl-arrow').wait_for()
        assert table.locator(".rl-count").inner_text() == "50 rows"
        run_cell(page, 2)
        refusal = table.locator(".rl-refusal[role=alert]")
        refusal.wait_for()
        assert refusal.inner_text().startswith(
            "Rows not shown: sorting by 'prompt' needs the whole table "
            "(120,000 rows in big.parquet): result.table loads it"
        )
        assert "Could not load rows" not in table.inner_text()  # said once, where rows go
        assert table.locator(".rl-count").inner_text() == "rows not shown"
        assert "loading" not in table.inner_text()
        assert table.locator(".rl-retry").count() == 1
        assert "rl-sort-refused" in (
            table.locator('.rl-th[data-key="prompt"]').get_attribute("class") or ""
        )
        output_of(page, 1).screenshot(path=str(ARTIFACTS / "result_table_big_file_refused.png"))
        # the row number still sorts: the reader gets rows back at once
        table.locator('.rl-th[data-key="__index__"]').click()
        table.locator(".rl-tr:not(.rl-loading)").first.wait_for()
        assert table.locator(".rl-count").inner_text() == "120,000 rows"
    finally:
        context.close()
