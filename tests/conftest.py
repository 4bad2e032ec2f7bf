"""Shared fixtures. ``fake_judge``: a real HTTP judge server on 127.0.0.1 for one test.

Set ``fake_judge.responder = fn`` (fn(body) -> text | response dict | ServerReply),
``fake_judge.latency`` or ``fake_judge.faults`` at any time; give ``fake_judge.url`` to
``rl.Judge(url, model=...)``; read ``fake_judge.requests`` to see exactly what was sent.
``fake_gcs``: a ``gs://`` store for fsspec (its memory file system under the gs protocol).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from rubriclab.testing import FakeJudgeServer


@pytest.fixture
def fake_judge() -> Iterator[FakeJudgeServer]:
    with FakeJudgeServer() as server:
        yield server


@pytest.fixture(scope="session")
def browser_type_launch_args() -> dict[str, Any]:
    """pytest-playwright launches Debian's chromium (never a downloaded browser)."""
    from tests.browser.lab import launch_args

    args = launch_args()
    if args["executable_path"] is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    return args


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run browser tests last: pytest-playwright's session-wide Playwright keeps an event loop
    running in the main thread, and code under test that calls asyncio.run (every sync entry
    point) must not run after it in the same process."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is not None)


@pytest.fixture
def fake_gcs() -> Iterator[Any]:
    """A gs:// store served by fsspec's memory file system (what gcsfs plugs into)."""
    fsspec = pytest.importorskip("fsspec")
    from fsspec.implementations.memory import MemoryFileSystem

    class FakeGCS(MemoryFileSystem):  # type: ignore[misc]
        protocol = ("gs", "gcs")
        store: dict[str, Any] = {}  # noqa: RUF012 - fsspec's class-level store
        pseudo_dirs = [""]  # noqa: RUF012

    from fsspec.registry import _registry  # the live registry: restored below

    before = _registry.get("gs")
    fsspec.register_implementation("gs", FakeGCS, clobber=True)
    try:
        yield FakeGCS()
    finally:
        _registry.pop("gs", None)
        if before is not None:
            _registry["gs"] = before
