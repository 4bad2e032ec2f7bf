"""Validation errors in the user's terms: :mod:`rubriclab.plain_errors` (kept importable here,
where they first lived, for code that imports them from the run config)."""

from __future__ import annotations

from ..plain_errors import did_you_mean, explain, key_path, problems

__all__ = ["did_you_mean", "explain", "key_path", "problems"]
