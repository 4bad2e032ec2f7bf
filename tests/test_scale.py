"""The one score scale: fractions in data, percents with '%' on screen, one threshold rule."""

from __future__ import annotations

import numpy as np
import pytest

import rubriclab as rl
from rubriclab.scale import format_spread, parse_fraction


@pytest.mark.parametrize("value", [0.7, "0.7", "70%", " 70 % ", 70, np.int64(70)])
def test_a_threshold_reads_the_same_on_either_scale(value: object) -> None:
    assert parse_fraction(value, "pass_mark") == pytest.approx(0.7)


@pytest.mark.parametrize("value", [True, "high", 170, "-1", float("nan"), None, "150%"])
def test_what_is_not_a_threshold_is_refused_naming_the_setting(value: object) -> None:
    with pytest.raises(ValueError, match=r"^--fail-under must be a fraction like 0\.7"):
        parse_fraction(value, "--fail-under")


def test_every_display_is_a_percent_with_its_sign() -> None:
    assert rl.format_percent(0.75) == "75.0%"
    assert rl.format_percent(-0.0001) == "0.0%"  # never "-0.0%"
    assert rl.format_percent(0.1, signed=True) == "+10.0%"  # pairwise preference
    assert rl.format_percent(None) == rl.format_percent(float("nan")) == "n/a"
    assert format_spread(0.125) == "± 12.5% std" and format_spread(None) == ""
