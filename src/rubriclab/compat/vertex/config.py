"""Vertex's configuration objects: how the judge is asked, custom parsing, rubric generation.

Plain descriptions, checked when built; :mod:`.metrics` holds them and :mod:`.generation` and
:mod:`.critique` act on them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...judges import Judge
from ...templates import brace_placeholders
from . import utils

__all__ = [
    "AutoraterConfig",
    "CritiqueParser",
    "CustomOutputConfig",
    "RubricGenerationConfig",
    "RubricParser",
]


#: parses the list of raw judge outputs of one row (one per sample) into result columns
CritiqueParser = Callable[[list[str]], Mapping[str, Any]]
#: parses one rubric-generation reply into ``{"questions": [...], **extra columns}`` (or a list)
RubricParser = Callable[[str], Any]


@dataclass(frozen=True)
class AutoraterConfig:
    """How the judge is asked: samples per row, both orders for pairwise, which judge.

    ``autorater_model`` is a judge spec or :class:`~rubriclab.Judge` (default: the session
    judge). ``flip_enabled`` defaults to False as in vertexai (whose ``AutoraterConfig()``
    reads ``flip_enabled`` False and whose pairwise rubric parser reads Response A as the
    baseline): one order, A = baseline, B = candidate. True asks each sample in both orders
    (twice the calls) and keeps a winner only when both orders agree, else a tie.
    """

    sampling_count: int = 1
    flip_enabled: bool = False
    autorater_model: Judge | str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.sampling_count, int) or isinstance(self.sampling_count, bool):
            raise ValueError(
                f"AutoraterConfig: sampling_count must be an integer 1-32, "
                f"got {self.sampling_count!r}"
            )

    def check(self) -> None:
        """The range check vertexai makes when ``evaluate()`` runs (not when the config is
        built), with its message."""
        if not 1 <= self.sampling_count <= 32:
            raise ValueError(
                "autorater_config.sampling_count must be in the range [1, 32]. "
                f"Got {self.sampling_count}."
            )


@dataclass(frozen=True)
class CustomOutputConfig:
    """``parsing_fn(raw_outputs: list[str]) -> dict``: each key becomes a ``{metric}/key`` column.

    ``return_raw_output`` adds ``{metric}/raw_outputs`` (the judge's texts) to the table.
    """

    return_raw_output: bool = False
    parsing_fn: CritiqueParser | None = None

    def __post_init__(self) -> None:
        if self.parsing_fn is not None and not callable(self.parsing_fn):
            raise TypeError("CustomOutputConfig: parsing_fn must be a function of list[str]")


@dataclass
class RubricGenerationConfig:
    """A ``{placeholder}`` prompt that asks for rubric questions, the judge, and the parser.

    ``model`` is a judge spec or :class:`~rubriclab.Judge`, a Vertex ``GenerativeModel`` (any
    object with ``generate_content(prompt)``), or a function of the prompt text returning the
    reply (or an object with ``.text``); None uses the session judge. ``parsing_fn`` defaults to :func:`utils.parse_rubrics`.
    """

    prompt_template: str
    model: Judge | str | Callable[[str], Any] | None = None
    parsing_fn: RubricParser | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.prompt_template, str) or not self.prompt_template.strip():
            raise ValueError("RubricGenerationConfig: prompt_template must be non-empty text")
        brace_placeholders(self.prompt_template, name="rubric generation prompt_template")
        if self.parsing_fn is not None and not callable(self.parsing_fn):
            raise TypeError("RubricGenerationConfig: parsing_fn must be a function of str")
        model = self.model
        if (
            model is not None
            and not isinstance(model, str | Judge)
            and not callable(model)
            and not hasattr(model, "generate_content")
        ):
            raise TypeError(
                "RubricGenerationConfig: model must be a judge spec, a model name, a Judge, "
                "a model with generate_content() or a function of the prompt, "
                f"got {type(model).__name__}"
            )

    @property
    def parser(self) -> RubricParser:
        return self.parsing_fn or utils.parse_rubrics
