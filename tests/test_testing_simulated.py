"""The simulated judge: rules read from the prompt, a wrong fallback for vague wording, the
nearest example, and an optimizer mode built from the disagreements it is shown."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.alignment import people_labels
from rubriclab.alignment.rewrite import rewrite_prompt
from rubriclab.testing import FakeJudgeServer, simulated_answer, simulated_responder
from rubriclab.testing.simulated import (
    PEOPLE_RULES,
    VAGUE_WORDS,
    alignment_demo,
    alignment_rubrics,
    rule_of,
)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("Does the response have at least 25 words?", ("min", 25)),
        ("Is it more than 10 words long? more than 10 words", ("gt", 10)),
        ("At most 40 words", ("max", 40)),
        ("Does the response mention 'refund'?", ("has", "refund")),
        ("It does not mention \u201cprice\u201d", ("not", "price")),
        ("Is the response detailed enough?", None),
    ],
)
def test_rules_read_from_the_wording(text: str, rule: object) -> None:
    assert rule_of(text) == rule


def _levels(rubric: rl.Rubric, responses: list[str]) -> list[list[int]]:
    data = pd.DataFrame({"prompt": ["p"] * len(responses), "response": responses})
    with FakeJudgeServer(simulated_responder) as server:
        judge = rl.Judge(server.url, model="sim", api_key="sk-test")
        result = rl.evaluate(
            data, metrics=[rl.metrics.RubricMetric(rubric=rubric, name="s")], judge=judge
        )
    assert all("Simulated judge" in r for r in result.table["s/rationale"])
    return [[c["level"] for c in cell] for cell in result.table["s/criteria"]]


def test_stated_rules_are_followed_and_vague_ones_fall_back_to_length() -> None:
    vague, clear = alignment_rubrics()
    short_refund = "Thank you, we will refund it."
    long_credit = " ".join(["store credit offered"] * 15)  # 45 words, no refund, no thanks
    assert _levels(clear, [short_refund, long_credit]) == [[0, 1, 1], [1, 0, 0]]
    # vague: every criterion by the built-in length rule (over VAGUE_WORDS words -> YES)
    assert len(long_credit.split()) > VAGUE_WORDS
    assert _levels(vague, [short_refund, long_credit]) == [[0, 0, 0], [1, 1, 1]]


def test_levels_take_the_highest_descriptor_whose_rule_holds() -> None:
    rubric = rl.Rubric(
        criteria=[
            rl.Criterion(
                name="length",
                description="length",
                levels=[
                    rl.Level(score=1, descriptor="short"),
                    rl.Level(score=2, descriptor="at least 5 words"),
                    rl.Level(score=3, descriptor="at least 10 words"),
                ],
            )
        ]
    )
    assert _levels(rubric, ["one two", "a b c d e f", " ".join("x" * 12)]) == [[1], [2], [3]]


def test_optimizer_mode_proposes_rewrites_from_the_disagreements() -> None:
    vague, _ = alignment_rubrics()
    detail = vague.criteria[0]
    shown = [
        {"response": " ".join(["word"] * 30), "people": 1, "judge": 0},
        {"response": " ".join(["word"] * 27), "people": 1, "judge": 0},
    ]
    answer = simulated_answer(rewrite_prompt(detail, shown))
    assert answer["simulated_judge"] is True
    assert {"question": "Does the response have at least 27 words?"} in answer["candidates"]
    refund = vague.criteria[1]
    shown = [
        {"response": "We will send a refund now to you.", "people": 1, "judge": 0},
        {"response": "A refund is on its way today.", "people": 1, "judge": 0},
        {"response": " ".join(["credit"] * 45), "people": 0, "judge": 1},
    ]
    answer = simulated_answer(rewrite_prompt(refund, shown))
    assert {"question": "Does the response mention 'refund'?"} in answer["candidates"]


def test_the_demo_labels_follow_the_stated_people_rules() -> None:
    data, labels = alignment_demo(n=40)
    vague, _ = alignment_rubrics()
    people = people_labels(labels, "support", vague, len(data), pairwise=False)
    assert set(PEOPLE_RULES) == {"detail", "refund", "tone", "overall"}
    for row, given in people.values.items():
        text = data.response[row]
        assert given["refund"] == int("refund" in text)
        assert given["tone"] == int("thank you" in text.lower())
    # some reviewers changed their mind: their later label won
    assert len(labels) > 40 * 4 * 2


def test_the_server_cli_serves_the_simulated_judge() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rubriclab.testing", "--simulated"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        judge = rl.Judge(url, model="sim", api_key="sk-test")
        reply = judge.complete(
            "Rubric:\nq (Is it fine?):\n  0 = NO\n  1 = YES\n\nAnswer with JSON only\n<response>\nhi\n</response>"
        )
        assert json.loads(reply.text)["simulated_judge"] is True
    finally:
        proc.terminate()
        proc.wait(timeout=10)
