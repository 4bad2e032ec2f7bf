"""The judge card end to end over the fake judge server: scripted judges of known behaviour give
exactly the figures computed by hand, the mock's card says MOCK everywhere, and a card file is
read as untrusted data."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.judge_card.suites import load_suite, sample_items
from rubriclab.scoring import wilson_interval
from rubriclab.testing import FakeJudgeServer
from tests import judge_scripts

Pick = Callable[[str, str], str]


def _between(text: str, tag: str) -> str:
    match = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    assert match, f"no <{tag}> in the prompt"
    return match.group(1)


def scripted(pick: Pick) -> Callable[[dict[str, Any]], str]:
    """A pairwise judge whose overall choice is ``pick(response_A, response_B)``: "A", "B", "tie"."""

    def respond(body: dict[str, Any]) -> str:
        prompt = body["messages"][0]["content"]
        prompt = prompt if isinstance(prompt, str) else prompt[0]["text"]
        choice = pick(_between(prompt, "response_A"), _between(prompt, "response_B"))
        schema = body["response_format"]["json_schema"]["schema"]
        ids = list(schema["properties"]["criteria"]["properties"])
        crit = {i: {"evidence": "read both", "a": "YES", "b": "NO", "winner": choice} for i in ids}
        label = {"A": "A better", "B": "B better", "tie": "tie"}[choice]
        return json.dumps({"criteria": crit, "overall": {"reasoning": "scripted", "choice": label}})

    return respond


def _items(suite: str, n: int | None, seed: int = 0) -> pd.DataFrame:
    return sample_items(load_suite(suite), n, seed)


def _pair(a: str, b: str) -> frozenset[str]:
    return frozenset((a.strip(), b.strip()))


def _gold(items: pd.DataFrame) -> dict[frozenset[str], str]:
    """Each item's two outputs -> the text of the human-preferred one."""
    out: dict[frozenset[str], str] = {}
    for r in items.to_dict("records"):
        out[_pair(r["output_1"], r["output_2"])] = r[f"output_{r['label']}"].strip()
    return out


def _human(items: pd.DataFrame, share_of: set[frozenset[str]] | None = None) -> Pick:
    """Picks the human answer (on the items whose output pair is in ``share_of``, if given; the
    other answer, in both orders, on the rest)."""
    gold = _gold(items)

    def pick(a: str, b: str) -> str:
        right = "A" if gold[_pair(a, b)] == a.strip() else "B"
        if share_of is not None and _pair(a, b) not in share_of:
            return "B" if right == "A" else "A"
        return right

    return pick


def _judge(server: FakeJudgeServer) -> rl.Judge:
    return rl.Judge(server.url, model="scripted", api_key="test", max_retries=0)


def _row(card: rl.JudgeCard, subset: str = "all", judge: str | None = None) -> pd.Series:
    s = card.summary
    s = s[s["subset"] == subset]
    if judge is not None:
        s = s[s["judge"] == judge]
    assert len(s) == 1
    return s.iloc[0]


def test_first_slot_judge_is_always_swap_inconsistent(fake_judge: FakeJudgeServer) -> None:
    fake_judge.responder = judge_scripts.first_position
    card = rl.rate_judge(_judge(fake_judge), suites=("llmbar",), n=20, seed=3)
    row = _row(card)
    assert (row["items"], row["errors"]) == (20, 0)
    assert row["swap_inconsistency"] == 1.0
    assert row["first_slot_share"] == 1.0
    # right in exactly one order of each item: half an item right, 20 times
    assert row["accuracy"] == 0.5 and row["accuracy_both_orders"] == 0.0
    hand = wilson_interval(10, 20)
    assert row["accuracy_low"] == pytest.approx(hand.low)
    assert row["accuracy_high"] == pytest.approx(hand.high)
    assert row["tie_rate"] == 0.0
    assert len(fake_judge.requests) == 40  # both orders of 20 items


def test_human_answer_judge_is_always_right(fake_judge: FakeJudgeServer) -> None:
    items = _items("llmbar", 25, seed=1)
    fake_judge.responder = scripted(_human(items))
    card = rl.rate_judge(_judge(fake_judge), suites="llmbar", n=25, seed=1)
    row = _row(card)
    assert row["accuracy"] == 1.0 and row["swap_inconsistency"] == 0.0
    hand = wilson_interval(25, 25)
    assert (row["accuracy_low"], row["accuracy_high"]) == pytest.approx((hand.low, hand.high))
    for subset, group in items.groupby("subset"):
        assert _row(card, str(subset))["items"] == len(group)


def test_known_share_gives_the_hand_computed_figures(fake_judge: FakeJudgeServer) -> None:
    items = _items("hhh", 40, seed=7)
    right = items.iloc[::3]  # 14 of 40 items: the human answer; the rest: the other one
    share = {_pair(a, b) for a, b in zip(right["output_1"], right["output_2"], strict=True)}
    assert len(_gold(items)) == len(items)  # each item's pair of outputs is its own
    fake_judge.responder = scripted(_human(items, share))
    card = rl.rate_judge(_judge(fake_judge), suites=("hhh",), n=40, seed=7)
    row = _row(card)
    k, n = len(right), len(items)
    assert row["accuracy"] == pytest.approx(k / n) and row["swap_inconsistency"] == 0.0
    hand = wilson_interval(k, n)
    assert (row["accuracy_low"], row["accuracy_high"]) == pytest.approx((hand.low, hand.high))
    # length bias by hand: accuracy where the preferred answer is shorter / longer
    is_right = items["item"].isin(right["item"])
    pref_len = items.apply(lambda r: len(r[f"output_{r['label']}"]), axis=1)
    other_len = items.apply(lambda r: len(r[f"output_{3 - int(r['label'])}"]), axis=1)
    shorter = is_right[pref_len < other_len]
    longer = is_right[pref_len > other_len]
    assert row["accuracy_preferred_shorter"] == pytest.approx(shorter.mean())
    assert row["accuracy_preferred_longer"] == pytest.approx(longer.mean())
    # per subset (HHH's source) too
    for subset, group in items.groupby("subset"):
        sub = _row(card, str(subset))
        assert sub["accuracy"] == pytest.approx(group["item"].isin(right["item"]).mean())


def test_two_judges_get_paired_differences(fake_judge: FakeJudgeServer) -> None:
    items = _items("llmbar", 12, seed=0)
    fake_judge.responder = scripted(_human(items))
    with FakeJudgeServer(judge_scripts.first_position) as other:
        card = rl.rate_judges(
            [_judge(fake_judge), _judge(other)], suites=("llmbar",), n=12, names=["human", "first"]
        )
    assert card.judges == ["human", "first"]
    wide = card.table("accuracy")
    assert list(wide.columns) == ["human", "first"]
    assert wide.loc[("llmbar", "all"), "human"] == 1.0
    assert wide.loc[("llmbar", "all"), "first"] == 0.5
    diff = next(d for d in card.data["differences"] if d["subset"] == "all")
    # every item: 0.5 - 1.0; a constant difference has a zero-width interval
    assert (diff["a"], diff["b"], diff["n"]) == ("human", "first", 12)
    assert diff["difference"] == diff["low"] == diff["high"] == -0.5


def test_failing_calls_are_errors_not_wrong_answers(fake_judge: FakeJudgeServer) -> None:
    items = _items("llmbar", 10, seed=2)
    bad = items["output_1"].iloc[0].strip()
    human = _human(items)

    def respond(body: dict[str, Any]) -> str:
        prompt = body["messages"][0]["content"]
        if bad in prompt:
            return "I will not answer in JSON."
        return scripted(human)(body)

    fake_judge.responder = respond
    card = rl.rate_judge(_judge(fake_judge), suites=("llmbar",), n=10, seed=2)
    row = _row(card)
    assert row["errors"] == 1 and row["items"] == 10
    assert row["accuracy"] == 1.0  # the failed item is left out, not scored 0
    failed = card.verdicts[card.verdicts["error"].notna()]
    assert len(failed) == 1 and failed["v1"].isna().all()
    assert card.data["usage"][0]["errors"] == 1


def test_mt_bench_agreement_counts_as_table_5() -> None:
    """The card's agreement code gives Table 5's cells from GPT-4's shipped pair verdicts."""
    from rubriclab.judge_card.figures import mt_bench_agreement

    items = load_suite("mt_bench")
    votes = rl.datasets.load_mt_bench_judgments()
    experts = votes[votes["judge_type"] == "expert"]
    for turn, s1, s2 in (("turn 1", (886, 1343), (727, 859)), ("turn 2", (871, 1325), (731, 864))):
        part = items[items["subset"] == turn]
        verdicts = {r["item"]: r["reference"]["GPT-4 pair"] for r in part.to_dict("records")}
        got = mt_bench_agreement(part, verdicts, experts)
        assert (got["with_ties"]["k"], got["with_ties"]["n"]) == s1
        assert (got["without_ties"]["k"], got["without_ties"]["n"]) == s2


def test_mt_bench_first_slot_judge_is_all_inconsistent_ties(fake_judge: FakeJudgeServer) -> None:
    fake_judge.responder = judge_scripts.first_position
    card = rl.rate_judge(_judge(fake_judge), suites=("mt_bench",), n=30, seed=5)
    row = _row(card)
    assert row["swap_inconsistency"] == 1.0
    # every verdict is "tie (inconsistent)": agreement with ties = the experts' tie votes
    items = _items("mt_bench", 30, seed=5)
    votes = rl.datasets.load_mt_bench_judgments()
    experts = votes[votes["judge_type"] == "expert"]
    keys = {(r.question_id, r.turn, r.model_1, r.model_2) for r in items.itertuples()}
    mine = [
        v
        for v in experts.itertuples()
        if (v.question_id, v.turn, *sorted((v.model_a, v.model_b))) in keys
    ]
    ties = sum("tie" in v.winner for v in mine)
    assert row["agreement_with_ties"] == pytest.approx(ties / len(mine))
    assert pd.isna(row["agreement_without_ties"])  # the judge never names a winner


def test_mock_judge_card_says_mock_everywhere(tmp_path: Path) -> None:
    card = rl.rate_judge(rl.Judge("mock"), suites=("llmbar", "pandalm"), n=6)
    assert card.is_mock and card.judges == ["MOCK judge"]
    assert "MOCK" in repr(card)
    assert "MOCK" in card.summary.attrs["note"]
    assert set(card.summary["judge"]) == {"MOCK judge"}
    bundle = card._repr_mimebundle_()
    assert rl.JudgeCardView(card)._repr_mimebundle_() == bundle
    assert bundle["text/plain"].startswith("MOCK Judge card")
    assert "MOCK judge: offline" in bundle["text/html"]
    page = card.save(tmp_path / "card.html").read_text()
    assert "<title>MOCK rubriclab judge card</title>" in page and "MOCK judge: offline" in page
    assert "<script" not in page
    loaded = rl.load_judge_card(card.save(tmp_path / "card.json"))
    assert loaded.is_mock and "MOCK" in loaded._repr_mimebundle_()["text/html"]


def test_published_figures_are_cited_and_on_the_same_items() -> None:
    card = rl.rate_judge(rl.Judge("mock"), suites=("llmbar", "pandalm", "hhh"), n=419)
    pub = card.published
    assert set(pub["suite"]) == {"llmbar", "pandalm"}  # nothing verified for HHH
    full = pub[pub["kind"].str.contains("all items")]
    natural = full[(full["subset"] == "Natural") & (full["judge"] == "GPT-4, Vanilla")]
    assert natural["value"].item() == pytest.approx(0.935)
    same = pub[(pub["kind"].str.contains("these items")) & (pub["suite"] == "llmbar")]
    nat_same = same[(same["subset"] == "Natural") & (same["judge"] == "GPT-4, Vanilla")]
    assert nat_same["value"].item() == pytest.approx(0.935)  # all 100 items sampled: equal
    assert all("Zeng et al. 2024" in s for s in pub[pub["suite"] == "llmbar"]["source"])
    assert all("not a paper figure" in k for k in pub[pub["suite"] == "pandalm"]["kind"])


def test_card_file_is_untrusted(tmp_path: Path) -> None:
    card = rl.rate_judge(rl.Judge("mock"), suites=("hhh",), n=4)
    path = card.save(tmp_path / "card.json")
    data = json.loads(path.read_text())
    data["judges"][0]["name"] = "<img src=x onerror=alert(1)>"
    for f in data["figures"]:
        f["judge"] = "<img src=x onerror=alert(1)>"
    path.write_text(json.dumps(data))
    html = rl.load_judge_card(path)._repr_mimebundle_()["text/html"]
    assert "<img src=x" not in html and "&lt;img src=x" in html
    (tmp_path / "bad.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ValueError, match="not a judge card"):
        rl.load_judge_card(tmp_path / "bad.json")
    data["figures"] = "oops"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="'figures' must be a list of objects"):
        rl.load_judge_card(path)


def test_bad_arguments_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="suites: no suite 'llmbr'; choose from"):
        rl.rate_judge(rl.Judge("mock"), suites=("llmbr",))
    with pytest.raises(ValueError, match="n: a whole number"):
        rl.rate_judge(rl.Judge("mock"), n=0)
    with pytest.raises(ValueError, match="pairwise metric"):
        rl.rate_judge(rl.Judge("mock"), metric=rl.metrics.TEXT_QUALITY)  # type: ignore[arg-type]


def test_cli_rates_a_judge_at_a_url(
    fake_judge: FakeJudgeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rubriclab.cli import main

    fake_judge.responder = judge_scripts.first_position
    out = tmp_path / "card.html"
    args = ["rate-judge", "--judge", fake_judge.url, "--model", "judge-x", "--suite", "hhh"]
    assert main([*args, "-n", "8", "-o", str(out)]) == 0
    printed = capsys.readouterr()
    assert "swap inconsistency" in printed.out and "100.0%" in printed.out
    assert "MOCK" not in printed.out
    page = out.read_text()
    assert "Judge card: judge-x" in page and "<script" not in page
    assert {r["model"] for r in fake_judge.requests} == {"judge-x"}
    assert len(fake_judge.requests) == 16
    card_json = tmp_path / "card.json"
    assert main([*args, "-n", "8", "-o", str(card_json)]) == 0
    assert rl.load_judge_card(card_json).summary["swap_inconsistency"].tolist()[0] == 1.0


def test_cli_bad_flags_are_one_line_errors(capsys: pytest.CaptureFixture[str]) -> None:
    from rubriclab.cli import main

    assert main(["rate-judge", "-n", "0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "rubriclab rate-judge: error: -n: a whole number of items per suite, 1 or more"
    )
    assert main(["rate-judge", "--judge", "http://127.0.0.1:9/v1"]) == 2
    assert "needs --model NAME" in capsys.readouterr().err


def test_batch_judge_and_cache_rate_like_any_run(tmp_path: Path) -> None:
    """A batch=True judge answers the card through the provider batch API at half price, and a
    second card from the same cache makes no call."""
    import threading

    from rubriclab.testing.batch_server import FakeBatchServer, ManualClock

    clock = ManualClock()
    with FakeBatchServer(
        judge_scripts.first_position, clock=clock, run_seconds=60, api_key="sk-batch-test"
    ) as server:
        judge = rl.Judge(
            server.url,
            model="gpt-4o-mini",
            api_key="sk-batch-test",
            batch=True,
            batch_poll_interval=0.01,
            cache=tmp_path / "cache.sqlite3",
            max_retries=0,
        )
        out: dict[str, Any] = {}
        thread = threading.Thread(
            target=lambda: out.update(card=rl.rate_judge(judge, suites=("hhh",), n=6)),
            daemon=True,
        )
        thread.start()
        assert server.wait_for_polls(1)
        clock.advance(61)
        thread.join(60)
        card: rl.JudgeCard = out["card"]
        assert len(server.batches) == 1
        assert len(next(iter(server.batches.values())).lines) == 12  # 6 items, both orders
        assert _row(card)["swap_inconsistency"] == 1.0
        usage = card.data["usage"][0]
        assert usage["calls"] == 12 and usage["cost"] > 0
        again = rl.rate_judge(judge, suites=("hhh",), n=6)
        assert len(server.batches) == 1  # all answered from the cache
        assert again.summary.equals(card.summary)
        assert again.data["usage"][0]["calls"] == 0
        assert again.data["usage"][0]["cached_calls"] == 12
