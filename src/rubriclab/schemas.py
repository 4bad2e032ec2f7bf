"""JSON schemas we ask judges to answer in (OpenAI ``response_format``).

Reasoning or evidence always comes before the verdict in every schema, so a judge that writes
in order reasons first. Schemas are keyed by rubric ids, never by question text. The mock judge
answers any of these by generating an instance of the schema, so it needs no knowledge of ours.
"""

from __future__ import annotations

from typing import Any

from .rubric import Criterion, Rubric

__all__ = [
    "PAIRWISE_CHOICES",
    "analytic_schema",
    "checklist_schema",
    "generation_schema",
    "pairwise_schema",
    "response_format",
]

#: the overall pairwise choices, from A's side, most-A first
PAIRWISE_CHOICES = ("A much better", "A better", "tie", "B better", "B much better")


def response_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


def _object(properties: dict[str, Any], description: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    if description:
        out["description"] = description
    return out


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _level(criterion: Criterion) -> dict[str, Any]:
    if criterion.is_yes_no:
        return {"type": "string", "enum": ["YES", "NO"]}
    return {"type": "integer", "enum": criterion.scores}


def checklist_schema(rubric: Rubric) -> dict[str, Any]:
    per_item = {
        c.name: _object(
            {
                "reasoning": _text("what in the response answers this question, quoted"),
                "verdict": {"type": "string", "enum": ["YES", "NO"]},
            }
        )
        for c in rubric.criteria
    }
    return _object(
        {"verdicts": _object(per_item), "rationale": _text("overall rationale for the result")}
    )


def analytic_schema(rubric: Rubric) -> dict[str, Any]:
    per_item = {
        c.name: _object(
            {
                "evidence": _text("exact quote from the response that justifies the level"),
                "level": _level(c),
            }
        )
        for c in rubric.criteria
    }
    return _object(
        {"criteria": _object(per_item), "rationale": _text("overall rationale for the result")}
    )


def pairwise_schema(rubric: Rubric) -> dict[str, Any]:
    per_item = {
        c.name: _object(
            {
                "evidence": _text("evidence from both responses for this criterion"),
                "a": _level(c),
                "b": _level(c),
                "winner": {"type": "string", "enum": ["A", "B", "tie"]},
            }
        )
        for c in rubric.criteria
    }
    overall = _object(
        {
            "reasoning": _text("overall reasoning comparing the two responses"),
            "choice": {"type": "string", "enum": list(PAIRWISE_CHOICES)},
        }
    )
    return _object({"criteria": _object(per_item), "overall": overall})


def generation_schema(max_items: int, describe_media: bool) -> dict[str, Any]:
    item = _object(
        {
            "question": _text(
                "a yes/no question about the response, e.g. 'Does the response ...?'"
            ),
            "category": _text("the category this question checks"),
            "critical": {"type": "boolean"},
        }
    )
    props: dict[str, Any] = {}
    if describe_media:
        props["image_description"] = _text("what the attached image shows that matters")
    props["questions"] = {"type": "array", "items": item, "minItems": 1, "maxItems": max_items}
    return _object(props)
