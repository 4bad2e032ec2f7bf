"""What several benchmarks share: the meeting-summary workload and the fake judge in its own
process (so its CPU is never counted as the client's).

Run as scripts, benchmarks find this module beside them (``sys.path[0]``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

PY = sys.executable

#: a 6-question checklist about the meeting transcript every row summarises
QUESTIONS = [
    "Does the response state the deadline for code completion (August 15th)?",
    "Does the response say who leads the marketing campaign (Chloe)?",
    "Does the response give the campaign start date (August 1st)?",
    "Does the response mention the weekly progress reports?",
    "Is the response shorter than the transcript it summarises?",
    "Is the response free of facts that are not in the transcript?",
]


def meeting_frame(rows: int, start: int = 0) -> Any:
    """``rows`` meeting summaries (prompt, response), numbered from ``start``: a later pass
    numbered past an earlier one judges new rows (no cache hit)."""
    import pandas as pd

    ids = range(start, start + rows)
    return pd.DataFrame(
        {
            "prompt": [
                f"Summarize meeting {i}: 'The deadline for code completion is August 15th. "
                "Marketing, led by Chloe, begins on August 1st. All teams must provide weekly "
                "progress reports.'"
                for i in ids
            ],
            "response": [
                f"Meeting {i}: code is due August 15th; Chloe's marketing starts August 1st; "
                "teams report weekly."
                for i in ids
            ],
        }
    )


def reset_server(root: str) -> None:
    """Make the fake judge at ``root`` forget the requests seen so far (counts and clocks)."""
    urllib.request.urlopen(urllib.request.Request(f"{root}/_reset", b"{}")).read()


def server_stats(root: str) -> dict[str, Any]:
    """The fake judge's counts and clocks (``/_stats``)."""
    with urllib.request.urlopen(f"{root}/_stats") as response:
        data: dict[str, Any] = json.load(response)
    return data


class FakeJudgeProcess:
    """``python -m rubriclab.testing`` in its own process; its first stdout line is its URL.

    ``src``: run another checkout's fake server (its ``src`` folder goes first on the path).
    """

    def __init__(self, *flags: str, src: str | None = None) -> None:
        env = dict(os.environ)
        if src:
            env["PYTHONPATH"] = str(Path(src).resolve())
        self.proc = subprocess.Popen(
            [PY, "-m", "rubriclab.testing", "--port", "0", *flags],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http"):
            self.close()
            raise SystemExit("the fake judge server did not start")
        self.root = self.url.rsplit("/v1", 1)[0]

    def reset(self) -> None:
        reset_server(self.root)

    def stats(self) -> dict[str, Any]:
        return server_stats(self.root)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def __enter__(self) -> FakeJudgeProcess:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
