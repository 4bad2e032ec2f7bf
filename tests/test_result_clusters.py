"""Failure clusters over a run judged over real HTTP by a judge that fails rows for known causes."""

from __future__ import annotations

import json
import re
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.testing import FakeJudgeServer
from rubriclab.widgets.clusters_view import clusters_html

pytest.importorskip("sklearn")

SUPPORT = rl.Rubric.analytic(
    {
        "accuracy": {
            "weight": 0.6,
            "critical": 2,
            "levels": {1: "wrong", 2: "vague", 3: "precise"},
        },
        "tone": {"weight": 0.4, "levels": {1: "rude", 2: "stiff", 3: "warm"}},
    },
    pass_mark=0.7,
)

# what the judge says about each kind of bad answer (worded differently row by row)
WINDOW = [
    "The reply says the refund window is 60 days, but the policy refund window is 30 days.",
    "Wrong refund window: it promises 60 days instead of the 30 day refund window.",
    "States a 60 day refund window; the refund window is 30 days.",
]
FEE = [
    "It invents a restocking fee that the policy never charges.",
    "Mentions a 15% restocking fee; there is no restocking fee.",
    "A restocking fee is made up here, the store charges no such fee.",
]
RUDE = [
    "Rude and dismissive toward the customer: tells them to stop asking.",
    "Rude, dismissive wording toward the customer.",
    "The tone is rude and dismissive toward the customer.",
]


def _cases() -> pd.DataFrame:
    rows = []
    kinds = ["window"] * 12 + ["fee"] * 9 + ["rude"] * 6 + ["good"] * 13
    for i, kind in enumerate(kinds):
        rows.append(
            {"prompt": f"Customer question {i} about returns", "response": f"<{kind}:{i}> reply"}
        )
    return pd.DataFrame(rows)


def _between(text: str, tag: str) -> str:
    match = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    return match.group(1) if match else ""


def causes_judge(body: dict[str, Any]) -> str:
    prompt = body["messages"][0]["content"]
    kind, number = re.search(r"<(\w+):(\d+)>", _between(prompt, "response")).groups()  # type: ignore[union-attr]
    i = int(number)
    ids = list(
        body["response_format"]["json_schema"]["schema"]["properties"]["criteria"]["properties"]
    )
    levels = {"accuracy": 3, "tone": 3}
    evidence = {"accuracy": "All facts check out.", "tone": "Warm and clear."}
    if kind == "window":
        levels["accuracy"], evidence["accuracy"] = 1, WINDOW[i % 3]
    elif kind == "fee":
        levels["accuracy"], evidence["accuracy"] = 1, FEE[i % 3]
    elif kind == "rude":
        levels["tone"], evidence["tone"] = 1, RUDE[i % 3]
    assert set(ids) == set(levels)
    return json.dumps(
        {
            "criteria": {c: {"evidence": evidence[c], "level": levels[c]} for c in ids},
            "rationale": "Levels applied from the descriptors.",
        }
    )


@pytest.fixture
def judged(fake_judge: FakeJudgeServer) -> Any:
    fake_judge.responder = causes_judge
    judge = rl.Judge(fake_judge.url, model="causes", max_retries=0)
    return rl.evaluate(
        _cases(), [rl.metrics.RubricMetric(rubric=SUPPORT, name="support")], judge=judge
    )


def test_failing_rows_group_by_criterion_then_cause(judged: Any) -> None:
    fc = judged.failure_clusters("support")
    assert len(fc.failing) == 27 and fc.judged_rows == 40 and fc.errors == 0
    got = [(c.criterion, c.size) for c in fc.clusters.itertuples()]
    assert got == [("accuracy", 12), ("accuracy", 9), ("tone", 6)]
    kinds = judged.table["response"].str.extract(r"<(\w+):")[0]
    for c, kind, word in zip(
        fc.clusters.itertuples(), ["window", "fee", "rude"], ["window", "fee", "rude"], strict=True
    ):
        assert set(kinds.iloc[c.rows]) == {kind}  # each cluster is one cause, all of it
        assert word in c.name
    assert fc.clusters["share"].tolist() == pytest.approx([12 / 27, 9 / 27, 6 / 27])
    assert list(fc.rows(2)["response"].str.extract(r"<(\w+):")[0].unique()) == ["rude"]
    text = fc.summary_text()
    assert "27 failing of 40 judged rows (verdict fail) in 3 clusters" in text


def test_a_judge_names_clusters_as_its_summary(judged: Any, fake_judge: FakeJudgeServer) -> None:
    before = len(fake_judge.requests)
    fake_judge.responder = lambda body: "Wrong facts about the policy"
    namer = rl.Judge(fake_judge.url, model="namer", max_retries=0)
    fc = judged.failure_clusters("support", name_with=namer)
    assert len(fake_judge.requests) - before == 3  # one call a cluster
    assert set(fc.clusters["judge_name"]) == {"Wrong facts about the policy"}
    assert all("window" in n or "fee" in n or "rude" in n for n in fc.clusters["name"])
    assert "judge's summary" in fc.summary_text()


def test_the_view_lists_clusters_and_escapes_model_text() -> None:
    df = pd.DataFrame(
        {
            "prompt": ["<img src=x onerror=alert(1)>"] * 3,
            "response": ["<script>alert(2)</script>"] * 3,
        }
    )
    result = rl.evaluate(df, [rl.metrics.RubricMetric(rubric=SUPPORT, name="s")], judge="mock")
    fc = result.failure_clusters("s")
    page = clusters_html(fc)
    assert "<script>" not in page and "<img" not in page
    assert "MOCK judge" in page
    assert page.count('<details class="rl-cluster"') == len(fc.clusters)


def test_clear_errors(judged: Any) -> None:
    with pytest.raises(KeyError, match="no cluster 9"):
        judged.failure_clusters("support").rows(9)
    with pytest.raises(ValueError, match="threshold"):
        judged.failure_clusters("support", threshold=0)


def test_per_row_rubrics_cluster_on_questions_and_pairwise_on_losses() -> None:
    df = pd.DataFrame(
        {
            "prompt": [f"Summarise note {i}: the deadline is August 15th." for i in range(12)],
            "response": ["ok"] * 6 + ["The deadline is August 15th, as the note says."] * 6,
            "baseline_model_response": ["The deadline is August 15th, per the note."] * 12,
        }
    )
    result = rl.evaluate(
        df, [rl.metrics.TEXT_QUALITY, rl.metrics.pairwise.TEXT_QUALITY], judge="mock"
    )
    per_row = result.failure_clusters("text_quality")
    # generated rubrics share no criteria: one group, clustered on the failed questions
    assert set(per_row.clusters["criterion"]) <= {"(any)"}
    assert "no pass rule" in per_row.rule or "verdict" in per_row.rule
    pairwise = result.failure_clusters("pairwise_text_quality")
    assert pairwise.rule == "the candidate lost"
    lost = result.table["pairwise_text_quality/score"] < 0
    assert sorted(pairwise.failing["row"]) == sorted(result.table.index[lost].tolist())
