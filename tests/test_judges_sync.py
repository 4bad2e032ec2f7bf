"""run_sync: sync entry points that work in a script and inside Jupyter's running loop."""

from __future__ import annotations

import asyncio
import warnings

import pytest

from rubriclab.judges import Judge
from rubriclab.judges.sync import run_sync


def test_run_sync_in_a_script_and_inside_a_running_loop(capfd: pytest.CaptureFixture[str]) -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert run_sync(answer()) == 42

    async def notebook_cell() -> list[str | None]:
        assert run_sync(answer()) == 42  # a loop is running here, as in Jupyter
        return [r.text for r in Judge("mock").map(["a", "b"], progress=False)]

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no event-loop or never-awaited warnings
        texts = asyncio.run(notebook_cell())
    assert all(t and t.startswith("[mock judge]") for t in texts)
    err = capfd.readouterr().err
    assert "never awaited" not in err and "Event loop" not in err


def test_run_sync_raises_what_the_coroutine_raises() -> None:
    async def fail() -> None:
        raise ValueError("bad row 3")

    with pytest.raises(ValueError, match="bad row 3"):
        run_sync(fail())

    async def in_loop() -> None:
        run_sync(fail())

    with pytest.raises(ValueError, match="bad row 3"):
        asyncio.run(in_loop())
