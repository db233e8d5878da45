"""The two work queues: ``send`` messages on rrs-work, ``escalate`` messages on rrs-escalations.

One queue per kind, each with one consumer and no event source filter: Lambda deletes an SQS
message that matches none of its mapping's filters, so two filtered mappings on one queue
would drop each other's messages. The consumer still checks the kind (``expect_kind``) and
fails a stray message, so it ends in that queue's DLQ instead of vanishing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

from handlers.common import formats
from handlers.common.aws_clients import client
from handlers.review_requests.contract import ESCALATE, SEND, WORK_MESSAGE_VERSION
from handlers.review_requests.domain import WorkMessage


class WrongKind(Exception):
    """A message of another kind (or none) reached this queue's consumer: fail it, do not drop.

    Not a ValueError on purpose: the consumers drop malformed messages of their own kind, but a
    wrong kind means it was routed wrongly, and the DLQ keeps it for an operator to move.
    """


def expect_kind(body: str, kind: str) -> dict[str, Any]:
    """The JSON object of a work message whose ``kind`` is ``kind``; WrongKind otherwise,
    ``batch.Unusable`` for a format version not read here (``formats.read``)."""
    try:
        data = json.loads(body)
    except ValueError as err:
        raise WrongKind(f"not a JSON work message (expected {kind})") from err
    found = data.get("kind") if isinstance(data, dict) else None
    if found != kind:
        raise WrongKind(f"a {found!r} message on the {kind} queue")
    formats.read(data, current=WORK_MESSAGE_VERSION, what=f"{kind} message")
    return dict(data)


def send_request_id(body: str) -> str:
    """The request id of a ``send`` message; WrongKind for another kind, ValueError for a
    ``send`` message without a usable request id."""
    data = expect_kind(body, SEND)
    request_id = data.get("request_id")
    if not isinstance(request_id, str) or not request_id.startswith("rq-"):
        raise ValueError("no request_id")
    return request_id


def parse_escalation(body: str) -> tuple[str, str, str]:
    """(request id, reason, dedupe key) of an ``escalate`` message; WrongKind for another kind,
    ValueError for an escalate message missing its fields."""
    data = expect_kind(body, ESCALATE)
    values = [data.get("request_id"), data.get("reason"), data.get("dedupe_key")]
    if not all(isinstance(v, str) and v for v in values):
        raise ValueError("escalate messages carry request_id, reason and dedupe_key")
    request_id, reason, key = (str(v) for v in values)
    if not key.replace("-", "").replace("_", "").isalnum() or len(key) > 250:
        raise ValueError("bad dedupe_key")
    return request_id, reason, key


class WorkQueue(Protocol):
    """Somewhere to put work for rrs-sender and rrs-escalator."""

    def put(self, message: WorkMessage) -> None:
        """Enqueue ``message``."""
        ...


class SqsWorkQueue:
    """One real queue."""

    def __init__(self, queue_url: str) -> None:
        self.queue_url = queue_url

    def put(self, message: WorkMessage) -> None:
        client("sqs").send_message(
            QueueUrl=self.queue_url,
            MessageBody=json.dumps(message.body(), sort_keys=True, separators=(",", ":")),
        )


class KindRoutedQueue:
    """Puts each message on the queue of its kind; a kind with no queue here is a bug (raises).

    Each function is given only the queues it may send to, so a message it has no business
    sending fails loudly instead of reaching the wrong consumer.
    """

    def __init__(self, queues: Mapping[str, WorkQueue]) -> None:
        self.queues = dict(queues)

    def put(self, message: WorkMessage) -> None:
        queue = self.queues.get(message.kind)
        if queue is None:
            raise ValueError(f"no queue for {message.kind!r} messages in this function")
        queue.put(message)
