"""A row's conversation in a real JupyterLab: the explanation draws it as a chat transcript,
each message with its role, tool calls as name + arguments, model text as text (an <img
onerror> stays words, a `| a | b |` line is no table), and a per-turn metric's scores beside
the assistant turns with the worst marked. Screenshots:
tests/browser/artifacts/transcript_short.png, transcript_long.png, transcript_table_detail.png."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.lab import ARTIFACTS, Lab, open_notebook, output_of, run_all, wait_idle_after

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELLS = [
    "import dataclasses\nimport pandas as pd\nimport rubriclab as rl\n"
    "short = [\n"
    "    {'role': 'system', 'content': 'You are a support agent for an online shop.'},\n"
    "    {'role': 'user', 'content': '<img src=x onerror=alert(1)> where is my order A1?'},\n"
    "    {'role': 'assistant', 'content': '', 'tool_calls': [{'id': 'c1', 'function': "
    "{'name': 'lookup_order', 'arguments': '{\"id\": \"A1\"}'}}]},\n"
    "    {'role': 'tool', 'tool_call_id': 'c1', 'content': '| a | b |\\n|---|---|\\n| shipped | today |'},\n"
    "    {'role': 'assistant', 'content': 'It shipped today. **Soon** <b>there</b>.'},\n"
    "]\n"
    "long = [{'role': 'system', 'content': 'Answer briefly.'}]\n"
    "for i in range(1, 13):\n"
    "    long += [{'role': 'user', 'content': f'Question {i}: what is {i} times {i}?'},\n"
    "             {'role': 'assistant', 'content': f'{i} times {i} is {i * i}.'}]\n"
    "df = pd.DataFrame({'conversation': [short, long]})\n"
    "per_turn = dataclasses.replace(rl.metrics.TASK_COMPLETION, name='each_turn', per_turn=True)\n"
    "result = rl.evaluate(df, [per_turn, rl.metrics.CONVERSATION_QUALITY], judge='mock')",
    "rl.Explanation(result, index=0)",
    "rl.Explanation(result, index=1)",
    "rl.ResultTable(result)",
]


@pytest.fixture(scope="module")
def notebook(lab: Lab, browser: Any) -> Iterator[Any]:
    ARTIFACTS.mkdir(exist_ok=True)
    name = lab.write_notebook("conversation.ipynb", CELLS)
    context = browser.new_context(viewport={"width": 1200, "height": 1400})
    page = context.new_page()
    page.dialogs = []  # type: ignore[attr-defined]
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))  # type: ignore[attr-defined]
    open_notebook(page, lab, name)
    run_all(page)
    wait_idle_after(page)
    yield page
    context.close()


def test_a_short_conversation_is_a_transcript_with_roles_and_text(notebook: Any) -> None:
    view = output_of(notebook, 1).locator(".rl-explanation")
    view.locator(".rl-transcript .rl-msg").first.wait_for()
    msgs = view.locator(".rl-transcript .rl-msg")
    assert msgs.count() == 5
    roles = [msgs.nth(i).get_attribute("data-role") for i in range(5)]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert msgs.nth(2).locator(".rl-msg-call").inner_text() == '→ lookup_order({"id": "A1"})'
    transcript = view.locator(".rl-transcript")
    assert "<img src=x onerror=alert(1)> where is my order A1?" in transcript.inner_text()
    assert "| a | b |" in transcript.inner_text()
    assert transcript.locator("img, table, b, strong").count() == 0
    # per-turn scores beside both assistant turns, one marked worst; none on other roles
    assert msgs.nth(2).locator('.rl-turn-score[data-metric="each_turn"]').count() == 1
    assert msgs.nth(4).locator('.rl-turn-score[data-metric="each_turn"]').count() == 1
    assert transcript.locator(".rl-worst").count() == 1
    assert msgs.nth(1).locator(".rl-turn-score").count() == 0
    # the whole-conversation metric has no per-turn chips
    assert transcript.locator('.rl-turn-score[data-metric="conversation_quality"]').count() == 0
    output_of(notebook, 1).screenshot(path=str(ARTIFACTS / "transcript_short.png"))
    assert notebook.dialogs == []


def test_a_long_conversation_keeps_every_message_in_order(notebook: Any) -> None:
    view = output_of(notebook, 2).locator(".rl-explanation")
    view.locator(".rl-transcript .rl-msg").first.wait_for()
    msgs = view.locator(".rl-transcript .rl-msg")
    assert msgs.count() == 25
    assert msgs.nth(1).inner_text().endswith("Question 1: what is 1 times 1?")
    assert msgs.nth(24).inner_text().endswith("12 times 12 is 144.")
    assert view.locator(".rl-transcript .rl-turn-score").count() == 12
    assert view.locator(".rl-transcript .rl-worst").count() == 1
    output_of(notebook, 2).screenshot(path=str(ARTIFACTS / "transcript_long.png"))


def test_the_result_tables_drill_down_shows_the_transcript(notebook: Any) -> None:
    table = output_of(notebook, 3).locator(".rl-table")
    table.locator('.rl-tr[data-pos="0"]').click()
    detail = table.locator(".rl-detail .rl-case")
    detail.locator(".rl-transcript .rl-msg").first.wait_for()
    assert detail.locator(".rl-transcript .rl-msg").count() == 5
    assert "<img src=x onerror=alert(1)>" in detail.locator(".rl-transcript").inner_text()
    assert detail.locator(".rl-transcript img, .rl-transcript table").count() == 0
    assert detail.locator(".rl-transcript .rl-worst").count() == 1
    # the Markdown toggle leaves the transcript as text either way
    detail.locator(".rl-md-toggle").click()
    notebook.wait_for_function(
        "() => document.querySelector('.rl-detail .rl-md-toggle')?.textContent === 'Raw text'"
    )
    assert table.locator(".rl-detail .rl-transcript .rl-msg").count() == 5
    detail.locator(".rl-transcript").scroll_into_view_if_needed()
    detail.locator(".rl-transcript").screenshot(path=str(ARTIFACTS / "transcript_table_detail.png"))
    assert notebook.dialogs == []
