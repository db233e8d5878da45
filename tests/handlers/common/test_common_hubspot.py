"""Contract tests of the shared HubSpot client against a scripted local HubSpot.

The answers replay HubSpot's documented shapes: the list response with
``paging.next.after`` ("Retrieve contacts", the objects API reference), the error body
``{"status": "error", "message", "correlationId", "category"}``, and the 429 body with
``errorType: RATE_LIMIT`` and ``policyName`` (SECONDLY, DAILY) with ``Retry-After``
("API usage guidelines and limits",
https://developers.hubspot.com/docs/developer-tooling/platform/usage-guidelines). Time is
simulated: the client's sleep advances a fake clock, so waits are asserted, not endured.
"""

from __future__ import annotations

import datetime as dt
import email.utils
from collections.abc import Iterator

import pytest

from handlers.common.api_versions import HUBSPOT_DEFAULT_VERSION, HUBSPOT_RELEASES, hubspot_window
from handlers.common.hubspot import (
    BudgetExhausted,
    DeadlineReached,
    HubSpotClient,
    HubSpotError,
    RateLimit,
    token_from_secret,
)
from tests.handlers.common.hubspot_stub import Stub, running

SECONDLY = {
    "status": "error",
    "message": "You have reached your secondly limit.",
    "errorType": "RATE_LIMIT",
    "correlationId": "c1a7b1a5-7c3f-4a7e-9d0f-0b4b8f4d9f11",
    "policyName": "SECONDLY",
}
DAILY = {**SECONDLY, "message": "You have reached your daily limit.", "policyName": "DAILY"}
VALIDATION = {
    "status": "error",
    "message": 'Property values were not valid: [{"isValid":false,"message":"Property \\"foo\\" does not exist"}]',
    "correlationId": "aeb5f871-7f07-4993-9211-075dc63e7cbf",
    "category": "VALIDATION_ERROR",
}


class FakeTime:
    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 3))
        self.now += seconds


@pytest.fixture
def stub() -> Iterator[Stub]:
    with running() as server:
        yield server


def client(stub: Stub, time: FakeTime, **options: object) -> HubSpotClient:
    return HubSpotClient(
        "svc-key-1",
        base_url=stub.url,
        sleep=time.sleep,
        clock=time.clock,
        wall=lambda: 1_767_225_600.0,
        jitter=lambda: 1.0,
        **options,  # type: ignore[arg-type]
    )


def test_paths_carry_the_date_version_and_the_service_key_is_a_bearer_token(stub: Stub) -> None:
    hub = client(stub, FakeTime())
    assert hub.crm_path("objects", "contacts", "123") == f"/crm/objects/{HUBSPOT_DEFAULT_VERSION}/contacts/123"
    assert (
        hub.crm_path("associations", "contacts", "deals", "batch", "read")
        == f"/crm/associations/{HUBSPOT_DEFAULT_VERSION}/contacts/deals/batch/read"
    )
    assert hub.crm_path("objects", "contacts", "a/b") == f"/crm/objects/{HUBSPOT_DEFAULT_VERSION}/contacts/a%2Fb"
    stub.answer(200, {"id": "123", "properties": {"email": "bcooper@biglytics.net"}})
    assert hub.request("GET", hub.crm_path("objects", "contacts", "123"))["id"] == "123"
    assert stub.last["headers"]["authorization"] == "Bearer svc-key-1"
    assert stub.last["path"] == "/crm/objects/2026-09/contacts/123"


def test_a_429_waits_for_retry_after_then_succeeds(stub: Stub) -> None:
    time = FakeTime()
    hub = client(stub, time)
    stub.answer(429, SECONDLY, Retry_After="3")
    stub.answer(200, {"results": []})
    assert hub.request("GET", "/crm/objects/2026-09/contacts") == {"results": []}
    assert time.sleeps == [3.0] and hub.retries == 1 and len(stub.requests) == 2


def test_retry_after_as_an_http_date(stub: Stub) -> None:
    time = FakeTime()
    hub = client(stub, time)
    later = email.utils.format_datetime(dt.datetime.fromtimestamp(1_767_225_605, dt.UTC), usegmt=True)
    stub.answer(429, SECONDLY, Retry_After=later)
    stub.answer(200, {})
    hub.request("GET", "/x")
    assert time.sleeps == [5.0]


def test_a_429_without_retry_after_backs_off_exponentially_and_gives_up(stub: Stub) -> None:
    time = FakeTime()
    hub = client(stub, time, max_attempts=4)
    for _ in range(4):
        stub.answer(429, SECONDLY)
    with pytest.raises(HubSpotError) as caught:
        hub.request("POST", "/crm/objects/2026-09/contacts", body={"properties": {}})
    assert caught.value.status == 429 and caught.value.retryable
    assert time.sleeps == [0.5, 1.0, 2.0]  # bounded: four attempts, three waits
    assert len(stub.requests) == 4


def test_the_daily_limit_is_not_retried(stub: Stub) -> None:
    time = FakeTime()
    stub.answer(429, DAILY, Retry_After="36000")
    with pytest.raises(BudgetExhausted):
        client(stub, time).request("GET", "/crm/objects/2026-09/contacts")
    assert time.sleeps == [] and len(stub.requests) == 1


def test_a_retry_after_longer_than_the_bound_is_not_slept(stub: Stub) -> None:
    time = FakeTime()
    stub.answer(429, SECONDLY, Retry_After="120")
    with pytest.raises(HubSpotError):
        client(stub, time, max_wait_s=30).request("GET", "/x")
    assert time.sleeps == []


def test_a_5xx_is_retried_for_a_safe_call_only(stub: Stub) -> None:
    time = FakeTime()
    hub = client(stub, time)
    stub.answer(502, {"status": "error", "message": "Bad gateway"})
    stub.answer(200, {"results": []})
    hub.request("POST", "/crm/objects/2026-09/contacts/search", body={}, idempotent=True)
    assert len(stub.requests) == 2
    stub.answer(503, {"status": "error", "message": "Service unavailable"})
    with pytest.raises(HubSpotError) as caught:
        hub.request("POST", "/crm/objects/2026-09/contacts", body={"properties": {}})
    assert caught.value.status == 503 and caught.value.retryable
    assert len(stub.requests) == 3  # a create that may have happened is not sent twice


def test_a_4xx_is_an_error_with_hubspots_category_and_correlation_id(stub: Stub) -> None:
    stub.answer(400, VALIDATION)
    with pytest.raises(HubSpotError) as caught:
        client(stub, FakeTime()).request("PATCH", "/crm/objects/2026-09/contacts/1", body={})
    err = caught.value
    assert (err.status, err.retryable, err.category) == (400, False, "VALIDATION_ERROR")
    assert err.correlation_id == VALIDATION["correlationId"] and len(stub.requests) == 1


def test_pagination_follows_after_until_it_is_absent(stub: Stub) -> None:
    hub = client(stub, FakeTime())
    stub.answer(
        200,
        {
            "results": [{"id": "1"}, {"id": "2"}],
            "paging": {"next": {"after": "NTI1Cg%3D%3D", "link": "?after=NTI1Cg%3D%3D"}},
        },
    )
    stub.answer(200, {"results": [{"id": "3"}]})
    ids = [r["id"] for r in hub.iterate("/crm/objects/2026-09/contacts", {"limit": "2"})]
    assert ids == ["1", "2", "3"]
    assert "after" not in stub.requests[0]["query"]
    assert stub.requests[1]["query"] == {"limit": "2", "after": "NTI1Cg%3D%3D"}


def test_the_burst_limit_spaces_requests_within_ten_seconds(stub: Stub) -> None:
    time = FakeTime()
    hub = client(stub, time, limits=RateLimit(burst=3, daily=100))
    for _ in range(4):
        stub.answer(200, {})
    for _ in range(4):
        hub.request("GET", "/x")
    assert time.sleeps == [10.5]  # the fourth waits for the first to leave the window (+ margin)


def test_search_keeps_to_its_own_limit(stub: Stub) -> None:
    time = FakeTime()
    hub = client(stub, time, limits=RateLimit(burst=100, daily=100, search_per_second=2))
    for _ in range(3):
        stub.answer(200, {"results": []})
    for _ in range(3):
        hub.request("POST", "/crm/objects/2026-09/contacts/search", body={}, idempotent=True)
    assert time.sleeps == [1.1]


def test_the_daily_budget_stops_before_sending(stub: Stub) -> None:
    hub = client(stub, FakeTime(), limits=RateLimit(burst=100, daily=1))
    stub.answer(200, {})
    hub.request("GET", "/x")
    with pytest.raises(BudgetExhausted):
        hub.request("GET", "/x")
    assert len(stub.requests) == 1


def test_no_wait_runs_past_the_deadline(stub: Stub) -> None:
    time = FakeTime()
    hub = client(stub, time, limits=RateLimit(burst=1, daily=100), deadline=time.now + 5)
    stub.answer(200, {})
    hub.request("GET", "/x")
    with pytest.raises(DeadlineReached):
        hub.request("GET", "/x")  # would wait 10 s for the window
    assert len(stub.requests) == 1 and time.sleeps == []


def test_only_https_or_a_local_server() -> None:
    with pytest.raises(ValueError, match="https"):
        HubSpotClient("t", base_url="http://api.hubapi.com", wall=lambda: 0.0)
    with pytest.raises(ValueError, match="empty"):
        HubSpotClient("", wall=lambda: 0.0)


def test_a_token_can_be_read_at_call_time(stub: Stub) -> None:
    keys = iter(["k1", "k2"])
    hub = HubSpotClient(lambda: next(keys), base_url=stub.url, wall=lambda: 0.0)
    stub.answer(200, {})
    stub.answer(200, {})
    hub.request("GET", "/x")
    hub.request("GET", "/x")
    assert [r["headers"]["authorization"] for r in stub.requests] == ["Bearer k1", "Bearer k2"]
    assert token_from_secret(' {"token": "svc"} ') == "svc" and token_from_secret("raw\n") == "raw"


def test_support_windows() -> None:
    latest = hubspot_window("2026-09")
    assert (latest.released, latest.supported_from, latest.unsupported_from) == (
        dt.date(2026, 9, 8),
        dt.date(2027, 3, 8),
        dt.date(2028, 3, 8),
    )
    assert latest.phase(dt.date(2026, 12, 1)) == "current"
    assert latest.phase(dt.date(2027, 6, 1)) == "supported"
    old = hubspot_window("2026-03")
    assert old.phase(dt.date(2027, 10, 1)) == "unsupported"
    assert old.describe(dt.date(2027, 10, 1)).startswith("WARNING")
    assert "2026-09 is current" in old.describe(dt.date(2027, 1, 1))
    assert max(HUBSPOT_RELEASES, key=HUBSPOT_RELEASES.__getitem__) == HUBSPOT_DEFAULT_VERSION


def test_a_rotated_key_is_read_again_once_after_a_401(stub: Stub) -> None:
    keys = ["old-key", "new-key"]
    forgotten: list[str] = []

    def forget() -> None:  # the secret cache drops its entry; the next read gets the new key
        forgotten.append(keys[0])
        if len(keys) > 1:
            keys.pop(0)

    hub = HubSpotClient(lambda: keys[0], base_url=stub.url, on_unauthorized=forget, wall=lambda: 0.0)
    expired = {
        "status": "error",
        "message": "The OAuth token used to make this call expired.",
        "correlationId": "5bd9f1a1-0000-4000-8000-000000000401",
        "category": "EXPIRED_AUTHENTICATION",
    }
    stub.answer(401, expired)
    stub.answer(201, {"id": "1"})
    assert hub.request("POST", "/crm/objects/2026-09/contacts", body={"properties": {}}) == {"id": "1"}
    assert [r["headers"]["authorization"] for r in stub.requests] == ["Bearer old-key", "Bearer new-key"]
    assert forgotten == ["old-key"]
    stub.answer(401, expired)
    stub.answer(401, expired)
    with pytest.raises(HubSpotError) as caught:  # still refused: said once, not looped
        hub.request("GET", "/x")
    assert caught.value.status == 401 and not caught.value.retryable
    assert caught.value.category == "EXPIRED_AUTHENTICATION" and len(stub.requests) == 4


def test_a_401_without_a_way_to_reread_the_key_is_not_retried(stub: Stub) -> None:
    stub.answer(401, {"status": "error", "message": "Authentication credentials not found.", "category": "INVALID_AUTHENTICATION"})
    with pytest.raises(HubSpotError):
        client(stub, FakeTime()).request("GET", "/x")
    assert len(stub.requests) == 1
