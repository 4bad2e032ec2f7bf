"""Tool-call trajectory metrics: deterministic scores of an agent's tool calls (no judge call).

Two families, with Vertex AI's names:

* trajectories, from a ``predicted_trajectory`` and a ``reference_trajectory`` column (lists
  of tool calls): ``trajectory_exact_match``, ``trajectory_in_order_match``,
  ``trajectory_any_order_match``, ``trajectory_precision``, ``trajectory_recall``, and
  ``trajectory_single_tool_use(tool_name)``;
* single tool-call answers, from the ``response`` and ``reference`` columns (a JSON object with
  ``tool_calls``, as Vertex's tool-use metrics read them): ``tool_call_valid``,
  ``tool_name_match``, ``tool_parameter_key_match``, ``tool_parameter_kv_match``.

A tool call is ``{"tool_name": ..., "tool_input": {...}}`` (Vertex's trajectory form),
``{"name": ..., "arguments": {...}}`` (Vertex's tool-call form), or OpenAI's
``{"type": "function", "function": {"name": ..., "arguments": "<JSON text>"}}``; a cell may
hold the list itself or its JSON text. Two calls are the same call when their names and their
inputs are equal. The rules, where the names leave room:

* precision and recall count each reference call once (a multiset match), so calling the same
  tool twice when the reference calls it once is one relevant call and one extra;
* precision of an empty prediction is 0 (nothing relevant was called) unless the reference is
  empty too (1); recall against an empty reference is 1;
* the tool-call metrics compare the calls in order, pairwise: the names (``tool_name_match``),
  the parameter names (``tool_parameter_key_match``) or names and values
  (``tool_parameter_kv_match``) of every call must agree, and there must be as many calls.

A predicted cell that cannot be read as tool calls scores 0 (malformed calls are what the
agent did, and ``tool_call_valid`` exists to count them); a missing cell or an unreadable
reference is the row's error, never a 0.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from ..columns import is_missing_cell
from ..critique import Outcome
from ..rubric import Level, Rubric
from .base import Judged, Rows, judged
from .rubric import RubricMetric

__all__ = [
    "TOOL_CALL",
    "TRAJECTORY",
    "TRAJECTORY_QUALITY",
    "ToolCall",
    "TrajectoryError",
    "TrajectoryMetric",
    "parse_tool_calls",
    "tool_call_valid",
    "tool_name_match",
    "tool_parameter_key_match",
    "tool_parameter_kv_match",
    "trajectory_any_order_match",
    "trajectory_exact_match",
    "trajectory_in_order_match",
    "trajectory_precision",
    "trajectory_recall",
    "trajectory_single_tool_use",
]


class TrajectoryError(ValueError):
    """A trajectory or tool-call answer that cannot be read."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call: its name and its input (arguments), compared by value."""

    name: str
    input: Mapping[str, Any] = field(default_factory=dict)

    def key(self) -> str:
        """A canonical text of the call, so equal calls compare (and count) as equal."""
        return json.dumps([self.name, self.input], sort_keys=True, default=str)

    def __str__(self) -> str:
        return f"{self.name}({', '.join(f'{k}={v!r}' for k, v in self.input.items())})"


def _as_data(value: Any, what: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise TrajectoryError(f"{what} is not JSON ({exc.msg} at char {exc.pos})") from None
    return value


def _call(item: Any, where: str) -> ToolCall:
    if not isinstance(item, Mapping):
        raise TrajectoryError(f"{where} is not a tool call (a mapping with a name)")
    if isinstance(item.get("function"), Mapping):  # OpenAI: {"type": "function", "function": {}}
        item = item["function"]
    name = item.get("tool_name", item.get("name"))
    if not isinstance(name, str) or not name:
        raise TrajectoryError(f"{where} has no tool name")
    raw = item.get("tool_input", item.get("arguments", item.get("args", {})))
    if raw is None:
        raw = {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            raise TrajectoryError(f"{where} ({name}): its arguments are not JSON") from None
    if not isinstance(raw, Mapping):
        raise TrajectoryError(f"{where} ({name}): its input is not a mapping of arguments")
    return ToolCall(name, dict(raw))


def parse_tool_calls(value: Any, what: str = "the trajectory") -> list[ToolCall]:
    """A list of tool calls from a cell: a list (or its JSON text), or an object holding one
    under ``tool_calls`` (a model's answer); :class:`TrajectoryError` when unreadable."""
    data = _as_data(value, what)
    if isinstance(data, Mapping):
        if "tool_calls" not in data:
            raise TrajectoryError(f"{what} has no 'tool_calls'")
        data = data["tool_calls"] if data["tool_calls"] is not None else []
    if not isinstance(data, Sequence) or isinstance(data, str | bytes):
        raise TrajectoryError(f"{what} is not a list of tool calls")
    return [_call(item, f"{what}: call {i + 1}") for i, item in enumerate(data)]


# -- the scores: (predicted, reference) -> (score, note) ------------------------------------------


def _names(calls: Sequence[ToolCall]) -> str:
    return ", ".join(c.name for c in calls) or "(none)"


def _exact(pred: list[ToolCall], ref: list[ToolCall]) -> tuple[float, str]:
    same = [c.key() for c in pred] == [c.key() for c in ref]
    return (1.0, "same calls in the same order") if same else (0.0, _diff(pred, ref))


def _in_order(pred: list[ToolCall], ref: list[ToolCall]) -> tuple[float, str]:
    """Every reference call appears in the prediction in the reference's order (extra calls
    between them allowed): the reference is a subsequence of the prediction."""
    keys = iter(c.key() for c in pred)
    found = 0
    for want in ref:
        if not any(k == want.key() for k in keys):
            break
        found += 1
    if found == len(ref):
        return 1.0, f"all {len(ref)} reference calls, in order"
    return 0.0, f"reference call {found + 1} ({ref[found]}) is not found after call {found}"


def _missing(pred: list[ToolCall], ref: list[ToolCall]) -> list[ToolCall]:
    have = Counter(c.key() for c in pred)
    out = []
    for c in ref:
        if have[c.key()] > 0:
            have[c.key()] -= 1
        else:
            out.append(c)
    return out


def _any_order(pred: list[ToolCall], ref: list[ToolCall]) -> tuple[float, str]:
    missing = _missing(pred, ref)
    if not missing:
        return 1.0, f"all {len(ref)} reference calls, in any order"
    return 0.0, f"missing: {', '.join(str(c) for c in missing)}"


def _matched(pred: list[ToolCall], ref: list[ToolCall]) -> int:
    return sum((Counter(c.key() for c in pred) & Counter(c.key() for c in ref)).values())


def _precision(pred: list[ToolCall], ref: list[ToolCall]) -> tuple[float, str]:
    if not pred:
        return (1.0, "no calls, none expected") if not ref else (0.0, "no calls made")
    hit = _matched(pred, ref)
    return hit / len(pred), f"{hit} of {len(pred)} calls are in the reference"


def _recall(pred: list[ToolCall], ref: list[ToolCall]) -> tuple[float, str]:
    if not ref:
        return 1.0, "the reference has no calls"
    hit = _matched(pred, ref)
    return hit / len(ref), f"{hit} of {len(ref)} reference calls were made"


def _diff(pred: list[ToolCall], ref: list[ToolCall]) -> str:
    return f"called {_names(pred)}; the reference calls {_names(ref)}"


def _pairs(pred: list[ToolCall], ref: list[ToolCall]) -> str | None:
    if len(pred) != len(ref):
        return f"{len(pred)} calls, the reference has {len(ref)}"
    return None


def _name_match(pred: list[ToolCall], ref: list[ToolCall]) -> tuple[float, str]:
    why = _pairs(pred, ref)
    if why is None and [c.name for c in pred] == [c.name for c in ref]:
        return 1.0, f"tool names match: {_names(pred)}"
    return 0.0, why or _diff(pred, ref)


def _key_match(pred: list[ToolCall], ref: list[ToolCall]) -> tuple[float, str]:
    why = _pairs(pred, ref)
    if why is not None:
        return 0.0, why
    for i, (p, r) in enumerate(zip(pred, ref, strict=True), start=1):
        if set(p.input) != set(r.input):
            return 0.0, (
                f"call {i}: parameters {sorted(p.input)}, the reference has {sorted(r.input)}"
            )
    return 1.0, "parameter names match"


def _kv_match(pred: list[ToolCall], ref: list[ToolCall]) -> tuple[float, str]:
    score, note = _key_match(pred, ref)
    if score == 0.0:
        return score, note
    for i, (p, r) in enumerate(zip(pred, ref, strict=True), start=1):
        for k in r.input:
            if json.dumps(p.input[k], sort_keys=True, default=str) != json.dumps(
                r.input[k], sort_keys=True, default=str
            ):
                return 0.0, f"call {i}: {k}={p.input[k]!r}, the reference has {r.input[k]!r}"
    return 1.0, "parameter names and values match"


# -- the metric ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrajectoryMetric:
    """A deterministic metric of predicted tool calls against reference ones (no judge).

    ``compute(predicted, reference)`` returns the score in [0, 1] and a note (the row's
    rationale). ``predicted_column`` / ``reference_column`` name the cells read; a row missing
    either, or holding calls that cannot be read, gets its error and no score.
    """

    name: str
    compute: Callable[[list[ToolCall], list[ToolCall]], tuple[float, str]] = field(repr=False)
    predicted_column: str = "predicted_trajectory"
    reference_column: str = "reference_trajectory"
    description: str = ""
    needs_reference: bool = True

    kind: ClassVar[Literal["computation"]] = "computation"
    rubric: ClassVar[Rubric | None] = None

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name:
            raise ValueError(f"metric name {self.name!r} must be non-empty and contain no '/'")

    def score_one(self, predicted: Any, reference: Any) -> Outcome:
        """One row's outcome from its two cells (what the Vertex layer may call per row)."""
        if is_missing_cell(predicted):
            return Outcome(error=f"no {self.predicted_column!r} value to score")
        if self.needs_reference and is_missing_cell(reference):
            return Outcome(error=f"no {self.reference_column!r} value to compare with")
        try:
            ref = parse_tool_calls(reference, self.reference_column) if self.needs_reference else []
        except TrajectoryError as exc:  # the reference is the user's data: an error, not a 0
            return Outcome(error=str(exc))
        try:
            pred = parse_tool_calls(predicted, self.predicted_column)
        except TrajectoryError as exc:  # what the agent did is malformed: that scores 0
            return Outcome(score=0.0, rationale=f"not valid tool calls: {exc}")
        value, note = self.compute(pred, ref)
        return Outcome(score=float(value), rationale=note)

    async def judge_rows(self, rows: Rows) -> Judged:
        """Score every row from its two columns; no judge is asked."""
        table = rows.table
        wanted = [self.predicted_column] + ([self.reference_column] if self.needs_reference else [])
        for column in wanted:
            if column not in table.columns:
                raise ValueError(
                    f"metric {self.name!r} reads a {column!r} column, and the data has none"
                )
        preds = table[self.predicted_column].tolist()
        refs = (
            table[self.reference_column].tolist() if self.needs_reference else [None] * len(preds)
        )
        return judged(self.name, [self.score_one(p, r) for p, r in zip(preds, refs, strict=True)])


def _trajectory(name: str, compute: Any, description: str) -> TrajectoryMetric:
    return TrajectoryMetric(name, compute, description=description)


def _tool(name: str, compute: Any, description: str) -> TrajectoryMetric:
    return TrajectoryMetric(
        name,
        compute,
        predicted_column="response",
        reference_column="reference",
        description=description,
    )


trajectory_exact_match = _trajectory(
    "trajectory_exact_match", _exact, "1 if the predicted calls equal the reference's, in order"
)
trajectory_in_order_match = _trajectory(
    "trajectory_in_order_match",
    _in_order,
    "1 if every reference call is made in the reference's order (extra calls allowed)",
)
trajectory_any_order_match = _trajectory(
    "trajectory_any_order_match",
    _any_order,
    "1 if every reference call is made, in any order (extra calls allowed)",
)
trajectory_precision = _trajectory(
    "trajectory_precision", _precision, "share of the predicted calls that are in the reference"
)
trajectory_recall = _trajectory(
    "trajectory_recall", _recall, "share of the reference calls that were made"
)


def trajectory_single_tool_use(
    tool_name: str, *, predicted_column: str = "predicted_trajectory"
) -> TrajectoryMetric:
    """1 if the predicted trajectory calls ``tool_name`` at least once (no reference read)."""
    if not isinstance(tool_name, str) or not tool_name:
        raise ValueError("trajectory_single_tool_use needs the tool's name")

    def used(pred: list[ToolCall], _ref: list[ToolCall]) -> tuple[float, str]:
        n = sum(c.name == tool_name for c in pred)
        return (1.0, f"{tool_name} called {n} time(s)") if n else (0.0, f"{tool_name} not called")

    return TrajectoryMetric(
        "trajectory_single_tool_use",
        used,
        predicted_column=predicted_column,
        description=f"1 if {tool_name} is called",
        needs_reference=False,
    )


def _valid(pred: list[ToolCall], _ref: list[ToolCall]) -> tuple[float, str]:
    if not pred:
        return 0.0, "no tool calls"
    return 1.0, f"{len(pred)} valid tool call(s): {_names(pred)}"


tool_call_valid = TrajectoryMetric(
    "tool_call_valid",
    _valid,
    predicted_column="response",
    reference_column="reference",
    description="1 if the response holds well-formed tool calls (a name and JSON arguments each)",
    needs_reference=False,
)
tool_name_match = _tool(
    "tool_name_match", _name_match, "1 if the tool names equal the reference's, call by call"
)
tool_parameter_key_match = _tool(
    "tool_parameter_key_match",
    _key_match,
    "1 if every call has the reference call's parameter names",
)
tool_parameter_kv_match = _tool(
    "tool_parameter_kv_match",
    _kv_match,
    "1 if every call has the reference call's parameter names and values",
)

#: by name (trajectory_single_tool_use takes a tool name, so it is built, not listed)
TRAJECTORY: dict[str, TrajectoryMetric] = {
    m.name: m
    for m in (
        trajectory_exact_match,
        trajectory_in_order_match,
        trajectory_any_order_match,
        trajectory_precision,
        trajectory_recall,
    )
}
TOOL_CALL: dict[str, TrajectoryMetric] = {
    m.name: m
    for m in (tool_call_valid, tool_name_match, tool_parameter_key_match, tool_parameter_kv_match)
}


# -- the judged trajectory rubric ------------------------------------------------------------------


def _levels(*descriptors: str) -> list[Level]:
    return [Level(score=i, descriptor=d) for i, d in enumerate(descriptors, start=1)]


#: a judged rubric over the calls themselves (``predicted_trajectory``; ``reference_trajectory``
#: when given is shown as one good way, not the only one): which tools, their inputs, the order
TRAJECTORY_QUALITY = RubricMetric(
    name="trajectory_quality",
    template="critique_trajectory",
    description="the judge reads the agent's tool calls: tool choice, inputs, order",
    rubric=Rubric(
        name="trajectory_quality",
        criteria=[
            {
                "name": "tool_choice",
                "description": "Did the agent call the tools the task needs, and no others?",
                "levels": _levels(
                    "a needed tool is missing, or a wrong tool does the work",
                    "the right tools, with one unneeded or one missing call",
                    "exactly the tools the task needs",
                ),
                "weight": 2,
                "critical": 2,
            },
            {
                "name": "inputs",
                "description": "Are the tool inputs right for the task (values, ids, units)?",
                "levels": _levels(
                    "an input is wrong in a way that changes the result",
                    "inputs are right but one is vague or needlessly broad",
                    "every input is right and specific",
                ),
                "weight": 2,
            },
            {
                "name": "order",
                "description": "Are the calls in a workable order, without loops or repeats?",
                "levels": _levels(
                    "a call uses something not yet fetched, or calls loop",
                    "workable, with a repeated or roundabout call",
                    "a direct, sensible order",
                ),
            },
        ],
        pass_mark=0.7,
    ),
)
