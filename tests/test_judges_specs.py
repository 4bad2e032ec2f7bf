"""Where a key may go (issue 25, finding 1): each provider's key to its own hosts, over https;
any other host only when the user names it. Code that sends a known key elsewhere is warned."""

from __future__ import annotations

import warnings

import pytest

from rubriclab.judges import Judge
from rubriclab.judges.specs import KeyDestinationWarning, key_destination_error
from rubriclab.testing import FakeJudgeServer


@pytest.mark.parametrize(
    ("env", "url"),
    [
        ("OPENAI_API_KEY", "https://api.openai.com/v1"),
        ("openai_api_key", "https://API.OpenAI.com:443/v1"),
        ("GITHUB_TOKEN", "https://models.github.ai/inference"),
        ("GEMINI_API_KEY", "https://generativelanguage.googleapis.com/v1beta/openai"),
    ],
)
def test_a_key_may_go_to_its_providers_host(env: str, url: str) -> None:
    assert key_destination_error(env, url) is None


@pytest.mark.parametrize(
    ("env", "url"),
    [
        ("OPENAI_API_KEY", "https://api.openai.com.evil.example/v1"),
        ("OPENAI_API_KEY", "http://api.openai.com/v1"),  # in clear text
        ("OPENAI_API_KEY", "https://api.openai.com:8443/v1"),
        ("GITHUB_TOKEN", "https://api.openai.com/v1"),  # another provider's host
        ("MY_GATEWAY_KEY", "https://gateway.example/v1"),  # no provider known
        ("MY_GATEWAY_KEY", "http://127.0.0.1:8000/v1"),
    ],
)
def test_a_key_elsewhere_is_refused_naming_the_flag(env: str, url: str) -> None:
    error = key_destination_error(env, url)
    assert error is not None and "--allow-key-for" in error and "\n" not in error


@pytest.mark.parametrize(
    "allowed", ["gateway.example", "gateway.example:8443", "https://gateway.example:8443/v1"]
)
def test_a_host_the_user_names_is_allowed(allowed: str) -> None:
    url = "https://gateway.example:8443/v1"
    assert key_destination_error("OPENAI_API_KEY", url, [allowed]) is None
    assert key_destination_error("OPENAI_API_KEY", url, ["gateway.example:9999"]) is not None
    assert key_destination_error("OPENAI_API_KEY", url, ["other.example"]) is not None


def test_the_users_own_base_url_variable_is_the_providers_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:7000/v1")
    assert key_destination_error("OPENAI_API_KEY", "http://127.0.0.1:7000/v1") is None
    assert key_destination_error("OPENAI_API_KEY", "http://127.0.0.1:7001/v1") is not None


def test_code_sending_a_known_key_elsewhere_is_warned_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    token = "sk-warn-me-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", token)
    with FakeJudgeServer() as server:
        with pytest.warns(KeyDestinationWarning, match=r"\$OPENAI_API_KEY \(OpenAI's key\)"):
            judge = Judge(server.url, model="m", api_key=token)
        assert judge.complete("x").ok  # sent: code is the user's own
        assert server.log[0].headers["authorization"] == f"Bearer {token}"
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            Judge(server.url, model="m", api_key=token)  # once per variable and host
            Judge(server.url, model="m", api_key="sk-some-other-key-0000")  # not a known key
    with FakeJudgeServer() as other, warnings.catch_warnings():
        warnings.simplefilter("error")
        Judge(other.url, model="m", api_key=token, allow_key_for=[f"127.0.0.1:{other.port}"])
    with FakeJudgeServer() as third, pytest.warns(KeyDestinationWarning):
        Judge(third.url, model="m", headers={"api-key": token})  # a header holds it too
