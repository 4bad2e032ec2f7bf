"""``run_sync``: the one way sync code runs a coroutine, in a script and inside Jupyter.

In a plain script it uses ``asyncio.run``; inside a running loop (a notebook's) it runs a
private loop in a worker thread, with the caller's context variables, and turns Ctrl-C into a
cancellation the run can save its finished work from.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from sync code, whether or not a loop is already running.

    Ctrl-C cancels the coroutine (its ``finally`` blocks run, so finished work is saved)
    and then raises ``KeyboardInterrupt`` in the caller, as a sync call would.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if not running:  # outside the except block: an error from coro is not "during handling"
        return asyncio.run(coro)
    return _run_in_thread(coro)


def _wait(event: threading.Event) -> None:
    """Wait in short slices: a blocked wait would not see Ctrl-C until the run ended."""
    while not event.wait(0.05):
        pass


def _run_in_thread(coro: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.new_event_loop()
    context = contextvars.copy_context()
    box: dict[str, Any] = {}
    started = threading.Event()
    done = threading.Event()

    def target() -> None:
        try:
            asyncio.set_event_loop(loop)
            task = context.run(loop.create_task, coro)
            box["task"] = task
            started.set()
            box["result"] = loop.run_until_complete(task)
        except BaseException as exc:
            box["error"] = exc
        finally:
            started.set()
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                asyncio.set_event_loop(None)
                loop.close()
                done.set()

    thread = threading.Thread(target=target, name="rubriclab-run-sync", daemon=True)
    thread.start()
    try:
        _wait(done)
    except KeyboardInterrupt:
        started.wait()
        task = box.get("task")
        if task is not None and not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)
        with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C stops waiting
            _wait(done)  # let the run save what finished
        raise KeyboardInterrupt from None
    if "error" in box:
        error: BaseException = box["error"]
        if isinstance(error, asyncio.CancelledError):
            raise KeyboardInterrupt from None
        raise error
    result: T = box["result"]
    return result
