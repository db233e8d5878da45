"""One-off EventBridge Scheduler schedules: one per request, named from the request id.

The schedule sends ``{"kind": "send", "request_id": ..., "v": 1}`` to rrs-work at the due time
through the role that may only send there, then deletes itself (``ActionAfterCompletion:
DELETE``). The SQS target is a templated ``SendMessage``: the target's ``Input`` is the message
body rrs-sender reads, format version included (EventBridge Scheduler User Guide, "Using
templated targets": https://docs.aws.amazon.com/scheduler/latest/UserGuide/managing-targets-templated.html ;
API Reference, "Target": https://docs.aws.amazon.com/scheduler/latest/APIReference/API_Target.html).
Creating it twice is harmless: the name is the request id, so the second create is refused as
a conflict and treated as done.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Protocol

from botocore.exceptions import ClientError

from handlers.common.aws_clients import client
from handlers.review_requests.domain import send_message

AT_FORMAT = "%Y-%m-%dT%H:%M:%S"


class RequestScheduler(Protocol):
    """Arranges for a request's send message to arrive at its due time."""

    def ensure(self, request_id: str, due: dt.datetime) -> bool:
        """Create the request's schedule; True if created, False if it already existed."""
        ...


def at_expression(due: dt.datetime) -> str:
    """``at(2026-05-01T09:00:00)``, read in UTC."""
    return f"at({due.astimezone(dt.UTC).strftime(AT_FORMAT)})"


class EventBridgeScheduler:
    """Schedules in one group, targeting one queue, assumed through one role."""

    def __init__(self, group: str, queue_arn: str, role_arn: str, dead_letter_arn: str) -> None:
        self.group = group
        self.queue_arn = queue_arn
        self.role_arn = role_arn
        self.dead_letter_arn = dead_letter_arn

    def ensure(self, request_id: str, due: dt.datetime) -> bool:
        try:
            client("scheduler").create_schedule(
                Name=request_id,
                GroupName=self.group,
                ScheduleExpression=at_expression(due),
                ScheduleExpressionTimezone="UTC",
                FlexibleTimeWindow={"Mode": "OFF"},
                ActionAfterCompletion="DELETE",
                Description="review request ask",
                Target={
                    "Arn": self.queue_arn,
                    "RoleArn": self.role_arn,
                    "Input": json.dumps(send_message(request_id).body(), sort_keys=True),
                    "RetryPolicy": {
                        "MaximumEventAgeInSeconds": 86400,
                        "MaximumRetryAttempts": 20,
                    },
                    # An ask Scheduler could not deliver lands where an alarm watches it.
                    "DeadLetterConfig": {"Arn": self.dead_letter_arn},
                },
            )
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") == "ConflictException":
                return False
            raise
        return True
