"""Daily spend caps on moto: a reservation per paid call, never past the cap, the day's first
refusal told once even when functions reach it together, a new UTC day spends again."""

from __future__ import annotations

import datetime as dt
import threading
from typing import Any

import pytest

from handlers.common import metrics, spend
from handlers.common.degradations import Ledger, model_client
from handlers.common.metrics import emf_metrics
from handlers.common.model_call import NoAnswerReason, NoValidAnswer, call_structured
from handlers.upsell_recommender.picking import Shortlist
from testsupport.common import FakeBedrockClient

NOON = dt.datetime(2026, 12, 7, 12, 0, tzinfo=dt.UTC)
TABLE = "spend-test"


@pytest.fixture
def notes(make_table: Any, monkeypatch: pytest.MonkeyPatch) -> Ledger:
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "rrs-sender")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "crm/dev")
    return Ledger(make_table(TABLE, "pk", ttl="ttl"), "pk", "ttl")


def guard(notes: Ledger, cap: int, clock: list[dt.datetime]) -> spend.SpendGuard:
    return spend.SpendGuard.beside(notes, {"sms": cap, "model": cap}, lambda: clock[0])


def counter(notes: Ledger, kind: str, day: str = "2026-12-07") -> dict[str, Any]:
    item: dict[str, Any] = notes.table.get_item(Key={"pk": f"spend#{kind}#{day}"})["Item"]
    return item


def test_the_cap_holds_then_a_new_utc_day_spends_again(
    notes: Ledger, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = [NOON]
    g = guard(notes, 2, clock)
    g.reserve("sms")
    g.reserve("sms")
    for _ in range(3):
        with pytest.raises(spend.CapReached) as refused:
            g.reserve("sms")
    assert refused.value.resume_at == dt.datetime(2026, 12, 8, tzinfo=dt.UTC)
    item = counter(notes, "sms")
    assert item["spent"] == 2  # a refused reservation adds nothing
    assert item["ttl"] == int(NOON.timestamp()) + spend.KEEP_S and "told_at" in item

    emitted = [m for line in capsys.readouterr().out.splitlines() for m in emf_metrics(line)]
    capped = [m for m in emitted if m[1] == metrics.SPEND_CAPPED]
    reached = [m for m in emitted if m[1] == metrics.SPEND_CAP_REACHED]
    assert [m[3] for m in capped] == [{"service": "rrs", "kind": "sms"}] * 3  # every held call
    assert [m[3] for m in reached] == [{"service": "rrs"}]  # told once

    clock[0] = dt.datetime(2026, 12, 8, 0, 0, 1, tzinfo=dt.UTC)
    g.reserve("sms")
    assert counter(notes, "sms", "2026-12-08")["spent"] == 1


def test_concurrent_functions_never_spend_past_the_cap_and_one_tells(
    notes: Ledger, atomic_dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    atomic_dynamodb.max_s = 0.002
    told: list[bool] = []
    monkeypatch.setattr(metrics, "spend_capped", lambda kind, *, first: told.append(first))
    g = guard(notes, 3, [NOON])
    outcomes: list[str] = []

    def one() -> None:
        try:
            g.reserve("model")
            outcomes.append("spent")
        except spend.CapReached:
            outcomes.append("held")

    threads = [threading.Thread(target=one) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["held"] * 7 + ["spent"] * 3
    assert counter(notes, "model")["spent"] == 3
    assert sorted(told) == [False] * 6 + [True]  # two or more reached it together: one notice


def test_a_zero_cap_makes_no_call_and_still_tells_once(notes: Ledger) -> None:
    g = guard(notes, 0, [NOON])
    with pytest.raises(spend.CapReached):
        g.reserve("sms")
    assert "spent" not in counter(notes, "sms")


def test_a_capped_model_call_is_not_made_and_the_caller_gets_no_answer(notes: Ledger) -> None:
    bedrock = FakeBedrockClient([{"suggestions": []}, {"suggestions": []}])
    client = model_client(bedrock, notes, "rrs-sender", lambda: NOON, 1)

    def ask() -> Any:
        return call_structured(
            model_id="m", prompt="p", output_model=Shortlist, tool_name="t",
            tool_description="d", client=client,
        )

    assert not isinstance(ask(), NoValidAnswer)
    answer = ask()
    assert isinstance(answer, NoValidAnswer) and answer.reason is NoAnswerReason.CAPPED
    assert not answer.retryable and answer.attempts == 0
    assert len(bedrock.calls) == 1  # the second call never reached Bedrock
