"""How close a run gets to its ideal (N x latency / concurrency), and what it costs the client.

Usage: .venv/bin/python benchmarks/throughput.py [--repeats 3] [--quick]

The fake judge runs in its own process (so its CPU is not counted as the client's). Each
measurement runs in a fresh client process, so peak RSS and GC state are its own:
  floor   a bare httpx.AsyncClient loop with a semaphore (no rubriclab), per transport
  engine  rubriclab's Judge.map with its defaults (memory cache, progress bar), per transport
For (a) N=500, concurrency 32, latency 200 ms and (b) N=2000, concurrency 64, latency 20 ms it
prints wall, ideal, wall/ideal, wall/floor, client CPU ms per call, peak in flight (seen by the
server) and peak RSS. Then a cached re-run of 10,000 calls from an SQLite cache file.
Targets (issue 9): wall/floor <= 1.10 and CPU/call <= 1.25 x floor; peak == concurrency;
cached re-run of 10,000 calls < 2 s.

Then (c) "closer to the wire" (issue 16): 2,000 rows of a 6-question checklist, 20 ms judge, 64
in flight, each variant sending the very requests ``evaluate`` sends (recorded once first):
  raw aiohttp  one aiohttp.ClientSession + a semaphore, no rubriclab: the floor
  judge.map    Judge.map on those requests (engine, cache, progress bar: the defaults)
  evaluate     rl.evaluate(df, [RubricMetric(checklist)]): render, call, parse, score, table
  file         the same evaluate with cache=PATH (answers kept in SQLite, as for a resume)
It prints wall, process CPU ms per call, both as ratios to the floor, and, from the server's
clock, how long after the call the first request arrived and how long after the last answer
left the call returned. Targets: evaluate wall <= 1.25 x floor, CPU/call <= 1.5 x floor, first
request <= 50 ms after the call. Each client process runs twice on new rows: "cold" is its
first run (imports, template compile, connections: a kernel's first evaluate), "warm" the
next one (every later evaluate); the targets are read on the warm pass, the cold one is
printed beside it. ``--wire`` runs (c) only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workload import PY, QUESTIONS, FakeJudgeProcess, meeting_frame, reset_server, server_stats

SETTINGS = (("a", 500, 32, 0.200), ("b", 2000, 64, 0.020))
VARIANTS = ("floor:httpx", "floor:aiohttp", "engine:httpx", "engine:aiohttp")


def messages(i: int) -> list[dict[str, str]]:
    """A realistic judge prompt: a system line and ~80 words of user content, unique per call."""
    return [
        {"role": "system", "content": "You are a strict grader. Answer in JSON."},
        {
            "role": "user",
            "content": (
                f"Case {i}. Question: summarise the meeting notes. Response: The deadline for "
                "code completion is August 15th; marketing, led by Chloe, starts on August 1st; "
                "every team sends weekly progress reports. Criteria: accuracy (1-4), "
                "completeness (1-4), concision (1-4). For each criterion give the level, a short "
                "quote as evidence and one sentence of rationale."
            ),
        },
    ]


# ------------------------------------------------------------------------------------------
# worker side: one measurement in a fresh process, printed as one JSON line
# ------------------------------------------------------------------------------------------


def _transport(kind: str, concurrency: int) -> Any:
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    if kind == "aiohttp":
        from httpx_aiohttp import AiohttpTransport

        return AiohttpTransport(limits=limits)
    return httpx.AsyncHTTPTransport(limits=limits)


async def _floor(url: str, n: int, concurrency: int, kind: str) -> int:
    import httpx

    sem = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(transport=_transport(kind, concurrency), timeout=60) as client:

        async def one(i: int) -> str:
            async with sem:
                response = await client.post(
                    f"{url}/chat/completions",
                    json={"model": "m", "messages": messages(i), "temperature": 0},
                )
                response.raise_for_status()
                text: str = response.json()["choices"][0]["message"]["content"]
                return text

        answers = await asyncio.gather(*(one(i) for i in range(n)))
    return sum(1 for a in answers if a)


# -- (c) closer to the wire ---------------------------------------------------------------------

WIRE = (2000, 64, 0.020)
PASSES = ("cold", "warm")


def wire_evaluate(
    url: str, rows: int, concurrency: int, cache: str | None = None
) -> tuple[Any, Any]:
    """The judge and metric of the evaluate variant (built before the clock starts); ``cache``:
    a SQLite file instead of the judge's default memory cache."""
    import rubriclab as rl

    judge = rl.Judge(url, model="m", max_concurrency=concurrency, cache=cache)
    metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(QUESTIONS))
    return judge, metric


def record_bodies(rows: int, concurrency: int, path: str) -> None:
    """Run evaluate once against an in-process fake judge and save the bodies it sent."""
    import rubriclab as rl
    from rubriclab.testing import FakeJudgeServer

    passes = []
    for k in range(len(PASSES)):
        with FakeJudgeServer() as server, contextlib.redirect_stderr(io.StringIO()):
            judge, metric = wire_evaluate(server.url, rows, concurrency)
            rl.evaluate(meeting_frame(rows, k * rows), [metric], judge=judge)
            passes.append(list(server.requests))
    Path(path).write_text(json.dumps(passes))


async def _raw_aiohttp(url: str, bodies: list[dict[str, Any]], concurrency: int) -> int:
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(body: dict[str, Any]) -> str:
            async with sem, session.post(f"{url}/chat/completions", json=body) as response:
                response.raise_for_status()
                text: str = (await response.json())["choices"][0]["message"]["content"]
                return text

        answers = await asyncio.gather(*(one(b) for b in bodies))
    return sum(1 for a in answers if a)


def wire_worker(args: argparse.Namespace) -> None:
    """Each pass judges new rows (no cache hit) with the same client: the first pass pays the
    process's first use (imports, template compile, connections), the second is steady state."""
    variant = args.worker.split(":")[1]
    rows, concurrency = args.n, args.c
    passes: list[list[dict[str, Any]]] = json.loads(Path(args.bodies).read_text())
    root = args.url.rsplit("/v1", 1)[0]
    judge: Any = None
    if variant != "raw":
        import pandas  # noqa: F401  # a notebook that evaluates has pandas loaded

        from rubriclab.judges import Request

        cache = str(Path(args.bodies).with_name(f"cache-{os.getpid()}.sqlite3"))
        judge, metric = wire_evaluate(
            args.url, rows, concurrency, cache if variant == "file" else None
        )
    out = []
    for k, bodies in enumerate(passes):
        frame = meeting_frame(rows, k * rows) if variant in ("evaluate", "file") else None
        requests = None
        if variant == "map":
            requests = [Request(b["messages"], b.get("response_format")) for b in bodies]
        reset_server(root)
        gc.collect()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        if variant == "raw":
            ok = asyncio.run(_raw_aiohttp(args.url, bodies, concurrency))
        elif variant == "map":
            ok = sum(1 for r in judge.map(requests) if r.ok)
        else:
            import rubriclab as rl

            result = rl.evaluate(frame, [metric], judge=judge)
            ok = int(result.table["chk/error"].isna().sum())
        wall1, cpu1 = time.perf_counter(), time.process_time()
        stats = server_stats(root)
        out.append(
            {
                "wall": wall1 - wall0,
                "cpu": cpu1 - cpu0,
                "ok": ok,
                "first": stats["answered_from"] - wall0,
                "tail": wall1 - stats["finished_until"],
                "peak": stats["peak_in_flight"],
            }
        )
    print(json.dumps(out))


@dataclass
class Wire:
    wall: float
    cpu: float
    ok: int
    first: float
    """When the first request reached the server, seconds after the call."""
    tail: float
    peak: int


def measure_wire(server: FakeJudgeProcess, variant: str, bodies: str) -> list[Wire]:
    """One fresh client process: its passes, first (cold) to last (warm)."""
    n, c, _ = WIRE
    cmd = [PY, __file__, "--worker", f"wire:{variant}", "--url", server.url]
    cmd += ["--n", str(n), "--c", str(c), "--bodies", bodies]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return [Wire(**p) for p in data]


def drive_wire(repeats: int) -> None:
    n, c, latency = WIRE
    variants = ("raw", "map", "evaluate", "file")
    with tempfile.TemporaryDirectory() as tmp:
        bodies = str(Path(tmp) / "bodies.json")
        record_bodies(n, c, bodies)
        server = FakeJudgeProcess("--latency", str(latency))
        try:
            runs: list[dict[str, list[Wire]]] = []
            for _ in range(repeats):  # interleaved, so the machine's drift hits all alike
                runs.append({v: measure_wire(server, v, bodies) for v in variants})
        finally:
            server.close()
    print(
        f"\n(c) closer to the wire: evaluate's {n} requests (6-question checklist), "
        f"latency {latency * 1000:.0f} ms, {c} in flight; ideal {n * latency / c:.3f} s; each "
        "client process judges new rows twice: 'cold' is its first run (imports, template "
        "compile, connections), 'warm' the next; 'file' is evaluate with cache=PATH (SQLite) "
        "instead of the default memory cache"
    )
    print(
        f"{'run':<5}{'pass':<6}{'variant':<10}{'wall s':>8}{'w/floor':>8}{'cpu ms/call':>12}"
        f"{'cpu/floor':>10}{'first ms':>9}{'tail ms':>8}{'peak':>6}{'ok':>6}"
    )
    for k, run in enumerate(runs, 1):
        for p, name in enumerate(PASSES):
            floor = run["raw"][p]
            for v in variants:
                m = run[v][p]
                print(
                    f"{k:<5}{name:<6}{v:<10}{m.wall:>8.3f}{m.wall / floor.wall:>8.2f}"
                    f"{m.cpu / n * 1000:>12.3f}{m.cpu / floor.cpu:>10.2f}{m.first * 1000:>9.1f}"
                    f"{m.tail * 1000:>8.1f}{m.peak:>6}{m.ok:>6}"
                )
    for p, name in enumerate(PASSES):
        for v in variants[1:]:
            walls = [run[v][p].wall / run["raw"][p].wall for run in runs]
            cpus = [run[v][p].cpu / run["raw"][p].cpu for run in runs]
            firsts = [run[v][p].first * 1000 for run in runs]
            floors = [run["raw"][p].first * 1000 for run in runs]
            print(
                f"{name} {v}: wall {_spread(walls)} x floor, CPU/call {_spread(cpus)} x, first "
                f"request {_spread(firsts, '.0f')} ms after the call (floor {_spread(floors, '.0f')})"
            )
    print("targets (warm): evaluate wall <= 1.25x, CPU/call <= 1.5x, first request <= 50 ms")
    # the machine's speed drifts between repeats, so a target is read on the median
    warm = PASSES.index("warm")
    got = {
        "wall": statistics.median(r["evaluate"][warm].wall / r["raw"][warm].wall for r in runs),
        "CPU/call": statistics.median(r["evaluate"][warm].cpu / r["raw"][warm].cpu for r in runs),
        "first request": statistics.median(r["evaluate"][warm].first * 1000 for r in runs),
    }
    goals = {"wall": 1.25, "CPU/call": 1.5, "first request": 50.0}
    shown = {k: f"{v:.0f} ms" if k == "first request" else f"{v:.2f}x" for k, v in got.items()}
    verdicts = [f"{k} {shown[k]} ({'met' if got[k] <= goals[k] else 'NOT met'})" for k in goals]
    print("warm evaluate, medians: " + "; ".join(verdicts))


def _spread(values: list[float], fmt: str = ".2f") -> str:
    """``min-max (median m)``: the range over the repeats and its middle."""
    return f"{min(values):{fmt}}-{max(values):{fmt}} (median {statistics.median(values):{fmt}})"


def worker(args: argparse.Namespace) -> None:
    if args.worker.startswith("wire:"):
        wire_worker(args)
        return
    kind, transport = args.worker.split(":")
    if kind != "floor":
        import pandas  # noqa: F401  # a notebook that evaluates has pandas loaded

        from rubriclab.judges import Judge
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if kind == "floor":
        ok = asyncio.run(_floor(args.url, args.n, args.c, transport))
    elif kind == "engine":
        judge = Judge(args.url, model="m", max_concurrency=args.c, transport=transport)
        replies = judge.map([messages(i) for i in range(args.n)])
        ok = sum(1 for r in replies if r.ok)
    elif kind == "cached":
        judge = Judge(args.url, model="m", max_concurrency=args.c, cache=args.cache)
        replies = judge.map([messages(i) for i in range(args.n)], progress=False)
        ok = sum(1 for r in replies if r.ok and r.cached)
    else:
        raise SystemExit(f"unknown worker {args.worker}")
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"wall": wall, "cpu": cpu, "ok": ok, "rss_mb": rss_mb}))


# ------------------------------------------------------------------------------------------
# driver side
# ------------------------------------------------------------------------------------------


@dataclass
class Measure:
    wall: float
    cpu: float
    ok: int
    rss_mb: float
    peak: int
    calls: int


def measure(server: FakeJudgeProcess, variant: str, n: int, c: int, **extra: str) -> Measure:
    server.reset()
    cmd = [PY, __file__, "--worker", variant, "--url", server.url, "--n", str(n), "--c", str(c)]
    for key, value in extra.items():
        cmd += [f"--{key}", value]
    out = subprocess.run(
        cmd, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"}
    )
    data = json.loads(out.stdout.strip().splitlines()[-1])
    stats = server.stats()
    return Measure(
        data["wall"],
        data["cpu"],
        data["ok"],
        data["rss_mb"],
        stats["peak_in_flight"],
        stats["calls"],
    )


def median(runs: list[Measure]) -> Measure:
    return Measure(
        statistics.median(m.wall for m in runs),
        statistics.median(m.cpu for m in runs),
        min(m.ok for m in runs),
        max(m.rss_mb for m in runs),
        max(m.peak for m in runs),
        max(m.calls for m in runs),
    )


def have_aiohttp() -> bool:
    """httpx-aiohttp (the floor:aiohttp variant's transport) is not a rubriclab dependency."""
    try:
        import httpx_aiohttp  # noqa: F401
    except ImportError:
        return False
    return True


def drive(args: argparse.Namespace) -> None:
    if args.wire:
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, repeats={args.repeats}")
        drive_wire(args.repeats)
        return
    variants = [v for v in VARIANTS if have_aiohttp() or v != "floor:aiohttp"]
    settings = SETTINGS[1:] if args.quick else SETTINGS
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, repeats={args.repeats}")
    head = (
        f"{'setting':<24}{'variant':<16}{'wall s':>8}{'ideal':>7}{'w/ideal':>8}{'w/floor':>8}"
        f"{'cpu ms/call':>12}{'cpu/floor':>10}{'peak':>6}{'rss MB':>8}{'ok':>6}"
    )
    for name, n, c, latency in settings:
        server = FakeJudgeProcess("--latency", str(latency))
        try:
            ideal = n * latency / c
            results: dict[str, list[Measure]] = {v: [] for v in variants}
            for _ in range(args.repeats):  # interleave variants so drift hits all alike
                for variant in variants:
                    results[variant].append(measure(server, variant, n, c))
            med = {v: median(runs) for v, runs in results.items()}
        finally:
            server.close()
        print(f"\n({name}) N={n}, concurrency {c}, latency {latency * 1000:.0f} ms")
        print(head)
        floor = med["floor:httpx"]
        for variant, m in med.items():
            print(
                f"{'':<24}{variant:<16}{m.wall:>8.3f}{ideal:>7.3f}{m.wall / ideal:>8.2f}"
                f"{m.wall / floor.wall:>8.2f}{m.cpu / n * 1000:>12.3f}{m.cpu / floor.cpu:>10.2f}"
                f"{m.peak:>6}{m.rss_mb:>8.0f}{m.ok:>6}"
            )

    server = FakeJudgeProcess("--latency", "0.0")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = str(Path(tmp) / "cache.sqlite3")
            first = measure(server, "cached:httpx", 10_000, 64, cache=path)
            again = measure(server, "cached:httpx", 10_000, 64, cache=path)
    finally:
        server.close()
    print(
        f"\ncached re-run of 10,000 calls: {again.wall:.3f} s wall, {again.cpu:.3f} s CPU, "
        f"{again.ok} answered from cache, {again.calls} calls reached the server "
        f"(first run: {first.wall:.2f} s, {first.calls} calls)"
    )
    drive_wire(args.repeats)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="setting (b) only")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--url", help=argparse.SUPPRESS)
    p.add_argument("--n", type=int, help=argparse.SUPPRESS)
    p.add_argument("--c", type=int, help=argparse.SUPPRESS)
    p.add_argument("--wire", action="store_true", help="section (c) only")
    p.add_argument("--cache", help=argparse.SUPPRESS)
    p.add_argument("--bodies", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        worker(args)
    else:
        drive(args)


if __name__ == "__main__":
    main()
