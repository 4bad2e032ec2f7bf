"""Criterion rewrites: the optimizer judge is shown one criterion's disagreements (training rows
only) and proposes clearer wording; its answer is read into candidate criteria."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..parse import extract_json
from ..rubric import Criterion, Level
from ..templates import load_builtin

if TYPE_CHECKING:
    from ..judges import Judge

__all__ = ["MAX_SHOWN", "propose", "rewrite_prompt", "wording"]

#: disagreements shown to the optimizer per criterion (each response cut to MAX_TEXT chars)
MAX_SHOWN = 12
MAX_TEXT = 2_000
_MAX_CANDIDATES = 3


def _shown(criterion: Criterion, value: Any) -> Any:
    if criterion.is_yes_no and value in (0, 1):
        return "YES" if value == 1 else "NO"
    return value


def rewrite_prompt(criterion: Criterion, disagreements: Sequence[Mapping[str, Any]]) -> str:
    """The optimizer's prompt for one criterion (disagreements as escaped JSON data)."""
    shown = [
        {
            "response": str(d["response"])[:MAX_TEXT],
            "people": _shown(criterion, d["people"]),
            "judge": _shown(criterion, d["judge"]),
            **({"reason": str(d["reason"])[:MAX_TEXT]} if d.get("reason") else {}),
            **({"baseline": str(d["baseline"])[:MAX_TEXT]} if "baseline" in d else {}),
        }
        for d in list(disagreements)[:MAX_SHOWN]
    ]
    text = json.dumps(shown, ensure_ascii=False, indent=1)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return load_builtin("align_rewrite").render(
        {
            "name": criterion.name,
            "yes_no": criterion.is_yes_no,
            "question": criterion.question,
            "description": criterion.description,
            "levels": criterion.levels,
            "disagreements_json": text,
        }
    )


def propose(
    optimizer: Judge, criterion: Criterion, disagreements: Sequence[Mapping[str, Any]]
) -> tuple[list[Criterion], int, str | None]:
    """Candidate rewrites of ``criterion`` (valid ones only), calls made, and any error."""
    reply = optimizer.complete(
        rewrite_prompt(criterion, disagreements), response_format={"type": "json_object"}
    )
    calls = 0 if reply.cached else 1
    if reply.error:
        return [], calls, f"optimizer call failed: {reply.error}"
    try:
        data = extract_json(reply.text or "", expect=dict)
    except Exception as exc:  # an unreadable answer: no candidates, said on the change
        return [], calls, f"optimizer answer unreadable: {exc}"
    raw = data.get("candidates") if isinstance(data, Mapping) else None
    out: list[Criterion] = []
    for item in raw if isinstance(raw, list) else []:
        made = _candidate(criterion, item)
        if (
            made is not None
            and wording(made) != wording(criterion)
            and all(wording(made) != wording(c) for c in out)
        ):
            out.append(made)
        if len(out) >= _MAX_CANDIDATES:
            break
    return out, calls, None if out else "the optimizer proposed no usable rewrite"


def _candidate(criterion: Criterion, item: Any) -> Criterion | None:
    if not isinstance(item, Mapping):
        return None
    try:
        if criterion.is_yes_no:
            question = item.get("question")
            if not isinstance(question, str) or not question.strip():
                return None
            return criterion.model_copy(update={"description": question.strip()[:MAX_TEXT]})
        description = item.get("description", criterion.description)
        levels_in = item.get("levels")
        levels = list(criterion.levels)
        if isinstance(levels_in, Mapping):
            given = {str(k).strip(): v for k, v in levels_in.items()}
            levels = [
                Level(score=lv.score, descriptor=str(given.get(str(lv.score), lv.descriptor)))
                for lv in criterion.levels
            ]
        if not isinstance(description, str):
            return None
        data = criterion.model_dump()
        data.update(description=description[:MAX_TEXT], levels=[lv.model_dump() for lv in levels])
        return Criterion.model_validate(data)
    except ValueError:
        return None


def wording(criterion: Criterion) -> str:
    """A criterion's wording as people read it (question or description, then levels)."""
    if criterion.is_yes_no:
        return criterion.question
    lines = [criterion.description]
    lines += [f"{lv.score} = {lv.descriptor}" for lv in criterion.levels]
    return "\n".join(lines)
