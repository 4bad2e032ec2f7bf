"""Run configs: the short forms people write, and a clear error for every mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubriclab.metrics import PairwiseRubricMetric, RubricMetric
from rubriclab.run_config import ConfigError, check_key_env, load_config


def _write(folder: Path, text: str, name: str = "eval.yaml") -> Path:
    (folder / "data.csv").write_text("prompt,response\nhi,hello\n", encoding="utf-8")
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_short_forms_build_the_metrics_people_mean(tmp_path: Path) -> None:
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "rubrics" / "tone.yaml").write_text(
        "name: tone\ncriteria:\n  - Is it polite?\n  - Is it clear?\n", encoding="utf-8"
    )
    config = load_config(
        _write(
            tmp_path,
            "data: data.csv\n"
            "judge: mock\n"
            "metrics:\n"
            "  - text_quality\n"
            "  - use: text_quality\n"
            "    name: tq_vs_old\n"
            "    baseline: old\n"
            "  - rubric: rubrics/tone.yaml\n"
            "  - name: inline\n"
            "    rubric:\n"
            "      pass_mark: 70\n"
            "      criteria: {accuracy: {weight: 2, critical: 2, levels: 3}}\n",
        )
    )
    built = config.build_metrics()
    assert [m.name for m in built] == ["text_quality", "tq_vs_old", "tone", "inline"]
    assert type(built[0]) is RubricMetric and built[0].generator is not None
    assert isinstance(built[1], PairwiseRubricMetric)
    assert built[1].baseline_column == "old" and built[1].generator == built[0].generator
    assert built[2].rubric is not None and built[2].rubric.is_checklist
    inline = built[3].rubric
    assert inline is not None and inline.pass_mark == 0.7 and inline["accuracy"].critical == 2
    judge = config.build_judge()
    assert judge is not None and judge.is_mock
    assert config.data_path() == tmp_path / "data.csv"  # relative to the config file
    assert config.output_dir() == tmp_path / "results"


def test_json_configs_work_too(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"data": "data.csv", "metrics": ["general_quality"]}', "c.json")
    config = load_config(path)
    assert [m.name for m in config.build_metrics()] == ["general_quality"]
    assert config.build_judge() is None  # falls back to RUBRICLAB_JUDGE / set_judge


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("data: data.csv\nmetrics: [text_quality]\nouput: x\n", "unknown key 'ouput'"),
        ("data: data.csv\nmetrics:\n  - use: text_quality\n    weight: 2\n", "metrics[0].weight"),
        ("data: data.csv\nmetrics: [x]\njudge: {spec: mock, key: abc}\n", "unknown key 'key'"),
        ("metrics: [text_quality]\n", "missing key 'data'"),
        ("data: data.csv\nmetrics: []\n", "metrics"),
        ("data: data.csv\nmetrics: [text_quality\n", "not valid YAML: line"),
        ("- data.csv\n", "a run config is a mapping"),
        ("data: data.csv\nmetrics:\n  - {name: a/b, use: x}\n", "metrics[0].name: a metric"),
    ],
)
def test_mistakes_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(_write(tmp_path, text))
    assert message in str(info.value)
    assert str(tmp_path / "eval.yaml") in str(info.value)


@pytest.mark.parametrize(
    ("metrics", "message"),
    [
        ("  - use: text_quality\n    rubric: r.yaml\n", "give exactly one of"),
        ("  - name: a\n", "give exactly one of"),
        ("  - rubric: missing.yaml\n", "metrics[0].rubric: no file at"),
        ("  - rubric: {criteria: []}\n", "metrics[0].rubric"),
        ("  - use: text_quality\n  - use: text_quality\n", "appear twice"),
        ("  - use: exact_match\n    pairwise: true\n", "metrics[0].pairwise does not apply"),
        ("  - use: bleu\n    judges: [mock, mock]\n", "metrics[0].judges does not apply"),
        ("  - use: text_quality\n    reference: gold\n", "only computation metrics"),
        ("  - use: text_quality\n    judges: [mock]\n", "a panel needs at least 2 judges"),
        ("  - use: text_quality\n    aggregate: mean\n", "only a panel"),
        ("  - use: exact_mach\n", "did you mean 'exact_match'"),
    ],
)
def test_metric_mistakes_name_the_entry(tmp_path: Path, metrics: str, message: str) -> None:
    config = load_config(_write(tmp_path, "data: data.csv\nmetrics:\n" + metrics))
    with pytest.raises(ConfigError) as info:
        config.build_metrics()
    assert message in str(info.value)


def test_keys_come_from_the_environment_never_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(
        tmp_path,
        "data: data.csv\nmetrics: [text_quality]\n"
        "judge: {spec: 'http://127.0.0.1:9/v1', model: m, api_key_env: MY_JUDGE_KEY}\n",
    )
    config = load_config(path)
    monkeypatch.delenv("MY_JUDGE_KEY", raising=False)
    with pytest.raises(ConfigError, match="MY_JUDGE_KEY"):
        config.build_judge()
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-test-secret-123")
    with pytest.raises(ConfigError, match=r"--allow-key-for 127\.0\.0\.1:9"):
        config.build_judge()  # a key no provider is known for goes only where the user says
    judge = load_config(path, allow_key_for=["127.0.0.1:9"]).build_judge()
    assert judge is not None
    assert "sk-test-secret-123" not in repr(judge) and "sk-test-secret-123" not in judge.describe()


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "HF_TOKEN", "my_judge_key", "AZURE_KEY"])
def test_key_like_variable_names_are_accepted(name: str) -> None:
    check_key_env(name)


@pytest.mark.parametrize("name", ["HOME", "AWS_SECRET_ACCESS_KEY_ID", "DATABASE_URL", "KEY"])
def test_other_variables_need_the_users_confirmation(name: str) -> None:
    with pytest.raises(ConfigError, match=f"--allow-env {name}"):
        check_key_env(name)
    check_key_env(name, allow_env={name})


def test_yaml_words_stay_words_and_fail_under_reads_percents(tmp_path: Path) -> None:
    config = load_config(
        _write(
            tmp_path,
            "data: data.csv\n"
            "fail_under: 70%\n"
            "metrics:\n"
            "  - name: answered\n"
            "    rubric:\n"
            "      criteria: {answered: {levels: {1: no, 2: partly, 3: yes}}}\n",
        )
    )
    assert config.fail_under == pytest.approx(0.7)
    rubric = config.build_metrics()[0].rubric
    assert rubric is not None
    assert [lv.descriptor for lv in rubric["answered"].levels] == ["no", "partly", "yes"]
    with pytest.raises(ConfigError, match=r"fail_under must be a fraction like 0\.7"):
        load_config(_write(tmp_path, "data: data.csv\nfail_under: lots\nmetrics: [text_quality]\n"))


def test_computation_metrics_and_panels_run_from_a_config(tmp_path: Path) -> None:
    """`use: exact_match` scores against the reference column with no judge; `judges:` makes a
    panel whose judges each give their verdicts, combined by `aggregate`."""
    import rubriclab as rl

    (tmp_path / "data.csv").write_text(
        "prompt,response,gold\nq1,Paris,Paris\nq2,Rome,Madrid\n", encoding="utf-8"
    )
    path = tmp_path / "eval.yaml"
    path.write_text(
        "data: data.csv\n"
        "judge: mock\n"
        "metrics:\n"
        "  - use: exact_match\n"
        "    reference: gold\n"
        "  - name: panel\n"
        "    rubric: ['Is it right?', 'Is it short?']\n"
        "    judges: [mock, {spec: mock, temperature: 0.5}]\n"
        "    aggregate: mean\n",
        encoding="utf-8",
    )
    config = load_config(path)
    exact, panel = config.build_metrics()
    assert exact.name == "exact_match" and exact.reference_column == "gold"
    assert isinstance(panel, RubricMetric) and len(panel.judges or ()) == 2
    assert panel.aggregate == "mean"
    result = rl.evaluate(str(config.data_path()), [exact, panel], judge=config.build_judge())
    table = result.table
    assert table["exact_match/score"].tolist() == [1.0, 0.0]
    assert table["panel/error"].isna().all()
    assert all(len(v) == 2 for v in table["panel/judges"])


def test_a_panel_judge_key_variable_is_checked_like_the_main_judges(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "data: data.csv\nmetrics:\n  - use: text_quality\n    judges:\n      - mock\n"
        "      - {spec: 'http://127.0.0.1:9/v1', model: m, api_key_env: DATABASE_URL}\n",
    )
    with pytest.raises(ConfigError, match=r"metrics\[0\]\.judges\[1\]\.api_key_env names"):
        load_config(path).build_metrics()
