"""``EvalTask.evaluate(runnable=...)``: an agent writes each row's response, as in vertexai.

A runnable is a Queryable (``runnable.query(input=prompt)`` returning ``{"output": ...,
"intermediate_steps": [...]}``, e.g. a LangChain agent or a Reasoning Engine) or a function
``prompt -> {"response": ..., "predicted_trajectory": [...]}``. Like vertexai, the runnable's
answers replace the ``response`` column and add ``latency_in_seconds``, ``failure`` and, when
the agent reports its steps, ``predicted_trajectory``. Unlike vertexai, a runnable that raises
leaves that row's response empty with its error in ``response_error`` (a column only there
when some row failed; that row's judge error), instead of judging the error message as if it
were an answer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pandas as pd

__all__ = ["run_runnable"]

#: runnables are user code (often blocking network calls): run a few at a time in threads
_WORKERS = 8


async def run_runnable(frame: pd.DataFrame, runnable: Any) -> pd.DataFrame:
    """``frame`` with the runnable's responses (and trajectories) for every row's ``prompt``."""
    if not (hasattr(runnable, "query") or callable(runnable)):
        raise TypeError(
            f"runnable must have .query(input=...) or be a function of the prompt, "
            f"got {type(runnable).__name__}"
        )
    if "prompt" not in frame.columns:
        raise ValueError(
            "runnable= needs a 'prompt' column (or prompt_template=...) to send to the agent"
        )
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(max_workers=_WORKERS, thread_name_prefix="rubriclab-runnable") as pool:
        rows = await asyncio.gather(
            *(loop.run_in_executor(pool, _one, runnable, p) for p in frame["prompt"].tolist())
        )
    out = frame.copy()
    out["response"] = pd.Series([r["response"] for r in rows], index=out.index, dtype=object)
    out["latency_in_seconds"] = [r["latency"] for r in rows]
    out["failure"] = [r["failure"] for r in rows]
    if any(r["error"] for r in rows):  # as for model-written responses: only when one failed
        out["response_error"] = pd.Series([r["error"] for r in rows], index=out.index, dtype=object)
    if any(r["trajectory"] is not None for r in rows):
        out["predicted_trajectory"] = pd.Series(
            [r["trajectory"] for r in rows], index=out.index, dtype=object
        )
    return out


def _one(runnable: Any, prompt: Any) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        if hasattr(runnable, "query"):
            answer = runnable.query(input=prompt)
            response = answer["output"]
            steps = answer.get("intermediate_steps")
            trajectory = _trajectory(steps) if steps is not None else None
        else:
            call: Callable[[Any], Any] = runnable
            answer = call(prompt)
            response = answer.get("response", "")
            trajectory = answer.get("predicted_trajectory")
    except Exception as exc:  # user code: that row's error, the run goes on
        return {
            "response": None,
            "trajectory": None,
            "latency": None,
            "failure": 1,
            "error": f"runnable raised {type(exc).__name__}: {exc}",
        }
    return {
        "response": None if response is None else str(response),
        "trajectory": trajectory,
        "latency": time.perf_counter() - start,
        "failure": 0,
        "error": None,
    }


def _trajectory(steps: Any) -> list[dict[str, Any]]:
    """LangChain-style ``intermediate_steps`` as vertexai's ``[{tool_name, tool_input}]``."""
    out = []
    for step in steps:
        action = step[0] if isinstance(step, list | tuple) and step else step
        kwargs = action.get("kwargs", {}) if isinstance(action, dict) else {}
        tool = kwargs.get("tool", getattr(action, "tool", None))
        tool_input = kwargs.get("tool_input", getattr(action, "tool_input", None))
        out.append({"tool_name": tool, "tool_input": tool_input})
    return out
