"""What rubriclab's pytest plugin costs a project that never uses it.

Usage: .venv/bin/python benchmarks/pytest_plugin.py [--runs 5]

The plugin loads in every pytest run of an environment where rubriclab is installed (the
``pytest11`` entry point). It should import nothing heavy: this prints the modules it pulls
in beyond pytest's own, and the median wall time of ``pytest`` on a one-test project with the
plugin and with ``-p no:rubriclab``. Goal: no pandas, numpy, aiohttp or rubriclab.evaluation
imported, and the plugin's own import under 100 ms. The wall times of whole pytest runs are
printed too, but on a shared, loaded machine their noise (seconds) hides a figure this small.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("pandas", "numpy", "aiohttp", "httpx", "pydantic", "jinja2", "rubriclab.evaluation")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "test_plain.py").write_text(
            "import sys\n\n"
            "def test_plain():\n"
            f"    print('HEAVY', [m for m in {HEAVY!r} if m in sys.modules])\n"
        )
        on, off = [], []
        heavy = ""
        for _ in range(args.runs):
            for flags, times in (([], on), (["-p", "no:rubriclab"], off)):
                start = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *flags],
                    cwd=root,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                times.append(time.perf_counter() - start)
                if not flags:
                    heavy = next(
                        line for line in done.stdout.splitlines() if line.startswith("HEAVY")
                    )
    imports = []
    for _ in range(args.runs):
        done = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-c",
                "import pytest; import rubriclab.testing.pytest_plugin",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        line = next(
            x for x in done.stderr.splitlines() if x.endswith("rubriclab.testing.pytest_plugin")
        )
        imports.append(int(line.split("|")[1]) / 1000)
    print(
        f"importing the plugin after pytest (-X importtime, cumulative), median of "
        f"{args.runs}: {statistics.median(imports):.0f} ms"
    )
    a, b = statistics.median(on), statistics.median(off)
    print(f"modules loaded by a plain test with the plugin: {heavy.removeprefix('HEAVY ')}")
    print(
        f"pytest wall time, median of {args.runs}: plugin {a * 1000:.0f} ms, "
        f"-p no:rubriclab {b * 1000:.0f} ms, difference {(a - b) * 1000:+.0f} ms (machine noise dominates)"
    )


if __name__ == "__main__":
    main()
