"""Small real datasets that ship with rubriclab, so calibration examples run offline.

Each dataset lives in its own folder with a README naming its source and license; nothing is
downloaded at run time.
"""

from __future__ import annotations

import gzip
import json
from importlib import resources
from typing import Any

import pandas as pd

__all__ = [
    "LLMBAR_SUBSETS",
    "load_hhh",
    "load_llmbar",
    "load_llmbar_published",
    "load_mt_bench_answers",
    "load_mt_bench_judgments",
    "load_mt_bench_questions",
    "load_pandalm",
]

#: LLMBar's five subsets, in the paper's order (Natural, then the four Adversarial ones)
LLMBAR_SUBSETS: tuple[str, ...] = (
    "LLMBar/Natural",
    "LLMBar/Adversarial/Neighbor",
    "LLMBar/Adversarial/GPTInst",
    "LLMBar/Adversarial/GPTOut",
    "LLMBar/Adversarial/Manual",
)

_VOTE_COLUMNS = ["question_id", "turn", "model_a", "model_b", "winner", "judge", "judge_type"]


def _read_jsonl_gz(folder: str, name: str) -> list[dict[str, Any]]:
    path = resources.files(__name__).joinpath(folder).joinpath(name)
    with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as text:
        return [json.loads(line) for line in text if line.strip()]


def load_mt_bench_judgments() -> pd.DataFrame:
    """MT-Bench pairwise votes: 3,355 human and 2,400 GPT-4 rows (Zheng et al. 2023, Table 5).

    Columns: ``question_id``, ``turn`` (1 or 2), ``model_a``, ``model_b``, ``winner``
    (``model_a`` / ``model_b`` / ``tie``, and for GPT-4 ``tie (inconsistent)`` when its two
    answer orders disagreed), ``judge`` (``expert_N``, ``author_N`` or ``gpt4_pair``) and
    ``judge_type`` (``expert``, ``author`` or ``gpt4_pair``). The paper's "human" judge is the
    experts only. Votes are CC-BY-4.0 (LMSYS); see ``datasets/mt_bench/README.md``.
    """
    rows = _read_jsonl_gz("mt_bench", "human.jsonl.gz")
    rows += _read_jsonl_gz("mt_bench", "gpt4_pair.jsonl.gz")
    votes = pd.DataFrame(rows)
    votes["judge_type"] = votes["judge"].str.replace(r"_\d+$", "", regex=True)
    selected: pd.DataFrame = votes[_VOTE_COLUMNS]
    return selected


def load_mt_bench_questions() -> pd.DataFrame:
    """The 80 two-turn MT-Bench questions: ``question_id``, ``category``, ``turn_1``, ``turn_2``."""
    rows = _read_jsonl_gz("mt_bench", "questions.jsonl.gz")
    frame: pd.DataFrame = pd.DataFrame(
        {
            "question_id": [r["question_id"] for r in rows],
            "category": [r["category"] for r in rows],
            "turn_1": [r["turns"][0] for r in rows],
            "turn_2": [r["turns"][1] for r in rows],
        }
    )
    return frame


def load_mt_bench_answers() -> pd.DataFrame:
    """The six models' answers to the 80 questions: ``question_id``, ``model``, ``turn_1``,
    ``turn_2`` (rebuild a conversation as question turn 1, answer turn 1, question turn 2, ...).
    """
    rows = _read_jsonl_gz("mt_bench", "answers.jsonl.gz")
    frame: pd.DataFrame = pd.DataFrame(
        {
            "question_id": [r["question_id"] for r in rows],
            "model": [r["model"] for r in rows],
            "turn_1": [r["turns"][0] for r in rows],
            "turn_2": [r["turns"][1] for r in rows],
        }
    )
    return frame


def load_llmbar(subsets: str | tuple[str, ...] | list[str] | None = None) -> pd.DataFrame:
    """LLMBar's 419 Natural and Adversarial pairs (Zeng et al., ICLR 2024), MIT.

    Columns: ``subset`` (see :data:`LLMBAR_SUBSETS`; a short name such as ``"Neighbor"`` also
    selects), ``idx``, ``input``, ``output_1``, ``output_2``, ``label`` (1 or 2: the output that
    follows the instruction), and GPT-4's published verdicts ``gpt4_vanilla`` /
    ``gpt4_rules_metrics_reference`` (``[original order, swapped order]``, in the dataset's
    numbering). See ``datasets/llmbar/README.md``.
    """
    frame = pd.DataFrame(_read_jsonl_gz("llmbar", "pairs.jsonl.gz"))
    if subsets is None:
        return frame
    wanted = [subsets] if isinstance(subsets, str) else list(subsets)
    full = []
    for name in wanted:
        match = [s for s in LLMBAR_SUBSETS if s == name or s.rsplit("/", 1)[-1] == name]
        if not match:
            short = [s.rsplit("/", 1)[-1] for s in LLMBAR_SUBSETS]
            raise ValueError(f"LLMBar has no subset {name!r}; choose from {short}")
        full += match
    selected: pd.DataFrame = frame[frame["subset"].isin(full)].reset_index(drop=True)
    return selected


def load_llmbar_published() -> dict[str, dict[str, str]]:
    """GPT-4's published LLMBar figures per ``"subset|GPT-4|config"``: the upstream
    ``statistics.json`` values ``correct_average`` (accuracy over both orders) and ``equal``
    (positional agreement), for the configs ``Vanilla_NoRules`` and ``Metrics_Reference``."""
    path = resources.files(__name__).joinpath("llmbar").joinpath("gpt4_published_statistics.json")
    data: dict[str, dict[str, str]] = json.loads(path.read_text(encoding="utf-8"))
    return data


def load_pandalm() -> pd.DataFrame:
    """PandaLM's 999 human-annotated pairs (Wang et al., ICLR 2024), Apache-2.0.

    Columns: ``idx``, ``motivation_app``, ``cmp_key``, ``instruction``, ``input``,
    ``response1``, ``response2``, ``annotator1..3`` and ``majority`` (``"0"`` tie, ``"1"``,
    ``"2"``), and the released verdicts ``gpt-3.5-turbo`` and ``pandalm-7b``. See
    ``datasets/pandalm/README.md``.
    """
    frame: pd.DataFrame = pd.DataFrame(_read_jsonl_gz("pandalm", "testset.jsonl.gz"))
    return frame


def load_hhh() -> pd.DataFrame:
    """HHH Alignment's 221 chosen/rejected pairs with Prometheus rubrics, Apache-2.0.

    Columns: ``idx``, ``source`` (harmless, helpful, honest, other), ``instruction``,
    ``chosen`` (the human-preferred response), ``rejected``, ``rubric``. See
    ``datasets/hhh/README.md``.
    """
    frame: pd.DataFrame = pd.DataFrame(_read_jsonl_gz("hhh", "hhh_alignment.jsonl.gz"))
    return frame
