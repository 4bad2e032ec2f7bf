"""``AlignmentView``: what ``rl.align`` changed and what it did on held-out rows.

Agreement with people before and after, per criterion, on the test rows; the gain in words
("no reliable gain" when its interval holds 0); every change tried (criterion rewrites as a word
diff, examples, the pass mark), kept or rejected, with its training/validation figures. A
static view (HTML and text): it reads the same in a notebook, on GitHub and in exported HTML.
"""

from __future__ import annotations

from typing import Any

from ..alignment import Alignment
from ._static.alignment import alignment_html, alignment_text

__all__ = ["AlignmentView", "alignment_mimebundle"]


class AlignmentView:
    """``rl.AlignmentView(al)``: before/after per criterion and the changed wording as a diff."""

    def __init__(self, alignment: Alignment) -> None:
        if not isinstance(alignment, Alignment):
            raise ValueError(
                f"AlignmentView shows what rl.align(...) returns, not a {type(alignment).__name__}"
            )
        self.alignment = alignment

    def to_html(self) -> str:
        return alignment_html(self.alignment)

    def __repr__(self) -> str:
        return alignment_text(self.alignment)

    def _repr_mimebundle_(self, **_: Any) -> dict[str, str]:
        return {"text/plain": alignment_text(self.alignment), "text/html": self.to_html()}


def alignment_mimebundle(alignment: Alignment) -> dict[str, str]:
    """What an ``Alignment`` shows at the end of a cell (through ``result.PRESENTATION``)."""
    return AlignmentView(alignment)._repr_mimebundle_()
