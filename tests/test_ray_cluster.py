"""A real two-node Ray cluster on this machine: a head (``node_a``) and a second raylet
(``node_b``), each with its own temp dir and ports, started with the ``ray`` CLI.

Rows are judged on both nodes over real HTTP (the fake judge on 127.0.0.1), the rows equal a
local run, the judge's key (a distinctive fake key in each raylet's environment)
never reaches the cluster's files (object store spill, session logs) while a key given in
``runtime_env`` does (the negative control of that search), and a judging actor killed in the
middle of a batch has that batch sent to the judge again: every row comes back once.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.testing import FakeJudgeServer

ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'rubriclab[ray]'")
import rubriclab.ray as rl_ray  # noqa: E402

# Two raylets, their helpers and a handful of workers on a 2-core machine: each process pays
# seconds of CPU to import ray before it does anything (see test_ray.py), so the limit is
# sized to that start-up work, not to a wait. Under `stress --cpu 2` the head node used to die
# at start (see LEAN and Cluster._start_node); with that fixed the module passed under
# `stress --cpu 2` on a machine already at load 10-18, so the README's test command runs it.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

KEY_ENV = "OPENAI_API_KEY"
KEY = "sk-rubriclab-h38b-DISTINCTIVE-f00dfeed"  # a fake key no other file holds
RAY_BIN = Path(sys.executable).with_name("ray")
RUBRIC = rl.Rubric.checklist(["Is it correct?", "Is it short?"])


def _node(response: str, reference: str) -> tuple[float, str]:
    """Where this row was judged: the Ray node id and the worker's pid (as its note)."""
    import ray as _ray

    return 1.0, f"{_ray.get_runtime_context().get_node_id()} {os.getpid()}"


NODE = rl.metrics.ComputationMetric("node", _node)


#: What a node starts besides its raylet, kept to what the test needs. Under `stress --cpu 2`
#: the head node died at start: its raylet waits 15 s (fixed in Ray) for the dashboard agent,
#: a Python helper, to import Ray and write a port file, and the agent shared the two cores with
#: three other helpers importing Ray at the same moment (the log monitor, the runtime-env agent
#: and, on the head, the autoscaler's monitor). The log monitor only forwards worker logs to a
#: driver (this one sets log_to_driver=False; Ray also says to run one per host, not per node)
#: and the monitor autoscales (this cluster is fixed), so neither is started: the agent
#: competes with one helper instead of three.
LEAN = ["--include-log-monitor=false", "--disable-usage-stats"]


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _ray_cli(args: list[str], env: dict[str, str], timeout: float = 300) -> None:
    done = subprocess.run(
        [str(RAY_BIN), *args], env=env, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise RuntimeError(f"ray {args[0]} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


class Cluster:
    def __init__(self, root: Path, base_url: str) -> None:
        self.root = root
        self.dirs = {"a": root / "a", "b": root / "b"}
        for d in self.dirs.values():
            d.mkdir()
        stub = root / "stub"  # see rubriclab.testing.ray_local: skip a slow import in helpers
        stub.mkdir()
        (stub / "rfc3987_syntax.py").write_text('raise ImportError("skipped")\n')
        # The key is in each raylet's environment, which its workers inherit. Not in
        # runtime_env: Ray's runtime_env agent writes env_vars, values included, to
        # logs/runtime_env_agent.log on every node (this test caught it doing so).
        # The judge's URL is there too: a driver with a runtime_env would make every worker
        # start wait on the runtime-env agent (a Python helper, slow under CPU load).
        self.env = {**os.environ, KEY_ENV: KEY, "OPENAI_BASE_URL": base_url}
        self.env.update(
            PYTHONPATH=os.pathsep.join([str(stub), os.environ.get("PYTHONPATH", "")]),
            RAY_USAGE_STATS_ENABLED="0",
            RAY_ENABLE_UV_RUN_RUNTIME_ENV="0",
            # a ~/.ray/auth_token left by anyone turns token auth on for some processes only
            RAY_AUTH_MODE="disabled",
            # Ray starts workers at nice 15: under any other load they would get almost no
            # CPU and every step of the test would crawl
            RAY_worker_niceness="0",
        )
        self.port = _free_ports(1)[0]
        self.restarts = 0  # node starts retried after Ray's agent-port abort
        self.address = f"127.0.0.1:{self.port}"

    def _ports(self) -> list[str]:
        """Every port fixed (the dashboard agent's gRPC port too: the raylet waits for a
        helper's port file only when it chose none). It still waits, 15 s fixed in Ray, for the
        dashboard agent's listen-port file, written after the agent has imported Ray and every
        dashboard module, and aborts the node when it is late (ray-project/ray#65983): see
        ``LEAN``."""
        node, obj, agent, grpc, metrics, env_agent = _free_ports(6)
        return [
            f"--node-manager-port={node}",
            f"--object-manager-port={obj}",
            f"--dashboard-agent-listen-port={agent}",
            f"--dashboard-agent-grpc-port={grpc}",
            f"--metrics-export-port={metrics}",
            f"--runtime-env-agent-port={env_agent}",
        ]

    def start(self) -> None:
        self._start_node(
            "a",
            [
                "--head",
                f"--port={self.port}",
                '--resources={"node_a": 1}',
                "--include-dashboard=false",
                "--no-monitor",
            ],
        )
        self._start_node("b", [f"--address={self.address}", '--resources={"node_b": 1}'])

    def _start_node(self, name: str, args: list[str], attempts: int = 3) -> None:
        """``ray start`` for one node; started again (at most ``attempts`` times in all) only
        when its raylet aborted on the dashboard agent's port file (see ``_ports``), the one
        start failure a loaded machine causes in Ray itself. Any other failure is raised."""
        folder = self.dirs[name]
        for attempt in range(1, attempts + 1):
            try:
                _ray_cli(
                    [
                        "start",
                        "--node-ip-address=127.0.0.1",
                        f"--temp-dir={folder}",
                        "--num-cpus=1",
                        *args,
                        *LEAN,
                        *self._ports(),
                    ],
                    self.env,
                )
                return
            except RuntimeError:
                aborted = any(
                    "Timed out waiting for file" in log.read_text(errors="replace")
                    for log in folder.glob("session_*/logs/raylet.out")
                )
                if not aborted or attempt == attempts:
                    raise
                _signal_all([str(folder)])  # this attempt's GCS, raylet and helpers
                for session in folder.glob("session_*"):
                    shutil.rmtree(session, ignore_errors=True)
                self.restarts += 1

    def stop(self) -> None:
        """Stop this cluster's processes only: ``ray stop`` would stop every Ray on the machine
        (other people's too), so the processes whose command line names our temp dirs or GCS
        address are signalled by pid."""
        _signal_all([str(self.root), self.address])


def _signal_all(marks: list[str]) -> None:
    """SIGTERM, then SIGKILL, every process whose command line holds one of ``marks``."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(m in cmd for m in marks):
            pids.append(int(proc.name))
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(p) for p in pids):
            time.sleep(0.2)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def judge_server() -> Iterator[FakeJudgeServer]:
    with FakeJudgeServer() as server:
        yield server


@pytest.fixture(scope="module")
def cluster(judge_server: FakeJudgeServer) -> Iterator[Cluster]:
    root = Path(tempfile.mkdtemp(prefix="rlray-"))  # short: Ray's socket paths have a limit
    c = Cluster(root, judge_server.url)
    old_mode = os.environ.get("RAY_AUTH_MODE")
    os.environ["RAY_AUTH_MODE"] = "disabled"  # this driver, like the cluster
    try:
        c.start()
        ray.init(address=c.address, log_to_driver=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        yield c
    finally:
        try:
            ray.shutdown()
        finally:
            c.stop()
            shutil.rmtree(root, ignore_errors=True)
            if old_mode is None:
                os.environ.pop("RAY_AUTH_MODE", None)
            else:
                os.environ["RAY_AUTH_MODE"] = old_mode


def frame(rows: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": list(range(rows)),
            "prompt": [f"Question {i}: what is {i} + {i}?" for i in range(rows)],
            "response": [f"It is {2 * i}." if i % 4 else f"Perhaps {i}." for i in range(rows)],
            "reference": ["-"] * rows,
        }
    )


def _judge(monkeypatch: pytest.MonkeyPatch, server: FakeJudgeServer) -> rl.Judge:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    return rl.Judge("openai:fake-judge", max_retries=2)


def _row_of(body: dict[str, Any]) -> int:
    text = json.dumps(body)
    found = re.search(r"Question (\d+):", text)
    assert found, text[:300]
    return int(found.group(1))


def _cells(table: pd.DataFrame, cols: list[str]) -> list[list[str]]:
    return [[json.dumps(v, sort_keys=True, default=str) for v in row] for row in table[cols].values]


def test_two_nodes_judge_rows_like_a_local_run_and_keep_no_key(
    cluster: Cluster, judge_server: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    nodes = {n["NodeID"]: n["Resources"] for n in ray.nodes() if n["Alive"]}
    assert sorted(k for r in nodes.values() for k in r if k.startswith("node_")) == [
        "node_a",
        "node_b",
    ]
    judge = _judge(monkeypatch, judge_server)
    metric = rl.metrics.RubricMetric(rubric=RUBRIC, name="check")
    data = frame(24)
    local = rl.evaluate(data, [metric], judge=judge)
    judge_server.reset()

    # blocks made on the driver: a repartition task asks for a whole CPU, which a node whose
    # actor holds part of its only CPU can never grant (the run would wait forever)
    ds = ray.data.from_pandas([data.iloc[i : i + 2] for i in range(0, 24, 2)])
    # One actor per node (each node has one CPU, an actor asks for 0.6 of it), one call in
    # flight each. The server answers nothing until two calls are in flight at once: the first
    # actor waits for the second instead of judging every row before it has started.
    judge_server.hold_until = 2
    try:
        rows = rl_ray.evaluate(
            ds,
            [metric, NODE],
            judge=judge,
            concurrency=2,
            max_concurrency=1,
            num_cpus=0.6,
            batch_size=2,
        ).take_all()
    finally:
        judge_server.hold_until = None
    got = pd.DataFrame(rows).sort_values("id").reset_index(drop=True)

    # (a) judged on both nodes
    where = {note.split()[0] for note in got["node/rationale"]}
    assert where == set(nodes), (where, set(nodes))
    # every call carried the key the workers inherited from their raylet
    assert judge_server.calls == 24
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in judge_server.log)

    # (b) the rows equal a local run's
    saved = cluster.root / "local.parquet"
    local.save(saved)
    flat = pd.read_parquet(saved)
    cols = ["id", "prompt", "response"] + [c for c in flat.columns if c.startswith("check/")]
    cols = [c for c in cols if c in got.columns and c != "check/latency"]  # wall time differs
    assert len(cols) > 5
    assert got["check/error"].isna().all()
    differ = [c for c in cols if _cells(got, [c]) != _cells(flat, [c])]
    assert not differ, [(c, _cells(got, [c])[0], _cells(flat, [c])[0]) for c in differ]

    # (c) the key is in none of the cluster's files (logs, spilled objects, session state);
    # the next test shows this search does find a key that Ray writes down
    assert not _files_holding(cluster.root, KEY)


def _files_holding(root: Path, secret: str) -> list[str]:
    """Every file under ``root`` (logs, spilled objects, session state) whose bytes hold
    ``secret``."""
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_socket():
            try:
                if secret.encode() in path.read_bytes():
                    found.append(str(path))
            except OSError:
                continue
    return found


def test_control_a_key_given_in_runtime_env_is_written_to_rays_logs(cluster: Cluster) -> None:
    """The negative control of the search above: a key passed the way the README advises
    against (``runtime_env={"env_vars": ...}``) reaches the worker and Ray's log files, and
    the same search finds it there; the key exported where ``ray start`` ran (the previous
    test's) is in no file."""
    probe = "sk-rubriclab-h38d-RUNTIME-ENV-PROBE-c0ffee"  # in no other file

    @ray.remote(num_cpus=0, runtime_env={"env_vars": {KEY_ENV: probe}})
    def key_seen() -> bool:
        return os.environ.get(KEY_ENV) == probe

    assert ray.get(key_seen.remote(), timeout=300)
    deadline = time.monotonic() + 60  # log lines reach the file from another process
    leaks = _files_holding(cluster.root, probe)
    while not leaks and time.monotonic() < deadline:
        time.sleep(0.5)
        leaks = _files_holding(cluster.root, probe)
    assert any("runtime_env" in Path(p).name for p in leaks), leaks
    assert not _files_holding(cluster.root, KEY)


def _actor_pids(cluster: Cluster) -> list[int]:
    """Judging actors of this cluster: children of its raylets named ``ray::MapWorker``."""
    raylets, actors = set(), []
    procs = [p for p in Path("/proc").iterdir() if p.name.isdigit()]
    for proc in procs:
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "raylet" in cmd and str(cluster.root) in cmd:
            raylets.add(proc.name)
    for proc in procs:
        try:
            stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            cmd = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if stat[1] in raylets and "MapWorker" in cmd:
            actors.append(int(proc.name))
    return actors


class _StallOnce:
    """A computation metric that stops its actor on one row until the test kills the actor.

    The first time it sees ``target`` it writes its pid to ``mark`` and waits there (the
    test SIGKILLs that pid); the retried batch finds the mark and goes on. Metrics run in
    order, so by then the judge has answered both rows of the batch once."""

    def __init__(self, mark: str, target: str) -> None:
        self.mark = mark
        self.target = target

    def __call__(self, response: str, reference: str) -> tuple[float, str]:
        mark = Path(self.mark)
        if response == self.target and not mark.exists():
            tmp = mark.with_suffix(".tmp")
            tmp.write_text(str(os.getpid()))
            tmp.replace(mark)
            deadline = time.monotonic() + 120  # never returns in time: killed here
            while time.monotonic() < deadline:
                time.sleep(0.1)
        return 1.0, str(os.getpid())


def test_a_killed_actors_rows_are_sent_again_and_come_back_once(
    cluster: Cluster, judge_server: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = _judge(monkeypatch, judge_server)
    metric = rl.metrics.RubricMetric(rubric=RUBRIC, name="check")
    data = frame(24)
    mark = cluster.root / "stalled"
    # row 7 ("It is 14.") is in the block of rows 6 and 7: its actor stops there
    stall = rl.metrics.ComputationMetric("stall", _StallOnce(str(mark), "It is 14."))
    judge_server.reset()
    killed: list[int] = []

    def kill_the_stalled_actor() -> None:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not mark.exists():
            time.sleep(0.05)
        if mark.exists():
            pid = int(mark.read_text())
            if pid in _actor_pids(cluster):  # a judging actor of this cluster, nothing else
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

    import threading

    killer = threading.Thread(target=kill_the_stalled_actor, daemon=True)
    killer.start()
    ds = ray.data.from_pandas([data.iloc[i : i + 2] for i in range(0, 24, 2)])
    rows = rl_ray.evaluate(
        ds,
        [metric, stall],
        judge=judge,
        concurrency=2,
        max_concurrency=1,
        num_cpus=0.6,
        batch_size=2,
    ).take_all()
    killer.join(timeout=5)
    assert killed, "the stalled row's actor was not found among this cluster's judging actors"
    got = pd.DataFrame(rows)
    assert sorted(got["id"]) == list(range(24))  # every row once: none lost, none twice
    assert got["check/error"].isna().all() and got["stall/error"].isna().all()
    # rows 6 and 7 come from an actor that lived: the killed one returned nothing
    survivors = dict(zip(got["id"], got["stall/rationale"], strict=True))
    assert str(killed[0]) not in {survivors[6], survivors[7]}
    # the judge saw the dead actor's batch twice (it was sent again) and every other row once
    asked = Counter(_row_of(body) for body in judge_server.requests)
    assert set(asked) == set(range(24))
    assert {row for row, n in asked.items() if n > 1} == {6, 7}, asked
    assert asked[6] == asked[7] == 2
