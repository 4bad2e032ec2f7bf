"""Paths from run configs and notebook cells stay in their folder unless the user allows more."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from rubriclab import cli
from rubriclab.files import PathOutsideError, resolve_inside
from rubriclab.run_config import ConfigError, load_config

# --- the helper -------------------------------------------------------------------------------


def test_a_relative_path_inside_the_folder_is_read_from_it(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "judge.jinja").write_text("x", encoding="utf-8")
    found = resolve_inside("prompts/judge.jinja", tmp_path, key="template")
    assert found == tmp_path / "prompts" / "judge.jinja"
    assert resolve_inside("results/new", tmp_path, key="output") == tmp_path / "results" / "new"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../secret.txt", "goes up with '..'"),
        ("prompts/../../secret.txt", "goes up with '..'"),
        ("/etc/hostname", "is an absolute path"),
    ],
)
def test_leaving_the_folder_is_refused_naming_the_key_and_the_flag(
    tmp_path: Path, path: str, message: str
) -> None:
    with pytest.raises(PathOutsideError) as info:
        resolve_inside(path, tmp_path, key="metrics[0].template", allow_hint="--allow-outside")
    text = str(info.value)
    assert text.startswith(f"metrics[0].template: {path!r}")
    assert message in text
    assert "--allow-outside" in text


def test_a_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s3cret", encoding="utf-8")
    base = tmp_path / "project"
    base.mkdir()
    os.symlink(outside, base / "link")
    os.symlink(outside / "secret.txt", base / "file.jinja")
    for path in ("link/secret.txt", "file.jinja"):
        with pytest.raises(PathOutsideError, match="through a symbolic link"):
            resolve_inside(path, base, key="template")
    inner = base / "inner.jinja"
    inner.write_text("ok", encoding="utf-8")
    os.symlink(inner, base / "alias.jinja")  # a link that stays inside is fine
    assert resolve_inside("alias.jinja", base, key="template") == base / "alias.jinja"


def test_allow_outside_lets_every_path_through(tmp_path: Path) -> None:
    assert resolve_inside("/etc/hostname", tmp_path, key="k", allow_outside=True) == Path(
        "/etc/hostname"
    )
    assert resolve_inside("../x", tmp_path, key="k", allow_outside=True) == tmp_path / "../x"


# --- run configs ------------------------------------------------------------------------------


def _project(tmp_path: Path, metric: str, data: str = "data.csv") -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "data.csv").write_text("prompt,response\nhi,hello\n", encoding="utf-8")
    (tmp_path / "judge.jinja").write_text("OUTSIDE {{ prompt }}", encoding="utf-8")
    config = project / "eval.yaml"
    config.write_text(f"data: {data}\njudge: mock\nmetrics:\n{metric}", encoding="utf-8")
    return config


@pytest.mark.parametrize(
    ("metric", "data", "key"),
    [
        (
            "  - use: text_quality\n    template: ../judge.jinja\n",
            "data.csv",
            "metrics[0].template",
        ),
        ("  - use: text_quality\n    template: /etc/hostname\n", "data.csv", "metrics[0].template"),
        ("  - rubric: ../tone.yaml\n", "data.csv", "metrics[0].rubric"),
        ("  - text_quality\n", "../data.csv", "data"),
    ],
)
def test_run_config_paths_stay_in_the_config_folder(
    tmp_path: Path, metric: str, data: str, key: str
) -> None:
    config = load_config(_project(tmp_path, metric, data))
    build = config.data_path if key == "data" else config.build_metrics
    with pytest.raises(ConfigError, match="^" + re.escape(key)) as info:
        build()
    assert "--allow-outside" in str(info.value)


def test_run_config_output_and_cache_stay_in_the_config_folder(tmp_path: Path) -> None:
    path = _project(tmp_path, "  - text_quality\n")
    path.write_text(path.read_text() + "output: ../elsewhere\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape("output: '../elsewhere' goes up")):
        load_config(path).output_dir()
    path.write_text(
        "data: data.csv\njudge: {spec: mock, cache: /tmp/cache.sqlite}\nmetrics: [text_quality]\n",
        encoding="utf-8",
    )
    with pytest.raises(
        ConfigError, match=re.escape("judge.cache: '/tmp/cache.sqlite' is an absolute")
    ):
        load_config(path).build_judge()


def test_allow_outside_reads_a_template_beside_the_folder(tmp_path: Path) -> None:
    path = _project(tmp_path, "  - use: text_quality\n    template: ../judge.jinja\n")
    metric = load_config(path, allow_outside=True).build_metrics()[0]
    assert metric.template == "OUTSIDE {{ prompt }}"


def test_the_cli_refuses_then_allows_with_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _project(tmp_path, "  - use: text_quality\n    template: ../judge.jinja\n")
    out = tmp_path / "out"
    code = cli.main(["run", str(path), "--output", str(out)])
    err = capsys.readouterr().err
    assert code != 0
    assert "metrics[0].template: '../judge.jinja' goes up" in err
    assert "Traceback" not in err
    assert not out.exists()
    code = cli.main(["run", str(path), "--output", str(out), "--allow-outside"])
    assert code == 0, capsys.readouterr().err
    assert (out / "summary.json").is_file()


# --- magics -----------------------------------------------------------------------------------


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    project = tmp_path / "project"
    project.mkdir()
    pd.DataFrame({"prompt": ["hi"], "response": ["hello"]}).to_csv(
        tmp_path / "data.csv", index=False
    )
    (tmp_path / "tone.yaml").write_text("criteria:\n  - Is it polite?\n", encoding="utf-8")
    monkeypatch.chdir(project)
    ip = InteractiveShell.instance()
    ip.run_cell("%load_ext rubriclab", store_history=False)
    yield ip
    ip.user_ns.pop("rubric_result", None)


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("%rubric ../data.csv --judge mock --metric text_quality", "DATA: '../data.csv' goes up"),
        ("%%rubric df --judge mock\n../tone.yaml", "the rubric file in the cell: '../tone.yaml'"),
    ],
)
def test_magic_paths_stay_in_the_working_folder(
    shell: InteractiveShell, cell: str, message: str
) -> None:
    shell.user_ns["df"] = pd.DataFrame({"prompt": ["hi"], "response": ["hello"]})
    result = shell.run_cell(cell, store_history=False)
    assert isinstance(result.error_in_exec, UsageError)
    assert message in str(result.error_in_exec)
    assert "--allow-outside" in str(result.error_in_exec)
    allowed = shell.run_cell(
        cell.replace("--judge mock", "--judge mock --allow-outside"), store_history=False
    )
    assert allowed.error_in_exec is None, allowed.error_in_exec
    shell.user_ns.pop("df")
