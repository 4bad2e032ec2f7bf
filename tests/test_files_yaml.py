"""The one YAML loader: safe, with YAML 1.2 plain scalars (yes/no/on/off stay words)."""

from __future__ import annotations

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
