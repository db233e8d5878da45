"""rrs-sweep (stragglers, opening-hours gate) on moto."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from handlers.review_requests.domain import request_id_for
from handlers.review_requests.functions import sweep as sweep_module
from handlers.review_requests.functions import webhook
from tests.handlers.rrs.conftest import Rrs, completion, url_event

RID = request_id_for("cmp-1")
DUE = dt.datetime(2026, 6, 10, 11, 0, tzinfo=dt.UTC)


@pytest.fixture
def straggler(rrs: Rrs) -> Rrs:
    rrs.put_customer()
    webhook.handler(url_event(completion()), None)
    rrs.now = DUE + dt.timedelta(hours=1)  # 13:00 London, an hour past due, still scheduled
    return rrs


def sweep() -> dict[str, Any]:
    answer: dict[str, Any] = sweep_module.handler({}, None)
    return answer


def test_the_sweep_does_nothing_outside_opening_hours(straggler: Rrs) -> None:
    straggler.now = dt.datetime(2026, 6, 10, 20, 0, tzinfo=dt.UTC)  # 21:00 London
    assert sweep() == {"skipped": "outside_opening_hours"}
    assert straggler.drain() == [] and "sweeps" not in straggler.request(RID)


def test_a_request_inside_the_grace_period_is_left_to_its_schedule(straggler: Rrs) -> None:
    straggler.now = DUE + dt.timedelta(minutes=10)
    assert sweep()["requeued"] == 0 and straggler.drain() == []


def test_a_straggler_is_requeued_then_given_up_and_escalated(straggler: Rrs) -> None:
    for attempt in range(1, 4):
        assert sweep() == {"requeued": 1, "escalated": 0, "lost_races": 0, "unconfirmed": 0, "degraded_notice": 0}
        assert straggler.escalations() == []
        assert straggler.sends() == [{"kind": "send", "request_id": RID, "v": 1}]
        assert straggler.request(RID)["sweeps"] == attempt
        straggler.now += dt.timedelta(minutes=15)
    assert sweep() == {"requeued": 0, "escalated": 1, "lost_races": 0, "unconfirmed": 0, "degraded_notice": 0}
    assert straggler.sends() == []
    assert straggler.escalations() == [
        {"kind": "escalate", "request_id": RID, "reason": "straggler", "dedupe_key": "straggler", "v": 1}
    ]
    item = straggler.request(RID)
    assert (item["state"], item["suppressed_reason"]) == ("suppressed", "undelivered_after_sweeps")
    assert sweep() == {"requeued": 0, "escalated": 0, "lost_races": 0, "unconfirmed": 0, "degraded_notice": 0}


def test_the_sweep_never_touches_an_asked_or_diverted_request(straggler: Rrs) -> None:
    for state in ("asked", "diverted"):
        straggler.table("REQUESTS_TABLE").update_item(
            Key={"request_id": RID},
            UpdateExpression="SET #s = :s",
            ExpressionAttributeNames={"#s": "state"},
            ExpressionAttributeValues={":s": state},
        )
        assert sweep() == {"requeued": 0, "escalated": 0, "lost_races": 0, "unconfirmed": 0, "degraded_notice": 0}
        assert straggler.drain() == []


def test_a_concurrent_sweep_loses_the_mark_and_does_not_requeue(
    straggler: Rrs, monkeypatch: pytest.MonkeyPatch
) -> None:
    from handlers.review_requests.store import Requests

    stale = straggler.request(RID)
    sweep()
    straggler.drain()
    monkeypatch.setattr(Requests, "stragglers", lambda self, before, limit: iter([dict(stale)]))
    assert sweep() == {"requeued": 0, "escalated": 0, "lost_races": 1, "unconfirmed": 0, "degraded_notice": 0}
    assert straggler.drain() == []


# Sync --------------------------------------------------------------------------------------

