"""A local Ray for tests, notebooks and CI on small, busy machines.

Ray's raylet gives its Python helper processes (dashboard and runtime-env agents) a fixed 15 s
to start. Every one of them imports ``jsonschema``, which imports the optional
``rfc3987_syntax`` when it is installed (Jupyter pulls it in), and that module compiles some
thirty parsers at import: seconds of CPU per process. On a loaded 2-core machine the helpers
miss the deadline and Ray aborts at start. Nothing in Ray validates IRIs, so the helpers started
here skip that module (a stub on their ``PYTHONPATH`` makes the import fail, and jsonschema
simply leaves the two IRI formats unchecked). The driver process is not affected.

Ray also starts its workers at ``nice 15`` (its ``worker_niceness``): on a machine whose cores
are busy with anything else, the workers that judge the rows then get almost no CPU and a
four-test module takes minutes. Here they run at the driver's priority.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["start_local_ray"]

_STUB = 'raise ImportError("rfc3987_syntax is not loaded in Ray helper processes")\n'


def start_local_ray(num_cpus: int = 2) -> None:
    """``ray.init(num_cpus=...)`` on this machine, quietly, with the helpers' slow import
    skipped. Call ``ray.shutdown()`` when done."""
    import ray
    import ray.data

    stub = Path(tempfile.mkdtemp(prefix="rubriclab-ray-"))
    (stub / "rfc3987_syntax.py").write_text(_STUB, encoding="utf-8")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(stub), *([old] if old else [])])
    try:  # the helpers and workers inherit the environment at start
        ray.init(
            num_cpus=num_cpus,
            include_dashboard=False,
            log_to_driver=False,
            ignore_reinit_error=True,
            _system_config={"worker_niceness": 0},
        )
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
    ray.data.DataContext.get_current().enable_progress_bars = False
