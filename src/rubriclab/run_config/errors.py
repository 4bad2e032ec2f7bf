"""Validation errors in the user's terms: :mod:`rubriclab.plain_errors` (kept importable here,
where they first lived, for code that imports them from the run config)."""

from __future__ import annotations

from ..plain_errors import did_you_mean, explain, key_path, problems

__all__ = ["ConfigError", "did_you_mean", "explain", "key_path", "problems"]


class ConfigError(ValueError):
    """A run config that cannot be used; the message names the file, the key and the fix."""
