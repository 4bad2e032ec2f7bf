"""Compatibility layers: code written for other evaluation SDKs, run on rubriclab's engine.

``rubriclab.compat.vertex`` runs Vertex AI rubric-evaluation code on any judge.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["vertex"]


def __getattr__(name: str) -> Any:
    if name == "vertex":
        return importlib.import_module(".vertex", __name__)
    raise AttributeError(f"module 'rubriclab.compat' has no attribute {name!r}")
