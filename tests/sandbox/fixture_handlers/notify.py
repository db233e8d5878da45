"""Fixture: tells the customer by email and SMS that an urgent ticket was triaged."""

from __future__ import annotations

import os
from typing import Any

from handlers.common.aws_clients import client


def handler(event: dict[str, Any], context: Any) -> None:
    ticket = event["detail"]["ticket_id"]
    client("sesv2").send_email(
        FromEmailAddress=os.environ["SENDER"],
        Destination={"ToAddresses": ["customer@example.org"]},
        Content={
            "Simple": {
                "Subject": {"Data": f"Ticket {ticket} is urgent"},
                "Body": {"Text": {"Data": "We are on it."}},
            }
        },
    )
    client("pinpoint-sms-voice-v2").send_text_message(
        DestinationPhoneNumber="+447700900123",
        OriginationIdentity=os.environ["SMS_POOL"],
        MessageBody=f"Ticket {ticket}: we are on it",
    )
