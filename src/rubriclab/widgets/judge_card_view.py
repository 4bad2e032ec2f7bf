"""``JudgeCardView``: a judge card as a static view (charts and tables, no scripts), shown the
same in JupyterLab, exported HTML, GitHub and nbviewer; ``page()`` is a whole HTML document."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._static.judge_card import judge_card_html, judge_card_text
from .report import CSP

if TYPE_CHECKING:
    from ..judge_card import JudgeCard

__all__ = ["JudgeCardView", "judge_card_mimebundle", "judge_card_page", "judge_card_text_of"]

_PAGE_STYLE = (
    "body { font-family: system-ui, sans-serif; margin: 0; color: #222; background: #fff; }"
    " main { max-width: 1100px; margin: 0 auto; padding: 16px 24px 48px; }"
)


class JudgeCardView:
    """Shows a :class:`~rubriclab.judge_card.JudgeCard`: per suite and subset, each judge's
    accuracy with its interval beside the published judges' figures, then the figures, the
    differences between judges and the cost."""

    def __init__(self, card: JudgeCard) -> None:
        self.card = card

    def html(self) -> str:
        return judge_card_html(self.card.data)

    def text(self) -> str:
        return judge_card_text(self.card.data)

    def page(self) -> str:
        return judge_card_page(self.card)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": self.text(), "text/html": self.html()}


def judge_card_mimebundle(card: JudgeCard) -> dict[str, Any]:
    return JudgeCardView(card)._repr_mimebundle_()


def judge_card_text_of(card: JudgeCard) -> str:
    return judge_card_text(card.data)


def judge_card_page(card: JudgeCard) -> str:
    import html

    title = html.escape(("MOCK " if card.is_mock else "") + "rubriclab judge card")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>{title}</title><style>{_PAGE_STYLE}</style></head><body><main>"
        f"{judge_card_html(card.data)}</main></body></html>\n"
    )
