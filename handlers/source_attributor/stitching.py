"""Stitching: link every visitor id that shares an email hash into one identity, additively.

An enquiry names a device (its visitor id) and a person (the keyed email hash). Stitching
adds the device to that person's identity, plus every device id the same browser presented
beside it (recorded on its touches as ``linked_visitor_id``), followed transitively up to a
bound. Rows are only ever added or moved to an earlier link; stitching never deletes a visitor
id (a row's TTL moves with the latest enquiry that linked it, and ends it after that one),
so any report can be recomputed from the same rows at any strictness.

Idempotent and order-free: every write keeps the earliest (time, enquiry id) it has seen, so
a redelivered record finds nothing to change and two enquiries processed in either order
leave the same rows.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from handlers.common.observability import get_logger
from handlers.source_attributor.contract import TOUCH_TTL
from handlers.source_attributor.records import EMAIL_HASH, VISITOR_ID
from handlers.source_attributor.store import StitchStore

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import (
        DynamoDBRecord,
    )

MAX_LINKED_VISITORS = 50
"""Bound on the devices one enquiry may pull in: a shared kiosk must not link the world."""


@dataclass(frozen=True)
class EnquiryEvent:
    """What stitching needs from an enquiry row (the stream's new image)."""

    enquiry_id: str
    at: str
    visitor_id: str
    email_hash: str
    expires: int = 0
    """The enquiry's own expiry (its ``ttl``); 0 for an enquiry stored without one."""

    def __post_init__(self) -> None:
        if not EMAIL_HASH.match(self.email_hash):
            raise ValueError("email_hash is not a keyed hash")
        if not VISITOR_ID.match(self.visitor_id):
            raise ValueError("visitor_id is not a visitor id")
        if not self.enquiry_id or not self.at:
            raise ValueError("enquiry_id and at are required")


@dataclass(frozen=True)
class StitchResult:
    """What one enquiry did to its identity."""

    identity_key: str
    visitors: tuple[str, ...]
    writes: int


def devices_of(store: StitchStore, visitor_id: str) -> list[str]:
    """The enquiring device and every id linked to it through touches, breadth first."""
    seen = [visitor_id]
    queue = deque([visitor_id])
    while queue and len(seen) < MAX_LINKED_VISITORS:
        for other in sorted(store.linked_visitors(queue.popleft())):
            if other not in seen and VISITOR_ID.match(other) and len(seen) < MAX_LINKED_VISITORS:
                seen.append(other)
                queue.append(other)
    return seen


def stitch(store: StitchStore, enquiry: EnquiryEvent) -> StitchResult:
    """Add the enquiry's devices to the identity of its email hash; skip what is there."""
    existing = store.identity_rows(enquiry.email_hash)
    devices = devices_of(store, enquiry.visitor_id)
    writes = 0
    for device in devices:
        row = existing.get(device)
        if row is None or not row.linked_no_later_than(enquiry.at, enquiry.enquiry_id):
            linked_by = "email" if device == enquiry.visitor_id else "cookie"
            store.link(enquiry.email_hash, device, linked_by, enquiry.at, enquiry.enquiry_id)
            writes += 1
    row = existing.get(enquiry.visitor_id)
    if row is None or not row.enquired_no_later_than(enquiry.at, enquiry.enquiry_id):
        store.mark_enquirer(enquiry.email_hash, enquiry.visitor_id, enquiry.enquiry_id, enquiry.at)
        writes += 1
    # An identity row lives as long as the latest enquiry that linked it (ls-identities' TTL).
    for device in devices if enquiry.expires else ():
        row = existing.get(device)
        if row is None or row.ttl < enquiry.expires:
            store.keep_until(enquiry.email_hash, device, enquiry.expires)
            writes += 1
    return StitchResult(enquiry.email_hash, tuple(devices), writes)


def enquiry_from_image(image: Mapping[str, Any]) -> EnquiryEvent:
    """The enquiry in a stream record's (deserialised) new image; ValueError if malformed."""
    try:
        return EnquiryEvent(
            enquiry_id=str(image["enquiry_id"]),
            at=str(image["at"]),
            visitor_id=str(image["visitor_id"]),
            email_hash=str(image["email_hash"]),
            expires=int(image.get(TOUCH_TTL) or 0),
        )
    except KeyError as err:
        raise ValueError(f"the enquiry image has no {err.args[0]}") from None


def process_record(store: StitchStore, record: DynamoDBRecord) -> StitchResult | None:
    """Stitch one stream record; other events than INSERT are not enquiries arriving.

    A malformed record raises (a reported failure): after the mapping's bounded retries it
    lands in ls-stitch-failures, where an operator sees it, rather than being dropped.
    """
    if record.event_name is None or record.event_name.name != "INSERT":
        return None
    image = record.dynamodb.new_image if record.dynamodb else None
    if not image:
        raise ValueError("the stream record carries no new image (is the view NEW_IMAGE?)")
    result = stitch(store, enquiry_from_image(image))
    get_logger().info(
        "stitched",
        extra={"visitors": len(result.visitors), "writes": result.writes, "event": record.event_id},
    )
    return result
