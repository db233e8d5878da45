"""Outbound mail through SES v2 from the configured sender (digest and dead-letter alerts).

The role's SendEmail grant names the sender's SES identity and is conditioned on the From
address, so these functions can send as that one address only.
"""

from __future__ import annotations

from typing import Any

from handlers.common.aws_clients import client


class Mailer:
    """SES v2 SendEmail from one verified identity."""

    def __init__(self, sender: str, client: Any = None) -> None:
        self.sender = sender
        self._client = client

    def send(self, recipient: str, subject: str, text: str, *, html: str | None = None) -> str:
        """One mail: the plain text always, the HTML part beside it when given."""
        if self._client is None:
            self._client = client("sesv2")
        answer = self._client.send_email(
            FromEmailAddress=self.sender,
            Destination={"ToAddresses": [recipient]},
            Content={
                "Simple": {
                    "Subject": {"Data": subject[:200], "Charset": "UTF-8"},
                    "Body": {
                        "Text": {"Data": text, "Charset": "UTF-8"},
                        **({"Html": {"Data": html, "Charset": "UTF-8"}} if html else {}),
                    },
                }
            },
        )
        return str(answer.get("MessageId", ""))
