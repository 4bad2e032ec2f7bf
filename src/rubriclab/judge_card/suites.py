"""The judge card's suites: shipped human-labelled pairs, as one table shape.

Every suite becomes rows of ``item``, ``suite``, ``subset``, ``prompt``, ``output_1``,
``output_2`` and ``label`` (``"1"``, ``"2"``, ``"tie"``; None where people's verdict is not one
label, as on MT-Bench, whose votes are compared pair by pair). ``reference`` holds published
judges' verdicts on the same item (``{name: [verdict in order 1, verdict in order 2]}`` or a
combined verdict), so their figures are computed on exactly the items sampled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .. import datasets

__all__ = ["SUITES", "load_suite", "sample_items"]

#: suite name -> what it is, for views and errors
SUITES: dict[str, str] = {
    "llmbar": "LLMBar (Zeng et al., ICLR 2024): does the judge pick the output that follows the instruction?",
    "mt_bench": "MT-Bench human judgments (Zheng et al., NeurIPS 2023): agreement with expert votes",
    "pandalm": "PandaLM test set (Wang et al., ICLR 2024): majority of 3 annotators, ties allowed",
    "hhh": "HHH Alignment (Askell et al. 2021): the human-preferred response, helpful/honest/harmless",
}

_COLUMNS = ["item", "suite", "subset", "prompt", "output_1", "output_2", "label", "reference"]


def load_suite(name: str) -> pd.DataFrame:
    """All items of one suite in the card's shape (see the module docstring)."""
    if name == "llmbar":
        return _llmbar()
    if name == "pandalm":
        return _pandalm()
    if name == "hhh":
        return _hhh()
    if name == "mt_bench":
        return _mt_bench()
    raise ValueError(f"suites: no suite {name!r}; choose from {sorted(SUITES)}")


def sample_items(items: pd.DataFrame, n: int | None, seed: int) -> pd.DataFrame:
    """``n`` items drawn without replacement (seeded), kept in the suite's order; all if None."""
    if n is None or n >= len(items):
        return items.reset_index(drop=True)
    rng = np.random.default_rng(seed)
    keep = np.sort(rng.choice(len(items), size=n, replace=False))
    return items.iloc[keep].reset_index(drop=True)


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=[*_COLUMNS, *_extra(rows)])


def _extra(rows: list[dict[str, Any]]) -> list[str]:
    return [k for k in (rows[0] if rows else {}) if k not in _COLUMNS]


def _verdict(value: Any) -> str | None:
    """A published verdict in the card's terms: "1", "2", "tie", or None (unreadable)."""
    text = str(value).strip().lower()
    if text in ("1", "2"):
        return text
    if text in ("0", "tie"):
        return "tie"
    return None


def _llmbar() -> pd.DataFrame:
    frame = datasets.load_llmbar()
    rows = [
        {
            "item": f"llmbar/{r['subset'].rsplit('/', 1)[-1]}/{r['idx']}",
            "suite": "llmbar",
            "subset": str(r["subset"]).removeprefix("LLMBar/"),
            "prompt": r["input"],
            "output_1": r["output_1"],
            "output_2": r["output_2"],
            "label": str(r["label"]),
            "reference": {
                "GPT-4, Vanilla": [_verdict(v) for v in r["gpt4_vanilla"]],
                "GPT-4, Rules+Metrics+Reference": [
                    _verdict(v) for v in r["gpt4_rules_metrics_reference"]
                ],
            },
        }
        for r in frame.to_dict("records")
    ]
    return _frame(rows)


def _pandalm() -> pd.DataFrame:
    frame = datasets.load_pandalm()
    rows = []
    for r in frame.to_dict("records"):
        prompt = str(r["instruction"])
        if str(r.get("input") or "").strip():
            prompt += f"\n\nInput:\n{r['input']}"
        rows.append(
            {
                "item": f"pandalm/{r['idx']}",
                "suite": "pandalm",
                "subset": "all",
                "prompt": prompt,
                "output_1": r["response1"],
                "output_2": r["response2"],
                "label": _verdict(r["majority"]),
                # one verdict each (these judges were run in one order): the same in both slots
                "reference": {
                    name: [_verdict(r[name])] * 2 for name in ("gpt-3.5-turbo", "pandalm-7b")
                },
            }
        )
    return _frame(rows)


def _hhh() -> pd.DataFrame:
    frame = datasets.load_hhh()
    rows = []
    for r in frame.to_dict("records"):
        chosen_first = int(r["idx"]) % 2 == 0  # a one-slot judge scores 50%, not 100% or 0%
        rows.append(
            {
                "item": f"hhh/{r['idx']}",
                "suite": "hhh",
                "subset": str(r["source"]),
                "prompt": r["instruction"],
                "output_1": r["chosen"] if chosen_first else r["rejected"],
                "output_2": r["rejected"] if chosen_first else r["chosen"],
                "label": "1" if chosen_first else "2",
                "reference": {},
            }
        )
    return _frame(rows)


def _mt_bench() -> pd.DataFrame:
    votes = datasets.load_mt_bench_judgments()
    experts = votes[votes["judge_type"] == "expert"]
    gpt4 = votes[votes["judge_type"] == "gpt4_pair"]
    questions = datasets.load_mt_bench_questions().set_index("question_id")
    answers = datasets.load_mt_bench_answers().set_index(["question_id", "model"])
    keys: list[tuple[Any, ...]] = sorted(
        {
            (int(q), int(t), *sorted((str(a), str(b))))
            for q, t, a, b in experts[["question_id", "turn", "model_a", "model_b"]].itertuples(
                index=False
            )
        }
    )
    published = _mt_bench_gpt4(gpt4)
    rows = []
    for key in keys:
        q, turn, first, second = int(key[0]), int(key[1]), str(key[2]), str(key[3])
        question = questions.loc[q]
        rows.append(
            {
                "item": f"mt_bench/{q}/{turn}/{first}/{second}",
                "suite": "mt_bench",
                "subset": f"turn {turn}",
                "prompt": _mt_prompt(question, turn),
                "output_1": _mt_answer(answers.loc[(q, first)], turn),
                "output_2": _mt_answer(answers.loc[(q, second)], turn),
                "label": None,
                "reference": {"GPT-4 pair": published.get((q, turn, first, second))},
                "question_id": q,
                "turn": turn,
                "model_1": first,
                "model_2": second,
            }
        )
    return _frame(rows)


def _mt_bench_gpt4(gpt4: pd.DataFrame) -> dict[tuple[int, int, str, str], str]:
    """GPT-4's published pair verdicts (both orders already combined), keyed like the items."""
    out: dict[tuple[int, int, str, str], str] = {}
    for q, t, a, b, w in gpt4[["question_id", "turn", "model_a", "model_b", "winner"]].itertuples(
        index=False
    ):
        first, second = sorted((str(a), str(b)))
        winner = str(w)
        if "tie" in winner:
            verdict = "tie"
        else:
            verdict = "1" if (a if winner == "model_a" else b) == first else "2"
        out[(int(q), int(t), first, second)] = verdict
    return out


def _mt_prompt(question: Any, turn: int) -> str:
    if turn == 1:
        return str(question["turn_1"])
    return (
        f"This is a two-turn conversation. The user's first message:\n{question['turn_1']}\n\n"
        f"The user's second message:\n{question['turn_2']}\n\nJudge the assistant's answer to "
        "the second message, given the whole conversation shown in each response."
    )


def _mt_answer(answer: Any, turn: int) -> str:
    if turn == 1:
        return str(answer["turn_1"])
    return (
        f"[Answer to the first message]\n{answer['turn_1']}\n\n"
        f"[Answer to the second message]\n{answer['turn_2']}"
    )


def suite_names(suites: str | Sequence[str]) -> list[str]:
    """The suites asked for, checked (a single name is one suite)."""
    names = [suites] if isinstance(suites, str) else list(suites)
    if not names:
        raise ValueError(f"suites: name at least one of {sorted(SUITES)}")
    unknown = [s for s in names if s not in SUITES]
    if unknown:
        raise ValueError(f"suites: no suite {unknown[0]!r}; choose from {sorted(SUITES)}")
    return list(dict.fromkeys(names))
