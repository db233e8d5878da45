"""Outbound messages: email through SES, SMS through AWS End User Messaging SMS.

SMS goes through ``pinpoint-sms-voice-v2`` ``SendTextMessage`` from one origination identity
(pool, phone number or sender id), because that call can be granted on that identity's ARN;
``sns:Publish`` to a phone number can only be granted on ``Resource: "*"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from botocore.exceptions import ClientError

from handlers.common.aws_clients import client
from handlers.review_requests.domain import Channel


@dataclass(frozen=True)
class Outgoing:
    """One message to one recipient. ``subject`` and ``html`` (the HTML part beside the plain
    ``body``) are used by email only."""

    channel: Channel
    to: str
    body: str
    subject: str = ""
    html: str = ""


class OptedOutAtCarrier(Exception):
    """The SMS service refused the number as opted out (the customer replied STOP to it)."""


class Messenger(Protocol):
    """Sends one message and returns the provider's message id."""

    def send(self, message: Outgoing) -> str:
        """Send ``message``; raises on failure (OptedOutAtCarrier for a carrier opt-out)."""
        ...


class AwsMessenger:
    """SES v2 for email from ``sender_email`` ("Name <address>" for a customer:
    ``emails.from_address``), replies to ``reply_to``; End User Messaging SMS from
    ``sms_identity`` (None for a function that sends email only)."""

    def __init__(self, sender_email: str, sms_identity: str | None, reply_to: str | None = None) -> None:
        self.sender_email = sender_email
        self.sms_identity = sms_identity
        self.reply_to = reply_to

    def send(self, message: Outgoing) -> str:
        if message.channel is Channel.EMAIL:
            return self._email(message)
        return self._sms(message)

    def _email(self, message: Outgoing) -> str:
        body = {"Text": {"Data": message.body, "Charset": "UTF-8"}}
        if message.html:
            body["Html"] = {"Data": message.html, "Charset": "UTF-8"}
        answer = client("sesv2").send_email(
            FromEmailAddress=self.sender_email,
            Destination={"ToAddresses": [message.to]},
            ReplyToAddresses=[self.reply_to] if self.reply_to else [],
            Content={
                "Simple": {
                    "Subject": {"Data": message.subject, "Charset": "UTF-8"},
                    "Body": body,
                }
            },
        )
        return str(answer["MessageId"])

    def _sms(self, message: Outgoing) -> str:
        if not self.sms_identity:
            raise RuntimeError("no SMS origination identity configured")
        try:
            answer = client("pinpoint-sms-voice-v2").send_text_message(
                DestinationPhoneNumber=message.to,
                OriginationIdentity=self.sms_identity,
                MessageBody=message.body,
                MessageType="TRANSACTIONAL",
            )
        except ClientError as err:
            error = err.response.get("Error", {})
            reason = str(err.response.get("Reason", "")) + str(error.get("Message", ""))
            if error.get("Code") == "ConflictException" and "OPTED_OUT" in reason.upper():
                raise OptedOutAtCarrier(message.to) from err
            raise
        return str(answer["MessageId"])
