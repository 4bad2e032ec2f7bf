"""The review page in real chromium: two reviewers (two browser contexts) label 20 rows each
with the keyboard at the same time; the labels file holds all 40; the views' XSS corpus stays
inert; a foreign page cannot post labels. Screenshots go to tests/browser/artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rubriclab.result import labels_path, load_result
from rubriclab.review import ReviewServer, running
from tests._view_data import pointwise_result
from tests.browser.lab import ARTIFACTS

pytestmark = [pytest.mark.browser]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ReviewServer]:
    path = pointwise_result(30, xss=True, is_mock=True).save(tmp_path / "run.jsonl")
    with running(path, reviewer="host") as server:
        yield server


def _page(browser: Any, server: ReviewServer, reviewer: str) -> Any:
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    context.add_init_script(f"localStorage.setItem('rl-reviewer', {reviewer!r})")
    page = context.new_page()
    page.goto(server.url)
    page.wait_for_selector('.rl-case[data-row="0"] .rl-label-form')
    return page


def test_two_reviewers_label_20_rows_each_at_once(browser: Any, served: ReviewServer) -> None:
    ana, bo = _page(browser, served, "ana"), _page(browser, served, "bo")
    for i in range(20):
        for page, key in ((ana, "p" if i % 3 else "f"), (bo, "f" if i % 2 else "p")):
            page.wait_for_selector(f'.rl-case[data-row="{i}"] .rl-label-form')
            if page is ana and i < 3:
                page.keyboard.press("2")  # the highlighted criterion (accuracy) gets level 2
            page.keyboard.press(key)
            page.keyboard.press("Enter")
        for page in (ana, bo):
            page.wait_for_selector(f'.rl-review-row.rl-done[data-row="{i}"]')
    ana.wait_for_selector('.rl-case[data-row="20"] .rl-label-form')
    assert ana.evaluate("window.__rl_pwned") is None
    assert bo.evaluate("window.__rl_pwned") is None
    frame = load_result(served.path).labels
    overall = frame[frame["criterion"] == "overall"]
    assert overall.groupby("reviewer").size().to_dict() == {"ana": 20, "bo": 20}
    assert overall[overall["reviewer"] == "ana"]["value"].tolist()[:4] == [
        "fail",
        "pass",
        "pass",
        "fail",
    ]
    accuracy = frame[frame["criterion"] == "accuracy"]
    assert accuracy["value"].tolist() == [2, 2, 2] and set(accuracy["reviewer"]) == {"ana"}
    assert len(labels_path(served.path).read_text().splitlines()) == 43

    # the disagreement filter lists rows where a person differs from the judge
    ana.select_option(".rl-review-filter", "disagree")
    ana.wait_for_selector(".rl-review-count:has-text('shown')")
    ana.keyboard.press("k")
    ana.wait_for_selector(".rl-label-q.rl-differs")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    ana.screenshot(path=str(ARTIFACTS / "review_page_disagree.png"), full_page=False)
    bo.select_option(".rl-review-filter", "all")
    bo.screenshot(path=str(ARTIFACTS / "review_page.png"), full_page=False)
    assert ana.evaluate("window.__rl_pwned") is None


def test_a_foreign_page_cannot_post_labels(browser: Any, served: ReviewServer) -> None:
    page = browser.new_page()
    page.goto("about:blank")
    status = page.evaluate(
        """async ([url, token]) => {
          try {
            const r = await fetch(url + '/api/labels', {method: 'POST', mode: 'no-cors',
              headers: {'Content-Type': 'text/plain'},
              body: JSON.stringify({labels: [{row: 0, metric: 'support', value: 'pass'}]})});
            return r.status;
          } catch (e) { return 'blocked'; }
        }""",
        [f"http://127.0.0.1:{served.port}", served.token],
    )
    assert status in (0, "blocked")
    assert load_result(served.path).labels.empty
