"""Rows into cases, read column by column: what each kind of cell becomes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rubriclab.data import DataError, to_cases


def test_text_cells_missing_cells_and_empty_answers_read_as_users_mean_them() -> None:
    frame = pd.DataFrame(
        {
            "prompt": ["q0", "q1", None, "q3"],
            "response": ["a0", "", "a2", np.nan],
            "topic": ["x", "y", "z", "w"],
        }
    )
    cases = to_cases(frame, need_response=False)
    assert [c.prompt for c in cases] == ["q0", "q1", "", "q3"]
    assert [c.response for c in cases] == ["a0", "", "a2", None]  # "" was said; NaN was not
    assert cases[2].error == "no prompt (column 'prompt' is empty in this row)"
    assert [c.extra for c in cases][:2] == [{"topic": "x"}, {"topic": "y"}]
    assert all(c.error is None for i, c in enumerate(cases) if i != 2)


def test_numbers_and_json_cells_become_text_and_extras_stay_python_values() -> None:
    frame = pd.DataFrame(
        {
            "prompt": pd.Series([np.int64(7), 2.5, {"q": 1}], dtype=object),
            "response": ["a", "b", "c"],
            "n": pd.Series([np.int64(1), np.float64(2.0), True], dtype=object),
        }
    )
    cases = to_cases(frame)
    assert [c.prompt for c in cases] == ["7", "2.5", '{"q": 1}']
    assert [type(c.extra["n"]) for c in cases] == [int, float, bool]


def test_a_cell_that_is_not_text_fails_its_row_only_naming_row_and_column() -> None:
    frame = pd.DataFrame({"prompt": ["q0", "q1"], "answer": ["fine", {1, 2}]}, index=[10, 11])
    cases = to_cases(frame, mapping={"response": "answer"})
    assert cases[0].error is None and cases[0].response == "fine"
    assert cases[1].error == "row 1 (index 11), column 'answer': expected text, got set"


def test_two_columns_with_one_name_are_refused_with_the_name() -> None:
    frame = pd.DataFrame([["q", "a", "b"]], columns=["prompt", "response", "response"])
    with pytest.raises(DataError, match="more than one column named 'response'"):
        to_cases(frame)


# -- image paths in rows are confined to the data's folder ------------------------------------

_PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x00" * 20


def _sent_images(server: object) -> list[str]:
    out = []
    for body in server.requests:  # type: ignore[attr-defined]
        for message in body["messages"]:
            if isinstance(message["content"], list):
                out += [p["image_url"]["url"] for p in message["content"] if "image_url" in p]
    return out


def test_image_paths_in_a_data_file_stay_in_its_folder_over_http(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import base64
    import json

    import rubriclab as rl
    from rubriclab.testing import FakeJudgeServer

    data_dir, outside, home = tmp_path / "data", tmp_path / "outside", tmp_path / "home"
    for folder in (data_dir / "img", outside, home):
        folder.mkdir(parents=True)
    (data_dir / "img" / "ok.png").write_bytes(_PNG)
    secret = _PNG + b"SECRET-PICTURE"
    (outside / "secret.png").write_bytes(secret)
    (home / "face.png").write_bytes(secret)
    (data_dir / "img" / "notes.png").write_text("api_key = sk-live-123")  # named like an image
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)  # the working folder holds everything: it is not a root here
    images = [
        "img/ok.png",  # inside: sent (negative control)
        str(outside / "secret.png"),  # absolute, outside
        "../outside/secret.png",  # up and out
        "~/face.png",  # home
        "img/notes.png",  # inside, but not an image by its content
    ]
    src = data_dir / "rows.jsonl"
    rows = [{"prompt": f"p{i}", "response": "r", "image": img} for i, img in enumerate(images)]
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    metric = rl.metrics.RubricMetric(rubric=rl.Rubric.checklist(["Right?"]), name="c")
    with FakeJudgeServer() as server:
        judge = rl.Judge(server.url, model="m", cache=False)
        table = rl.evaluate(str(src), [metric], judge=judge).table
        sent = _sent_images(server)
    errors = table["c/error"].tolist()
    assert errors[0] is None and len(server.requests) == 1
    assert sent == ["data:image/png;base64," + base64.b64encode(_PNG).decode()]
    assert "outside the data's folder" in errors[1] and "image_dirs=" in errors[1]
    assert "outside the data's folder" in errors[2]
    assert "starts with '~'" in errors[3]
    assert "not a recognised image by its content" in errors[4]
    assert all(b"SECRET" not in base64.b64decode(u.split(",", 1)[1]) for u in sent)

    # a streamed run of the same file confines its images the same way
    with FakeJudgeServer() as server:
        judge = rl.Judge(server.url, model="m", cache=False)
        out = tmp_path / "streamed.jsonl"
        streamed = rl.evaluate(str(src), [metric], judge=judge, output=out, chunk_rows=2).table
        assert pd.isna(streamed["c/error"].tolist()[0])
        assert "outside the data's folder" in streamed["c/error"].tolist()[1]
        assert len(server.requests) == 1

    # the user allows the other folder in code: now it is read
    with FakeJudgeServer() as server:
        judge = rl.Judge(server.url, model="m", cache=False)
        table = rl.evaluate(str(src), [metric], judge=judge, image_dirs=[outside]).table
        assert table["c/error"].tolist()[1] is None
        assert any(b"SECRET" in base64.b64decode(u.split(",", 1)[1]) for u in _sent_images(server))


def test_image_paths_in_a_dataframe_are_read_from_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.png").write_bytes(_PNG)
    monkeypatch.chdir(tmp_path)
    frame = pd.DataFrame({"prompt": ["p", "q"], "image": ["a.png", "/etc/hostname"]})
    cases = to_cases(frame, need_response=False)
    assert cases[0].error is None and cases[0].media[0].source == str(tmp_path / "a.png")
    assert cases[1].error is not None and "outside the data's folder" in cases[1].error
    assert to_cases(frame.iloc[:1], need_response=False, image_dirs=[tmp_path])[0].error is None


def test_an_over_long_data_or_image_path_is_a_one_line_error(tmp_path: Path) -> None:
    import rubriclab as rl

    long_name = str(tmp_path / ("x" * 5000 + ".jsonl"))
    with pytest.raises(DataError) as info:
        rl.evaluate(long_name, [rl.metrics.exact_match], judge="mock")
    assert "\n" not in str(info.value) and len(str(info.value)) < 400
    frame = pd.DataFrame({"prompt": ["p"], "image": ["y" * 5000 + ".png"]})
    error = to_cases(frame, need_response=False)[0].error
    assert error is not None and "\n" not in error and len(error) < 600
