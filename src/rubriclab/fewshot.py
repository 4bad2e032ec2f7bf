"""Few-shot examples: cases people judged, shown to the judge before the case it judges.

An :class:`Example` is data, never template source: it is encoded as JSON (``<`` and ``>``
escaped, so a response cannot close the block or open a tag the prompt uses) and placed in a
fixed block rendered by the built-in ``examples_block`` prompt in the sandbox, before the metric's
own prompt. A user's template cannot move, read or change the block. With no examples nothing
is added, so prompts (and the cache keys made from them) are what they were.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .templates import DEFAULT_RENDER_TIMEOUT, PromptTooLong, load_builtin

if TYPE_CHECKING:
    from .rubric import Criterion, Rubric

__all__ = ["PAIRWISE_VALUES", "Example", "as_examples", "check_examples", "prefix_examples"]

#: what a person may say per criterion when comparing candidate and baseline
PAIRWISE_VALUES = ("candidate", "tie", "baseline")
_TO_SIDE = {"candidate": "A", "baseline": "B", "tie": "tie"}
_MAX_EXAMPLES = 64


@dataclass(frozen=True)
class Example:
    """One labelled case: the response (and, for pairwise metrics, the baseline), the levels
    people gave per criterion (a level number, YES/NO, or candidate/tie/baseline), and an
    optional reason in their words."""

    response: str
    levels: Mapping[str, Any]
    reason: str = ""
    prompt: str | None = None
    baseline: str | None = None
    row: Any = field(default=None, compare=False)
    """Where the example came from (a row key), for the record; never sent to the judge."""

    def __post_init__(self) -> None:
        if not isinstance(self.response, str):
            raise ValueError("an example's response must be text")
        if not isinstance(self.levels, Mapping) or not self.levels:
            raise ValueError("an example needs levels: {criterion: level} from a person")
        object.__setattr__(self, "levels", dict(self.levels))
        for key, value in self.levels.items():
            if not isinstance(key, str):
                raise ValueError(f"an example's criterion names must be text, got {key!r}")
            if isinstance(value, bool) or not isinstance(value, int | str):
                raise ValueError(
                    f"example level for {key!r} must be a level number or a word "
                    f"(YES/NO, candidate/tie/baseline), got {value!r}"
                )
        if not isinstance(self.reason, str):
            raise ValueError("an example's reason must be text")

    def to_dict(self) -> dict[str, Any]:
        """Plain data (what a fingerprint or a saved alignment keeps)."""
        out: dict[str, Any] = {"response": self.response, "levels": dict(self.levels)}
        for key in ("reason", "prompt", "baseline"):
            value = getattr(self, key)
            if value:
                out[key] = value
        return out


def as_examples(values: Any, metric: str) -> tuple[Example, ...]:
    """``examples=`` as given (Examples or dicts), as a tuple of :class:`Example`."""
    if values is None:
        return ()
    if isinstance(values, Mapping | str) or not isinstance(values, Sequence):
        raise ValueError(f"metric {metric!r}: examples must be a list of examples")
    if len(values) > _MAX_EXAMPLES:
        raise ValueError(f"metric {metric!r}: at most {_MAX_EXAMPLES} examples")
    out = []
    for i, value in enumerate(values, 1):
        if isinstance(value, Example):
            out.append(value)
            continue
        if not isinstance(value, Mapping):
            raise ValueError(f"metric {metric!r}: example {i} is not an Example or a dict")
        unknown = set(value) - {"response", "levels", "reason", "prompt", "baseline", "row"}
        if unknown:
            raise ValueError(
                f"metric {metric!r}: example {i} has unknown key(s) {', '.join(sorted(unknown))}"
            )
        try:
            out.append(Example(**dict(value)))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"metric {metric!r}: example {i}: {exc}") from None
    return tuple(out)


def check_examples(
    examples: Sequence[Example], rubric: Rubric, metric: str, *, pairwise: bool
) -> None:
    """Each example names only the rubric's criteria, with levels they have."""
    by_name = {c.name: c for c in rubric.criteria}
    for i, ex in enumerate(examples, 1):
        for name, value in ex.levels.items():
            if name == "overall":
                continue
            criterion = by_name.get(name)
            if criterion is None:
                raise ValueError(
                    f"metric {metric!r}: example {i} names criterion {name!r}, which the "
                    f"rubric does not have ({', '.join(by_name)})"
                )
            if pairwise:
                if str(value).lower() not in PAIRWISE_VALUES:
                    raise ValueError(
                        f"metric {metric!r}: example {i}, {name}: {value!r} is not "
                        "candidate, tie or baseline"
                    )
            elif _shown_level(criterion, value) is None:
                raise ValueError(
                    f"metric {metric!r}: example {i}, {name}: {value!r} is not a level of "
                    f"this criterion ({', '.join(map(str, criterion.scores))})"
                )
        if pairwise and not ex.baseline:
            raise ValueError(f"metric {metric!r}: example {i} of a pairwise metric needs baseline")


def _shown_level(criterion: Criterion, value: Any) -> str | int | None:
    """The level as the judge is asked to give it (YES/NO or the number); None if not one."""
    text = str(value).strip().lower()
    if criterion.is_yes_no:
        if text in ("yes", "pass", "true", "1"):
            return "YES"
        if text in ("no", "fail", "false", "0"):
            return "NO"
        return None
    try:
        level = int(text)
    except ValueError:
        return None
    return level if level in criterion.scores else None


def _entries(examples: Sequence[Example], rubric: Rubric, pairwise: bool) -> list[dict[str, Any]]:
    by_name = {c.name: c for c in rubric.criteria}
    out = []
    for ex in examples:
        entry: dict[str, Any] = {}
        if ex.prompt:
            entry["prompt"] = ex.prompt
        if pairwise:
            entry["response_A"] = ex.response
            entry["response_B"] = ex.baseline or ""
            entry["people_said_winner"] = {
                k: _TO_SIDE.get(str(v).lower(), str(v)) for k, v in ex.levels.items()
            }
        else:
            entry["response"] = ex.response
            entry["people_gave"] = {
                k: (_shown_level(by_name[k], v) if k in by_name else v)
                for k, v in ex.levels.items()
            }
        if ex.reason:
            entry["reason"] = ex.reason
        out.append(entry)
    return out


def _escaped_json(data: Any) -> str:
    """JSON with ``<``, ``>`` and ``&`` as unicode escapes: still the same JSON data, but no
    text inside it can read as a tag (``</examples>``, ``<response>``) to the judge."""
    text = json.dumps(data, ensure_ascii=False, indent=1)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def prefix_examples(
    text: str,
    examples: Sequence[Example],
    rubric: Rubric,
    *,
    pairwise: bool,
    max_prompt_chars: int,
    render_timeout: float = DEFAULT_RENDER_TIMEOUT,
) -> str:
    """``text`` (a rendered critique prompt) with the examples block before it; unchanged
    with no examples. Over ``max_prompt_chars`` together: refused, as any long prompt is."""
    if not examples:
        return text
    block = load_builtin("examples_block").render(
        {
            "examples_json": _escaped_json(_entries(examples, rubric, pairwise)),
            "pairwise": pairwise,
        },
        max_prompt_chars=max_prompt_chars,
        render_timeout=render_timeout,
    )
    full = f"{block.rstrip()}\n\n{text}"
    if len(full) > max_prompt_chars:
        raise PromptTooLong(len(full), max_prompt_chars, template="examples_block")
    return full
