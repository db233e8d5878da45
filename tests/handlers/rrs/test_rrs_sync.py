"""rrs-sync (the sheet port: normalised rows, upserts, the S3 and URL sources) on moto."""

from __future__ import annotations

import io
from typing import Any

import pytest

from handlers.common.aws_clients import client
from handlers.common.entry import registry
from handlers.review_requests.functions import sync as sync_module
from handlers.review_requests.sheet import (
    CsvUrlSource,
    S3ObjectSource,
    mirror,
    parse_rows,
    source_for,
)
from handlers.review_requests.store import Customers
from tests.handlers.rrs.conftest import ENV, Rrs
from testsupport.rrs import StaticSheet

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
    customers = Customers(ENV["CUSTOMERS_TABLE"], int(ENV["CUSTOMER_DAYS"]))
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
    customers = Customers(ENV["CUSTOMERS_TABLE"], int(ENV["CUSTOMER_DAYS"]))
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


def test_a_mirrored_row_expires_customer_days_after_its_last_write(rrs: Rrs) -> None:
    """Issue 42: nothing personal without an end. rrs-customers' TTL attribute is set on each
    write; a row that expired while still in the sheet is written again by the next sync."""
    days = int(ENV["CUSTOMER_DAYS"])
    customers = Customers(ENV["CUSTOMERS_TABLE"], days)
    mirror(StaticSheet(SHEET), customers, "GB", rrs.now)
    expected = int(rrs.now.timestamp()) + days * 86400
    rows = rrs.items("CUSTOMERS_TABLE")
    assert {r["customer_id"]: int(r["expires_at"]) for r in rows} == {"c-1": expected, "c-2": expected}
    rrs.table("CUSTOMERS_TABLE").delete_item(Key={"customer_id": "c-1"})  # what TTL does
    assert mirror(StaticSheet(SHEET), customers, "GB", rrs.now)["changed"] == 1
