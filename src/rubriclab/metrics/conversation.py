"""Conversation metrics: a judge reads a whole conversation (a ``conversation`` column of
OpenAI-style messages, see ``data.conversation_cell``) and scores the assistant over it.

The transcript reaches the judge as a fixed block (``data.transcript``): every line of
message text is marked, so what a participant wrote cannot pose as another message or as the
prompt's own words. The four predefined rubrics are ours; the names follow Vertex's
``MULTI_TURN_*`` and DeepEval's conversational metrics so people find them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..columns import col
from ..critique import Outcome
from ..data import Case
from ..judges.base import CallTally
from ..rubric import Level, Rubric
from .rubric import RubricMetric

if TYPE_CHECKING:
    from ..judges import Judge
    from .base import Rows

__all__ = [
    "CONVERSATION",
    "CONVERSATION_QUALITY",
    "KNOWLEDGE_RETENTION",
    "ROLE_ADHERENCE",
    "TASK_COMPLETION",
    "ConversationMetric",
]


TurnRule = Literal["mean", "min"]


@dataclass(frozen=True)
class ConversationMetric(RubricMetric):
    """A rubric metric judged over each row's conversation (``conversation`` column, or
    ``mapping={"conversation": "your_column"}``). A row without one is that row's error.

    ``per_turn=True`` judges every assistant turn on its own, in one call each, with the
    conversation up to that turn as its context (later messages are not shown: the assistant
    had not seen them). The row's score is the ``turn_rule`` of its turn scores (``"mean"``, or
    ``"min"``: the worst turn); the row passes only when every turn passes; a turn that could
    not be judged is the row's error. ``{name}/turns`` holds each turn's result, worst first,
    and the row's criteria and rationale are the worst turn's.
    """

    name: str = "conversation"
    template: str | None = "critique_conversation"
    per_turn: bool = False
    turn_rule: TurnRule = "mean"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.turn_rule not in ("mean", "min"):
            raise ValueError(
                f"metric {self.name!r}: turn_rule must be 'mean' or 'min', got {self.turn_rule!r}"
            )
        if self.per_turn and self.judges:
            raise ValueError(f"metric {self.name!r}: per-turn judging takes one judge, not a panel")

    def check_data(self, columns: Collection[Any], mapping: Mapping[str, str]) -> None:
        """Stop before any call when there is no conversation column to judge."""
        column = mapping.get("conversation", "conversation")
        if column not in columns:
            raise ValueError(
                f"metric {self.name!r} judges a conversation per row, but the data has no "
                f"{column!r} column (columns: {', '.join(map(str, columns))}): add one of "
                "OpenAI-style messages or pass mapping={'conversation': 'your_column'}"
            )

    async def _critique(
        self,
        rows: Rows,
        rubrics: Sequence[Rubric | None],
        missing: Sequence[str | None],
        judge: Callable[[], Judge],
    ) -> tuple[list[Outcome], dict[str, list[Any]], list[Judge]]:
        talks = [c.conversation for c in rows.cases]
        rubrics = [r if t else None for r, t in zip(rubrics, talks, strict=True)]
        missing = [
            m if t else "no conversation in this row to judge"
            for m, t in zip(missing, talks, strict=True)
        ]
        if not self.per_turn:
            return await super()._critique(rows, rubrics, missing, judge)
        cases: list[Case] = []
        owners: list[tuple[int, int]] = []  # (row, turn) of each judged case; turn 0: none
        turn_rubrics: list[Rubric | None] = []
        turn_missing: list[str | None] = []
        for i, case in enumerate(rows.cases):
            turns = _turn_cases(case) if rubrics[i] is not None else []
            if not turns:  # judged as the row itself: its error, no call
                gone = missing[i] or "no assistant turn in this conversation to judge"
                cases.append(case)
                owners.append((i, 0))
                turn_rubrics.append(None)
                turn_missing.append(gone)
                continue
            for n, turn_case in turns:
                cases.append(turn_case)
                owners.append((i, n))
                turn_rubrics.append(rubrics[i])
                turn_missing.append(missing[i])
        expanded = dataclasses.replace(rows, cases=cases)
        outcomes, after, critics = await super()._critique(
            expanded, turn_rubrics, turn_missing, judge
        )
        per_row: list[list[tuple[int, Outcome]]] = [[] for _ in rows.cases]
        for (i, n), outcome in zip(owners, outcomes, strict=True):
            per_row[i].append((n, outcome))
        rolled = [_roll_up(turns, self.turn_rule) for turns in per_row]
        after = {col(self.name, "turns"): [t for _, t in rolled]}
        return [o for o, _ in rolled], after, critics


def _turn_cases(case: Case) -> list[tuple[int, Case]]:
    """One case per assistant turn: the conversation up to it, that turn as the response."""
    messages = case.conversation or []
    out: list[tuple[int, Case]] = []
    for idx, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        n = len(out) + 1
        extra = {**case.extra, "judged_turn": n}
        out.append(
            (
                n,
                dataclasses.replace(
                    case,
                    id=f"{case.id} turn {n}",
                    conversation=messages[: idx + 1],
                    response=message["content"],
                    extra=extra,
                ),
            )
        )
    return out


def _sort_key(entry: dict[str, Any]) -> tuple[int, float, int]:
    """Worst first: turns in error, then failing turns, then by score; ties in turn order."""
    failed = 0 if entry["error"] else (1 if entry["passed"] is False else 2)
    return (failed, entry["score"] if entry["score"] is not None else -1.0, entry["turn"])


def _roll_up(turns: list[tuple[int, Outcome]], rule: TurnRule) -> tuple[Outcome, list[Any]]:
    """The row's outcome from its turns' (the rule in ``ConversationMetric``'s docstring)."""
    if len(turns) == 1 and turns[0][0] == 0:  # nothing judged: the row's own error
        return turns[0][1], []
    entries: list[dict[str, Any]] = [
        {
            "turn": n,
            "score": o.score,
            "passed": o.passed,
            "verdict": o.verdict,
            "criteria": o.criteria,
            "rationale": o.rationale,
            "error": o.error,
        }
        for n, o in turns
    ]
    entries.sort(key=_sort_key)
    usage = CallTally()
    for _, o in turns:
        usage.merge(o.usage)
    raw = [
        text
        for _, o in turns
        for text in ([o.raw_output] if isinstance(o.raw_output, str) else o.raw_output or [])
    ]
    worst = entries[0]
    errors = [e for e in entries if e["error"]]
    if errors:
        error = "; ".join(f"turn {e['turn']}: {e['error']}" for e in errors)
        return Outcome(error=error, raw_output=raw, usage=usage), entries
    scores = [float(e["score"]) for e in entries]
    score = min(scores) if rule == "min" else sum(scores) / len(scores)
    passed = all(e["passed"] for e in entries)
    verdict = "pass" if passed else f"fail (turn {worst['turn']}: {worst['verdict']})"
    criteria = [{**c, "turn": worst["turn"]} for c in worst["criteria"]]
    rationale = f"turn {worst['turn']} (worst of {len(entries)}): {worst['rationale']}"
    outcome = Outcome(
        score=score,
        passed=passed,
        verdict=verdict,
        criteria=criteria,
        rationale=rationale,
        raw_output=raw,
        usage=usage,
    )
    return outcome, entries


def _levels(*descriptors: str) -> list[Level]:
    return [Level(score=i, descriptor=d) for i, d in enumerate(descriptors, start=1)]


def _conversation(
    name: str, description: str, criteria: list[dict[str, Any]]
) -> ConversationMetric:
    return ConversationMetric(
        name=name,
        description=description,
        rubric=Rubric(name=name, criteria=criteria, pass_mark=0.7),
    )


#: how well the assistant served the user over the whole exchange
CONVERSATION_QUALITY = _conversation(
    "conversation_quality",
    "the judge reads the whole conversation: helpfulness, coherence, tone across turns",
    [
        {
            "name": "helpfulness",
            "description": "Do the assistant's replies move the user forward at each turn?",
            "levels": _levels(
                "replies are unhelpful, off topic or wrong at one or more turns",
                "mostly helpful, with a turn that stalls or goes around in circles",
                "every reply moves the user forward",
            ),
            "weight": 2,
        },
        {
            "name": "coherence",
            "description": "Does each reply follow from what was said before, without contradictions?",
            "levels": _levels(
                "a reply contradicts an earlier one or ignores the user's last message",
                "replies follow on, with a small inconsistency",
                "each reply follows from the conversation so far",
            ),
        },
        {
            "name": "tone",
            "description": "Is the tone fitting and steady for this user across the turns?",
            "levels": _levels(
                "rude, dismissive, or the tone swings from turn to turn",
                "fitting, with a lapse",
                "fitting and steady throughout",
            ),
        },
    ],
)

#: whether the assistant keeps what the user already said (facts, preferences, decisions)
KNOWLEDGE_RETENTION = _conversation(
    "knowledge_retention",
    "the judge checks that the assistant keeps what the user said in earlier turns",
    [
        {
            "name": "remembers_facts",
            "description": (
                "Does the assistant use facts the user gave earlier (names, numbers, details) "
                "correctly, without asking for them again?"
            ),
            "levels": _levels(
                "asks again for, or gets wrong, something the user already said",
                "keeps most facts, with one slip or needless re-check",
                "keeps every fact the user gave",
            ),
            "weight": 2,
            "critical": 2,
        },
        {
            "name": "keeps_decisions",
            "description": (
                "Does the assistant keep to preferences, constraints and decisions agreed earlier?"
            ),
            "levels": _levels(
                "a later reply goes against an earlier constraint or decision",
                "mostly kept, with a drift the user has to correct",
                "kept throughout",
            ),
        },
    ],
)

#: whether the assistant stays in the role its system message (or the task) gives it
ROLE_ADHERENCE = _conversation(
    "role_adherence",
    "the judge checks the assistant stays in the role and rules its system message sets",
    [
        {
            "name": "stays_in_role",
            "description": (
                "Does the assistant keep the role, persona and scope set for it (the system "
                "message, if any), including when the user pushes it to leave them?"
            ),
            "levels": _levels(
                "leaves the role or scope at some turn",
                "stays in role, with a reply that slips out of character or scope",
                "stays in role at every turn",
            ),
            "weight": 2,
            "critical": 2,
        },
        {
            "name": "follows_rules",
            "description": "Does the assistant follow the rules and limits its instructions set?",
            "levels": _levels(
                "breaks a rule it was given",
                "bends a rule, or follows it only after the user insists",
                "follows every rule it was given",
            ),
        },
    ],
)

#: whether what the user came for was done by the end
TASK_COMPLETION = _conversation(
    "task_completion",
    "the judge checks whether the user's task was done by the end of the conversation",
    [
        {
            "name": "task_done",
            "description": (
                "By the end, is what the user asked for done (or, where it cannot be done, "
                "clearly said why, with the next step)?"
            ),
            "levels": _levels(
                "the task is not done and the user is left without a way forward",
                "partly done, or done with a wrong or missing piece",
                "fully done, or rightly declined with a clear next step",
            ),
            "weight": 3,
            "critical": 2,
        },
        {
            "name": "confirmed",
            "description": "Does the assistant say plainly what was done, without claiming more?",
            "levels": _levels(
                "claims something was done that the conversation does not show",
                "the outcome is left vague",
                "states plainly what was done and what was not",
            ),
        },
    ],
)

#: the four conversation metrics by name. Kept apart from ``rl.metrics.PREDEFINED`` on purpose:
#: PREDEFINED holds the generated-rubric metrics that judge any prompt/response row and have
#: pairwise twins (the CLI, run configs, ``%%rubric`` and the arena pick from it by name, and
#: the run config turns ``pairwise: true`` into ``pairwise_<name>``); these need a
#: ``conversation`` column, stop before any call without one, and have no pairwise twin.
CONVERSATION: dict[str, ConversationMetric] = {
    m.name: m for m in (CONVERSATION_QUALITY, KNOWLEDGE_RETENTION, ROLE_ADHERENCE, TASK_COMPLETION)
}
