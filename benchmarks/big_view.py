"""ResultTable over a 1,000,000-row Parquet result file: time to first rows and peak memory.

Writes a result file laid out as a streamed run writes it (one row group per 10,000-row chunk,
the header in the schema metadata), then, in a fresh process, opens it with ``open_result``,
builds the view and asks for its first page, a page deep in the file, and the first page
sorted by score. Prints each time, the process's peak RSS, and whether the table was loaded.
Goal (issue 38, point 4): first rows < 1 s, no full-table load.

    .venv/bin/python benchmarks/big_view.py [--rows 1000000] [--keep FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHUNK = 10_000


def write_file(path: Path, rows: int) -> None:
    """Synthetic judged rows (not judged: 1M judge calls would take hours), chunk by chunk."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from rubriclab.result import FORMAT_VERSION, MetricInfo

    metric = MetricInfo("quality", "pointwise")
    columns = ["id", "prompt", "response", "quality/score", "quality/verdict", "quality/passed"]
    columns += ["quality/criteria", "quality/rationale", "quality/error"]
    all_scores: list[np.ndarray] = []
    writer = None
    for start in range(0, rows, CHUNK):
        i = np.arange(start, min(start + CHUNK, rows))
        score = ((i * 37) % 101) / 100.0
        failed = i % 997 == 0
        table = pa.table(
            {
                "id": [f"case-{k:07d}" for k in i],
                "prompt": [f"Question {k}: summarise the refund policy for order {k}." for k in i],
                "response": [f"Answer {k}. Refunds are accepted within 30 days." for k in i],
                "quality/score": pa.array(np.where(failed, np.nan, score), from_pandas=True),
                "quality/verdict": [
                    None if f else ("pass" if s >= 0.7 else "fail")
                    for s, f in zip(score, failed, strict=True)
                ],
                "quality/passed": [
                    None if f else bool(s >= 0.7) for s, f in zip(score, failed, strict=True)
                ],
                "quality/criteria": [
                    None if f else json.dumps([{"name": "accuracy", "level": int(k % 3) + 1}])
                    for k, f in zip(i, failed, strict=True)
                ],
                "quality/rationale": [f"The answer to case {k} states the policy." for k in i],
                "quality/error": [("judge timed out" if f else None) for f in failed],
            }
        )
        all_scores.append(np.where(failed, np.nan, score))
        if writer is None:
            writer = pq.ParquetWriter(path.with_suffix(".tmp"), table.schema)
        writer.write_table(table)
    assert writer is not None
    writer.close()
    from rubriclab.scoring import summarize

    scores = np.concatenate(all_scores)
    passed = [None if np.isnan(s) else bool(s >= 0.7) for s in scores]
    running = summarize([None if np.isnan(s) else float(s) for s in scores], passed=passed)
    header = {
        "version": FORMAT_VERSION,
        "metrics": [metric.to_dict()],
        "judge": "synthetic rows (benchmark)",
        "is_mock": False,
        "stats": {},
        "meta": {},
        "columns": columns,
        "rows": rows,
        "summary": {"quality": running.model_dump()},
        "json_columns": ["quality/criteria"],
    }
    # the header goes in the schema metadata: rewrite row group by row group, never whole
    source = pq.ParquetFile(path.with_suffix(".tmp"))
    schema = source.schema_arrow.with_metadata({b"rubriclab": json.dumps(header).encode()})
    with pq.ParquetWriter(path, schema) as out:
        for g in range(source.num_row_groups):
            out.write_table(source.read_row_group(g).replace_schema_metadata(schema.metadata))
    path.with_suffix(".tmp").unlink()


MEASURE = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from rubriclab.result import open_result
from rubriclab.widgets import ResultTable
t_import = time.perf_counter()
opened = open_result(sys.argv[1])
view = ResultTable(opened)
first = view.page(0, 200)
t_first = time.perf_counter()
deep = view.page(opened.row_count - 200, opened.row_count)
t_deep = time.perf_counter()
ranked = view.page(0, 200, {"sort": {"key": "quality/score", "desc": True}})
t_sort = time.perf_counter()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
assert len(first["rows"]) == 200 and first["rows"][0][0] == 0
assert deep["rows"][-1][0] == opened.row_count - 1
print(json.dumps({
    "import_s": t_import - t0,
    "first_rows_s": t_first - t_import,
    "deep_page_s": t_deep - t_first,
    "sorted_page_s": t_sort - t_deep,
    "peak_rss_mb": rss,
    "loaded": opened.loaded,
    "rows": opened.row_count,
}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="write (or reuse) the result file here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "big.parquet"
        if not path.exists():
            started = time.perf_counter()
            write_file(path, args.rows)
            print(
                f"wrote {path} ({path.stat().st_size / 1e6:.0f} MB) in "
                f"{time.perf_counter() - started:.1f} s"
            )
        out = subprocess.run(
            [sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True, check=True
        )
        m = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"rows in the file          {m['rows']:>12,}")
    print(f"import rubriclab          {m['import_s']:>10.2f} s")
    print(
        f"first 200 rows            {m['first_rows_s']:>10.2f} s   goal < 1 s "
        f"({'met' if m['first_rows_s'] < 1 else 'NOT met'})"
    )
    print(f"last 200 rows             {m['deep_page_s']:>10.2f} s")
    print(f"first 200 sorted by score {m['sorted_page_s']:>10.2f} s   (reads 5 small columns)")
    print(f"peak RSS                  {m['peak_rss_mb']:>10.0f} MB")
    print(
        f"table loaded              {m['loaded']!s:>12}   goal False "
        f"({'met' if not m['loaded'] else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
