"""Fixture: a ticket intake behind a public Function URL (shared-secret header) and an inbox."""

from __future__ import annotations

import email
import email.policy
import json
import os
from typing import Any
from urllib.parse import unquote_plus

from handlers.common.aws_clients import client, table
from handlers.common.function_url import RequestError, json_response, parse_json_object, raw_body
from handlers.common.secrets import get_secret


def _open(ticket_id: str, text: str, channel: str) -> None:
    table(os.environ["TICKETS_TABLE"]).put_item(
        Item={
            "ticket_id": ticket_id,
            "text": text,
            "state": "open",
            "due": "0",
            "channel": channel,
        },
        ConditionExpression="attribute_not_exists(ticket_id)",
    )
    client("sqs").send_message(
        QueueUrl=os.environ["WORK_QUEUE_URL"],
        MessageBody=json.dumps({"kind": "triage", "ticket_id": ticket_id}),
    )


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    if "Records" in event:
        s3 = client("s3")
        for record in event["Records"]:
            bucket = record["s3"]["bucket"]["name"]
            key = unquote_plus(record["s3"]["object"]["key"])
            data = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
            if key.startswith("mail/"):
                mail = email.message_from_bytes(data, policy=email.policy.default)
                _open(key.rsplit("/", 1)[-1][:8], str(mail["Subject"]), "mail")
            else:
                body = json.loads(data)
                _open(body["ticket_id"], body["text"], "upload")
        return {"ok": True}
    token = (event.get("headers") or {}).get("x-token")
    if token != get_secret(os.environ["KEY_SECRET"]):
        return json_response(401, {"error": "bad token"})
    try:
        body = parse_json_object(raw_body(event))
    except RequestError as err:
        return err.response()
    _open(str(body["ticket_id"]), str(body.get("text", "")), "url")
    return json_response(202, {"ticket_id": body["ticket_id"]})
