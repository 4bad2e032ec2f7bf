"""Memory curve of a streamed run: peak RSS and time per row at 100k, 300k and 1M rows.

Usage: .venv/bin/python benchmarks/memory.py [--rows 100000 300000 1000000] [--chunk-rows N]
       [--formats parquet jsonl jsonl.gz] [--compact]  (output_fields="compact")
       [--in-memory 100000]  (also measure today's in-memory evaluate at that size)
       [--trace]             (tracemalloc's top allocation sites of one streamed chunk)

Each measurement runs in a fresh process so its peak RSS (ru_maxrss) is its own: the source is
a Parquet file written beforehand by another process; the run is
``rl.evaluate(path, [3-criterion analytic rubric], judge=Judge("mock"), output=out.parquet)``.
Goal (issue 16): peak RSS < 600 MB and flat in rows; per-row time <= 0.27 ms.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PY = sys.executable


def rubric() -> Any:
    import rubriclab as rl

    return rl.Rubric.analytic(
        {
            "accuracy": {"levels": {1: "wrong", 2: "partly right", 3: "right"}},
            "clarity": {"levels": {1: "unclear", 2: "clear enough", 3: "clear"}},
            "brevity": {"levels": {1: "rambling", 2: "fine", 3: "crisp"}},
            "tone": {"levels": {1: "curt", 2: "neutral", 3: "warm"}},
        },
        pass_mark=0.5,
    )


def metrics() -> list[Any]:
    """Issue 38's workload: a 4-criterion analytic rubric and a pairwise metric against a
    baseline column (both orders judged)."""
    import rubriclab as rl

    return [
        rl.metrics.RubricMetric(rubric=rubric(), name="quality"),
        rl.metrics.PairwiseRubricMetric(
            rubric=rubric(), name="vs_baseline", baseline_column="baseline"
        ),
    ]


_SENTENCE = (
    "the answer depends on the units and on what was asked so we state the assumption first "
    "then give the figure with a short reason and a note on where it might not hold"
)
_WORDS = _SENTENCE.split(" ")


def _text(i: int, salt: int, lo: int = 200, hi: int = 400) -> str:
    """A deterministic 200-400 character text for row ``i`` (realistic prompt/response sizes)."""
    n = lo + (i * 7919 + salt * 104729) % (hi - lo)
    out, k = [], i + salt
    while sum(len(w) + 1 for w in out) < n:
        out.append(_WORDS[k % len(_WORDS)])
        k = k * 31 + 7
    return " ".join(out)[:n]


def write_source(path: Path, rows: int) -> None:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    for start in range(0, rows, 100_000):
        stop = min(rows, start + 100_000)
        piece = pd.DataFrame(
            {
                "prompt": [f"Question {i}: " + _text(i, 1) for i in range(start, stop)],
                "response": [_text(i, 2) for i in range(start, stop)],
                "baseline": [_text(i, 3) for i in range(start, stop)],
            }
        )
        table = pa.Table.from_pandas(piece, preserve_index=False)
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    assert writer is not None
    writer.close()


def worker(
    source: str, rows: int, chunk_rows: int, mode: str, out_dir: str, compact: bool = False
) -> dict[str, Any]:
    import resource

    import rubriclab as rl

    judge = rl.Judge("mock")
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    cpu0 = time.process_time()
    out = Path(out_dir) / f"out.{mode}"
    if mode != "memory":
        result = rl.evaluate(
            source,
            metrics(),
            judge=judge,
            output=out,
            chunk_rows=chunk_rows or None,
            output_fields="compact" if compact else None,
        )
    else:
        import pandas as pd

        result = rl.evaluate(pd.read_parquet(source), metrics(), judge=judge)
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu0
    n = int(result.summary.loc["quality", "n"])
    assert n == rows, (n, rows)
    return {
        "output_mb": round(out.stat().st_size / 2**20, 1) if out.exists() else None,
        "mode": mode,
        "rows": rows,
        "wall_s": round(wall, 2),
        "ms_per_row": round(1000 * wall / rows, 4),
        "cpu_ms_per_row": round(1000 * cpu / rows, 4),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "import_rss_mb": round(base),
        "mean": round(float(result.summary.loc["quality", "mean"]), 4),
    }


def trace(source: str, chunk_rows: int) -> None:
    """Where one chunk's memory goes (tracemalloc's top sites while judging it)."""
    import tracemalloc

    import pandas as pd

    import rubriclab as rl

    frame = pd.read_parquet(source).iloc[:chunk_rows]
    tracemalloc.start(12)
    result = rl.evaluate(frame, metrics(), judge=rl.Judge("mock"))
    snapshot = tracemalloc.take_snapshot()
    current, peak = tracemalloc.get_traced_memory()
    print(
        f"one chunk of {chunk_rows} rows: traced now {current / 2**20:.1f} MB, "
        f"peak {peak / 2**20:.1f} MB, result table {len(result.table)} rows"
    )
    for stat in snapshot.statistics("lineno")[:12]:
        print(f"  {stat.size / 2**20:7.1f} MB  {stat.traceback[0]}")


def run(rows: int, chunk_rows: int, mode: str, tmp: Path, compact: bool = False) -> dict[str, Any]:
    source = tmp / f"source-{rows}.parquet"
    if not source.exists():
        subprocess.run([PY, __file__, "--write-source", str(source), str(rows)], check=True)
    out_dir = Path(tempfile.mkdtemp(dir=tmp))
    proc = subprocess.run(
        [
            PY,
            __file__,
            "--worker",
            str(source),
            str(rows),
            str(chunk_rows),
            mode,
            str(out_dir),
            str(int(compact)),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--write-source":
        write_source(Path(sys.argv[2]), int(sys.argv[3]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _, _, source, rows, chunk_rows, mode, out_dir, compact = sys.argv
        print(json.dumps(worker(source, int(rows), int(chunk_rows), mode, out_dir, compact == "1")))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument(
        "--chunk-rows", type=int, default=0, help="rows per chunk (0: the library's default)"
    )
    parser.add_argument("--compact", action="store_true", help='output_fields="compact"')
    parser.add_argument("--in-memory", type=int, default=0, help="also time in-memory evaluate")
    parser.add_argument("--trace", action="store_true")
    parser.add_argument(
        "--formats",
        nargs="+",
        default=["parquet", "jsonl"],
        choices=["parquet", "jsonl", "jsonl.gz"],
    )
    args = parser.parse_args()
    print(
        "streamed rl.evaluate(path, [4-criterion analytic rubric, pairwise vs a baseline column], "
        "mock judge, output=...); prompts and responses of 200-400 characters; timings on a "
        "shared, loaded machine"
    )
    peaks: dict[str, list[tuple[int, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if args.trace:
            source = tmp / "source-trace.parquet"
            write_source(source, args.chunk_rows or 2000)
            trace(str(source), args.chunk_rows or 2000)
        if args.in_memory:
            r = run(args.in_memory, args.chunk_rows, "memory", tmp)
            print(
                f"in memory  {r['rows']:>9,} rows: peak RSS {r['peak_rss_mb']:>5} MB, "
                f"{r['ms_per_row']:.3f} ms/row wall, {r['cpu_ms_per_row']:.3f} ms/row CPU"
            )
        print("| rows | output | peak RSS | output size | ms/row |")
        print("|---|---|---|---|---|")
        for fmt in args.formats:
            for rows in args.rows:
                r = run(rows, args.chunk_rows, fmt, tmp, args.compact)
                peaks.setdefault(fmt, []).append((rows, r["peak_rss_mb"]))
                per_row = 1024 * r["output_mb"] / rows
                print(
                    f"| {rows:,} | {fmt}{' compact' if args.compact else ''} | {r['peak_rss_mb']} MB (imports {r['import_rss_mb']}) "
                    f"| {r['output_mb']} MB ({per_row:.2f} KB a row) | {r['ms_per_row']:.3f} |",
                    flush=True,
                )
    for fmt, points in peaks.items():
        if len(points) >= 2:
            (r0, m0), (r1, m1) = points[-2], points[-1]
            slope = (m1 - m0) * 2**20 / (r1 - r0)
            print(f"{fmt}: slope {r0:,} -> {r1:,} rows: {slope:.1f} bytes a row")
    print("goal (issue 38): peak RSS <= 500 MB at 1M rows; slope 300k -> 1M under 20 bytes a row")


if __name__ == "__main__":
    main()
