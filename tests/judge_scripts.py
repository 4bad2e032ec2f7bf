"""Scripted judges for end-to-end tests: functions of the request body, like a real model.

Each reads what our prompts really send (the response_format schema names the ids, the prompt
carries the response text) and answers the way a judge would, so the tests exercise rendering,
parsing, validation and scoring for real over HTTP.
"""

from __future__ import annotations

import json
import re
from typing import Any


def _schema(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    fmt = body.get("response_format") or {}
    spec = fmt.get("json_schema") or {}
    return str(spec.get("name", "")), spec.get("schema") or {}


def _prompt(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if p.get("type") == "text")
    return str(content)


def _between(text: str, tag: str) -> str:
    match = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    return match.group(1) if match else ""


def _ids(schema: dict[str, Any], key: str) -> list[str]:
    return list(schema["properties"][key]["properties"])


def _questions(prompt: str) -> dict[str, str]:
    block = _between(prompt, "questions")
    out = {}
    for line in block.splitlines():
        if ":" in line:
            qid, text = line.split(":", 1)
            out[qid.strip()] = text.strip()
    return out


def realistic(body: dict[str, Any]) -> str:
    """A judge that reads the prompt: generation, checklist, analytic and pairwise answers."""
    name, schema = _schema(body)
    prompt = _prompt(body)
    if name.endswith("_rubric"):
        user_prompt = _between(prompt, "user_prompt")
        questions = [
            {
                "question": "Does the response mention the deadline of August 15th?",
                "category": "completeness",
                "critical": True,
            },
            {
                "question": "Does the response name who leads marketing?",
                "category": "completeness",
                "critical": False,
            },
            {
                "question": "Is the response a summary rather than a transcript?",
                "category": "style",
                "critical": False,
            },
            {
                "question": "Does the response mention the deadline of August 15th ?",
                "category": "dup",
                "critical": False,
            },
        ]
        if "weekly" in user_prompt:
            questions.append(
                {
                    "question": "Does the response mention weekly progress reports?",
                    "category": "completeness",
                    "critical": False,
                }
            )
        return "Here is the rubric:\n```json\n" + json.dumps({"questions": questions}) + "\n```"
    if name.endswith("_critique") and "verdicts" in schema.get("properties", {}):
        response = _between(prompt, "response")
        verdicts = {}
        for qid, question in _questions(prompt).items():
            keys = ("august 15th", "marketing", "weekly", "summary")
            key = next((k for k in keys if k in question.lower()), "")
            yes = key in response.lower() if key not in ("summary", "") else len(response) < 400
            verdicts[qid] = {
                "reasoning": f"Checked the response for {key or 'the request'}.",
                "verdict": "YES" if yes else "NO",
            }
        return json.dumps(
            {"verdicts": verdicts, "rationale": "Read each question against the response."}
        )
    if name.endswith("_critique"):
        response = _between(prompt, "response")
        ids = _ids(schema, "criteria")
        level = 3 if "refund" in response.lower() else 1
        return json.dumps(
            {
                "criteria": {i: {"evidence": response[:40], "level": level} for i in ids},
                "rationale": "Levels applied from the descriptors.",
            }
        )
    if name.endswith("_pairwise"):
        a, b = _between(prompt, "response_A"), _between(prompt, "response_B")
        ids = _ids(schema, "criteria")
        better = "A" if len(a) > len(b) else "B"  # prefers the longer answer, in either order
        crit = {
            i: {
                "evidence": "compared both",
                "a": "YES" if better == "A" else "NO",
                "b": "YES" if better == "B" else "NO",
                "winner": better,
            }
            for i in ids
        }
        choice = "A better" if better == "A" else "B better"
        return json.dumps(
            {
                "criteria": crit,
                "overall": {"reasoning": "longer is more complete", "choice": choice},
            }
        )
    raise AssertionError(f"unexpected request kind {name!r}")


def first_position(body: dict[str, Any]) -> str:
    """A judge with pure position bias: whatever it sees first wins, everything, always."""
    _, schema = _schema(body)
    ids = _ids(schema, "criteria")
    crit = {i: {"evidence": "A reads better", "a": "YES", "b": "NO", "winner": "A"} for i in ids}
    return json.dumps(
        {"criteria": crit, "overall": {"reasoning": "A first", "choice": "A much better"}}
    )
