"""Batch API throughput: requests per second through ``Judge(..., batch=True)`` end to end.

Usage: .venv/bin/python benchmarks/batch.py [--requests 20000 60000] [--max-requests 50000]

The fake batch server (rubriclab.testing.batch_server, in this process's thread) finishes a job
as soon as it is created, so what is measured is the client's side of a batch run: writing the
JSONL lines, upload, create, polls, download, mapping lines back by custom_id, the cache writes,
and the server's own line processing (it shares this process: the figure is a floor on what the
client can handle, not a provider's turnaround, which is minutes to hours). Above 50,000
requests the run is split into several files. Timings are on a shared, loaded machine.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, nargs="+", default=[20_000, 60_000])
    parser.add_argument("--max-requests", type=int, default=50_000)
    args = parser.parse_args()

    import rubriclab as rl
    from rubriclab.judges.batch import BatchOptions
    from rubriclab.testing.batch_server import FakeBatchServer

    print("Judge(url, batch=True).map(N prompts) over the fake /v1/files + /v1/batches server")
    for n in args.requests:
        with tempfile.TemporaryDirectory() as tmp, FakeBatchServer() as server:
            judge = rl.Judge(
                server.url,
                model="gpt-4o-mini",
                batch=True,
                batch_poll_interval=0.05,
                cache=Path(tmp) / "cache.sqlite3",
            )
            judge.batcher.options = BatchOptions(poll_interval=0.05, max_requests=args.max_requests)
            prompts = [f"Rate answer {i}: the capital of France is Paris." for i in range(n)]
            start = time.perf_counter()
            cpu = time.process_time()
            replies = judge.map(prompts, progress=False)
            wall = time.perf_counter() - start
            cpu = time.process_time() - cpu
            ok = sum(r.ok for r in replies)
            cost = sum(r.cost or 0.0 for r in replies)
            start = time.perf_counter()
            judge.map(prompts, progress=False)  # again: every answer from the cache
            cached = time.perf_counter() - start
            print(
                f"{n:>7,} requests: {len(server.batches)} batch(es), {ok:,} answered, "
                f"{wall:.2f} s wall ({n / wall:,.0f} req/s), {1000 * cpu / n:.3f} ms CPU/request "
                f"(client + in-process server), batch-price cost ${cost:.4f}; "
                f"re-run from cache {cached:.2f} s"
            )


if __name__ == "__main__":
    main()
