"""ls-stitch over moto's enquiries stream: additive, idempotent, order-free identity merges."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from handlers.source_attributor.email_hash import email_hash
from handlers.source_attributor.functions import capture, stitch
from handlers.source_attributor.records import IdentityRow
from handlers.source_attributor.stitching import MAX_LINKED_VISITORS, EnquiryEvent
from handlers.source_attributor.stitching import stitch as stitch_enquiry
from tests.handlers.ls.conftest import (
    HASH_KEY,
    ORIGIN,
    Clock,
    StreamReader,
    arrival,
    beacon,
    enquiry,
    items,
)
from testsupport.ls import InMemoryStore

pytestmark = pytest.mark.usefixtures("apps")
PHONE = "phone-aaaaaaaaaaaaaaaaaaaa"
LAPTOP = "laptop-bbbbbbbbbbbbbbbbbbb"
TABLET = "tablet-ccccccccccccccccccc"
ADA = email_hash("ada@example.com", HASH_KEY.encode())


def send(event: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = capture.handler(event, None)
    return answer


def run_stitch(event: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = stitch.handler(event, None)
    return answer


def identities() -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["identity_key"], r["visitor_id"]): r for r in items("dev-ls-identities")}


def enquire(clock: Clock, visitor_id: str, submission: str, email: str = "ada@example.com",
            cookies: list[str] | None = None) -> str:
    clock.advance(minutes=5)
    response = send(beacon(enquiry(email, visitor_id=visitor_id, submission_id=submission),
                           cookies=cookies))
    return str(json.loads(response["body"])["enquiry_id"])


def test_enquiries_with_one_email_merge_devices_into_one_identity(
    clock: Clock, read_stream: StreamReader
) -> None:
    first = enquire(clock, PHONE, "sub-phone-1")
    assert run_stitch(read_stream()) == {"batchItemFailures": []}
    second = enquire(clock, LAPTOP, "sub-laptop-1")
    assert run_stitch(read_stream()) == {"batchItemFailures": []}
    rows = identities()
    assert set(rows) == {(ADA, PHONE), (ADA, LAPTOP)}
    assert rows[(ADA, PHONE)]["linked_by"] == "email"
    assert rows[(ADA, PHONE)]["enquiry_id"] == first
    assert rows[(ADA, LAPTOP)]["enquiry_id"] == second
    assert rows[(ADA, LAPTOP)]["linked_at"] > rows[(ADA, PHONE)]["linked_at"]


def test_an_enquiry_and_the_identity_rows_it_links_expire_with_it(
    clock: Clock, read_stream: StreamReader
) -> None:
    """Issue 42: ls-enquiries and ls-identities kept email hashes without an end. An enquiry
    expires touchTtlDays after it arrived, like a touch; the identity rows it links live as long
    as the latest enquiry that linked them, so a later enquiry moves their expiry on."""
    import os

    keep = int(os.environ["TOUCH_TTL_DAYS"]) * 86400
    enquire(clock, PHONE, "sub-phone-1")
    first = int(clock.now.timestamp()) + keep
    run_stitch(read_stream())
    [stored] = items("dev-ls-enquiries")
    assert int(stored["ttl"]) == first
    assert int(identities()[(ADA, PHONE)]["ttl"]) == first
    clock.advance(days=30)
    enquire(clock, LAPTOP, "sub-laptop-1", cookies=None)
    run_stitch(read_stream())
    later = int(clock.now.timestamp()) + keep
    rows = identities()
    assert int(rows[(ADA, LAPTOP)]["ttl"]) == later
    assert int(rows[(ADA, PHONE)]["ttl"]) == first  # the laptop's enquiry did not link the phone


def test_a_merge_never_deletes_a_visitor_id(clock: Clock, read_stream: StreamReader) -> None:
    seen: set[tuple[str, str]] = set()
    for n, (device, email) in enumerate(
        [(PHONE, "ada@example.com"), (LAPTOP, "bob@example.com"),
         (PHONE, "bob@example.com"), (TABLET, "ada@example.com"), (LAPTOP, "ada@example.com")]
    ):
        enquire(clock, device, f"sub-merge-{n}", email)
        run_stitch(read_stream())
        now = set(identities())
        assert seen <= now
        seen = now
    bob = email_hash("bob@example.com", HASH_KEY.encode())
    assert seen == {(ADA, PHONE), (ADA, TABLET), (ADA, LAPTOP), (bob, LAPTOP), (bob, PHONE)}


def test_a_redelivered_stream_record_changes_nothing(
    clock: Clock, read_stream: StreamReader
) -> None:
    enquire(clock, PHONE, "sub-phone-1")
    event = read_stream()
    run_stitch(event)
    before = items("dev-ls-identities")
    clock.advance(hours=1)
    assert run_stitch(copy.deepcopy(event)) == {"batchItemFailures": []}
    assert items("dev-ls-identities") == before
    assert before


def test_reordered_deliveries_leave_the_same_rows(
    clock: Clock, read_stream: StreamReader
) -> None:
    send(beacon(arrival(f"{ORIGIN}/", visitor_id=LAPTOP), cookies=[f"ls_vid={PHONE}"]))
    enquire(clock, PHONE, "sub-phone-1", cookies=[f"ls_vid={PHONE}"])
    enquire(clock, LAPTOP, "sub-laptop-1")
    enquire(clock, PHONE, "sub-phone-2", cookies=[f"ls_vid={PHONE}"])
    records = read_stream()["Records"]
    assert len(records) == 3
    run_stitch({"Records": records})
    in_order = items("dev-ls-identities")
    from handlers.common.aws_clients import table

    with table("dev-ls-identities").batch_writer() as batch:
        for row in in_order:
            batch.delete_item(Key={"identity_key": row["identity_key"],
                                   "visitor_id": row["visitor_id"]})
    for record in reversed(records):
        run_stitch({"Records": [record]})
    assert items("dev-ls-identities") == in_order
    laptop = identities()[(ADA, LAPTOP)]
    assert laptop["linked_by"] == "cookie"  # first linked by the phone's first enquiry
    assert laptop["enquiry_id"]  # and it enquired itself later


def test_ids_presented_by_the_same_browser_are_followed(
    clock: Clock, read_stream: StreamReader
) -> None:
    send(beacon(arrival(f"{ORIGIN}/", visitor_id=LAPTOP), cookies=[f"ls_vid={PHONE}"]))
    enquire(clock, PHONE, "sub-phone-1", cookies=[f"ls_vid={PHONE}"])
    run_stitch(read_stream())
    rows = identities()
    assert rows[(ADA, LAPTOP)]["linked_by"] == "cookie"
    assert "enquiry_id" not in rows[(ADA, LAPTOP)]
    assert rows[(ADA, PHONE)]["linked_by"] == "email"


def test_a_malformed_record_is_a_partial_failure_and_the_rest_are_stitched(
    clock: Clock, read_stream: StreamReader
) -> None:
    enquire(clock, PHONE, "sub-phone-1")
    enquire(clock, LAPTOP, "sub-laptop-1")
    records = read_stream()["Records"]
    broken = copy.deepcopy(records[0])
    broken["dynamodb"]["NewImage"]["email_hash"] = {"S": "not-a-hash"}
    broken["dynamodb"]["SequenceNumber"] = "1"
    result = run_stitch({"Records": [broken, records[1]]})
    assert result == {"batchItemFailures": [{"itemIdentifier": "1"}]}
    assert set(identities()) == {(ADA, LAPTOP)}


def test_only_inserts_are_stitched(clock: Clock, read_stream: StreamReader) -> None:
    enquire(clock, PHONE, "sub-phone-1")
    (record,) = read_stream()["Records"]
    record["eventName"] = "MODIFY"
    assert run_stitch({"Records": [record]}) == {"batchItemFailures": []}
    assert identities() == {}


def test_linking_is_bounded() -> None:
    store = InMemoryStore()
    from handlers.source_attributor.records import Touch

    for n in range(MAX_LINKED_VISITORS + 20):
        store.put_touch(Touch(f"kiosk-{n:020d}", "2026-08-01T00:00:00.000000Z", "direct",
                              "direct", "", "", "/", "none", 0, f"kiosk-{n + 1:020d}"))
    result = stitch_enquiry(store, EnquiryEvent("e1", "2026-08-02T00:00:00.000000Z",
                                                f"kiosk-{0:020d}", ADA))
    assert len(result.visitors) == MAX_LINKED_VISITORS
    assert len(store.identity_rows(ADA)) == MAX_LINKED_VISITORS


def test_memory_store_keeps_the_earliest_link_like_dynamodb() -> None:
    store = InMemoryStore()
    store.link(ADA, PHONE, "cookie", "2026-08-02T00:00:00.000000Z", "e2")
    store.link(ADA, PHONE, "email", "2026-08-01T00:00:00.000000Z", "e1")
    store.link(ADA, PHONE, "cookie", "2026-08-03T00:00:00.000000Z", "e3")
    assert store.identity_rows(ADA)[PHONE] == IdentityRow(
        ADA, PHONE, "email", "2026-08-01T00:00:00.000000Z", "e1"
    )


@pytest.mark.parametrize("store_kind", ["dynamodb", "memory"])
def test_both_stores_keep_the_earliest_link_and_enquiry_whatever_the_order(
    store_kind: str,
) -> None:
    from handlers.source_attributor.store import DynamoStore

    def fresh() -> Any:
        if store_kind == "memory":
            return InMemoryStore()
        from handlers.common.aws_clients import table

        with table("dev-ls-identities").batch_writer() as batch:
            for row in items("dev-ls-identities"):
                batch.delete_item(Key={"identity_key": row["identity_key"],
                                       "visitor_id": row["visitor_id"]})
        return DynamoStore(identities_table="dev-ls-identities")

    day = "2026-08-0{}T00:00:00.000000Z".format
    links = [("cookie", day(2), "e2"), ("email", day(1), "e9"), ("email", day(1), "e1"),
             ("cookie", day(3), "e0")]
    marks = [("e5", day(5)), ("e4", day(4)), ("e3", day(4))]
    results = []
    for order in (links, list(reversed(links))):
        store = fresh()
        for by, when, via in order:
            store.link(ADA, PHONE, by, when, via)
        for eid, when in (marks if order is links else list(reversed(marks))):
            store.mark_enquirer(ADA, PHONE, eid, when)
        results.append(store.identity_rows(ADA))
    assert results[0] == results[1] == {
        PHONE: IdentityRow(ADA, PHONE, "email", day(1), "e1", "e3", day(4))
    }
