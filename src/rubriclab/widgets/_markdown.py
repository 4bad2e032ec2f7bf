"""Model and judge text as CommonMark in static HTML, with the same rules as the live views.

markdown-it-py (the live views use markdown-it, so both follow one spec) with raw HTML off:
a ``<script>`` in model output stays visible text. Links keep only http(s) and mailto targets
and open with ``rel="noopener noreferrer nofollow"``; images become their alt text (a report
fetches nothing). Without markdown-it-py installed, text is shown escaped, as before.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["SAFE_LINK", "looks_like_markdown", "markdown_html"]

SAFE_LINK = re.compile(r"^(https?:|mailto:)", re.IGNORECASE)
#: the same test as the views' ``looksLikeMarkdown``: plain prose stays a pre-wrap block
_MARKDOWN = re.compile(
    r"(^|\n)\s{0,3}(#{1,6}\s|[-*+]\s|\d{1,9}[.)]\s|>|```|~~~)|\*\*[^*\n]{1,300}\*\*"
    r"|__[^_\n]{1,300}__|`[^`\n]{1,300}`|\[[^\]\n]{1,300}\]\([^)\s]{1,500}\)|(^|\n)\|[^\n]{0,2000}\|"
)


def looks_like_markdown(text: str) -> bool:
    """Bounded repeats over a bounded prefix: hostile input ("[[[[...") cannot make it slow."""
    return bool(_MARKDOWN.search(text[:20_000]))


MAX_MARKDOWN_CHARS = 200_000


def _parser() -> Any:
    try:
        from markdown_it import MarkdownIt
    except ImportError:  # pragma: no cover - markdown-it-py ships with the views extra
        return None
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.validateLink = lambda url: bool(SAFE_LINK.match(url.strip()))  # type: ignore[method-assign]

    def link_open(self: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        token.attrSet("rel", "noopener noreferrer nofollow")
        token.attrSet("target", "_blank")
        return str(self.renderToken(tokens, idx, options, env))

    def image(self: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        alt = "".join(child.content for child in token.children or [])
        return f"[image: {html.escape(alt)}]"

    md.add_render_rule("link_open", link_open)
    md.add_render_rule("image", image)
    return md


_MD = _parser()


def markdown_html(text: Any) -> str:
    """``text`` rendered as CommonMark (safe), or escaped when it cannot be."""
    value = "" if text is None else str(text)
    if _MD is None or len(value) > MAX_MARKDOWN_CHARS:
        return html.escape(value, quote=True)
    return str(_MD.render(value))
