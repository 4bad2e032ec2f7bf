"""Text from an endpoint made safe to keep: no lone surrogates.

JSON may escape a lone UTF-16 surrogate (``"\\ud800"``); Python decodes it into a ``str`` that
cannot be encoded as UTF-8, so the first file, cache or report that meets it fails. The
transport replaces each one with U+FFFD before anything else sees the text.
"""

from __future__ import annotations

import re

__all__ = ["clean_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a no-op for normal text)."""
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)
