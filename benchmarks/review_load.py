"""The review page under load: 2 reviewers x 500 labels, posted in bursts of 10 labels by 16
concurrent connections, while a third client keeps asking for the row list. Prints labels kept
(must be 1000), the posting rate, and the page's response times during the bursts.

    python benchmarks/review_load.py
"""

from __future__ import annotations

import http.client
import json
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests._view_data import pointwise_result

from rubriclab.result import load_result
from rubriclab.review import ReviewServer, running


def request(server: ReviewServer, method: str, path: str, body: object = None) -> int:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=60)
    headers = {"X-Rubriclab-Token": server.token}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=headers)
    status = conn.getresponse().status
    conn.close()
    return status


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    path = pointwise_result(200).save(folder / "run.jsonl")
    with running(path) as server:
        stop = threading.Event()
        latencies: list[float] = []

        def watch() -> None:
            while not stop.is_set():
                t0 = time.perf_counter()
                assert request(server, "GET", "/api/rows?filter=unlabelled&reviewer=ana") == 200
                latencies.append(time.perf_counter() - t0)

        def burst(reviewer: str, start: int) -> None:
            labels = [
                {"row": i % 200, "metric": "support", "criterion": "overall", "value": "pass"}
                for i in range(start, start + 10)
            ]
            status = request(
                server, "POST", "/api/labels", {"reviewer": reviewer, "labels": labels}
            )
            assert status == 200

        watcher = threading.Thread(target=watch)
        watcher.start()
        t0 = time.perf_counter()
        with ThreadPoolExecutor(16) as pool:
            jobs = [pool.submit(burst, r, s) for s in range(0, 500, 10) for r in ("ana", "bo")]
            for job in jobs:
                job.result()
        elapsed = time.perf_counter() - t0
        stop.set()
        watcher.join()
    kept = len(load_result(path).label_history)
    lat = sorted(latencies)
    print(f"labels kept: {kept} of 1000")
    print(f"posting: {1000 / elapsed:,.0f} labels/s ({elapsed:.2f} s for 100 bursts)")
    print(
        f"row list while posting: {len(lat)} requests, median {1000 * statistics.median(lat):.0f} ms, "
        f"max {1000 * lat[-1]:.0f} ms"
    )


if __name__ == "__main__":
    main()
