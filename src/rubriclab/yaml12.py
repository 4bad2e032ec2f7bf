"""One YAML loader for every file rubriclab reads: safe, with YAML 1.2's plain scalars.

PyYAML follows YAML 1.1, where ``no``, ``yes``, ``on`` and ``off`` are booleans, ``1:30`` is
the number 90 and ``010`` is 8. In a rubric those are words and labels: ``levels: {1: no,
2: partly, 3: yes}`` must keep ``'no'`` and ``'yes'`` as descriptors, not ``'False'``/``'True'``.
This loader keeps PyYAML's safe constructors and swaps the implicit resolvers for YAML 1.2's
core schema: only ``true``/``false`` are booleans and integers are decimal (or ``0x``/``0o``).
Rubric files, ``%%rubric`` cell bodies and run configs all load through :func:`load_yaml`.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["YamlError", "load_yaml"]


class YamlError(ValueError):
    """YAML text that does not parse; ``line`` is 1-based when the parser knows it."""

    def __init__(self, problem: str, line: int | None) -> None:
        self.problem = problem
        self.line = line
        super().__init__(f"line {line}: {problem}" if line is not None else problem)


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema resolvers for booleans, integers and floats."""


_REPLACED = frozenset(
    {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}
)
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _REPLACED]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL, list("tTfF"))
_Loader.add_implicit_resolver("tag:yaml.org,2002:int", _INT, list("-+0123456789"))
_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+.0123456789"))


def _construct_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    """Decimal, ``0o`` octal or ``0x`` hex: ``010`` is ten, as YAML 1.2 reads it."""
    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def load_yaml(text: str) -> Any:
    """Parse ``text`` (one document) safely with YAML 1.2 scalars; errors name the line."""
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise YamlError(str(problem), line) from None
