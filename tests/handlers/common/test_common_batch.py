"""One batch semantics: handled, or reported (unusable: refused into the DLQ; failed: retried)."""

from __future__ import annotations

from typing import Any

from handlers.common.batch import Unusable, sqs_batch, stream_batch
from testsupport import events


def sqs_event(*bodies: str) -> dict[str, Any]:
    return events.sqs_event(bodies, queue_arn="arn:aws:sqs:eu-west-2:123456789012:dev-q")


def handle(record: Any) -> str:
    body: str = record.body
    if body == "bad":
        raise Unusable("not a message of ours")
    if body == "boom":
        raise RuntimeError("downstream down")
    return body


def test_unusable_and_failed_records_are_reported_never_acknowledged() -> None:
    """An unusable record (an older release's format) is reported, so the queue's redrive
    policy moves it to the DLQ; acknowledging it would drop it without a trace."""
    answer = sqs_batch(sqs_event("ok", "bad", "boom", "ok"), None, handle)
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m-1"}, {"itemIdentifier": "m-2"}]}


def test_a_wholly_failed_batch_is_reported_record_by_record_not_raised() -> None:
    answer = sqs_batch(sqs_event("boom", "boom"), None, handle)
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m-0"}, {"itemIdentifier": "m-1"}]}


def test_an_all_good_batch_reports_nothing() -> None:
    assert sqs_batch(sqs_event("ok", "ok"), None, handle) == {"batchItemFailures": []}


def test_stream_records_are_reported_by_sequence_number() -> None:
    event = {
        "Records": [
            {
                "eventID": str(i),
                "eventName": "INSERT",
                "eventSource": "aws:dynamodb",
                "eventSourceARN": "arn:aws:dynamodb:eu-west-2:123456789012:table/t/stream/x",
                "dynamodb": {
                    "Keys": {"id": {"S": key}},
                    "NewImage": {"id": {"S": key}},
                    "SequenceNumber": f"10{i}",
                    "StreamViewType": "NEW_IMAGE",
                },
            }
            for i, key in enumerate(("fine", "boom"))
        ]
    }

    def on_record(record: Any) -> None:
        if record.dynamodb.keys["id"] == "boom":
            raise RuntimeError("failed")

    assert stream_batch(event, None, on_record) == {
        "batchItemFailures": [{"itemIdentifier": "101"}]
    }
