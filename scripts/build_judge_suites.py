#!/usr/bin/env python3
"""Rebuild the judge-card suites in ``src/rubriclab/datasets/`` from the shared data folder.

Run once by a maintainer (``python3 scripts/build_judge_suites.py ../shared/data``); the package
ships the gzip files it writes, and nothing is downloaded at run time. Each suite keeps only the
rows and fields the judge card reads (see each folder's README for what was dropped).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

SUBSETS = (
    "LLMBar/Natural",
    "LLMBar/Adversarial/Neighbor",
    "LLMBar/Adversarial/GPTInst",
    "LLMBar/Adversarial/GPTOut",
    "LLMBar/Adversarial/Manual",
)
#: GPT-4 prompting strategies kept: the paper's "Vanilla" and "Rules+Metrics+Reference"
CONFIGS = {"Vanilla_NoRules": "gpt4_vanilla", "Metrics_Reference": "gpt4_rules_metrics_reference"}


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    with gzip.GzipFile(path, "wb", mtime=0) as out:  # mtime=0: the same bytes every rebuild
        out.write(text.encode("utf-8"))


def llmbar(src: Path, dst: Path) -> None:
    pairs = [r for r in read(src / "pairs.jsonl") if r["subset"] in SUBSETS]
    verdicts: dict[tuple[str, int, str], list[str]] = {}
    for v in read(src / "gpt4_verdicts.jsonl"):
        if v["config"] in CONFIGS:
            key = (v["subset"], v["idx"], CONFIGS[v["config"]])
            verdicts[key] = [v["winner_original_order"], v["winner_swapped_order"]]
    rows = []
    for p in pairs:
        row = {k: p[k] for k in ("subset", "idx", "input", "output_1", "output_2", "label")}
        for name in CONFIGS.values():
            row[name] = verdicts[(p["subset"], p["idx"], name)]
        rows.append(row)
    write(dst / "llmbar" / "pairs.jsonl.gz", rows)
    stats = json.loads((src / "gpt4_published_statistics.json").read_text(encoding="utf-8"))
    kept = {
        k: {m: v[m] for m in ("correct_average", "equal")}
        for k, v in stats.items()
        if k.split("|")[0] in SUBSETS and k.split("|")[2] in CONFIGS
    }
    (dst / "llmbar" / "gpt4_published_statistics.json").write_text(
        json.dumps(kept, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )


def pandalm(src: Path, dst: Path) -> None:
    judged = {r["idx"]: r for r in read(src / "judge_outputs.jsonl")}
    rows = []
    for r in read(src / "testset.jsonl"):
        row = dict(r)
        row["gpt-3.5-turbo"] = judged[r["idx"]]["gpt-3.5-turbo"]["result"]
        row["pandalm-7b"] = judged[r["idx"]]["pandalm-7b"]["result"]
        rows.append(row)
    write(dst / "pandalm" / "testset.jsonl.gz", rows)


def hhh(src: Path, dst: Path) -> None:
    write(dst / "hhh" / "hhh_alignment.jsonl.gz", read(src / "hhh_alignment.jsonl"))


def main() -> None:
    shared = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data")
    dst = Path(__file__).resolve().parent.parent / "src" / "rubriclab" / "datasets"
    llmbar(shared / "llmbar", dst)
    pandalm(shared / "pandalm_testset", dst)
    hhh(shared / "hhh_alignment_rubric", dst)


if __name__ == "__main__":
    main()
