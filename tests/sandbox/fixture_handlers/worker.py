"""Fixture: triages tickets from the work queue with the model, announces them on the bus."""

from __future__ import annotations

import json
import os
from typing import Any, Literal

from pydantic import BaseModel

from handlers.common.aws_clients import client, table
from handlers.common.model_call import ModelAnswer, call_structured


class Triage(BaseModel):
    urgency: Literal["low", "high"]
    summary: str | None


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    failures = []
    for record in event["Records"]:
        body = json.loads(record["body"])
        if str(body["ticket_id"]).startswith("P"):  # a poison ticket never triages
            failures.append({"itemIdentifier": record["messageId"]})
            continue
        answer = call_structured(
            model_id=os.environ["MODEL_ID"],
            prompt=f"Triage ticket {body['ticket_id']}",
            output_model=Triage,
            tool_name="triage",
            tool_description="Grade the ticket",
        )
        urgency = answer.value.urgency if isinstance(answer, ModelAnswer) else "low"
        table(os.environ["TICKETS_TABLE"]).update_item(
            Key={"ticket_id": body["ticket_id"]},
            UpdateExpression="SET #s = :s, urgency = :u",
            ExpressionAttributeNames={"#s": "state"},
            ExpressionAttributeValues={":s": "triaged", ":u": urgency},
        )
        client("events").put_events(
            Entries=[
                {
                    "Source": "crm.tst",
                    "DetailType": "tst.triaged",
                    "Detail": json.dumps({"ticket_id": body["ticket_id"], "urgency": urgency}),
                }
            ]
        )
    return {"batchItemFailures": failures}
