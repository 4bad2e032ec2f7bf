"""What rendering, parsing and scoring add on top of the judge calls themselves.

Usage: .venv/bin/python benchmarks/evaluate.py [--rows 2000] [--latency 0.2] [--concurrency 32]

The fake judge (rubriclab.testing, answering every request with an instance of its JSON schema)
runs in its own process, so its CPU is not counted as the client's. Three measurements, each in a
fresh client process, over the same N rows with a 6-question checklist:
  floor     a bare httpx.AsyncClient loop with a semaphore, sending the already-rendered requests
  engine    rubriclab's Judge.map on the same already-rendered requests (the engine's bare calls)
  evaluate  rl.evaluate(data, [RubricMetric(checklist)]): cases, rendering, calls, parsing,
            validation, scoring and the result table
It prints wall, ideal (N x latency / concurrency), client CPU ms per row, and what evaluate adds
to the engine: wall overhead (target <= 10%) and CPU per row (target <= 0.3 ms).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from typing import Any

from workload import PY, QUESTIONS, FakeJudgeProcess, meeting_frame


def _rendered(url: str, rows: int) -> list[Any]:
    """The exact requests evaluate sends, rendered up front (outside the timed part)."""
    import rubriclab as rl
    from rubriclab import schemas
    from rubriclab.ask import user_messages
    from rubriclab.critique import critique_variables, template_for
    from rubriclab.data import to_cases
    from rubriclab.judges import Request

    rubric = rl.Rubric.checklist(QUESTIONS)
    fmt = schemas.response_format("bench_critique", schemas.checklist_schema(rubric))
    tpl = template_for("critique_checklist")
    return [
        Request(user_messages(tpl.render(critique_variables(c, rubric)), c), response_format=fmt)
        for c in to_cases(meeting_frame(rows))
    ]


def worker(kind: str, url: str, rows: int, concurrency: int) -> dict[str, Any]:
    import asyncio
    import gc
    import resource

    import httpx

    import rubriclab as rl

    judge = rl.Judge(url, model="bench", max_concurrency=concurrency, max_retries=2)
    data = meeting_frame(rows)
    requests = _rendered(url, rows) if kind != "evaluate" else []
    gc.collect()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if kind == "floor":

        async def floor() -> None:
            sem = asyncio.Semaphore(concurrency)
            limits = httpx.Limits(
                max_connections=concurrency, max_keepalive_connections=concurrency
            )
            async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:

                async def one(req: Any) -> None:
                    async with sem:
                        body = {
                            "model": "bench",
                            "messages": req.messages,
                            "temperature": 0,
                            "response_format": req.response_format,
                        }
                        r = await client.post("/chat/completions", json=body)
                        r.raise_for_status()
                        json.loads(r.content)["choices"][0]["message"]["content"]

                await asyncio.gather(*(one(r) for r in requests))

        asyncio.run(floor())
        errors = 0
    elif kind == "engine":
        replies = judge.map(requests, progress=False)
        errors = sum(r.error is not None for r in replies)
    else:
        metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(QUESTIONS))
        result = rl.evaluate(data, [metric], judge=judge)
        errors = int(result.summary.loc["chk", "errors"])
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"kind": kind, "wall": wall, "cpu": cpu, "errors": errors, "rss_mb": rss}


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--worker", nargs=2, metavar=("KIND", "URL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1], args.rows, args.concurrency)))
        return
    server = FakeJudgeProcess("--latency", str(args.latency))
    try:
        url = server.url
        ideal = args.rows * args.latency / args.concurrency
        print(
            f"rows={args.rows} concurrency={args.concurrency} latency={args.latency * 1000:.0f} ms "
            f"ideal={ideal:.2f} s  (fake judge at {url}, own process)"
        )
        out: dict[str, dict[str, Any]] = {}
        for kind in ("floor", "engine", "evaluate"):
            proc = subprocess.run(
                [
                    PY,
                    __file__,
                    "--rows",
                    str(args.rows),
                    "--concurrency",
                    str(args.concurrency),
                    "--worker",
                    kind,
                    url,
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            out[kind] = json.loads(proc.stdout.strip().splitlines()[-1])
            r = out[kind]
            print(
                f"{kind:<9} wall {r['wall']:6.2f} s  wall/ideal {r['wall'] / ideal:5.3f}  "
                f"cpu/row {1000 * r['cpu'] / args.rows:6.3f} ms  errors {r['errors']}  "
                f"peak RSS {r['rss_mb']:.0f} MB"
            )
        e, v = out["engine"], out["evaluate"]
        print(
            f"evaluate vs engine: wall +{100 * (v['wall'] / e['wall'] - 1):.1f}% (target <= 10%), "
            f"CPU +{1000 * (v['cpu'] - e['cpu']) / args.rows:.3f} ms/row (target <= 0.3 ms)"
        )
        print(
            f"engine vs floor:    wall x{e['wall'] / out['floor']['wall']:.3f}, "
            f"CPU x{e['cpu'] / max(out['floor']['cpu'], 1e-9):.2f}"
        )
    finally:
        server.close()


if __name__ == "__main__":
    main()
