"""``rate_judge`` / ``rate_judges``: run the suites through the normal evaluate path (engine,
cache, batch API, progress) with a pairwise metric, in both orders, and build the card."""

from __future__ import annotations

import itertools
import time
import zlib
from collections.abc import Sequence
from typing import Any

import pandas as pd

from .. import datasets
from ..columns import col
from ..comparison import paired_bootstrap
from ..evaluation import evaluate
from ..judges import Judge, get_judge
from ..metrics import PairwiseRubricMetric
from ..parse import extract_json
from ..rubric import Rubric
from ..schemas import PAIRWISE_CHOICES
from .card import JudgeCard
from .figures import combined, group_figures, item_scores, mt_bench_agreement, wilson
from .suites import load_suite, sample_items, suite_names

__all__ = ["GENERAL_RUBRIC", "rate_judge", "rate_judges"]

#: the default general-purpose rubric: what people's labels in these suites reward
GENERAL_RUBRIC = Rubric.checklist(
    [
        "Does the response do exactly what the instruction asks, and nothing it rules out?",
        "Is the response accurate, with no false or made-up claims?",
        "Is the response helpful: complete where it matters, clear, and no longer than needed?",
        "Is the response honest and harmless?",
    ],
    name="general pairwise",
)

_METRIC_NAME = "judge_card"

#: MT-Bench Table 5 (Zheng et al. 2023): agreement (comparisons); reproduced from the shipped
#: votes in ``datasets/mt_bench/README.md``
_MT_BENCH_TABLE_5 = (
    ("turn 1", "GPT-4 (pair)", "with_ties", 0.66, 1343),
    ("turn 1", "GPT-4 (pair)", "without_ties", 0.85, 859),
    ("turn 2", "GPT-4 (pair)", "with_ties", 0.66, 1325),
    ("turn 2", "GPT-4 (pair)", "without_ties", 0.85, 864),
    ("turn 1", "expert vs expert", "with_ties", 0.63, 721),
    ("turn 1", "expert vs expert", "without_ties", 0.81, 479),
    ("turn 2", "expert vs expert", "with_ties", 0.67, 707),
    ("turn 2", "expert vs expert", "without_ties", 0.82, 474),
)
_MT_BENCH_SOURCE = (
    "Zheng et al. 2023, Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena, Table 5 (all pairs)"
)
_LLMBAR_SOURCE = (
    "Zeng et al. 2024, Evaluating LLMs at Evaluating Instruction Following (LLMBar); the repo's "
    "statistics.json, which its README says are the paper's reported results"
)
_LLMBAR_CONFIGS = {
    "GPT-4, Vanilla": "Vanilla_NoRules",
    "GPT-4, Rules+Metrics+Reference": "Metrics_Reference",
}


def rate_judge(
    judge: Judge | str | None = None,
    suites: str | Sequence[str] = ("llmbar",),
    *,
    metric: PairwiseRubricMetric | None = None,
    n: int | None = None,
    seed: int = 0,
    name: str | None = None,
) -> JudgeCard:
    """Rate one judge against people on shipped human-labelled suites -> :class:`JudgeCard`.

    ``suites``: any of ``"llmbar"``, ``"mt_bench"``, ``"pandalm"``, ``"hhh"``. The judge
    compares each item's two outputs with ``metric`` (default: rubriclab's pairwise metric with
    :data:`GENERAL_RUBRIC`), in both orders, through ``evaluate`` (so the cache, a batch judge
    and progress work as in any run). ``n`` items per suite are drawn with ``seed`` (all when
    None), the same items for every judge.
    """
    return rate_judges(
        [judge], suites, metric=metric, n=n, seed=seed, names=[name] if name else None
    )


def rate_judges(
    judges: Sequence[Judge | str | None],
    suites: str | Sequence[str] = ("llmbar",),
    *,
    metric: PairwiseRubricMetric | None = None,
    n: int | None = None,
    seed: int = 0,
    names: Sequence[str] | None = None,
) -> JudgeCard:
    """Rate several judges on the same items: a column each, and paired bootstrap intervals on
    their accuracy differences."""
    if not judges:
        raise ValueError("judges: give at least one judge")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
        raise ValueError(f"n: a whole number of items per suite, 1 or more (got {n!r})")
    metric = (
        metric
        if metric is not None
        else PairwiseRubricMetric(name=_METRIC_NAME, rubric=GENERAL_RUBRIC)
    )
    if getattr(metric, "kind", None) != "pairwise":
        raise ValueError(
            "metric: the judge card needs a pairwise metric (rl.metrics.PairwiseRubricMetric)"
        )
    resolved = [_judge(j) for j in judges]
    labels = _names(resolved, names)
    chosen = suite_names(suites)
    items = pd.concat([sample_items(load_suite(s), n, seed) for s in chosen], ignore_index=True)
    data_in = pd.DataFrame(
        {
            "prompt": items["prompt"],
            "response": items["output_1"],
            "baseline_model_response": items["output_2"],
        }
    )
    figures: list[dict[str, Any]] = []
    usage: list[dict[str, Any]] = []
    verdicts: list[dict[str, Any]] = []
    scores: dict[str, dict[str, float]] = {}
    for judge, label in zip(resolved, labels, strict=True):
        start = time.perf_counter()
        result = evaluate(data_in, [metric], judge=judge)
        seconds = time.perf_counter() - start
        table = result.table
        rows = _verdict_rows(items, table, metric.name)
        summary = result.metric_summary(metric.name)
        stats = result.summary.loc[metric.name]
        usage.append(
            {
                "judge": label,
                "items": len(items),
                "errors": int(rows["error"].notna().sum()),
                "calls": _int(stats.get("calls")),
                "cached_calls": _int(stats.get("cached_calls")),
                "tokens": _int(stats.get("tokens")),
                "cost": _float(stats.get("cost")),
                "seconds": round(seconds, 3),
                "scored": summary.scored,
            }
        )
        figures += _figures(label, rows)
        verdicts += [
            {
                "judge": label,
                **{k: r[k] for k in ("item", "suite", "subset", "v1", "v2", "label", "error")},
            }
            for r in rows.to_dict("records")
        ]
        scores[label] = {
            r["item"]: item_scores([r["v1"]], [r["v2"]], [r["label"]])[0]
            for r in rows.to_dict("records")
            if r["error"] is None and isinstance(r["label"], str)
        }
    data = {
        "judges": [
            {"name": label, "model": j.model, "mock": j.is_mock}
            for j, label in zip(resolved, labels, strict=True)
        ],
        "metric": {
            "name": metric.name,
            "rubric": [c.question or c.name for c in metric.rubric.criteria]
            if metric.rubric
            else None,
            "default": metric.rubric is GENERAL_RUBRIC,
        },
        "suites": chosen,
        "n": n,
        "seed": seed,
        "figures": figures,
        "usage": usage,
        "differences": _differences(labels, scores, items, seed),
        "published": _published(items),
        "verdicts": verdicts,
    }
    return JudgeCard(data)


def _judge(judge: Judge | str | None) -> Judge:
    if judge is None:
        return get_judge()
    if isinstance(judge, str):
        return Judge(judge)
    return judge


def _names(judges: list[Judge], names: Sequence[str] | None) -> list[str]:
    if names is not None:
        if len(names) != len(judges) or len(set(names)) != len(names):
            raise ValueError("names: one distinct name per judge")
        return [str(x) for x in names]
    out: list[str] = []
    for j in judges:
        base = "MOCK judge" if j.is_mock else j.model
        label, k = base, 2
        while label in out:
            label, k = f"{base} #{k}", k + 1
        out.append(label)
    return out


def _int(value: Any) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def _float(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def _choice(raw: Any) -> str | None:
    """The overall choice one order's raw answer gave, from A's side: "A", "B" or "tie"."""
    if not isinstance(raw, str):
        return None
    try:
        data = extract_json(raw, expect=dict)
    except ValueError:
        return None
    overall = data.get("overall") if isinstance(data, dict) else None
    choice = overall.get("choice") if isinstance(overall, dict) else None
    if isinstance(choice, int | float) and not isinstance(choice, bool):
        return "A" if choice > 0 else "B" if choice < 0 else "tie"
    if not isinstance(choice, str):
        return None
    text = " ".join(choice.strip().lower().replace("_", " ").split())
    labels = [c.lower() for c in PAIRWISE_CHOICES]
    if text in labels:
        i = labels.index(text)
        return "A" if i < 2 else "tie" if i == 2 else "B"
    aliases = {"a>>b": "A", "a>b": "A", "a=b": "tie", "b>a": "B", "b>>a": "B"}
    return aliases.get(text.replace(" ", ""))


def _verdict_rows(items: pd.DataFrame, table: pd.DataFrame, name: str) -> pd.DataFrame:
    """Per item: both orders' verdicts in the dataset's numbering, or the row's error."""
    if len(table) != len(items):  # pragma: no cover - evaluate keeps every row
        raise RuntimeError("the run returned a different number of rows than it was given")
    errors = table[col(name, "error")].tolist()
    raws = table[col(name, "raw_output")].tolist()
    v1s: list[str | None] = []
    v2s: list[str | None] = []
    errs: list[str | None] = []
    for err, raw in zip(errors, raws, strict=True):
        err = None if err is None or (isinstance(err, float) and pd.isna(err)) else str(err)
        pair = list(raw) if isinstance(raw, list | tuple) else []
        c1 = _choice(pair[0]) if len(pair) == 2 else None
        c2 = _choice(pair[1]) if len(pair) == 2 else None
        if err is None and (c1 is None or c2 is None):
            err = "the judge's overall choice could not be read in both orders"
        if err is not None:
            v1s.append(None)
            v2s.append(None)
        else:  # order 1: A = output 1; order 2: A = output 2
            v1s.append({"A": "1", "B": "2", "tie": "tie"}[str(c1)])
            v2s.append({"A": "2", "B": "1", "tie": "tie"}[str(c2)])
        errs.append(err)
    out = items.drop(columns=["prompt", "output_1", "output_2"]).copy()
    out["v1"], out["v2"], out["error"] = v1s, v2s, errs
    out["len_1"] = items["output_1"].str.len()
    out["len_2"] = items["output_2"].str.len()
    out["label"] = [None if pd.isna(v) else v for v in items["label"]]
    return out


def _groups(part: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """A suite's items as ("all", every item), then one group per subset when it has several."""
    groups = [("all", part)]
    if part["subset"].nunique() > 1:
        groups += [(str(s), g) for s, g in part.groupby("subset", sort=False)]
    return groups


def _figures(judge: str, rows: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    human = _mt_bench_experts() if (rows["suite"] == "mt_bench").any() else None
    for suite_key, part in rows.groupby("suite", sort=False):
        suite = str(suite_key)
        for subset, group in _groups(part):
            f = {"judge": judge, "suite": suite, "subset": subset, **group_figures(group)}
            if suite == "mt_bench" and human is not None:
                verdicts = {
                    r["item"]: combined(r["v1"], r["v2"])
                    for r in group.to_dict("records")
                    if r["error"] is None
                }
                f["agreement"] = mt_bench_agreement(group, verdicts, human)
            out.append(f)
    return out


def _mt_bench_experts() -> pd.DataFrame:
    votes = datasets.load_mt_bench_judgments()
    experts: pd.DataFrame = votes[votes["judge_type"] == "expert"]
    return experts


def _differences(
    labels: list[str], scores: dict[str, dict[str, float]], items: pd.DataFrame, seed: int
) -> list[dict[str, Any]]:
    """Paired accuracy differences (second minus first) on items both judged, per suite and
    subset, with a seeded paired bootstrap 95% interval."""
    out: list[dict[str, Any]] = []
    groups: list[tuple[str, str, list[str]]] = []
    for suite, part in items.groupby("suite", sort=False):
        groups.append((str(suite), "all", part["item"].tolist()))
        if part["subset"].nunique() > 1:
            groups += [
                (str(suite), str(s), g["item"].tolist())
                for s, g in part.groupby("subset", sort=False)
            ]
    for a, b in itertools.combinations(labels, 2):
        for suite, subset, ids in groups:
            both = [i for i in ids if i in scores[a] and i in scores[b]]
            if not both:
                continue
            diffs = [scores[b][i] - scores[a][i] for i in both]
            low, high = paired_bootstrap(
                diffs, seed=[seed, zlib.crc32(f"{suite}/{subset}".encode())]
            )
            out.append(
                {
                    "a": a,
                    "b": b,
                    "suite": suite,
                    "subset": subset,
                    "n": len(both),
                    "difference": sum(diffs) / len(diffs),
                    "low": low,
                    "high": high,
                }
            )
    return out


def _published(items: pd.DataFrame) -> list[dict[str, Any]]:
    """Published judges' figures: on the same items from their shipped verdicts, and the
    papers' full-set figures, each labelled with its source."""
    out: list[dict[str, Any]] = []
    stats = datasets.load_llmbar_published()
    for suite_key, part in items.groupby("suite", sort=False):
        suite = str(suite_key)
        for subset, group in _groups(part):
            refs = [r for r in group["reference"].tolist() if isinstance(r, dict)]
            names = list(dict.fromkeys(k for r in refs for k in r))
            for judge in names:
                if suite == "mt_bench":
                    verdicts = {
                        str(i): v
                        for i, r in zip(group["item"], group["reference"], strict=True)
                        if (v := r.get(judge)) is not None
                    }
                    agreement = mt_bench_agreement(group, verdicts, _mt_bench_experts())
                    for key in ("with_ties", "without_ties"):
                        rate = agreement.get(key, {})
                        out.append(
                            _pub(
                                suite,
                                subset,
                                judge,
                                f"agreement_{key}",
                                rate.get("rate"),
                                rate.get("n"),
                                "published verdicts, their prompt; on these items",
                                "Zheng et al. 2023 (MT-Bench), the gpt4_pair verdicts behind Table 5",
                            )
                        )
                    for key in ("with_ties", "without_ties"):
                        rate = agreement.get(f"human_{key}", {})
                        out.append(
                            _pub(
                                suite,
                                subset,
                                "expert vs expert",
                                f"agreement_{key}",
                                rate.get("rate"),
                                rate.get("n"),
                                "people; on these items",
                                "Zheng et al. 2023 (MT-Bench), expert votes",
                            )
                        )
                    continue
                v = [r.get(judge) or [None, None] for r in group["reference"]]
                s = item_scores([x[0] for x in v], [x[1] for x in v], group["label"].tolist())
                low, high = wilson(sum(s), len(s))
                kind = "published verdicts, their prompt; on these items"
                source = _LLMBAR_SOURCE
                if suite == "pandalm":
                    kind = "released verdicts (PandaLM repo) scored here; on these items; not a paper figure"
                    source = "Wang et al. 2024 (PandaLM), data/*-testset-v1.json"
                entry = _pub(
                    suite, subset, judge, "accuracy", sum(s) / len(s), len(s), kind, source
                )
                entry.update(low=low, high=high)
                out.append(entry)
                if suite == "llmbar" and subset != "all":
                    key = f"LLMBar/{subset}|GPT-4|{_LLMBAR_CONFIGS[judge]}"
                    if key in stats:
                        value = float(stats[key]["correct_average"].rstrip("%")) / 100
                        total = len(datasets.load_llmbar(f"LLMBar/{subset}"))
                        out.append(
                            _pub(
                                suite,
                                subset,
                                judge,
                                "accuracy",
                                value,
                                total,
                                "published, their prompt; all items of the subset",
                                _LLMBAR_SOURCE,
                            )
                        )
        if suite == "mt_bench":
            for subset, judge, key, value, total in _MT_BENCH_TABLE_5:
                if subset in set(part["subset"]):
                    out.append(
                        _pub(
                            suite,
                            subset,
                            judge,
                            f"agreement_{key}",
                            value,
                            total,
                            "published, their prompt; all pairs",
                            _MT_BENCH_SOURCE,
                        )
                    )
    return out


def _pub(
    suite: str, subset: str, judge: str, figure: str, value: Any, n: Any, kind: str, source: str
) -> dict[str, Any]:
    return {
        "suite": suite,
        "subset": subset,
        "judge": judge,
        "figure": figure,
        "value": value,
        "n": n,
        "kind": kind,
        "source": source,
    }
