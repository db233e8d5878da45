"""rrs-webhook: payloads DynamoDB cannot store never wedge a request, and a crash between any
two writes of the completion path is finished by the tool's redelivery (one request, one job,
one schedule, one intake audit entry)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from handlers.review_requests.domain import request_id_for
from handlers.review_requests.functions import webhook
from tests.handlers.rrs.conftest import Rrs, completion, response_body, url_event


def call(event: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = webhook.handler(event, None)
    return answer


def deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = {"n": value}
    return value


HOSTILE: dict[str, dict[str, Any]] = {
    "40 digits": {"extra": {"total": int("9" * 40)}},
    "1e300": {"extra": {"total": 1e300}},
    "500 levels": {"extra": deep(500)},
    "empty key": {"extra": {"": "x"}},
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_completion_with_unstorable_extras_is_accepted_once_with_its_payload_kept_as_text(
    rrs: Rrs, case: str
) -> None:
    rrs.put_customer()
    body = {**completion(), **HOSTILE[case]}
    raw = json.dumps(body).encode()
    for _ in range(3):  # three deliveries
        answer = call(url_event(raw))
        assert answer["statusCode"] == 200, (case, answer)
    rid = request_id_for("cmp-1")
    assert rrs.request(rid)["state"] == "scheduled"
    [job] = rrs.items("JOBS_TABLE")
    assert "payload" not in job and job["payload_kept_as"].startswith("text")
    assert len(job["payload_json"]) <= 16 * 1024
    assert [s["Name"] for s in rrs.schedules()] == [rid]
    assert [e["event"] for e in rrs.audit(rid)] == ["intake"]


def test_an_event_that_cannot_be_stored_at_all_is_a_422_with_nothing_written(rrs: Rrs) -> None:
    rrs.put_customer()
    body = completion(title="x" * 100)
    body["customer"] = {"name": "A" * 100, "timezone": "Europe/London"}
    from handlers.common.dynamo_limits import check_item as original

    def tiny(item: Any, **_: Any) -> int:
        return original(item, max_bytes=64)  # as if the item were over 400 KB

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("handlers.review_requests.intake.check_item", tiny)
        answer = call(url_event(body))
    assert (
        answer["statusCode"] == 422 and response_body(answer)["error"]["code"] == "unstorable_event"
    )
    for key in ("REQUESTS_TABLE", "JOBS_TABLE", "AUDIT_TABLE"):
        assert rrs.items(key) == [], key
    assert rrs.schedules() == []


class Crash(BaseException):
    """The invocation dies here."""


@pytest.mark.parametrize("write", ["create", "record", "ensure", "append"])
def test_a_crash_between_any_two_completion_writes_is_finished_by_the_redelivery(
    rrs: Rrs, monkeypatch: pytest.MonkeyPatch, write: str
) -> None:
    from handlers.review_requests import scheduling, store

    owners = {
        "create": store.Requests,
        "record": store.Jobs,
        "ensure": scheduling.EventBridgeScheduler,
        "append": store.Audit,
    }
    owner = owners[write]
    real = getattr(owner, write)
    armed = [True]

    def crashing(self: Any, *args: Any, **kwargs: Any) -> Any:
        if armed[0]:
            armed[0] = False
            raise Crash(write)
        return real(self, *args, **kwargs)

    rrs.put_customer()
    monkeypatch.setattr(owner, write, crashing)
    with pytest.raises(Crash):
        call(url_event(completion()))
    answer = call(url_event(completion()))  # the tool redelivers
    assert answer["statusCode"] == 200
    call(url_event(completion()))  # and once more: nothing doubles
    rid = request_id_for("cmp-1")
    assert len(rrs.items("REQUESTS_TABLE")) == 1 and rrs.request(rid)["state"] == "scheduled"
    assert len(rrs.items("JOBS_TABLE")) == 1
    assert [s["Name"] for s in rrs.schedules()] == [rid]
    assert [e["event"] for e in rrs.audit(rid)] == ["intake"]


def test_three_deliveries_of_one_completion_at_once_leave_one_of_each(
    rrs: Rrs, atomic_dynamodb: Any
) -> None:
    """50 trials: the tool's redeliveries arrive together, each on its own thread."""
    import threading

    atomic_dynamodb.max_s = 0.002
    rrs.put_customer()
    for trial in range(50):
        raw = json.dumps(completion(f"cmp-race-{trial}")).encode()
        barrier = threading.Barrier(3)
        answers: list[Any] = []

        def deliver(
            raw: bytes = raw, barrier: threading.Barrier = barrier, answers: list[Any] = answers
        ) -> None:
            barrier.wait()
            answers.append(call(url_event(raw)))

        threads = [threading.Thread(target=deliver) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert [a["statusCode"] for a in answers] == [200, 200, 200], (trial, answers)
        assert sorted(response_body(a)["duplicate"] for a in answers) == [False, True, True]
        rid = request_id_for(f"cmp-race-{trial}")
        assert [e["event"] for e in rrs.audit(rid)] == ["intake"]
    assert len(rrs.items("REQUESTS_TABLE")) == 50
    assert len(rrs.items("JOBS_TABLE")) == 50
    assert len(rrs.schedules()) == 50
