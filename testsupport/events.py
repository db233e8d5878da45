"""The Lambda events the tests hand to handlers, built in one place.

A Function URL request (payload format 2.0) and an SQS batch as the event source mapping
delivers it ("Invoking Lambda function URLs", Lambda Developer Guide,
https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html#urls-payloads; "Using Lambda
with Amazon SQS", https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html). The sandbox
builds its richer URL events from real HTTP requests (``sandbox/urls.py``).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any

from components.arns import Arns
from components.offline.engine import ACCOUNT_ID

_TEST_QUEUE = Arns("aws", "eu-west-2", ACCOUNT_ID).queue("tst-queue")


def url_event(
    body: str | bytes,
    *,
    headers: Mapping[str, str] | None = None,
    method: str = "POST",
    request_id: str = "req-1",
    source_ip: str = "203.0.113.9",
) -> dict[str, Any]:
    """A Function URL event: a ``str`` body as is, ``bytes`` base64-encoded (as Lambda does)."""
    encoded = isinstance(body, bytes)
    sent = base64.b64encode(body).decode() if isinstance(body, bytes) else body
    return {
        "version": "2.0",
        "rawPath": "/",
        "headers": {"content-type": "application/json", **(headers or {})},
        "requestContext": {
            "requestId": request_id,
            "http": {"method": method, "sourceIp": source_ip},
        },
        "body": sent,
        "isBase64Encoded": encoded,
    }


def sqs_event(
    bodies: Iterable[str],
    *,
    queue_arn: str = _TEST_QUEUE,
    receive_count: int | None = None,
    message_id: str = "m-{i}",
) -> dict[str, Any]:
    """An SQS batch; ``receive_count`` sets ``ApproximateReceiveCount``; ``message_id`` is a
    template over the record's index ``i`` and ``n`` = ``receive_count``."""
    region = queue_arn.split(":")[3]
    return {
        "Records": [
            {
                "messageId": message_id.format(i=i, n=receive_count),
                "receiptHandle": f"rh-{i}",
                "body": body,
                "attributes": {}
                if receive_count is None
                else {"ApproximateReceiveCount": str(receive_count)},
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            }
            for i, body in enumerate(bodies)
        ]
    }
