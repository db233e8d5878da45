"""One way to consume a batch (SQS or a DynamoDB stream), with one semantics for every system.

Each record is handled on its own by Powertools' ``BatchProcessor``; the answer is Lambda's
partial batch response (``batchItemFailures``), which every event source mapping of this project
turns on (``ReportBatchItemFailures``, components/scoped_lambda.py). A record ends in one of
three ways:

* handled: the record handler returned;
* refused: it raised :class:`Unusable` (malformed, or a format this code does not read, such as
  a message a newer or older release wrote): logged and reported like a failure, never
  acknowledged, so it ends in the queue's DLQ or the stream's on-failure destination, where the
  DLQ depth alarm counts it and an operator re-drives it after a fix (docs/upgrading.md);
* failed: any other exception: logged and reported, so SQS redelivers it (and, after the queue's
  ``maxReceiveCount``, moves it to its DLQ) or the stream mapping retries it up to its limit and
  then sends it to its on-failure destination.

A refused record is retried like a failed one (its receives are cheap: it is refused before any
write) rather than sent to the DLQ by the handler, so no consumer needs a grant on its DLQ and
the one path to a DLQ stays the queue's redrive policy.

A batch in which every record failed is reported record by record, like a partial one
(``raise_on_entire_batch_failure=False``): the retries are the same and the errors are already
logged per record. Powertools for AWS Lambda (Python), "Batch Processing":
https://docs.powertools.aws.dev/lambda/python/latest/utilities/batch/ ; AWS Lambda Developer
Guide, "Handling errors for an SQS event source in Lambda":
https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from handlers.common import cold_path
from handlers.common.observability import get_logger

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import (
        DynamoDBRecord,
    )
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord


class Unusable(Exception):
    """This code can never handle the record: refuse it into the dead-letter path (logged)."""


def sqs_batch(
    event: dict[str, Any], context: Any, handle: Callable[[SQSRecord], object]
) -> dict[str, Any]:
    """Handle each SQS message with ``handle``; the partial batch response."""
    return _process("SQS", event, context, handle)


def stream_batch(
    event: dict[str, Any], context: Any, handle: Callable[[DynamoDBRecord], object]
) -> dict[str, Any]:
    """Handle each DynamoDB stream record with ``handle``; the partial batch response."""
    return _process("DynamoDBStreams", event, context, handle)


def _process(
    kind: Literal["SQS", "DynamoDBStreams"],
    event: dict[str, Any],
    context: Any,
    handle: Callable[[Any], object],
) -> dict[str, Any]:
    batch = cold_path.load("aws_lambda_powertools.utilities.batch")
    logger = get_logger()

    def one(record: Any) -> object:
        try:
            return handle(record)
        except Unusable as err:
            # Never acknowledged: an upgrade's old-format message must survive for a re-drive.
            logger.error("unusable record refused", extra={"record": _id(record), "error": str(err)})
            raise
        except Exception:
            logger.exception("record failed", extra={"record": _id(record)})
            raise

    processor = batch.BatchProcessor(
        event_type=batch.EventType[kind], raise_on_entire_batch_failure=False
    )
    return dict(
        batch.process_partial_response(event=event, record_handler=one, processor=processor, context=context)
    )


def _id(record: Any) -> str:
    """The message id of an SQS record, the sequence number of a stream record."""
    message_id = getattr(record, "message_id", None)
    if message_id:
        return str(message_id)
    dynamodb = getattr(record, "dynamodb", None)
    return str(getattr(dynamodb, "sequence_number", "") or "")
