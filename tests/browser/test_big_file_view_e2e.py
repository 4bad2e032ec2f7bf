"""A 120,000-row result file shown in a real JupyterLab pages from the file: rows appear,
the last row is reached, sorting by score works, sorting by text says it needs the table,
and the table is never loaded. Screenshot: tests/browser/artifacts/result_table_big_file.png."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.lab import ARTIFACTS, Lab, open_notebook, output_of, run_all, wait_idle_after

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
        table.locator('.rl-th[data-key="prompt"]').click()
        status = table.locator(".rl-status.rl-bad")
        status.wait_for()
        assert "sorting by 'prompt' needs the whole table" in status.inner_text()
        assert "result.table loads it" in status.inner_text()
        output_of(page, 1).screenshot(path=str(ARTIFACTS / "result_table_big_file_sort_text.png"))
    finally:
        context.close()
