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

__all__ = ["load_mt_bench_answers", "load_mt_bench_judgments", "load_mt_bench_questions"]

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
