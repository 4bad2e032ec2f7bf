"""The judge card's static page in chromium: its charts draw, hostile names stay text, the MOCK
banner shows, and the screenshot goes to tests/browser/artifacts/judge_card.png."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import rubriclab as rl
from tests._view_data import XSS
from tests.browser.lab import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_judge_card_page_draws_charts_and_keeps_names_as_text(browser: Any, tmp_path: Path) -> None:
    card = rl.rate_judges(
        [rl.Judge("mock"), rl.Judge("mock")],
        suites=("llmbar", "mt_bench"),
        n=16,
        names=["MOCK one", "MOCK two"],
    )
    data = json.loads(card.save(tmp_path / "card.json").read_text())
    data["judges"][1]["name"] = XSS[1]
    for section in ("figures", "usage"):
        for row in data[section]:
            if row["judge"] == "MOCK two":
                row["judge"] = XSS[1]
    (tmp_path / "card.json").write_text(json.dumps(data))
    hostile = rl.load_judge_card(tmp_path / "card.json")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1100, "height": 1400})
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.set_content(hostile.html_page())
    assert page.locator(".rl-mock").first.is_visible()
    assert "MOCK judge: offline" in page.locator(".rl-mock").first.inner_text()
    charts = page.locator(".rl-judge-card svg[role=img]")
    assert charts.count() == len({(f["suite"], f["subset"]) for f in data["figures"]})
    # a judge's bar per judge plus hatched published bars, each with its interval whiskers
    assert page.locator(".rl-judge-card svg rect[fill='url(#rl-hatch)']").count() > 0
    assert page.locator("script, iframe, img").count() == 0
    assert page.evaluate("() => window.__rl_pwned") is None and dialogs == []
    assert page.get_by_text(XSS[1], exact=False).count() > 0  # shown as text
    page.screenshot(path=str(ARTIFACTS / "judge_card.png"), full_page=True)
    page.close()


def test_judge_card_in_jupyterlab_shows_charts_and_mock(lab: Any, browser: Any) -> None:
    from tests.browser.lab import open_notebook, output_of, run_all, wait_idle_after

    name = lab.write_notebook(
        "judge_card_view.ipynb",
        [
            "import rubriclab as rl\n"
            "card = rl.rate_judge(rl.Judge('mock'), suites=('llmbar', 'mt_bench'), n=12)\n"
            "card",
        ],
    )
    page = browser.new_page(viewport={"width": 1300, "height": 1500})
    open_notebook(page, lab, name)
    run_all(page)
    wait_idle_after(page)
    out = output_of(page, 0)
    out.locator(".rl-judge-card").wait_for()
    assert "MOCK judge: offline" in out.locator(".rl-mock").inner_text()
    assert out.locator(".rl-judge-card svg[role=img]").count() >= 3
    out.locator(".rl-judge-card").screenshot(path=str(ARTIFACTS / "judge_card_lab.png"))
    page.close()
