"""ls-stitch: the DynamoDB-stream consumer on enquiries. Merges identities on an email match.

Each INSERT record of the enquiries stream is stitched on its own; a record that fails is
reported as a partial batch failure, retried a bounded number of times by the event source
mapping, then sent to the ``ls-stitch-failures`` queue. Stitching is idempotent, so a retried
or redelivered record changes nothing. The role may Query touches and identities and
UpdateItem identities; nothing else.

Environment: TOUCHES_TABLE, IDENTITIES_TABLE.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from handlers.common.observability import get_logger, logged
from handlers.source_attributor.stitching import EnquiryEvent, StitchResult, stitch
from handlers.source_attributor.store import DynamoStore, StitchStore

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import (
        DynamoDBRecord,
    )


def enquiry_from_image(image: Mapping[str, Any]) -> EnquiryEvent:
    """The enquiry in a stream record's (deserialised) new image; ValueError if malformed."""
    try:
        return EnquiryEvent(
            enquiry_id=str(image["enquiry_id"]),
            at=str(image["at"]),
            visitor_id=str(image["visitor_id"]),
            email_hash=str(image["email_hash"]),
        )
    except KeyError as err:
        raise ValueError(f"the enquiry image has no {err.args[0]}") from None


def process_record(store: StitchStore, record: DynamoDBRecord) -> StitchResult | None:
    """Stitch one stream record; other events than INSERT are not enquiries arriving."""
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


def handle_batch(store: StitchStore, event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Process a stream batch, reporting failed records as partial batch failures."""
    from aws_lambda_powertools.utilities.batch import (
        BatchProcessor,
        EventType,
        process_partial_response,
    )

    processor = BatchProcessor(event_type=EventType.DynamoDBStreams)
    result = process_partial_response(
        event=event,
        record_handler=lambda record: process_record(store, record),
        processor=processor,
        context=context,
    )
    return dict(result)


_store: DynamoStore | None = None


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """DynamoDB-stream entry point."""
    global _store
    if _store is None:
        _store = DynamoStore(
            touches_table=os.environ["TOUCHES_TABLE"],
            identities_table=os.environ["IDENTITIES_TABLE"],
        )
    return handle_batch(_store, event, context)
