"""Synthetic results for the view tests: pointwise and pairwise rows, errors, XSS payloads."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from rubriclab.result import EvalResult, MetricInfo
from rubriclab.rubric import Criterion, Level, Rubric

XSS = [
    "<script>window.__rl_pwned = (window.__rl_pwned || 0) + 1</script>",
    '<img src=x onerror="window.__rl_pwned = (window.__rl_pwned || 0) + 1">',
    '<a href="javascript:window.__rl_pwned=1">click me</a>',
    '<iframe srcdoc="<script>parent.__rl_pwned=1</script>"></iframe>',
    '"><svg onload="window.__rl_pwned=1">',
]

SUPPORT = Rubric(
    name="support",
    criteria=[
        Criterion(
            name="accuracy",
            description="Are the facts correct?",
            levels=[
                Level(score=1, descriptor="Wrong facts"),
                Level(score=2, descriptor="Minor slips"),
                Level(score=3, descriptor="All facts correct"),
            ],
            weight=0.5,
            critical=2,
        ),
        Criterion.yes_no("Does the response state the deadline?", name="deadline"),
    ],
    pass_mark=0.7,
)


def _criteria(acc: int, deadline: bool, text: str = "") -> list[dict[str, Any]]:
    labels = {1: "Wrong facts", 2: "Minor slips", 3: "All facts correct"}
    return [
        {
            "name": "accuracy",
            "question": "Are the facts correct?",
            "level": acc,
            "label": labels[acc],
            "evidence": f"quote {text}",
            "reasoning": f"because {text}",
            "weight": 0.5,
            "critical": 2,
            "passed_critical": acc >= 2,
        },
        {
            "name": "deadline",
            "question": "Does the response state the deadline?",
            "level": int(deadline),
            "label": "YES" if deadline else "NO",
            "evidence": "August 15th" if deadline else "",
            "reasoning": "",
            "weight": 1.0,
            "critical": None,
            "passed_critical": None,
        },
    ]


def pointwise_result(n: int = 30, *, xss: bool = False, is_mock: bool = False) -> EvalResult:
    """``n`` rows of one pointwise metric ``support``; every 7th row is a judge error."""
    rows = []
    for i in range(n):
        payload = XSS[i % len(XSS)] if xss else ""
        acc = 1 + i % 3
        deadline = i % 2 == 0
        error = "HTTP 503 from judge after 3 attempts" if i % 7 == 6 else None
        score = math.nan if error else round((0.5 * (acc - 1) / 2 + deadline) / 1.5, 4)
        verdict = (
            None
            if error
            else (
                "pass"
                if score >= 0.7 and acc >= 2
                else "fail (score below pass mark)"
                if acc >= 2
                else "fail (accuracy below 2)"
            )
        )
        rows.append(
            {
                "id": f"case-{i:05d}",
                "prompt": f"Question {i}: when is the deadline? {payload}",
                "response": f"Answer {i}. The deadline is August 15th. {payload}",
                "support/score": score,
                "support/verdict": verdict,
                "support/passed": None if error else verdict == "pass",
                "support/criteria": None if error else _criteria(acc, deadline, payload),
                "support/rationale": None if error else f"Rationale for case {i}. {payload}",
                "support/raw_output": f'{{"raw": "judge said {i}"}} {payload}',
                "support/error": error,
                "support/tokens": 100 + i,
                "support/latency": 0.25,
                "support/attempts": 3 if error else 1,
            }
        )
    table = pd.DataFrame(rows)
    return EvalResult(
        table,
        [MetricInfo("support", "pointwise", SUPPORT)],
        judge="mock" if is_mock else "test-judge",
        is_mock=is_mock,
    )


def pairwise_result(n: int = 12, *, xss: bool = False, is_mock: bool = False) -> EvalResult:
    choices = [1.0, 0.5, 0.0, -0.5, -1.0]
    labels = {
        1.0: "candidate much better",
        0.5: "candidate better",
        0.0: "tie",
        -0.5: "baseline better",
        -1.0: "baseline much better",
    }
    rows = []
    for i in range(n):
        payload = XSS[i % len(XSS)] if xss else ""
        c = choices[i % 5]
        consistent = i % 4 != 3
        verdict = "candidate wins" if c > 0 else "baseline wins" if c < 0 else "tie"
        winner = "candidate" if c > 0 else "baseline" if c < 0 else "tie"
        rows.append(
            {
                "prompt": f"Pair {i}: explain the refund policy {payload}",
                "response": f"Candidate answer {i} {payload}",
                "baseline_model_response": f"Baseline answer {i}",
                "pair/score": c,
                "pair/verdict": verdict,
                "pair/criteria": [
                    {
                        "name": "accuracy",
                        "question": "Are the facts correct?",
                        "winner": winner,
                        "swap_consistent": consistent,
                        "evidence": f"cand evidence {payload}",
                        "evidence_swapped": "other order evidence",
                        "weight": 0.5,
                        "critical": 2,
                    },
                    {
                        "name": "deadline",
                        "question": "Does the response state the deadline?",
                        "winner": "tie",
                        "swap_consistent": True,
                        "evidence": "both say August 15th",
                        "evidence_swapped": "",
                        "weight": 1.0,
                        "critical": None,
                    },
                ],
                "pair/rationale": f"Pairwise rationale {i} {payload}",
                "pair/raw_output": [f"order 1 output {i} {payload}", f"order 2 output {i}"],
                "pair/error": None,
                "pair/pairwise_choice": labels[c],
                "pair/swap_consistent": consistent,
                "pair/candidate_criteria": _criteria(3 if c > 0 else 2, True),
                "pair/baseline_criteria": _criteria(2 if c > 0 else 3, True),
                "pair/tokens": 300,
                "pair/latency": 0.5,
                "pair/attempts": 1,
            }
        )
    table = pd.DataFrame(rows)
    return EvalResult(
        table, [MetricInfo("pair", "pairwise", SUPPORT)], judge="test-judge", is_mock=is_mock
    )


def big_result(n: int = 100_000, seed: int = 7) -> EvalResult:
    """A large pointwise result built with numpy (for paging tests and benchmarks)."""
    rng = np.random.default_rng(seed)
    scores = rng.random(n).round(4)
    errors = rng.random(n) < 0.01
    scores[errors] = np.nan
    verdicts = np.where(
        np.isnan(scores), None, np.where(scores >= 0.7, "pass", "fail (score below pass mark)")
    )
    table = pd.DataFrame(
        {
            "id": [f"case-{i:06d}" for i in range(n)],
            "prompt": [f"Prompt number {i} about topic {i % 97}" for i in range(n)],
            "response": [f"Response {i}: the answer is {i * 7 % 1000}" for i in range(n)],
            "support/score": scores,
            "support/verdict": verdicts,
            "support/passed": [None if v is None else v == "pass" for v in verdicts],
            "support/criteria": [None] * n,
            "support/rationale": ["Looks fine."] * n,
            "support/raw_output": ['{"levels": {}}'] * n,
            "support/error": np.where(errors, "judge timed out", None),
            "support/tokens": rng.integers(50, 500, n),
            "support/latency": 0.1,
            "support/attempts": 1,
        }
    )
    return EvalResult(table, [MetricInfo("support", "pointwise", SUPPORT)], judge="test-judge")


class RecordingComm:
    """Stands in for a kernel comm: records every message a widget sends to the browser."""

    def __init__(self, **kwargs: Any) -> None:
        self.comm_id = f"comm-{id(self)}"
        self.kernel = object()
        self.opened = kwargs
        self.messages: list[dict[str, Any]] = []
        self._handler: Any = None

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        self.messages.append(data)

    def on_msg(self, callback: Any) -> None:
        self._handler = callback

    def close(self, *args: Any, **kwargs: Any) -> None:
        pass

    # -- browser -> kernel -------------------------------------------------------------------------
    def custom(self, content: dict[str, Any]) -> None:
        """A custom message from the browser (``model.send`` in JS)."""
        self._handler(
            {"content": {"data": {"method": "custom", "content": content}}, "buffers": []}
        )

    def replies(self) -> list[dict[str, Any]]:
        return [m["content"] for m in self.messages if m.get("method") == "custom"]

    def updates(self, key: str) -> list[Any]:
        return [
            m["state"][key]
            for m in self.messages
            if m.get("method") == "update" and key in m.get("state", {})
        ]


def record_comms(monkeypatch: Any) -> list[RecordingComm]:
    """Every widget created after this call talks to a RecordingComm (returned in order)."""
    import comm

    made: list[RecordingComm] = []

    def create(**kwargs: Any) -> RecordingComm:
        c = RecordingComm(**kwargs)
        made.append(c)
        return c

    monkeypatch.setattr(comm, "create_comm", create)
    return made
