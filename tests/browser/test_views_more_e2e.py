"""End to end in a real JupyterLab (issue 19): charts, CSV/JSONL export and copy-as-JSON,
outcome and criterion filters, a live run that fills (and keeps its rows on Ctrl-C), the sharper
table (resize, wrap, raw output, two-line headers, one-line mock banner, cached marker), the
calibration drill-down, Markdown with its raw-text toggle, the pairwise image_description bug and
the static report's column widths. Screenshots go to tests/browser/artifacts/."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests._view_data import XSS
from tests.browser.lab import (
    ARTIFACTS,
    Lab,
    open_notebook,
    output_of,
    run_all,
    wait_idle_after,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SETUP = """
import json
import pandas as pd
import rubriclab as rl
from rubriclab.testing import FakeJudgeServer
from tests._view_data import pointwise_result, pairwise_result, XSS
result = pointwise_result(40, xss=True, is_mock=True)
t = result.table
t.loc[2, "response"] = "**Primary Damage:** roof\\n\\n- shingles gone\\n- [photo](javascript:alert(1)) [source](https://example.com/a)\\n\\n" + XSS[0]
t.loc[2, "support/rationale"] = "## Why\\nThe answer names the *roof*."
t.loc[3, "support/attempts"] = 0

def answer(body):
    text = json.dumps(body)
    if "bad answer" in text:
        return "I refuse to answer in JSON."
    return json.dumps({"verdicts": {q: {"reasoning": "r", "verdict": "YES"} for q in ("q1", "q2")}})

server = FakeJudgeServer(answer, latency=0.3).__enter__()
judge = rl.Judge(server.url, model="m", max_retries=0, max_concurrency=2, cache=False)
check = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["A?", "B?"]))
def frame(n):
    return pd.DataFrame({"prompt": [f"question {i}" for i in range(n)],
                         "response": ["bad answer" if i % 5 == 4 else f"answer **{i}**" for i in range(n)]})
"""

CELLS = [
    SETUP,
    'table = rl.ResultTable(result, title="Support answers"); table',
    "pair = pairwise_result(8, xss=True)\n"
    'pair.table["image_description"] = "A red barn; the roof is torn " + pair.table.index.astype(str)\n'
    "rl.PairwiseView(pair)",
    "from tests.test_widgets_calibration_view import _frames\n"
    "from rubriclab.calibration import pairwise_agreement, criterion_agreement\n"
    "n = 30\n"
    "jd = pd.DataFrame({'question_id': range(n), 'model_a': ['x'] * n, 'model_b': ['y'] * n,"
    " 'winner': ['model_a'] * n, 'judgment': [f'A is better, reason {i}' for i in range(n)]})\n"
    "hu = pd.DataFrame({'question_id': range(n), 'model_a': ['x'] * n, 'model_b': ['y'] * n,"
    " 'winner': ['model_b' if i % 3 else 'model_a' for i in range(n)], 'judge': ['e1'] * n,"
    " 'question': [f'Question {i}: which answer is kinder? ' + XSS[1] for i in range(n)]})\n"
    "crit = criterion_agreement(pd.DataFrame({'accuracy': [3, 2, 3, 1], 'clarity': [1, 2, 2, 2]}),"
    " pd.DataFrame({'accuracy': [2, 2, 3, 2], 'clarity': [1, 1, 2, 2]}), n_boot=200)\n"
    "rl.CalibrationView(pairwise_agreement(jd, hu, on='question_id'), crit, judge=jd, human=hu)",
    "pass  # 4: the live run (its test sets the source and runs it)",
    "pass  # 5: the interrupted live run",
    'short = rl.ResultTable(pointwise_result(2), title="Two rows"); short',
]

LIVE = "live = rl.evaluate(frame(24), [check], judge=judge, display=True)\nprint('SAME', live.table is rl.display.last_live_rows(), len(live.table))"
INTERRUPTED = "rl.evaluate(frame(200), [check], judge=judge, display=True)"


@pytest.fixture(scope="module")
def notebook(lab: Lab, browser: Any) -> Iterator[Any]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    name = lab.write_notebook("views_more.ipynb", CELLS)
    context = browser.new_context(
        viewport={"width": 1400, "height": 1600},
        accept_downloads=True,
        permissions=["clipboard-read", "clipboard-write"],
    )
    page = context.new_page()
    page.dialogs = []  # type: ignore[attr-defined]
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
    open_notebook(page, lab, name)
    run_all(page)
    wait_idle_after(page)
    yield page
    context.close()


def _shot(locator: Any, name: str) -> None:
    locator.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def _table(page: Any) -> Any:
    table = output_of(page, 1).locator(".rl-table")
    table.locator(".rl-tr:not(.rl-loading)").first.wait_for()
    return table


def _start_cell(page: Any, index: int) -> None:
    """Run one cell without waiting for it to finish (``run_cell`` waits)."""
    page.evaluate(
        """(i) => {
      const app = window.jupyterapp;
      app.shell.currentWidget.content.activeCellIndex = i;
      app.commands.execute('notebook:run-cell');
    }""",
        index,
    )


def _set_cell_source(page: Any, index: int, source: str) -> None:
    page.evaluate(
        """([i, src]) => {
      const panel = window.jupyterapp.shell.currentWidget;
      panel.content.widgets[i].model.sharedModel.setSource(src);
    }""",
        [index, source],
    )


def test_charts_show_scores_and_where_answers_fail(notebook: Any) -> None:
    table = _table(notebook)
    hist = table.locator(".rl-charts svg.rl-hist")
    hist.wait_for()
    assert hist.locator("rect.rl-bar").count() == 10
    crit = table.locator(".rl-charts svg.rl-crit-chart")
    labels = crit.evaluate(
        "(svg) => [...svg.querySelectorAll('text.rl-clabel')].map((t) => t.lastChild.textContent)"
    )
    assert labels == ["accuracy", "deadline"]
    assert "% fail" in (crit.text_content() or "")
    # one-line mock banner with the details on hover; ± labelled; long headers on two lines
    banner = table.locator(".rl-mock")
    assert banner.bounding_box()["height"] < 30
    assert "offline mock judge" in (banner.get_attribute("title") or "")
    assert "% std" in table.locator(".rl-card-big").inner_text()
    head = table.locator('.rl-th[data-key="support/score"]')
    assert head.locator(".rl-th-metric").inner_text() == "support"
    assert head.locator(".rl-th-field").inner_text() == "score"
    _shot(output_of(notebook, 1), "table_charts")


def test_outcome_and_criterion_filters_and_charts_follow_them(notebook: Any) -> None:
    table = _table(notebook)
    options = table.locator(".rl-status-filter option").all_inner_texts()
    assert options == ["any outcome", "pass", "fail", "no verdict", "error"]
    table.locator(".rl-status-filter").select_option("error")
    notebook.wait_for_function(
        "() => document.querySelector('.rl-table .rl-count').textContent === '5 of 40 rows'"
    )
    table.locator(".rl-status-filter").select_option("")
    table.locator(".rl-criterion-filter").select_option(label="accuracy: level 1")
    # rows 0, 3, 9, 12, ... (i % 3 == 0) that are not errors (i % 7 == 6)
    expected = sum(1 for i in range(40) if i % 3 == 0 and i % 7 != 6)
    notebook.wait_for_function(
        f"() => document.querySelector('.rl-table .rl-count').textContent === '{expected} of 40 rows'"
    )
    notebook.wait_for_function(
        "() => [...document.querySelectorAll('.rl-table .rl-charts svg.rl-crit-chart rect')]"
        ".some((r) => (r.querySelector('title') || {}).textContent?.startsWith('accuracy: level 1 '))"
    )
    _shot(output_of(notebook, 1), "table_filtered")
    table.locator(".rl-criterion-filter").select_option("")
    notebook.wait_for_function(
        "() => document.querySelector('.rl-table .rl-count').textContent === '40 rows'"
    )


def test_export_downloads_the_filtered_sorted_rows(notebook: Any) -> None:
    table = _table(notebook)
    table.locator(".rl-status-filter").select_option("fail")
    notebook.wait_for_function(
        "() => /of 40 rows/.test(document.querySelector('.rl-table .rl-count').textContent)"
    )
    shown = int(table.locator(".rl-count").inner_text().split()[0])
    with notebook.expect_download() as info:
        table.locator(".rl-export-csv").click()
    rows = list(csv.reader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"))))
    assert rows[0][:3] == ["index", "id", "prompt"] and len(rows) - 1 == shown
    assert any("<script>" in cell for row in rows for cell in row)  # data, not markup
    with notebook.expect_download() as info:
        table.locator(".rl-export-jsonl").click()
    lines = Path(info.value.path()).read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == shown and all(r["support/verdict"].startswith("fail") for r in records)
    assert info.value.suggested_filename == "rubriclab-results.jsonl"
    table.locator(".rl-status-filter").select_option("")
    _wait_all_rows_drawn(notebook)  # leave the table as the next test expects it


def _wait_all_rows_drawn(page: Any) -> None:
    """Wait until the table shows every row again and row 0 is a drawn row (not a loading
    placeholder): a filter reset answers from the kernel and redraws the grid after it."""
    page.wait_for_function(
        "() => { const t = document.querySelector('.rl-table');"
        " const r = t && t.querySelector('.rl-tr[data-pos=\"0\"]');"
        " return t.querySelector('.rl-count').textContent === '40 rows'"
        " && r !== null && !r.classList.contains('rl-loading'); }"
    )


def test_sharper_table_resize_wrap_raw_output(notebook: Any) -> None:
    table = _table(notebook)
    _wait_all_rows_drawn(notebook)
    head = table.locator('.rl-th[data-key="prompt"]')
    before = head.bounding_box()["width"]
    grip = head.locator(".rl-resize").bounding_box()
    notebook.mouse.move(grip["x"] + 4, grip["y"] + 10)
    notebook.mouse.down()
    notebook.mouse.move(grip["x"] + 160, grip["y"] + 10, steps=5)
    notebook.mouse.up()
    after = table.locator('.rl-th[data-key="prompt"]').bounding_box()["width"]
    assert after > before + 100
    # the rows follow the header on their next frame: wait for that state, then measure it
    notebook.wait_for_function(
        """(w) => { const c = document.querySelector('.rl-table .rl-tr[data-pos="0"] [data-key="prompt"]');
        return c !== null && Math.abs(c.getBoundingClientRect().width - w) < 2; }""",
        arg=after,
    )
    cell = table.locator('.rl-tr[data-pos="0"] [data-key="prompt"]')
    assert abs(cell.bounding_box()["width"] - after) < 2
    table.locator(".rl-wrap").check()
    notebook.wait_for_function(
        "() => document.querySelector('.rl-table .rl-tr').style.height === '66px'"
    )
    assert table.locator('.rl-th[data-key="support/raw_output"]').count() == 0
    table.locator(".rl-show-raw").check()
    table.locator('.rl-th[data-key="support/raw_output"]').wait_for()
    _shot(output_of(notebook, 1), "table_resized_wrapped_raw")
    table.locator(".rl-show-raw").uncheck()
    table.locator(".rl-wrap").uncheck()
    table.locator('.rl-th[data-key="support/raw_output"]').wait_for(state="detached")
    notebook.wait_for_function(
        "() => !document.querySelector('.rl-table .rl-tr').classList.contains('rl-wrapped')"
    )
    _wait_all_rows_drawn(notebook)


def test_drill_down_markdown_toggle_cached_and_copy_json(notebook: Any) -> None:
    table = _table(notebook)
    table.locator('.rl-tr[data-pos="2"]').click()
    detail = table.locator(".rl-detail .rl-case")
    detail.locator("strong").first.wait_for()
    assert detail.locator("strong").first.inner_text() == "Primary Damage:"
    links = detail.locator(".rl-md a")
    assert links.count() == 1
    assert links.first.get_attribute("href") == "https://example.com/a"
    assert links.first.get_attribute("rel") == "noopener noreferrer nofollow"
    assert detail.locator(".rl-md h2").inner_text() == "Why"
    assert "<script>" in detail.inner_text()
    _shot(output_of(notebook, 1), "drilldown_markdown")
    detail.locator(".rl-md-toggle").click()
    notebook.wait_for_function(
        "() => !document.querySelector('.rl-detail .rl-case strong') && "
        "document.querySelector('.rl-detail').textContent.includes('**Primary Damage:**')"
    )
    detail.locator(".rl-md-toggle").click()
    detail.locator(".rl-copy-json").click()
    notebook.wait_for_function(
        "() => document.querySelector('.rl-detail .rl-copy-json').textContent === 'Copied ✓'"
    )
    copied = json.loads(notebook.evaluate("() => navigator.clipboard.readText()"))
    assert copied["heading"].startswith("case 3 of 40")
    detail.locator(".rl-next").click()
    notebook.wait_for_function(
        "() => document.querySelector('.rl-detail .rl-pos').textContent.includes('case 4 of 40')"
    )
    meta = table.locator(".rl-detail .rl-meta").first
    assert "cached" in meta.inner_text() and "attempts" not in meta.inner_text()
    table.locator(".rl-close").click()


def test_pairwise_view_image_description_is_text_and_wtl_has_intervals(notebook: Any) -> None:
    view = output_of(notebook, 2).locator(".rl-pairwise")
    view.locator(".rl-scale .rl-on").wait_for()
    assert view.locator(".rl-images").count() == 0  # the description is not an image path
    assert "A red barn; the roof is torn" in view.inner_text()
    assert view.locator("svg.rl-wtl path.rl-whisker").count() == 3
    assert view.locator("svg.rl-wtl text").all_text_contents()[-5:] == [
        "0%",
        "25%",
        "50%",
        "75%",
        "100%",
    ]
    _shot(output_of(notebook, 2), "pairwise_wtl")


def test_calibration_cell_lists_paged_comparisons_with_texts(notebook: Any) -> None:
    view = output_of(notebook, 3).locator(".rl-calibration")
    view.locator('.rl-heat-cell[data-row="A"][data-col="B"]').click()
    items = view.locator(".rl-item")
    items.first.wait_for()
    assert items.count() == 8
    assert "Question 1: which answer is kinder?" in items.first.inner_text()
    assert "A is better, reason 1" in items.first.inner_text()
    assert view.locator(".rl-pager .rl-pos").first.inner_text() == "1–8 of 20"
    view.locator(".rl-pager .rl-next").first.click()
    notebook.wait_for_function(
        "() => document.querySelector('.rl-calibration .rl-pager .rl-pos').textContent === '9–16 of 20'"
    )
    assert view.locator(".rl-forest-axis .rl-tick").all_inner_texts() == [
        "-0.75",
        "-0.38",
        "0.00",
        "+0.38",
        "+0.75",
    ]
    height = view.evaluate("(el) => el.querySelector('.rl-listing').getBoundingClientRect().height")
    assert height < 1200  # a page of comparisons, not a 2,000 px list of ids
    _shot(output_of(notebook, 3), "calibration_paged")


def test_a_live_run_fills_the_table_then_returns_the_same_result(notebook: Any) -> None:
    _set_cell_source(notebook, 4, LIVE)
    _start_cell(notebook, 4)
    out = output_of(notebook, 4)
    out.locator(".rl-progress-text").wait_for(timeout=60_000)
    # issue 26: the first rows show after one round of calls (2 at a time here), not after a
    # block of 16; the run is still going (state, never time: the next update waits for it)
    first = notebook.wait_for_function(
        """() => { const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[4];
                   const t = cell.querySelector('.rl-progress-text');
                   const m = t && /^(\\d+) of 24 rows · \\d+ errors? · running$/.exec(t.textContent);
                   const shown = cell.querySelectorAll('.rl-table .rl-tr:not(.rl-loading)').length;
                   return m && Number(m[1]) > 0 && shown > 0 ? [Number(m[1]), shown] : null; }""",
        timeout=60_000,
    ).json_value()
    assert first[0] in (2, 6) and first[1] == first[0]  # the old blocks showed 16 at first
    _shot(out, "live_first_rows")
    # part of the rows, shown while the run still holds the kernel
    notebook.wait_for_function(
        """() => { const t = document.querySelectorAll('.jp-Notebook .jp-Cell')[4].querySelector('.rl-progress-text');
                   return t && /^14 of 24 rows · 2 errors · running$/.test(t.textContent); }""",
        timeout=60_000,
    )
    assert out.locator(".rl-tr:not(.rl-loading)").count() >= 10
    _shot(out, "live_running")
    out.locator("text=SAME True 24").wait_for(timeout=60_000)
    progress = out.locator(".rl-progress-text").inner_text()
    assert progress == "24 of 24 rows · 4 errors · finished"
    assert out.locator(".rl-progress-line").inner_text().strip() == progress
    # the finished table pages from the kernel once the cell has returned
    notebook.wait_for_function(
        "() => document.querySelectorAll('.jp-Notebook .jp-Cell')[4].querySelector('.rl-count')?.textContent === '24 rows'"
    )
    # the failed rows are told (issue 26: say so where the user looks); no other warning
    text = out.inner_text()
    assert "RowErrorWarning: chk: 4 of 24 rows failed" in text
    assert text.count("Warning") == 1 and "never awaited" not in text
    _shot(out, "live_finished")


def test_ctrl_c_keeps_the_finished_rows_of_a_live_run(notebook: Any) -> None:
    _set_cell_source(notebook, 5, INTERRUPTED)
    _start_cell(notebook, 5)
    notebook.wait_for_function(
        """() => { const t = document.querySelectorAll('.jp-Notebook .jp-Cell')[5].querySelector('.rl-progress-text');
                   return t && /^(14|30|46) of 200 rows/.test(t.textContent); }""",
        timeout=60_000,
    )
    notebook.evaluate("() => window.jupyterapp.commands.execute('notebook:interrupt-kernel')")
    out = output_of(notebook, 5)
    notebook.wait_for_function(
        """() => { const t = document.querySelectorAll('.jp-Notebook .jp-Cell')[5].querySelector('.rl-progress-text');
                   return t && t.textContent.includes('interrupted: the finished rows are kept'); }""",
        timeout=60_000,
    )
    wait_idle_after(notebook)
    kept = int(out.locator(".rl-progress-text").inner_text().split()[0])
    assert kept >= 14 and (kept - 14) % 16 == 0  # blocks of 2, 4, 8, then 16 rows
    notebook.wait_for_function(
        f"() => document.querySelectorAll('.jp-Notebook .jp-Cell')[5].querySelector('.rl-count')?.textContent === '{kept} rows'"
    )
    assert "KeyboardInterrupt" in out.inner_text()
    assert "never awaited" not in out.inner_text()
    _shot(out, "live_interrupted")


def test_xss_stays_inert_in_charts_tooltips_and_markdown(notebook: Any) -> None:
    page = notebook
    assert page.evaluate("() => window.__rl_pwned") is None
    assert page.dialogs == []  # type: ignore[attr-defined]
    scope = ".jp-OutputArea .rl"
    assert page.locator(f"{scope} script, {scope} iframe, {scope} img[onerror]").count() == 0
    assert page.locator(f"{scope} svg:not(.rl-chart)").count() == 0
    hrefs = page.evaluate(
        "() => [...document.querySelectorAll('.jp-OutputArea .rl a[href]')].map((a) => a.getAttribute('href'))"
    )
    assert all(h.startswith(("https:", "http:", "mailto:")) for h in hrefs)
    assert page.get_by_text(XSS[1], exact=False).count() > 0


def test_static_report_gives_prose_the_room(browser: Any, tmp_path: Any) -> None:
    from rubriclab.widgets.report import report_html
    from tests._view_data import pairwise_result

    pair = pairwise_result(6)
    pair.table["prompt"] = (
        "Explain, in a few sentences, how the refund policy treats late returns. " * 2
    )
    page = browser.new_page(viewport={"width": 1300, "height": 1200})
    page.set_content(report_html({"pairwise": pair}))
    widths = page.evaluate(
        """() => { const t = document.querySelector('.rl-rows-static'); const head = [...t.querySelectorAll('th')];
                   const row = t.querySelector('tbody tr'); return head.map((h, i) => [h.textContent, row.children[i].getBoundingClientRect().width]); }"""
    )
    by = dict(widths)
    assert by["prompt"] >= 219 and by["response"] >= 219
    assert by["pairscore"] < 120  # the metric column holding a score stays narrow
    assert page.locator("svg.rl-chart").count() >= 3
    page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
    page.close()


def test_the_columns_menu_fits_below_a_short_table(notebook: Any) -> None:
    """On a two-row table the menu hung below the output area and was cut off: the view now
    grows while the menu is open, so its last entry can be seen and clicked."""
    out = output_of(notebook, 6)
    table = out.locator(".rl-table")
    table.locator(".rl-tr:not(.rl-loading)").first.wait_for()
    table.locator(".rl-columns-btn").click()
    pop = table.locator(".rl-popover")
    pop.wait_for()
    # JupyterLab's output box scrolls (overflow auto): an overhanging menu made it scroll, i.e.
    # the menu was cut off at the output's edge. Now nothing overflows the output box.
    clipped = notebook.evaluate(
        """() => { const t = [...document.querySelectorAll('.rl.rl-table')].at(-1);
        const box = t.closest('.jp-OutputArea-output') || t.parentElement;
        return [box.scrollHeight, box.clientHeight]; }"""
    )
    assert clipped[0] <= clipped[1] + 1, clipped
    last = pop.locator("label").last
    last.scroll_into_view_if_needed()
    box, area = pop.bounding_box(), out.bounding_box()
    assert box["y"] + box["height"] <= area["y"] + area["height"] + 1, (box, area)
    centre = last.bounding_box()
    hit = notebook.evaluate(
        "([x, y]) => !!document.elementFromPoint(x, y)?.closest('.rl-popover')",
        [centre["x"] + 10, centre["y"] + centre["height"] / 2],
    )
    assert hit  # the entry is on top, not clipped under the next cell
    _shot(out, "columns_menu_short_table")
    table.locator(".rl-columns-btn").click()
    pop.wait_for(state="detached")
    notebook.wait_for_function(
        "() => [...document.querySelectorAll('.rl.rl-table')].every((r) => r.style.paddingBottom === '')"
    )
