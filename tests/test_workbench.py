"""The rubric loop (``RubricLoop``, ``rl.Workbench``'s model) against the fake judge server.

Every test reads what the server saw: a re-judge sends exactly the rows whose rendered request
changed, and nothing else.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.evaluation.loop import RubricLoop, Slot, flips
from rubriclab.testing import FakeJudgeServer, ServerReply

from .judge_scripts import realistic

RESPONSES = [
    "The deadline is August 15th and marketing is led by Ana.",
    "The deadline is August 15th.",
    "Marketing is led by Ana; weekly reports follow.",
    "Nothing useful here.",
]
DEADLINE = "Does the response mention the deadline of August 15th?"
MARKETING = "Does the response name who leads marketing?"
WEEKLY = "Does the response mention weekly progress reports?"


def _cases() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": [f"c{i}" for i in range(len(RESPONSES))],
            "prompt": [f"Summarise the meeting notes, part {i}." for i in range(len(RESPONSES))],
            "response": RESPONSES,
        }
    )


def _shared() -> rl.metrics.RubricMetric:
    rubric = rl.Rubric.checklist([DEADLINE, MARKETING], pass_mark=1.0, name="notes")
    return rl.metrics.RubricMetric(name="notes", rubric=rubric)


@pytest.fixture
def server() -> FakeJudgeServer:
    with FakeJudgeServer(realistic) as s:
        yield s


def _judge(server: FakeJudgeServer) -> rl.Judge:
    return rl.Judge(server.url, model="judge-model", max_retries=0)


def _responses_sent(server: FakeJudgeServer) -> list[str]:
    """The response text of each critique request the server saw, in sorted order."""
    out = []
    for body in server.requests:
        prompt = str(body["messages"][0]["content"])
        out.extend(r for r in RESPONSES if f"\n{r}\n" in prompt or r in prompt)
    return sorted(out)


def _run(loop: RubricLoop) -> rl.evaluation.loop.Version:
    return asyncio.run(loop.arejudge())


def test_unchanged_rejudge_sends_nothing_and_a_shared_edit_sends_every_row(
    server: FakeJudgeServer,
) -> None:
    loop = RubricLoop(_cases(), [_shared()], judge=_judge(server))
    v1 = _run(loop)
    assert (v1.name, v1.calls, server.calls) == ("v1", 4, 4)
    assert v1.result.table["notes/passed"].tolist() == [True, False, False, False]

    server.reset()
    v2 = _run(loop)
    assert (v2.calls, server.calls, v2.changed) == (0, 0, ())
    assert loop.rows_to_send() == []

    server.reset()
    rubric = loop.rubric_of(Slot("notes"))
    edited = rl.Rubric.checklist([DEADLINE, WEEKLY], pass_mark=1.0, name="notes")
    assert edited != rubric
    loop.set_rubric(Slot("notes"), edited)
    assert loop.changed_rows() == [0, 1, 2, 3]
    v3 = _run(loop)
    assert (v3.calls, server.calls) == (4, 4)
    assert all(WEEKLY in str(b["messages"][0]["content"]) for b in server.requests)
    assert _responses_sent(server) == sorted(RESPONSES)

    comparison = loop.compare()  # v3 against v2
    assert comparison.names == ("v2", "v3")
    flipped = flips(comparison)
    # row 0 (deadline + marketing, no weekly) passed and now fails; nothing passes now
    assert flipped["key"].tolist() == ["c0"]
    assert flipped["verdict_a"].iloc[0] == "pass"
    assert flipped["verdict_b"].iloc[0].startswith("fail")
    assert loop.compare(1).names == ("v1", "v3")


def test_editing_one_rows_generated_checklist_sends_exactly_that_row(
    server: FakeJudgeServer,
) -> None:
    cases = _cases()
    loop = RubricLoop(cases, [rl.metrics.GENERAL_QUALITY], judge=_judge(server))
    assert loop.slots() == []  # generated rubrics are editable once written
    v1 = _run(loop)
    assert server.calls == 8  # 4 generations + 4 critiques
    slots = loop.slots()
    assert [s.row for s in slots] == [0, 1, 2, 3]

    server.reset()
    assert _run(loop).calls == 0 and server.calls == 0  # generated once, never again

    server.reset()
    old = loop.rubric_of(slots[2])
    data = old.to_dict()
    data["criteria"][0]["description"] = "Does the response mention weekly progress reports?"
    loop.set_rubric(slots[2], rl.Rubric.from_dict(data))
    assert loop.changed_rows() == [2]
    v3 = _run(loop)
    assert (v3.calls, server.calls, v3.changed, v3.kept) == (1, 1, (2,), 3)
    assert _responses_sent(server) == [RESPONSES[2]]
    assert "weekly progress reports" in str(server.requests[0]["messages"][0]["content"])
    # the other rows' results are the cached answers: the same verdicts as v1
    same = [0, 1, 3]
    t1, t3 = v1.result.table, v3.result.table
    assert t1["general_quality/score"].iloc[same].tolist() == (
        t3["general_quality/score"].iloc[same].tolist()
    )


def test_a_row_whose_call_failed_is_sent_again_and_only_it(server: FakeJudgeServer) -> None:
    failed: list[int] = []

    def flaky(body: dict[str, Any]) -> str | ServerReply:
        if "part 3" in str(body["messages"][0]["content"]) and not failed:
            failed.append(1)
            return ServerReply(status=500, body={"error": {"message": "overloaded"}})
        return realistic(body)

    server.responder = flaky
    loop = RubricLoop(_cases(), [rl.metrics.GENERAL_QUALITY], judge=_judge(server))
    with pytest.warns(UserWarning, match="1 of 4 rows failed"):
        v1 = _run(loop)
    assert v1.result.table["general_quality/error"].notna().tolist() == [False] * 3 + [True]
    assert loop.rows_to_send() == [3]  # not cached, so tried again; the others are reused
    server.reset()
    v2 = _run(loop)
    assert server.calls == 2  # row 3's rubric is generated, then judged
    assert all("part 3" in str(b["messages"][0]["content"]) for b in server.requests)
    assert v2.result.table["general_quality/error"].isna().all()
    assert v2.result.table["general_quality/score"].iloc[:3].tolist() == (
        v1.result.table["general_quality/score"].iloc[:3].tolist()
    )


def test_undo_returns_to_a_version_and_costs_nothing(server: FakeJudgeServer) -> None:
    loop = RubricLoop(_cases(), [_shared()], judge=_judge(server))
    v1 = _run(loop)
    loop.set_rubric(
        Slot("notes"), rl.Rubric.checklist([DEADLINE, WEEKLY], pass_mark=1.0, name="notes")
    )
    _run(loop)
    server.reset()
    back = loop.undo("v1")
    assert (back.name, back.note, back.calls) == ("v3", "undo to v1", 0)
    assert loop.rubric_of(Slot("notes")) == v1.rubrics["notes"]
    assert loop.changed_rows() == []
    v4 = _run(loop)
    assert (v4.calls, server.calls) == (0, 0)
    assert flips(loop.compare("v1")).empty
    with pytest.raises(KeyError, match=r"versions are v1\.\.v4"):
        loop.version("v9")


def test_a_template_edit_resends_every_row(server: FakeJudgeServer) -> None:
    loop = RubricLoop(_cases(), [_shared()], judge=_judge(server))
    _run(loop)
    server.reset()
    loop.set_template("notes", "critique_checklist")  # same prompt as the default: cached
    assert loop.changed_rows() == [0, 1, 2, 3]
    assert _run(loop).calls == 0 and server.calls == 0


def test_each_version_has_its_agreement_with_people(server: FakeJudgeServer) -> None:
    labels = pd.DataFrame(
        {
            "row": [0, 1, 2, 3],
            "metric": ["notes"] * 4,
            "criterion": ["overall"] * 4,
            "value": ["fail", "fail", "fail", "fail"],
            "reviewer": ["ana"] * 4,
        }
    )
    loop = RubricLoop(_cases(), [_shared()], judge=_judge(server), labels=labels)
    v1 = _run(loop)
    overall = [a for a in v1.agreement if a["criterion"] == "overall"]
    assert overall[0]["n"] == 4 and overall[0]["agree"] == 3  # row 0 passed, people say fail
    loop.set_rubric(
        Slot("notes"), rl.Rubric.checklist([DEADLINE, WEEKLY], pass_mark=1.0, name="notes")
    )
    v2 = _run(loop)
    overall = [a for a in v2.agreement if a["criterion"] == "overall"]
    assert overall[0]["agree"] == 4
    assert v2.to_dict()["agreement"][0]["rate"] == 1.0


def test_save_writes_the_rubric_as_yaml(server: FakeJudgeServer, tmp_path: Path) -> None:
    loop = RubricLoop(_cases(), [_shared()], judge=_judge(server))
    edited = rl.Rubric.checklist([DEADLINE, WEEKLY], pass_mark=1.0, name="notes")
    loop.set_rubric(Slot("notes"), edited)
    path = loop.save(tmp_path / "notes.yaml")
    assert rl.Rubric.load(path) == edited


def test_errors_are_in_the_users_terms(server: FakeJudgeServer) -> None:
    loop = RubricLoop(_cases(), [_shared()], judge=_judge(server))
    with pytest.raises(IndexError, match="re-judge first"):
        loop.compare()
    with pytest.raises(KeyError, match="no shared rubric"):
        loop.rubric_of(Slot("other"))
    with pytest.raises(TypeError, match=r"rubriclab\.Rubric"):
        loop.set_rubric(Slot("notes"), {"criteria": []})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one case"):
        RubricLoop(_cases().iloc[:0], [_shared()], judge=_judge(server))
