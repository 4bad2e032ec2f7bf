"""Does freezing the garbage collector during a run pay? (the engine used to do it; issue 14)

Usage: .venv/bin/python benchmarks/gc_tuning.py [--repeats 3] [--rows 100000] [--heap 0 1000000]

Until issue 14 every engine run called ``gc.freeze()`` and raised the young-generation threshold
to 10,000, process-wide, in a kernel shared with the user's code. This measures what that bought.
Each measurement runs in a fresh client process, variants interleaved so machine drift hits both:
  plain   the engine as it is (no GC changes)
  tuned   the engine's run wrapped exactly as it used to be: freeze what exists and raise the
          young threshold to 10,000 on entry, undo both when the last run ends
over two workloads:
  map     Judge.map of N=2000 calls at concurrency 64 against the fake judge (20 ms latency,
          its own process): throughput.py's setting (b)
  mock    rl.evaluate of --rows rows with a 6-question checklist on the mock judge (in-process,
          CPU-bound: the worst case for GC, every reply and parse allocates)
and two heaps: what importing pandas + rubriclab leaves, and that plus --heap extra live
container objects (a notebook holding data). Prints wall and CPU (median and min-max range),
the number of full (gen 2) collections and the CPU time spent in collections (thread time, so
a loaded machine's waits are not counted).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any

from workload import PY, QUESTIONS, FakeJudgeProcess

YOUNG = 10_000


def _tune_engine_runs() -> None:
    """Wrap Engine.run the way the engine itself did until issue 14 (same counters, same undo)."""
    import gc
    import threading

    from rubriclab.judges.engine import Engine

    lock = threading.Lock()
    state: dict[str, Any] = {"runs": 0, "froze": False, "thresholds": None}
    original = Engine.run

    def enter() -> None:
        with lock:
            if state["runs"] == 0:
                state["froze"] = gc.get_freeze_count() == 0
                if state["froze"]:
                    gc.freeze()
                young, mid, old = gc.get_threshold()
                if 0 < young < YOUNG:
                    state["thresholds"] = (young, mid, old)
                    gc.set_threshold(YOUNG, mid, old)
            state["runs"] += 1

    def leave() -> None:
        with lock:
            state["runs"] -= 1
            if state["runs"] == 0:
                if state["thresholds"] is not None:
                    gc.set_threshold(*state["thresholds"])
                    state["thresholds"] = None
                if state["froze"]:
                    gc.unfreeze()
                    state["froze"] = False

    async def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        enter()
        try:
            return await original(self, *args, **kwargs)
        finally:
            leave()

    Engine.run = run  # type: ignore[method-assign]


def _messages(i: int) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You are a strict grader. Answer in JSON."},
        {
            "role": "user",
            "content": f"Case {i}. Summarise: the deadline is August 15th; Chloe leads "
            "marketing from August 1st; teams report weekly. Grade accuracy, completeness.",
        },
    ]


def worker(args: argparse.Namespace) -> dict[str, Any]:
    import gc

    import pandas as pd

    import rubriclab as rl

    heap = [{"row": i, "tags": [i]} for i in range(args.heap)]  # a notebook's live data
    if args.variant == "tuned":
        _tune_engine_runs()
    pauses = {"n2": 0, "n": 0, "seconds": 0.0}
    began = [0.0]

    def watch(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            began[0] = time.thread_time()
        else:
            pauses["n"] += 1
            pauses["n2"] += info["generation"] == 2
            pauses["seconds"] += time.thread_time() - began[0]

    if args.workload == "map":
        judge = rl.Judge(args.url, model="m", max_concurrency=64)
        batch = [_messages(i) for i in range(2000)]
    else:
        judge = rl.Judge("mock", cache=None)
        data = pd.DataFrame(
            {
                "prompt": [f"Summarise meeting {i}." for i in range(args.rows)],
                "response": [
                    f"Meeting {i}: due August 15th; Chloe; weekly." for i in range(args.rows)
                ],
            }
        )
        metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(QUESTIONS))
    gc.collect()
    before = (gc.get_threshold(), gc.get_freeze_count())
    gc.callbacks.append(watch)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if args.workload == "map":
        ok = sum(r.ok for r in judge.map(batch, progress=False))
    else:
        result = rl.evaluate(data, [metric], judge=judge)
        ok = args.rows - int(result.summary.loc["chk", "errors"])
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    gc.callbacks.remove(watch)
    assert (gc.get_threshold(), gc.get_freeze_count()) == before, "GC state not restored"
    del heap
    return {"wall": wall, "cpu": cpu, "ok": ok, **pauses}


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):7.2f} [{min(values):.2f}-{max(values):.2f}]"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--heap", type=int, nargs="+", default=[0, 1_000_000])
    ap.add_argument("--workloads", nargs="+", default=["map", "mock"])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--variant", help=argparse.SUPPRESS)
    ap.add_argument("--workload", help=argparse.SUPPRESS)
    ap.add_argument("--url", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        args.heap = args.heap[0]
        print(json.dumps(worker(args)))
        return
    server = FakeJudgeProcess("--latency", "0.02")
    try:
        url = server.url
        print(f"python {sys.version.split()[0]}, repeats={args.repeats}, mock rows={args.rows}")
        print("median [min-max] over repeats; gc ms = CPU time inside collections")
        for workload in args.workloads:
            for heap in args.heap:
                runs: dict[str, list[dict[str, Any]]] = {"plain": [], "tuned": []}
                for _ in range(args.repeats):
                    for variant in runs:
                        cmd = [PY, __file__, "--worker", "--variant", variant]
                        cmd += ["--workload", workload, "--url", url, "--rows", str(args.rows)]
                        cmd += ["--heap", str(heap)]
                        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
                        runs[variant].append(json.loads(out.stdout.strip().splitlines()[-1]))
                print(f"\n{workload}, extra heap {heap:,} objects")
                for variant, rs in runs.items():
                    print(
                        f"  {variant:<6} wall s {_spread([r['wall'] for r in rs])}  "
                        f"cpu s {_spread([r['cpu'] for r in rs])}  "
                        f"gen2 {_spread([r['n2'] for r in rs])}  "
                        f"gc ms {_spread([1000 * r['seconds'] for r in rs])}  "
                        f"ok {min(r['ok'] for r in rs)}"
                    )
    finally:
        server.close()


if __name__ == "__main__":
    main()
