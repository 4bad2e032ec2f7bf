"""The one YAML loader: safe, with YAML 1.2 plain scalars (yes/no/on/off stay words)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rubriclab.files import YamlError, load_yaml


def test_yaml_1_1_booleans_and_sexagesimals_stay_as_written() -> None:
    data = load_yaml("a: no\nb: yes\nc: on\nd: off\ne: 1:30\nf: 010\ng: y\n")
    assert data == {"a": "no", "b": "yes", "c": "on", "d": "off", "e": "1:30", "f": 10, "g": "y"}


def test_yaml_1_2_scalars_still_have_their_types() -> None:
    data = load_yaml("t: true\nf: False\nn: ~\ni: -3\nh: 0x1f\no: 0o17\nx: 0.7\ne: 1e3\n")
    assert data == {
        "t": True,
        "f": False,
        "n": None,
        "i": -3,
        "h": 31,
        "o": 15,
        "x": 0.7,
        "e": 1000.0,
    }


def test_it_is_safe_and_names_the_line() -> None:
    with pytest.raises(YamlError, match="could not determine a constructor"):
        load_yaml("x: !!python/object/apply:os.system [echo hi]\n")
    with pytest.raises(YamlError) as info:
        load_yaml("a: 1\nb: [\n")
    assert info.value.line is not None


# --- issue 25: YAML alias bombs, in every place rubriclab reads YAML --------------------------
#
# Nine levels of aliases: 387,420,489 items in 419 bytes. Loading them costs nothing (PyYAML
# shares the parts); validating or printing them writes every part out. Each case runs in a
# child process whose address space is capped (RLIMIT_AS), so a regression fails the test
# with a MemoryError or a timeout instead of taking the machine down.

ROOT = Path(__file__).resolve().parent.parent
MEMORY_CAP = 1024**3
BOMB = (
    "a: &a ['lol','lol','lol','lol','lol','lol','lol','lol','lol']\n"
    + "".join(
        f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n"
        for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "criteria: *i\n"
)

_PRELUDE = f"""
import json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_CAP}, {MEMORY_CAP}))
BOMB = {BOMB!r}
def report(message):
    print(json.dumps({{"message": str(message), "cpu": time.process_time() - START}}))
START = time.process_time()
"""


def _in_capped_child(code: str, tmp_path: Path) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", _PRELUDE + code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=dict(os.environ),
        timeout=120,
        check=False,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0 and lines, f"the child failed ({proc.returncode}): {proc.stderr}"
    out: dict[str, object] = json.loads(lines[-1])
    assert isinstance(out["cpu"], float) and out["cpu"] < 5.0, out  # imports included
    return out


ALIASES = "aliases (*name) expand this YAML to more than"

BOMB_CASES = {
    "load_yaml": """
from rubriclab.files import YamlError, load_yaml
try:
    load_yaml(BOMB)
    report("loaded")
except YamlError as exc:
    report(exc)
""",
    "Rubric.from_yaml_text": """
from rubriclab import Rubric
try:
    Rubric.from_yaml_text(BOMB)
    report("loaded")
except ValueError as exc:
    report(exc)
""",
    "a data file's rubric cell": """
import csv
from rubriclab.data import read_table, to_cases
from pathlib import Path
with open("data.csv", "w", newline="") as fh:
    csv.writer(fh).writerows([["prompt", "response", "rubric"], ["p", "r", BOMB]])
cases = to_cases(read_table(Path("data.csv")))
report(cases[0].error)
""",
    "the rubric editor": """
import pandas as pd
from rubriclab import RubricEditor
try:
    RubricEditor(pd.DataFrame({"prompt": ["p"], "rubric": [BOMB]}))
    report("loaded")
except ValueError as exc:
    report(exc)
""",
    "the %%rubric magic": """
import contextlib, io
import pandas as pd
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
ip.run_cell("%load_ext rubriclab", store_history=False)
ip.user_ns["df"] = pd.DataFrame({"prompt": ["p"], "response": ["r"]})
err = io.StringIO()
with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
    ip.run_cell("%%rubric df --judge mock\\n" + BOMB, store_history=False)
report(err.getvalue())
""",
    "a run config": """
from pathlib import Path
from rubriclab.run_config import ConfigError, load_config
Path("run.yaml").write_text("data: d.csv\\nmetrics: [text_quality]\\n" + BOMB)
try:
    load_config("run.yaml")
    report("loaded")
except ConfigError as exc:
    report(exc)
""",
    "a run config's inline rubric": """
from pathlib import Path
from rubriclab.run_config import ConfigError, load_config
block = "".join("      " + line + "\\n" for line in BOMB.splitlines())
Path("run.yaml").write_text("data: d.csv\\nmetrics:\\n  - rubric: |\\n" + block)
try:
    load_config("run.yaml").build_metrics()
    report("loaded")
except ConfigError as exc:
    report(exc)
""",
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("where", list(BOMB_CASES))
def test_an_alias_bomb_is_refused_at_once_wherever_yaml_is_read(where: str, tmp_path: Path) -> None:
    out = _in_capped_child(BOMB_CASES[where], tmp_path)
    message = str(out["message"])
    assert ALIASES in message, message
    assert len(message) < 1_000, message


def test_aliases_that_repeat_a_little_still_load() -> None:
    """Anchors are a fine way to share levels between criteria: only expansion is capped."""
    text = (
        "levels: &yn {1: no, 2: partly, 3: yes}\n"
        "criteria: [{name: a, levels: *yn}, {name: b, levels: *yn}]\n"
    )
    data = load_yaml(text)
    assert data["criteria"][1]["levels"] == {1: "no", 2: "partly", 3: "yes"}


def test_a_self_referring_alias_is_refused() -> None:
    with pytest.raises(YamlError, match="refers to the list or mapping that holds it"):
        load_yaml("a: &a [1, *a]\n")


@pytest.mark.timeout(300)
def test_an_error_about_shared_python_data_never_writes_the_data_out(tmp_path: Path) -> None:
    """The same bomb built in Python (no YAML to cap): the rubric cell's error says what is
    wrong in a short line, without the repr of the value (pydantic's text would build it)."""
    code = """
import yaml
from rubriclab.data import DataError, rubric_cell
value = yaml.safe_load(BOMB)
value = {"criteria": [{"name": value["i"], "description": "q"}]}
try:
    rubric_cell(value, "row 0", "rubric")
    report("loaded")
except DataError as exc:
    report(exc)
"""
    message = str(_in_capped_child(code, tmp_path)["message"])
    assert message.startswith("row 0, column 'rubric': not a valid rubric: criteria[0].name"), (
        message
    )
    assert "lol" not in message and "pydantic" not in message and len(message) < 300
