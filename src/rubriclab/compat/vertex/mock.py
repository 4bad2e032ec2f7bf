"""Teach the offline mock judge Vertex's text formats, so the Vertex surface runs offline.

Importing changes nothing: the Vertex layer teaches the mock these formats only while it sends
a mock judge its own calls (:func:`mock_speaks_vertex`, used by ``EvalTask.evaluate`` and
``RubricBasedMetric.generate_rubrics``), and the mock's registry is as it was once they end.
To have a mock judge you call yourself (or the fake judge server in your process) answer in
these formats, call :func:`teach_mock` (and :func:`forget_mock` to undo it).

The responder answers only prompts that ask for Vertex's formats (a ```json rubric with
"questions", ``<question>`` blocks with ``Verdict: [[YES]]``, ``[[SxS Rating: ...]]``, or a
classic metric's score or pairwise choice: see :mod:`.mockclassic`); everything else goes to
the mock's usual answers. Every answer says it comes from the mock. Verdicts are a hash of the
question and the response, so the same response gets the same verdict in either pairwise order.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ...judges.mock import register_responder, unregister_responder
from ...judges.mockdata import LABEL, message_text, stable_unit
from .mockclassic import classic_answer

if TYPE_CHECKING:
    from ...judges import Judge

__all__ = ["forget_mock", "mock_speaks_vertex", "teach_mock", "vertex_responder"]

_NUMBERED = re.compile(r"^\s*(\d+)\.\s+(\S.*)$")
_USER_PROMPT = re.compile(r"<user_prompt>\s*(.*?)\s*</user_prompt>", re.S)


def _between(text: str, tag: str) -> str | None:
    match = re.search(rf"<{tag}>\s*(.*?)\s*</{tag}>", text, re.S)
    return match.group(1) if match else None


def rubric_questions(text: str) -> list[str]:
    """The last numbered list starting at 1 (how ``{rubrics}`` is filled)."""
    runs: list[list[str]] = []
    current: list[str] = []
    for line in text.splitlines():
        match = _NUMBERED.match(line)
        if match and int(match.group(1)) == len(current) + 1:
            current.append(match.group(2).strip())
            continue
        if current:
            runs.append(current)
        current = [match.group(2).strip()] if match and match.group(1) == "1" else []
    if current:
        runs.append(current)
    return runs[-1] if runs else []


def _verdict(question: str, response: str, sample: int) -> bool:
    return stable_unit("verdict", question, response, str(sample)) < 0.7


def _blocks(questions: Sequence[str], response: str, sample: int) -> tuple[str, int]:
    out, yes = [], 0
    for q in questions:
        v = _verdict(q, response, sample)
        yes += v
        out.append(
            f"<question>\nCheck: {LABEL} no model read this response; the verdict is a hash.\n"
            f"Question: {q}\nVerdict: [[{'YES' if v else 'NO'}]]\n</question>"
        )
    return "\n".join(out), yes


def _generation(text: str, sample: int) -> str:
    found = _USER_PROMPT.search(text)
    prompt = found.group(1) if found else text[-400:]
    words = prompt.split()
    head = " ".join(words[:10]) + (" ..." if len(words) > 10 else "")
    questions = [
        f"{LABEL} Does the response do what the prompt asks ({head})?",
        f"{LABEL} Does the response keep to the facts given in the prompt?",
        f"{LABEL} Does the response respect every explicit limit or format in the prompt?",
        f"{LABEL} Is the response clear and free of padding?",
    ]
    count = 3 + int(stable_unit("count", prompt, str(sample)) * 2)
    answer: dict[str, Any] = {"questions": questions[:count]}
    if '"description"' in text:
        answer = {
            "description": f"{LABEL} no image was looked at; the offline mock judge wrote this.",
            **answer,
        }
    return f"{LABEL} Rubric written offline.\n```json\n{json.dumps(answer, indent=2)}\n```"


def _pointwise(text: str, sample: int) -> str:
    questions = rubric_questions(text) or ["Does the response answer the prompt?"]
    response = _between(text, "response") or text
    body, yes = _blocks(questions, response, sample)
    return f"{body}\n[[Rubric Score: {yes}/{len(questions)}]]"


def _pairwise(text: str, sample: int) -> str:
    questions = rubric_questions(text) or ["Does the response answer the prompt?"]
    a = _between(text, "response_a") or text + "A"
    b = _between(text, "response_b") or text + "B"
    body_a, yes_a = _blocks(questions, a, sample)
    body_b, yes_b = _blocks(questions, b, sample)
    diff = yes_b - yes_a
    rating = {2: "B >> A", 1: "B > A", 0: "A = B", -1: "A > B", -2: "A >> B"}[max(-2, min(2, diff))]
    n = len(questions)
    return (
        f"[[Response A Answers:]]\n{body_a}\n[[Rubric Score: {yes_a}/{n}]]\n"
        f"[[Response B Answers:]]\n{body_b}\n[[Rubric Score: {yes_b}/{n}]]\n"
        f"{LABEL} Compared by counting YES verdicts.\n[[SxS Rating: {rating}]]"
    )


def vertex_responder(messages: Sequence[Mapping[str, Any]], sample: int) -> str | None:
    """The mock's answer to a Vertex-format prompt, or None for any other prompt."""
    text = message_text(messages, "user") or message_text(messages)
    if "[[Response A Answers" in text and "SxS Rating" in text:
        return _pairwise(text, sample)
    if "<question>" in text and "Verdict:" in text and "[[YES" in text:
        return _pointwise(text, sample)
    if "```json" in text and '"questions"' in text:
        return _generation(text, sample)
    return classic_answer(text, sample)


_lock = threading.Lock()
_in_flight = 0  # runs inside mock_speaks_vertex
_taught = False  # teach_mock() was called: the responder stays after runs end


def teach_mock() -> None:
    """Make every mock judge in this process answer Vertex-format prompts in those formats,
    until :func:`forget_mock`. Other prompts get the mock's usual answers."""
    global _taught
    with _lock:
        _taught = True
        register_responder(vertex_responder)


def forget_mock() -> None:
    """Undo :func:`teach_mock` (runs still in flight keep the formats until they end)."""
    global _taught
    with _lock:
        _taught = False
        if _in_flight == 0:
            unregister_responder(vertex_responder)


@contextmanager
def mock_speaks_vertex(judge: Judge) -> Iterator[None]:
    """While the block runs, a mock ``judge`` answers Vertex-format prompts in those formats;
    afterwards the registry is as it was. Any other judge: nothing changes. Safe to nest and to
    use from several threads at once."""
    global _in_flight
    if not judge.is_mock:
        yield
        return
    with _lock:
        _in_flight += 1
        register_responder(vertex_responder)
    try:
        yield
    finally:
        with _lock:
            _in_flight -= 1
            if _in_flight == 0 and not _taught:
                unregister_responder(vertex_responder)
