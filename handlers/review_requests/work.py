"""rrs-work: the one queue both consumers read, each through a filter on ``body.kind``."""

from __future__ import annotations

import json
from typing import Protocol

from handlers.common.aws_clients import client
from handlers.review_requests.domain import WorkMessage


class WorkQueue(Protocol):
    """Somewhere to put work for rrs-sender and rrs-escalator."""

    def put(self, message: WorkMessage) -> None:
        """Enqueue ``message``."""
        ...


class SqsWorkQueue:
    """The real queue."""

    def __init__(self, queue_url: str) -> None:
        self.queue_url = queue_url

    def put(self, message: WorkMessage) -> None:
        client("sqs").send_message(
            QueueUrl=self.queue_url,
            MessageBody=json.dumps(message.body(), sort_keys=True, separators=(",", ":")),
        )


class ListWorkQueue:
    """In-memory queue for tests and the sandbox."""

    def __init__(self) -> None:
        self.messages: list[WorkMessage] = []

    def put(self, message: WorkMessage) -> None:
        self.messages.append(message)
