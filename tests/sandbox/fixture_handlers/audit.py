"""Fixture: keeps a copy of each new ticket (DynamoDB stream, INSERT only)."""

from __future__ import annotations

import json
import os
from typing import Any

from handlers.common.aws_clients import client


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    failures = []
    for record in event["Records"]:
        image = record["dynamodb"]["NewImage"]
        ticket = image["ticket_id"]["S"]
        if image.get("text", {}).get("S") == "explode":
            failures.append({"itemIdentifier": record["dynamodb"]["SequenceNumber"]})
            continue
        client("s3").put_object(
            Bucket=os.environ["INBOX_BUCKET"], Key=f"audit/{ticket}.json", Body=json.dumps(image)
        )
    return {"batchItemFailures": failures}
