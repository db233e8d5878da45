"""Fixture: schedules a one-off follow-up (an at() schedule to the work queue) per open ticket."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
from typing import Any

from boto3.dynamodb.conditions import Key

from handlers.common.aws_clients import client, table


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    found = table(os.environ["TICKETS_TABLE"]).query(
        IndexName="by-state", KeyConditionExpression=Key("state").eq("open")
    )["Items"]
    due = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")
    scheduler = client("scheduler")
    for item in found:
        # Already scheduled by an earlier sweep: the name is the idempotency key.
        with contextlib.suppress(scheduler.exceptions.ConflictException):
            _follow_up(scheduler, item, due)
    return {"statusCode": 200, "body": json.dumps({"scheduled": len(found)})}


def _follow_up(scheduler: Any, item: dict[str, Any], due: str) -> None:
    scheduler.create_schedule(
        Name=f"followup-{item['ticket_id']!s}",
        ScheduleExpression=f"at({due})",
        ScheduleExpressionTimezone="UTC",
        FlexibleTimeWindow={"Mode": "OFF"},
        ActionAfterCompletion="DELETE",
        Target={
            "Arn": os.environ["WORK_QUEUE_ARN"],
            "RoleArn": os.environ["FOLLOWUP_ROLE_ARN"],
            "Input": json.dumps({"kind": "triage", "ticket_id": item["ticket_id"]}),
        },
    )
