"""The mock judge's pairwise answers follow the two responses' content, not their slots.

Pairwise critique asks both orders (A/B, then B/A) to cancel a judge's position bias. A mock that
filled the answer schema at random would flip on nearly every row, so the offline demo would
read as a broken library. Here each response gets a level per criterion from a hash of the
criterion, the shared part of the prompt and the response itself; the winner and the overall
choice follow from comparing the two levels. Asking B/A therefore gives the mirror of A/B.

The mock reads nothing, but it should not call "Sure." better than a full answer as often as
the reverse: each level's draw is moved up or down by the response's share of the pair's words
(up to :data:`LENGTH_WEIGHT` of the scale), so the answer that says more tends to win, as it
would with a real judge that finds it more complete (and with a real judge's length bias). Two
answers of one length are judged by the hash alone, as before.

Like a real judge, the mock leans to the first slot on close calls for a small, fixed share of
pairs (:data:`LEAN_SHARE`, chosen by a hash of the unordered pair): on a criterion where the two
levels are equal it names A the winner in both orders, so the two orders disagree there. Both
orders then reconcile to the tie the content gave, so results are unchanged; the
swap-inconsistency columns and the flip rate have something real to show offline.

The mock knows no template: it recognises a pairwise answer by its schema (per-item ``winner``
fields of "A"/"B"/"tie", and a choice whose labels mirror when A and B swap) and finds the two
responses in ``<response_A>``/``<response_B>`` tags, as the built-in prompt writes them. A
prompt without those tags keeps the plain schema-filled answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .mockdata import SchemaFiller, stable_hash, stable_unit, word_count

__all__ = ["LEAN_SHARE", "LENGTH_WEIGHT", "Pair", "find_pair", "judge_pair"]

#: the share of pairs on which the mock leans to slot A when the two responses tie
LEAN_SHARE = 0.1
#: how far (a share of the level scale) a response's share of the pair's words moves its level
LENGTH_WEIGHT = 0.5

_OPEN_A, _CLOSE_A = "<response_A>", "</response_A>"
_OPEN_B, _CLOSE_B = "<response_B>", "</response_B>"
_SIDE = re.compile(r"\b[AB]\b")
_YES = frozenset({"YES", "TRUE", "PASS", "PASSED", "PASSES"})
_LATENT_LEVELS = 3  # levels of an item that asks for a winner but no per-response level


@dataclass(frozen=True)
class Pair:
    """The two responses of a pairwise prompt, and the text both orders share before them."""

    a: str
    b: str
    shared: str


def find_pair(text: str) -> Pair | None:
    """Response A and B from their tags, or None when the prompt has no such pair.

    A runs from the first ``<response_A>`` to the first ``</response_A>`` that is followed by
    ``<response_B>``; B runs from there to the last ``</response_B>``. Linear in the text.
    """
    start = text.find(_OPEN_A)
    if start < 0:
        return None
    a_from = start + len(_OPEN_A)
    b_end = text.rfind(_CLOSE_B)
    close = text.find(_CLOSE_A, a_from)
    while 0 <= close < b_end:
        rest = close + len(_CLOSE_A)
        b_open = rest
        while b_open < b_end and text[b_open].isspace():
            b_open += 1
        if text.startswith(_OPEN_B, b_open) and b_open + len(_OPEN_B) <= b_end:
            a = text[a_from:close].strip()
            b = text[b_open + len(_OPEN_B) : b_end].strip()
            return Pair(a, b, text[:start])
        close = text.find(_CLOSE_A, rest)
    return None


def judge_pair(value: Any, filler: SchemaFiller, text: str, salt: str) -> None:
    """Rewrite a schema-filled pairwise answer in place so it follows the responses' content.

    ``salt`` (the mock's model and sample) makes different mock judges disagree with each other;
    nothing in it depends on the order of the two responses.
    """
    pair = find_pair(text)
    if pair is None:
        return
    found = _Found()
    _walk(filler, filler.root, value, "", found)
    if not found.items:
        return
    context = _digest(salt, pair.shared)
    leans = stable_unit("lean", context, *sorted((pair.a, pair.b))) < LEAN_SHARE
    diffs = [_judge_item(filler, item, pair, context, leans) for item in found.items]
    overall = sum(diffs, Fraction(0)) / len(diffs)
    for holder, key, labels in found.choices:
        holder[key] = _choice(labels, overall, leans)


@dataclass
class _Item:
    key: str
    props: Mapping[str, Any]
    value: dict[str, Any]
    winners: list[Any]


@dataclass
class _Found:
    items: list[_Item] = field(default_factory=list)
    choices: list[tuple[dict[str, Any], str, list[Any]]] = field(default_factory=list)


def _walk(filler: SchemaFiller, schema: Any, value: Any, key: str, found: _Found) -> None:
    """Collect the per-item winner entries and the overall choice fields of an answer."""
    if not isinstance(schema, Mapping):
        return
    schema = filler.resolve(schema)
    if isinstance(value, list):
        items = schema.get("items")
        for i, v in enumerate(value):
            _walk(filler, items, v, f"{key}/{i}", found)
        return
    props = schema.get("properties")
    if not isinstance(value, dict) or not isinstance(props, Mapping):
        return
    winners = _enum(filler, props.get("winner"))
    if "winner" in value and "A" in winners and "B" in winners:
        found.items.append(_Item(key, props, value, winners))
        return
    for name, sub in value.items():
        labels = _enum(filler, props.get(name))
        if isinstance(sub, str) and _mirrored(labels):
            found.choices.append((value, name, labels))
        else:
            _walk(filler, props.get(name), sub, name, found)


def _judge_item(
    filler: SchemaFiller, item: _Item, pair: Pair, context: str, leans: bool
) -> Fraction:
    """Set one item's levels and winner; return A's lead in [-1, 1]."""
    ranks = []
    words = (word_count(pair.a), word_count(pair.b))
    for side, response, own in (("a", pair.a, words[0]), ("b", pair.b, words[1])):
        levels = _ordered(filler, item.props.get(side)) if side in item.value else []
        count = len(levels) or _LATENT_LEVELS
        share = own / sum(words) if sum(words) else 0.5
        drawn = stable_unit("level", context, item.key, response)
        unit = min(max(drawn + LENGTH_WEIGHT * (2 * share - 1), 0.0), 1.0)
        rank = min(count - 1, int(unit * count))
        if levels:
            item.value[side] = levels[rank]
        ranks.append(Fraction(rank, max(1, count - 1)))
    lead = ranks[0] - ranks[1]
    ties = [w for w in item.winners if w not in ("A", "B")]
    if lead > 0:
        item.value["winner"] = "A"
    elif lead < 0:
        item.value["winner"] = "B"
    else:
        item.value["winner"] = "A" if leans or not ties else ties[0]
    return lead


def _choice(labels: Sequence[Any], lead: Fraction, leans: bool) -> Any:
    """The overall label for A's lead: the middle one is a tie, the ends the strongest calls."""
    middle = len(labels) // 2
    if lead == 0:
        return labels[middle - 1] if leans else labels[middle]
    step = min(middle, math.ceil(abs(lead) * middle))
    return labels[middle - step] if lead > 0 else labels[middle + step]


def _enum(filler: SchemaFiller, schema: Any) -> list[Any]:
    if not isinstance(schema, Mapping):
        return []
    resolved = filler.resolve(schema)
    enum = resolved.get("enum")
    if isinstance(enum, list):
        return enum
    return [False, True] if resolved.get("type") == "boolean" else []


def _ordered(filler: SchemaFiller, schema: Any) -> list[Any]:
    """A level field's values, worst first: numbers by value, YES above NO, else as listed."""
    values = _enum(filler, schema)
    if values and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return sorted(values)
    return sorted(values, key=lambda v: v is True or str(v).upper() in _YES)


def _mirrored(labels: Sequence[Any]) -> bool:
    """Labels that read the same reversed with A and B swapped ("A better" ... "B better")."""
    if len(labels) < 3 or len(labels) % 2 == 0 or not all(isinstance(x, str) for x in labels):
        return False
    swapped = [_SIDE.sub(lambda m: "B" if m.group() == "A" else "A", x) for x in labels]
    return swapped[0] != labels[0] and swapped == list(reversed(labels))


def _digest(*parts: str) -> str:
    return stable_hash(*parts).hex()
