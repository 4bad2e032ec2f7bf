"""Shared fixtures. ``fake_judge``: a real HTTP judge server on 127.0.0.1 for one test.

Set ``fake_judge.responder = fn`` (fn(body) -> text | response dict | ServerReply),
``fake_judge.latency`` or ``fake_judge.faults`` at any time; give ``fake_judge.url`` to
``rl.Judge(url, model=...)``; read ``fake_judge.requests`` to see exactly what was sent.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rubriclab.testing import FakeJudgeServer


@pytest.fixture
def fake_judge() -> Iterator[FakeJudgeServer]:
    with FakeJudgeServer() as server:
        yield server
