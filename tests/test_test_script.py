"""scripts/test.sh and the repository setup a newcomer meets: the apt-lock wait, the test extra,
and what git ignores."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
WAIT = ROOT / "scripts" / "wait_for_apt_lock.py"

_HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.lockf(fd, fcntl.LOCK_EX)
print("locked", flush=True)
sys.stdin.readline()  # hold until the test says so
"""


def _wait(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(WAIT), *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_a_free_lock_goes_on_at_once(tmp_path: Path) -> None:
    lock = tmp_path / "lock-frontend"
    lock.touch()
    done = _wait(str(lock), str(tmp_path / "missing"), "--timeout", "0")
    assert done.returncode == 0 and done.stderr == ""


def test_a_held_lock_is_waited_for_with_a_message_and_bounded(tmp_path: Path) -> None:
    lock = tmp_path / "lock-frontend"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(lock)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        done = _wait(str(lock), "--timeout", "0.3", "--poll", "0.1")
        assert done.returncode == 1
        assert "waiting for another apt/dpkg process" in done.stderr
        assert "still holds" in done.stderr and str(lock) in done.stderr
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
    assert _wait(str(lock), "--timeout", "0").returncode == 0  # released: free again


def test_test_sh_waits_for_the_lock_before_every_apt_get() -> None:
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    wait_at = script.index("wait_for_apt_lock.py")
    apt_calls = [i for i in range(len(script)) if script.startswith("apt-get", i)]
    assert apt_calls and all(i > wait_at for i in apt_calls)
    assert "DPkg::Lock::Timeout" in script
    done = subprocess.run(["bash", "-n", str(ROOT / "scripts" / "test.sh")], check=False)
    assert done.returncode == 0


def test_the_test_extra_has_what_the_tests_import() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    names = {dep.split(">")[0].split("=")[0].split("[")[0].strip() for dep in extras["test"]}
    assert {"nbclient", "mlflow-skinny", "fsspec"} <= names
    assert any(dep.startswith("mlflow") for dep in extras["mlflow"])


def test_the_demo_report_is_git_ignored(tmp_path: Path) -> None:
    done = subprocess.run(
        ["git", "check-ignore", "-q", "rubriclab-demo.html"], cwd=ROOT, check=False
    )
    assert done.returncode == 0
