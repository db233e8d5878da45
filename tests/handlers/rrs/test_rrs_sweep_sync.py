"""rrs-sweep (stragglers, opening-hours gate) and rrs-sync (the sheet port) on moto."""

from __future__ import annotations

import datetime as dt
import io
from typing import Any

import pytest

from handlers.common.aws_clients import client
from handlers.common.entry import registry
from handlers.review_requests.domain import request_id_for
from handlers.review_requests.functions import sweep as sweep_module
from handlers.review_requests.functions import sync as sync_module
from handlers.review_requests.functions import webhook
from handlers.review_requests.sheet import (
    CsvUrlSource,
    S3ObjectSource,
    mirror,
    parse_rows,
    source_for,
)
from handlers.review_requests.store import Customers
from tests.handlers.rrs.conftest import ENV, Rrs, completion, url_event
from testsupport.rrs import StaticSheet

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
        assert straggler.sends() == [{"kind": "send", "request_id": RID}]
        assert straggler.request(RID)["sweeps"] == attempt
        straggler.now += dt.timedelta(minutes=15)
    assert sweep() == {"requeued": 0, "escalated": 1, "lost_races": 0, "unconfirmed": 0, "degraded_notice": 0}
    assert straggler.sends() == []
    assert straggler.escalations() == [
        {"kind": "escalate", "request_id": RID, "reason": "straggler", "dedupe_key": "straggler"}
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

SHEET = """Customer ID,Name,Email,Mobile,Timezone,Channel,Prior Sentiment,Past Complaints,Do Not Ask,Notes
c-1,Ann Smith,ANN@example.org,07911 123456,Europe/London,sms,positive,0,,likes mornings
c-2,Bob Jones,not-an-email,,,,negative,2,yes,
,Nobody,n@example.org,,,,,,,
"""


def test_rows_are_normalised_and_problems_listed() -> None:
    rows, problems = parse_rows(SHEET, "GB")
    assert [r.customer_id for r in rows] == ["c-1", "c-2"]
    ann = rows[0].fields
    assert ann["email"] == "ann@example.org" and ann["phone"] == "+447911123456"
    assert (
        ann["channel"] == "sms" and ann["prior_sentiment"] == "positive" and not ann["do_not_ask"]
    )
    bob = rows[1].fields
    assert bob["email"] is None and bob["do_not_ask"] and bob["past_complaints"] == 2
    assert problems == ["row 3: unusable email", "row 4: no customer_id"]


def test_sync_upserts_skips_unchanged_rows_and_keeps_other_attributes(rrs: Rrs) -> None:
    customers = Customers(ENV["CUSTOMERS_TABLE"])
    rrs.table("CUSTOMERS_TABLE").put_item(
        Item={"customer_id": "c-1", "name": "Old", "note": "kept"}
    )
    first = mirror(StaticSheet(SHEET), customers, "GB", rrs.now)
    assert first == {"rows": 2, "changed": 2, "problems": 2}
    again = mirror(StaticSheet(SHEET), customers, "GB", rrs.now)
    assert again["changed"] == 0
    ann = rrs.table("CUSTOMERS_TABLE").get_item(Key={"customer_id": "c-1"})["Item"]
    assert ann["name"] == "Ann Smith" and ann["note"] == "kept"
    assert ann["prior_sentiment"] == "positive" and ann["phone"] == "+447911123456"
    edited = SHEET.replace("c-1,Ann Smith,ANN@example.org", "c-1,Ann Smith,")
    assert mirror(StaticSheet(edited), customers, "GB", rrs.now)["changed"] == 1
    ann = rrs.table("CUSTOMERS_TABLE").get_item(Key={"customer_id": "c-1"})["Item"]
    assert "email" not in ann  # a blanked cell removes the attribute


def test_an_unchanged_sheet_costs_no_write(rrs: Rrs) -> None:
    """Issue 28: every run used to call UpdateItem once per row (a failed conditional write is
    billed too); now a run over an unchanged sheet makes no write call at all."""
    customers = Customers(ENV["CUSTOMERS_TABLE"])
    calls: list[str] = []
    events = customers.table.meta.client.meta.events
    events.register("before-call.dynamodb.UpdateItem", lambda **_: calls.append("UpdateItem"))
    events.register("before-call.dynamodb.PutItem", lambda **_: calls.append("PutItem"))
    big = SHEET.split("\n")[0] + "\n" + "".join(
        f"c-{n},Customer {n},c{n}@example.org,,,,,,,\n" for n in range(100)
    )
    assert mirror(StaticSheet(big), customers, "GB", rrs.now)["changed"] == 100
    assert len(calls) == 100
    calls.clear()
    for _ in range(3):  # three more 15-minute runs, nothing changed
        assert mirror(StaticSheet(big), customers, "GB", rrs.now)["changed"] == 0
    assert calls == []
    edited = big.replace("Customer 7,", "Customer Seven,")
    assert mirror(StaticSheet(edited), customers, "GB", rrs.now)["changed"] == 1
    assert calls == ["UpdateItem"]


def test_sync_reads_one_s3_object(rrs: Rrs, monkeypatch: pytest.MonkeyPatch) -> None:
    s3 = client("s3")
    s3.create_bucket(
        Bucket="crm-sheets", CreateBucketConfiguration={"LocationConstraint": "eu-west-2"}
    )
    s3.put_object(Bucket="crm-sheets", Key="customers/latest.csv", Body=SHEET.encode())
    monkeypatch.setenv("SHEET_SOURCE", "s3://crm-sheets/customers/latest.csv")
    registry.restart()
    assert sync_module.handler({}, None) == {"rows": 2, "changed": 2, "problems": 2}
    assert len(rrs.items("CUSTOMERS_TABLE")) == 2


def test_sync_without_a_sheet_does_nothing(rrs: Rrs) -> None:
    assert sync_module.handler({}, None) == {"rows": 0, "changed": 0, "problems": 0}
    assert rrs.items("CUSTOMERS_TABLE") == []


def test_the_url_adapter_fetches_the_csv_export(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []

    class Answer(io.BytesIO):
        def __enter__(self) -> Answer:
            return self

        def __exit__(self, *args: object) -> None:
            return None

    def fake_urlopen(request: Any, timeout: float) -> Answer:
        seen.append((request.full_url, timeout))
        return Answer(b"\xef\xbb\xbf" + SHEET.encode())

    monkeypatch.setattr("urllib.request.urlopen", fake_urlopen)
    url = "https://docs.example.com/sheet/export?format=csv"
    assert source_for(url).fetch() == SHEET  # type: ignore[union-attr]
    assert seen == [(url, 20)]
    assert isinstance(source_for("s3://b/k.csv"), S3ObjectSource)
    assert source_for("") is None
    with pytest.raises(ValueError):
        CsvUrlSource("http://insecure.example.com/x.csv")
