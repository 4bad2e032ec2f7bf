"""Memory curve of a streamed run: peak RSS and time per row at 100k, 300k and 1M rows.

Usage: .venv/bin/python benchmarks/memory.py [--rows 100000 300000 1000000] [--chunk-rows 10000]
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
        },
        pass_mark=0.5,
    )


def write_source(path: Path, rows: int) -> None:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    for start in range(0, rows, 100_000):
        stop = min(rows, start + 100_000)
        piece = pd.DataFrame(
            {
                "prompt": [
                    f"Question {i}: what is {i} + {i}? Answer briefly." for i in range(start, stop)
                ],
                "response": [f"It is {2 * i}." for i in range(start, stop)],
            }
        )
        table = pa.Table.from_pandas(piece, preserve_index=False)
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    assert writer is not None
    writer.close()


def worker(source: str, rows: int, chunk_rows: int, mode: str, out_dir: str) -> dict[str, Any]:
    import resource

    import rubriclab as rl

    metric = rl.metrics.RubricMetric(rubric=rubric(), name="quality")
    judge = rl.Judge("mock")
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.perf_counter()
    cpu0 = time.process_time()
    if mode == "stream":
        result = rl.evaluate(
            source,
            [metric],
            judge=judge,
            output=Path(out_dir) / "out.parquet",
            chunk_rows=chunk_rows,
        )
    else:
        import pandas as pd

        result = rl.evaluate(pd.read_parquet(source), [metric], judge=judge)
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu0
    n = int(result.summary.loc["quality", "n"])
    assert n == rows, (n, rows)
    return {
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

    metric = rl.metrics.RubricMetric(rubric=rubric(), name="quality")
    frame = pd.read_parquet(source).iloc[:chunk_rows]
    tracemalloc.start(12)
    result = rl.evaluate(frame, [metric], judge=rl.Judge("mock"))
    snapshot = tracemalloc.take_snapshot()
    current, peak = tracemalloc.get_traced_memory()
    print(
        f"one chunk of {chunk_rows} rows: traced now {current / 2**20:.1f} MB, "
        f"peak {peak / 2**20:.1f} MB, result table {len(result.table)} rows"
    )
    for stat in snapshot.statistics("lineno")[:12]:
        print(f"  {stat.size / 2**20:7.1f} MB  {stat.traceback[0]}")


def run(rows: int, chunk_rows: int, mode: str, tmp: Path) -> dict[str, Any]:
    source = tmp / f"source-{rows}.parquet"
    if not source.exists():
        subprocess.run([PY, __file__, "--write-source", str(source), str(rows)], check=True)
    out_dir = Path(tempfile.mkdtemp(dir=tmp))
    proc = subprocess.run(
        [PY, __file__, "--worker", str(source), str(rows), str(chunk_rows), mode, str(out_dir)],
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
        _, _, source, rows, chunk_rows, mode, out_dir = sys.argv
        print(json.dumps(worker(source, int(rows), int(chunk_rows), mode, out_dir)))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--chunk-rows", type=int, default=10_000)
    parser.add_argument("--in-memory", type=int, default=0, help="also time in-memory evaluate")
    parser.add_argument("--trace", action="store_true")
    args = parser.parse_args()
    print(
        "streamed rl.evaluate(path, 3-criterion rubric, mock judge, output=...parquet); "
        "timings on a shared, loaded machine"
    )
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if args.trace:
            source = tmp / "source-trace.parquet"
            write_source(source, args.chunk_rows)
            trace(str(source), args.chunk_rows)
        if args.in_memory:
            r = run(args.in_memory, args.chunk_rows, "memory", tmp)
            print(
                f"in memory  {r['rows']:>9,} rows: peak RSS {r['peak_rss_mb']:>5} MB, "
                f"{r['ms_per_row']:.3f} ms/row wall, {r['cpu_ms_per_row']:.3f} ms/row CPU"
            )
        for rows in args.rows:
            r = run(rows, args.chunk_rows, "stream", tmp)
            print(
                f"streamed   {r['rows']:>9,} rows: peak RSS {r['peak_rss_mb']:>5} MB "
                f"(after imports {r['import_rss_mb']} MB), {r['ms_per_row']:.3f} ms/row wall, "
                f"{r['cpu_ms_per_row']:.3f} ms/row CPU, mean score {r['mean']}"
            )
        print("goal: peak RSS < 600 MB, flat in rows; <= 0.27 ms/row")


if __name__ == "__main__":
    main()
