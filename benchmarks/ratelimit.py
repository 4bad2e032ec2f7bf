"""The engine against rate limits and faults (issue 13): does it settle at a limit, shrug off
noise, and keep a faulty run close to a clean one?

Usage: .venv/bin/python benchmarks/ratelimit.py [--quick] [--transport aiohttp|httpx]
       PYTHONPATH=/work/main/src .venv/bin/python benchmarks/ratelimit.py --server-src src
(the second form measures another checkout's engine against this checkout's fake server)

The fake judge runs in its own process (``python -m rubriclab.testing``), so its CPU is not
the client's and the client's event loop is not the server's. Scenarios:
  bucket      a token-bucket limit of 100 requests/s (burst 10, answers take 50 ms) that
              sends x-ratelimit-* and retry-after-ms; 800 calls at concurrency 32. Goal:
              >= 0.90 of the limit achieved (measured at the server, first to last answer)
              with <= 15% of requests refused.
  bucket-bare the same limit without rate headers (only Retry-After, and OpenAI's precise
              retry-after-ms): the same goal, met by learning the refill rate from
              successive refusals (issue 25).
  bucket-bare-1s  the same, Retry-After in whole seconds only ("1" when the next token is
              10 ms away): the token's time cannot be read from it, so the rate is read from
              the sends let through between refusals (issue 25's leftover). The same goal
              (before: 0.38-0.40 of the limit with 19.6-21.5% refused; with the reading: 0.88
              with 9.3% at load 10, 0.87-0.94 at load 1-2: a refusal in the run's last
              second left its tail waiting a whole second; with no creep in the last 2 s of
              calls: 0.96-0.98 with 7.7-9.0% at load 0.5-1.2). At load 10-24 on this
              shared 2-core machine the figure swings from run to run: run it a few times.
  noise       5% random 429s with Retry-After: 1 on an otherwise idle server, 1,000 calls,
              vs the same run clean. Goal: <= +1.6 s. A call refused twice must wait 2 s,
              which no engine can avoid: the script prints how many there were.
  mix         the issue's fault mix: 1,200 calls, 20% 429 (Retry-After 1), 5% 500, 2% hangs,
              5% malformed, 1% connection resets; timeout 2 s, 8 retries; vs clean.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from workload import FakeJudgeProcess


def run(
    server: FakeJudgeProcess, n: int, transport: str, **judge: Any
) -> tuple[float, list[Any], Any]:
    from rubriclab.judges import Judge

    options: dict[str, Any] = {"max_concurrency": 32, "cache": False, "transport": transport}
    options.update(judge)
    j = Judge(server.url, model="bench", **options)
    j.map(["warm-up"], progress=False)  # connection pool and imports, outside the timing
    questions = [f"question {i}: grade this answer" for i in range(n)]
    start = time.perf_counter()
    replies = j.map(questions, progress=False)
    return time.perf_counter() - start, replies, j


def scenario(
    name: str, flags: list[str], n: int, src: str | None, transport: str, **judge: Any
) -> tuple[float, list[Any], dict[str, Any]]:
    server = FakeJudgeProcess(*flags, src=src)
    try:
        wall, replies, j = run(server, n, transport, **judge)
        stats = server.stats()
    finally:
        server.close()
    failed = sum(1 for r in replies if r.error is not None)
    refused = stats["statuses"].get("429", 0)
    print(
        f"  {name:<12} {n} calls in {wall:6.2f} s; server saw {stats['calls']} requests, "
        f"{refused} refused (429); {failed} calls ended as errors; "
        f"limit cut {j.last_run.throttles} times, peak {stats['peak_in_flight']} in flight",
        flush=True,
    )
    return wall, replies, stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs")
    parser.add_argument("--transport", default="auto", help="auto, httpx or aiohttp")
    parser.add_argument("--server-src", help="src folder of the fake server to run")
    parser.add_argument("--only", help="comma-separated scenarios: bucket,bare,bare1s,noise,mix")
    args = parser.parse_args()
    src = args.server_src
    only = set((args.only or "bucket,bare,bare1s,noise,mix").split(","))
    import rubriclab

    print(f"engine: {Path(rubriclab.__file__).parent}; load average {os.getloadavg()[0]:.1f}")
    print("(timings are wall-clock on this machine: read them against its load)\n")
    t = args.transport
    # a rate this loaded 2-core machine's client can exceed with room to spare (measured
    # clean: ~250 calls/s), so the figure is about the pacing, not about the client's CPU
    rate = 50.0 if args.quick else 100.0
    n_bucket = int(rate * (4 if args.quick else 8))

    if only & {"bucket", "bare", "bare1s"}:
        print(f"token bucket: {rate:g} requests/s, burst {rate / 10:g}, 50 ms latency")
        limit = [
            *("--rate-limit", f"{rate:g}", "--rate-limit-burst", f"{rate / 10:g}"),
            *("--latency", "0.05"),
        ]
        kinds = [("bucket", limit)] if "bucket" in only else []
        if "bare" in only:
            kinds.append(("bucket-bare", [*limit, "--no-rate-headers"]))
        if "bare1s" in only:
            kinds.append(("bucket-bare-1s", [*limit, "--no-rate-headers", "--no-retry-after-ms"]))
        for name, flags in kinds:
            wall, replies, stats = scenario(name, flags, n_bucket, src, t, max_retries=20)
            ok = sum(1 for r in replies if r.ok)
            # the rate the limiter let through, from its first answer to its last (the burst
            # is free and the client's start-up is not the limiter's business)
            span = stats["answered_until"] - stats["answered_from"]
            achieved = (ok - 1 - rate / 10) / span / rate
            refused = stats["statuses"].get("429", 0) / max(1, stats["calls"])
            goal = achieved >= 0.90 and refused <= 0.15
            mark = "MET" if goal else "NOT MET"
            print(
                f"  {name:<14} achieved {achieved:.2f} of the limit at the server "
                f"({ok / wall / rate:.2f} counting the client's start-up), {refused:.1%} of "
                f"requests refused; goal >= 0.90 with <= 15% refused: {mark}\n"
            )

    if "noise" in only:
        n = 1000
        print("random 429s: 5% with Retry-After: 1, idle server")
        clean, _, _ = scenario("clean", [], n, src, t)
        noisy, replies, stats = scenario(
            "noisy", ["--rate-429", "0.05", "--retry-after", "1"], n, src, t, max_retries=8
        )
        twice = sum(1 for r in replies if r.attempts >= 3)
        print(
            f"  cost of the noise: +{noisy - clean:.2f} s (goal <= +1.6 s: "
            f"{'MET' if noisy - clean <= 1.6 else 'NOT MET'}); {twice} call(s) were refused "
            "two or more times and had to wait >= 2 s\n"
        )

    if "mix" in only:
        n = 1200
        print("fault mix: 20% 429 (Retry-After 1), 5% 500, 2% hangs, 5% malformed, 1% resets")
        clean, _, _ = scenario("clean", [], n, src, t, timeout=2.0)
        flags = [
            "--rate-429", "0.2", "--retry-after", "1", "--rate-500", "0.05",
            "--rate-hang", "0.02", "--rate-malformed", "0.05", "--rate-reset", "0.01",
        ]  # fmt: skip
        mixed, replies, _ = scenario("mix", flags, n, src, t, timeout=2.0, max_retries=8)
        lost = sum(1 for r in replies if r.error is not None)
        print(f"  fault mix: {mixed:.2f} s vs {clean:.2f} s clean; {lost} rows with errors\n")


if __name__ == "__main__":
    main()
