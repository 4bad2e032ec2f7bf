"""How a model wants its request spelled: which field carries the output-token limit, and
whether it takes a temperature at all.

OpenAI's reasoning models (o1, o3, o4-mini, gpt-5 ...) refuse ``max_tokens`` (HTTP 400
``unsupported_parameter``: "Use 'max_completion_tokens' instead") and any temperature but
their default (``unsupported_value``; o3-mini refuses the field itself). Two sources decide:

* the model's name, for OpenAI's own endpoint (or a gateway that names it ``openai/...``):
  the families above are known to need it, so their first call is already right;
* the endpoint's own word, for everything we cannot know in advance (Azure deployment names,
  gateways, new models): the backend reads such a 400 and the engine adapts once
  (:meth:`Dialect.adapted`).

The name rule is kept to OpenAI's endpoint on purpose: dropping a temperature changes how a
judge samples, so it is done for another server's model only when that server says so.

Cache keys hash the judge's settings as the user gave them, not their spelling on the wire:
the keys of existing runs do not move, and an adaptation in the middle of a run leaves every
key as it was (its answers are found again by the next run, adapted or not).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["COMPLETION_LIMIT", "PLAIN", "TOKEN_LIMIT", "Dialect", "dialect_for"]

TOKEN_LIMIT = "max_tokens"
COMPLETION_LIMIT = "max_completion_tokens"
_LIMIT_FIELDS = (TOKEN_LIMIT, COMPLETION_LIMIT)  # in a layer naming both, the second wins

#: o1, o1-mini, o3-mini-2025-01-31, o4-mini, gpt-5, gpt-5.1, gpt-5-mini ... (ft: too)
_REASONING = re.compile(r"^(?:ft:)?(?:o[1-9][0-9]*(?:-|$)|gpt-5)")
#: gpt-5-chat-latest is not a reasoning model: it takes a temperature
_TAKES_TEMPERATURE = re.compile(r"^(?:ft:)?gpt-5[0-9.]*-chat")


@dataclass(frozen=True, slots=True)
class Dialect:
    """What the body of a call looks like for one model."""

    limit: str = TOKEN_LIMIT
    """The field the output-token limit is sent as: max_tokens or max_completion_tokens."""
    temperature: bool = True
    """False: no temperature is sent (the model takes only its default)."""
    plain: bool = field(init=False, compare=False, repr=False)
    """The body is sent as built (every model that is not an OpenAI reasoning model); a
    field, not a property: every call's body checks it."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "plain", self.limit == TOKEN_LIMIT and self.temperature)

    def respell(self, body: dict[str, Any], layers: Sequence[Mapping[str, Any]]) -> None:
        """Rewrite ``body`` in place for this model. ``layers``: where its fields came from,
        lowest first (the judge's settings, its params, the request's params); the limit the
        highest layer names is sent, whichever of the two fields it used."""
        if self.limit != TOKEN_LIMIT:
            value = None
            for layer in layers:
                for name in _LIMIT_FIELDS:
                    if layer.get(name) is not None:
                        value = layer[name]
            body.pop(TOKEN_LIMIT, None)
            body.pop(COMPLETION_LIMIT, None)
            if value is not None:
                body[self.limit] = value
        if not self.temperature:
            body.pop("temperature", None)

    def adapted(self, refused: str) -> Dialect:
        """This dialect after the endpoint refused the field ``refused`` (unknown: unchanged)."""
        if refused == TOKEN_LIMIT:
            return replace(self, limit=COMPLETION_LIMIT)
        if refused == "temperature":
            return replace(self, temperature=False)
        return self

    def change_from(self, before: Dialect) -> str:
        """What a judge now sends differently from ``before``, in words for a warning."""
        said = []
        if self.limit != before.limit:
            said.append(f"its output-token limit as {self.limit} (not {before.limit})")
        if self.temperature != before.temperature:
            said.append("no temperature (the model's default applies)")
        return " and ".join(said)


PLAIN = Dialect()


def dialect_for(model: str, *, openai: bool, params: Mapping[str, Any] | None = None) -> Dialect:
    """The dialect known in advance for ``model``: the reasoning families' on OpenAI's own
    endpoint (``openai``) or under an ``openai/`` name on a gateway, else :data:`PLAIN`.

    ``params`` may keep the temperature: gpt-5.1 and later take one when
    ``reasoning_effort`` is ``"none"`` (they do not reason then).
    """
    name = model.strip().lower()
    if name.startswith("openai/"):
        name, openai = name[len("openai/") :], True
    if not openai or not _REASONING.match(name):
        return PLAIN
    no_reasoning = (params or {}).get("reasoning_effort") == "none"
    takes_temperature = no_reasoning or bool(_TAKES_TEMPERATURE.match(name))
    return Dialect(COMPLETION_LIMIT, takes_temperature)
