"""``rl.Workbench``: the view's kernel side, driven by the messages its front end sends, against
the fake judge server (each test reads what the server saw)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

import rubriclab as rl
from rubriclab.testing import FakeJudgeServer

from ._view_data import record_comms
from .judge_scripts import realistic
from .test_workbench import DEADLINE, MARKETING, WEEKLY, _cases, _shared


@pytest.fixture
def server() -> FakeJudgeServer:
    with FakeJudgeServer(realistic) as s:
        yield s


def _bench(server: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    comms = record_comms(monkeypatch)
    wb = rl.Workbench(_cases(), [_shared()], judge=rl.Judge(server.url, model="m", max_retries=0))
    return wb, comms[-1]


def _ask(comm: Any, op: str, **payload: Any) -> dict[str, Any]:
    comm.custom({"type": "rl:request", "id": op, "op": op, **payload})
    reply: dict[str, Any] = comm.replies()[-1]
    assert reply["id"] == op
    return reply


def _edited() -> dict[str, Any]:
    data = rl.Rubric.checklist([DEADLINE, MARKETING], pass_mark=1.0, name="notes").to_dict()
    data["criteria"][1]["description"] = WEEKLY
    return data


def test_the_loop_through_the_views_messages(
    server: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    wb, comm = _bench(server, monkeypatch)
    assert wb.count == 1 and wb.value["criteria"][1]["description"] == MARKETING
    assert _ask(comm, "rejudge") == {"type": "rl:reply", "id": "rejudge", "ok": True}
    assert server.calls == 4 and [v.name for v in wb.versions] == ["v1"]
    assert wb.names == [] and wb.pending == 0  # nothing to compare yet
    assert [r["sent"] for r in wb.rows] == [True] * 4

    server.reset()
    wb.value = _edited()  # what the grid sends after an edit
    assert wb.error is None and wb.pending == 4
    assert wb.rubric is not None and wb.rubric.criteria[1].description == WEEKLY
    _ask(comm, "rejudge")
    assert server.calls == 4
    assert wb.names == ["v1", "v2"] and wb.against == 1
    assert wb.flipped == 1
    assert wb.cases[0]["key"] == "c0"  # the flipped row is listed first
    assert wb.cases[0]["verdict_a"] == "pass" and wb.cases[0]["verdict_b"].startswith("fail")
    wb.item = 0  # both answers side by side
    assert [s["name"] for s in wb.detail["sides"]] == ["v1", "v2"]
    assert "v2: 4 call(s), 0 from the cache" in wb.status

    server.reset()
    reply = _ask(comm, "undo", version=1)
    assert reply["version"] == "v3" and server.calls == 0
    assert wb.value["criteria"][1]["description"] == MARKETING
    assert wb.flipped == 1  # v3 (= v1) against v2
    _ask(comm, "rejudge")
    assert server.calls == 0 and wb.versions[-1].calls == 0
    wb.against = 2
    assert wb.names == ["v2", "v4"]


def test_a_bad_edit_is_refused_in_the_grid_and_sends_nothing(
    server: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    wb, comm = _bench(server, monkeypatch)
    bad = _edited()
    bad["criteria"][0]["weight"] = "heavy"
    wb.value = bad
    assert wb.error is not None and "weight" in wb.error["message"]
    assert wb.value["criteria"][1]["description"] == MARKETING  # the last good rubric is back
    assert wb.pending == 4  # before v1 every row is to be judged
    _ask(comm, "rejudge")
    server.reset()
    _ask(comm, "rejudge")
    assert server.calls == 0


def test_a_template_edit_from_the_view_is_a_change_of_every_row(
    server: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    wb, comm = _bench(server, monkeypatch)
    assert wb.templates == {"notes": ""}
    _ask(comm, "rejudge")
    server.reset()
    assert _ask(comm, "template", metric="notes", template="critique_checklist")["ok"]
    assert wb.templates == {"notes": "critique_checklist"} and wb.pending == 4
    _ask(comm, "rejudge")  # the built-in a checklist gets anyway: the same requests, 0 calls
    assert server.calls == 0 and wb.versions[-1].cached == 4
    assert "no rubric metric 'other'" in _ask(comm, "template", metric="other")["error"]


def test_save_writes_yaml_inside_the_working_folder(
    server: FakeJudgeServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.chdir(tmp_path)
    wb, comm = _bench(server, monkeypatch)
    wb.value = _edited()
    assert _ask(comm, "save", path="rubrics/notes.yaml")["ok"]
    assert rl.Rubric.load(tmp_path / "rubrics" / "notes.yaml").criteria[1].description == WEEKLY
    reply = _ask(comm, "save", path="../outside.yaml")
    assert "save path" in reply["error"] and not (tmp_path.parent / "outside.yaml").exists()
    reply = _ask(comm, "save", path=str(tmp_path.parent / "absolute.yaml"))
    assert "save path" in reply["error"] and not (tmp_path.parent / "absolute.yaml").exists()


def test_a_run_started_by_the_view_runs_on_the_kernels_loop_and_can_be_cancelled(
    server: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.latency = 30.0  # answers that never come in this test's time
    wb, comm = _bench(server, monkeypatch)

    async def scenario() -> None:
        assert _ask(comm, "rejudge")["started"] is True  # the handler returns at once
        assert wb.running
        while server.calls < 4:  # the calls are in flight on this loop
            await asyncio.sleep(0.01)
        assert "already running" in _ask(comm, "rejudge")["error"]
        assert _ask(comm, "cancel")["running"] is True
        while wb.running:
            await asyncio.sleep(0.01)

    asyncio.run(scenario())
    assert wb.versions == [] and wb.status.startswith("cancelled")


def test_model_text_stays_text_in_the_state(
    server: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    comms = record_comms(monkeypatch)
    cases = _cases()
    cases.loc[3, "response"] = "<img src=x onerror=alert(1)> August 15th"
    wb = rl.Workbench(cases, [_shared()], judge=rl.Judge(server.url, model="m", max_retries=0))
    _ask(comms[-1], "rejudge")
    assert "<img src=x onerror=alert(1)>" in json.dumps(wb.rows)  # plain text, drawn as text
    assert "<img" not in wb.static_html()


def test_a_shared_rubric_edit_fills_the_result_rows_while_the_run_goes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The server holds the run's second call (one call at a time: row c1's) until the test has
    seen row c0 done and the others waiting; then the run ends and the rows are the version's."""
    release = threading.Event()
    held = threading.Event()
    gate = {"on": False, "answered": 0}

    def slowed(body: dict[str, Any]) -> Any:
        if gate["on"]:
            gate["answered"] += 1
            if gate["answered"] == 2:  # the first block's answer is out; hold the next one
                held.set()
                release.wait(30)
        return realistic(body)

    comms = record_comms(monkeypatch)
    with FakeJudgeServer(slowed) as server:
        judge = rl.Judge(server.url, model="m", max_retries=0, max_concurrency=1)
        wb = rl.Workbench(_cases(), [_shared()], judge=judge)
        comm = comms[-1]
        _ask(comm, "rejudge")  # v1, answered at once
        wb.value = _edited()
        server.reset()
        gate["on"] = True
        seen: list[list[dict[str, Any]]] = []

        async def scenario() -> None:
            assert _ask(comm, "rejudge")["started"] is True
            while not held.is_set():  # the second call is at the server, unanswered
                await asyncio.sleep(0.01)
            # the first block was handed over before the second call was sent
            seen.append(wb.rows)
            assert wb.running
            release.set()
            while wb.running:
                await asyncio.sleep(0.01)

        try:
            asyncio.run(scenario())
        finally:
            release.set()
        assert server.calls == 4

    (mid,) = seen
    assert [r.get("state") for r in mid] == ["done", "waiting", "waiting", "waiting"]
    waiting = [m for r in mid[1:] for m in r["metrics"]]
    assert all(m["verdict"] is None and m["score"] is None for m in waiting)
    first = mid[0]
    assert first["key"] == "c0" and first["metrics"][0]["verdict"] is not None

    version = wb.versions[-1]
    assert version.name == "v2" and version.calls == 4
    assert all("state" not in r for r in wb.rows)
    t = version.result.table
    assert [r["key"] for r in wb.rows] == list(t["id"])
    assert [r["metrics"][0]["verdict"] for r in wb.rows] == list(t["notes/verdict"])
    assert [r["metrics"][0]["score"] for r in wb.rows] == [float(v) for v in t["notes/score"]]
    # the first row shown while the run went is the one the version holds
    assert {k: v for k, v in first.items() if k != "state"} == wb.rows[0]


def test_the_progress_line_counts_calls_as_they_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server holds the run's second call (one call at a time); while it is held, the
    progress trait must already count the first call (it read 0 until the run ended: the
    counter asked the judge for a ``stats`` it does not have). Waits for state, never time."""
    release = threading.Event()
    held = threading.Event()
    gate = {"on": False, "answered": 0}

    def slowed(body: dict[str, Any]) -> Any:
        if gate["on"]:
            gate["answered"] += 1
            if gate["answered"] == 2:
                held.set()
                release.wait(30)
        return realistic(body)

    comms = record_comms(monkeypatch)
    with FakeJudgeServer(slowed) as server:
        judge = rl.Judge(server.url, model="m", max_retries=0, max_concurrency=1)
        wb = rl.Workbench(_cases(), [_shared()], judge=judge)
        comm = comms[-1]
        _ask(comm, "rejudge")  # v1: 4 calls before the run watched here
        assert wb.versions[-1].calls == 4
        wb.value = _edited()
        server.reset()
        gate["on"] = True
        seen: list[dict[str, Any]] = []
        wb.observe(lambda change: seen.append(dict(change["new"])), names="progress")

        async def scenario() -> None:
            assert _ask(comm, "rejudge")["started"] is True
            for _ in range(3000):  # bounded: the state below, or fail
                if held.is_set() and wb.progress.get("calls") == 1:
                    break
                await asyncio.sleep(0.01)
            assert wb.running and held.is_set()
            assert wb.progress == {"done": 1, "total": 4, "calls": 1}
            release.set()
            while wb.running:
                await asyncio.sleep(0.01)

        try:
            asyncio.run(scenario())
        finally:
            release.set()
    assert wb.versions[-1].calls == 4 == server.calls
    counts = [p["calls"] for p in seen]
    assert counts == sorted(counts) and counts[-1] == 4  # never back, ends at the version's
    assert all(p["calls"] >= p["done"] for p in seen)  # one call a row here
