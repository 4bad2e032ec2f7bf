"""``PromptTemplate``: vertexai's prompt with ``{variable}`` slots, filled in steps.

``assemble(name=...)`` fills the named slots and returns a new template, so a prompt can be
filled partly now and the rest later; unknown names are refused (as in vertexai).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["PromptTemplate"]

#: a ``{name}`` slot: an identifier in single braces
_SLOT = re.compile(r"\{([_a-zA-Z][_a-zA-Z0-9]*)\}")


class PromptTemplate:
    """A template string and the set of ``{variable}`` names still unfilled in it."""

    def __init__(self, template: str) -> None:
        if not isinstance(template, str):
            raise TypeError(f"PromptTemplate takes text, got {type(template).__name__}")
        self.template = template
        self.variables: set[str] = set(_SLOT.findall(template))

    def assemble(self, **kwargs: Any) -> PromptTemplate:
        """A new template with the given slots filled (the others stay as ``{name}``)."""
        unknown = sorted(k for k in kwargs if k not in self.variables)
        if unknown:
            raise ValueError(
                f"PromptTemplate has no variable {', '.join(map(repr, unknown))}; "
                f"its variables are: {', '.join(sorted(self.variables)) or '(none)'}"
            )
        text = _SLOT.sub(
            lambda m: str(kwargs[m.group(1)]) if m.group(1) in kwargs else m.group(0),
            self.template,
        )
        return PromptTemplate(text)

    def __str__(self) -> str:
        return self.template

    def __repr__(self) -> str:
        return f"PromptTemplate('{self.template}')"
