"""The review page's server over real HTTP on 127.0.0.1: token, Origin, allowlisted files,
labels to the labels file, and two reviewers posting 500 labels each in bursts (nothing lost)."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from rubriclab.cli import main
from rubriclab.result import labels_path, load_result
from rubriclab.review import ReviewServer, running

from ._view_data import pointwise_result


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ReviewServer]:
    path = pointwise_result(40, xss=True).save(tmp_path / "run.jsonl")
    with running(path, reviewer="host") as server:
        yield server


def _request(
    server: ReviewServer,
    method: str,
    path: str,
    body: object = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, str]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    data = None if body is None else json.dumps(body).encode()
    sent = dict(headers or {})
    if data is not None:
        sent.setdefault("Content-Type", "application/json")
    conn.request(method, path, body=data, headers=sent)
    resp = conn.getresponse()
    text = resp.read().decode("utf-8", "replace")
    conn.close()
    return resp.status, text


def _auth(server: ReviewServer, **more: str) -> dict[str, str]:
    return {"X-Rubriclab-Token": server.token, **more}


def _label(row: int, value: str = "pass") -> dict[str, object]:
    return {"row": row, "metric": "support", "criterion": "overall", "value": value}


def test_url_binds_localhost_with_token(served: ReviewServer) -> None:
    url = urlsplit(served.url)
    assert url.hostname == "127.0.0.1"
    assert url.query == f"token={served.token}" and len(served.token) >= 30
    status, page = _request(served, "GET", f"/?token={served.token}")
    assert status == 200 and "review_page.js" in page


@pytest.mark.parametrize(
    "path", ["/", "/api/info", "/api/rows", "/api/case/0", "/static/review_page.js"]
)
def test_every_request_needs_the_token(served: ReviewServer, path: str) -> None:
    assert _request(served, "GET", path)[0] == 403
    assert _request(served, "GET", path + "?token=wrong")[0] == 403
    assert _request(served, "GET", path, headers=_auth(served))[0] == 200


def test_writes_need_the_header_and_our_origin(served: ReviewServer) -> None:
    body = {"reviewer": "ana", "labels": [_label(0)]}
    # the token in the query string is not enough for a change (a form elsewhere could send it)
    assert _request(served, "POST", f"/api/labels?token={served.token}", body)[0] == 403
    evil = _auth(served, Origin="http://evil.example")
    assert _request(served, "POST", "/api/labels", body, evil)[0] == 403
    own = _auth(served, Origin=f"http://127.0.0.1:{served.port}")
    status, text = _request(served, "POST", "/api/labels", body, own)
    assert status == 200 and json.loads(text)["saved"] == 1
    assert load_result(served.path).labels["reviewer"].tolist() == ["ana"]


@pytest.mark.parametrize(
    "path",
    [
        "/static/../../../../etc/passwd",
        "/static/..%2f..%2f..%2fetc%2fpasswd",
        "/static/%2e%2e/%2e%2e/etc/passwd",
        "/../../etc/passwd",
        "/static/result_table.js",
        "/static/__init__.py",
        "/static/",
        "/api/case/999",
        "/api/case/-1",
    ],
)
def test_nothing_outside_the_bundle_is_served(served: ReviewServer, path: str) -> None:
    status, text = _request(served, "GET", path, headers=_auth(served))
    assert status == 404, (path, status)
    assert "root:" not in text


def test_bad_labels_are_refused_with_a_reason(served: ReviewServer) -> None:
    for labels, reason in [
        ([_label(0, "maybe")], "'maybe' is not one of pass, fail"),
        ([_label(99)], "row 99 is out of range"),
        ([{**_label(0), "__proto__": 1}], "unknown label keys"),
        ("x", "expected a non-empty list"),
    ]:
        status, text = _request(served, "POST", "/api/labels", {"labels": labels}, _auth(served))
        assert status == 400 and reason in json.loads(text)["error"]
    assert not labels_path(served.path).exists() or load_result(served.path).labels.empty


def test_case_text_is_json_text(served: ReviewServer) -> None:
    status, text = _request(served, "GET", "/api/case/1", headers=_auth(served))
    data = json.loads(text)
    assert status == 200
    fields = {f["name"]: f["text"] for f in data["fields"]}
    assert "<img src=x onerror" in fields["prompt"]  # carried as text, drawn as text
    overall = data["form"][0]["questions"][0]
    assert overall == {
        "criterion": "overall",
        "allowed": ["pass", "fail"],
        "judge": "fail",
        "labels": [],
    }


def test_two_reviewers_500_labels_each_in_bursts_lose_nothing(served: ReviewServer) -> None:
    def burst(reviewer: str, start: int) -> None:
        labels = [_label(i % 40, "pass" if i % 2 else "fail") for i in range(start, start + 10)]
        status, _ = _request(
            served, "POST", "/api/labels", {"reviewer": reviewer, "labels": labels}, _auth(served)
        )
        assert status == 200

    with ThreadPoolExecutor(16) as pool:
        jobs = [
            pool.submit(burst, reviewer, start)
            for start in range(0, 500, 10)
            for reviewer in ("ana", "bo")
        ]
        # the page answers while the bursts go on
        assert _request(served, "GET", "/api/rows", headers=_auth(served))[0] == 200
        for job in jobs:
            job.result()
    history = load_result(served.path).label_history
    assert len(history) == 1000
    assert history.groupby("reviewer").size().to_dict() == {"ana": 500, "bo": 500}


def test_cli_review_flags_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = pointwise_result(3).save(tmp_path / "r.jsonl")
    assert main(["review", str(path), "--port", "70000"]) == 2
    assert "--port must be between 0 and 65535" in capsys.readouterr().err
    assert main(["review", str(path), "--reviewer", "a\tb"]) == 2
    assert "--reviewer: the reviewer name" in capsys.readouterr().err
    assert main(["review", str(tmp_path / "missing.jsonl")]) == 2
    assert "no result file" in capsys.readouterr().err
