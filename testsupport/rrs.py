"""In-memory stand-ins for the rrs ports (the work queues, the messenger, the customer sheet).

Tests and the sandbox hand these to the rrs flows in place of SQS, SES/SMS and the sheet; the
Protocols they satisfy stay in ``handlers.review_requests`` (``work.WorkQueue``,
``messaging.Messenger``, ``sheet.SheetSource``).
"""

from __future__ import annotations

from handlers.review_requests.messaging import Outgoing


class RecordingMessenger:
    """In-memory messenger; can be told to fail the next send."""

    def __init__(self) -> None:
        self.sent: list[Outgoing] = []
        self.fail_next: Exception | None = None

    def send(self, message: Outgoing) -> str:
        if self.fail_next is not None:
            failure, self.fail_next = self.fail_next, None
            raise failure
        self.sent.append(message)
        return f"fake-{len(self.sent)}"


class StaticSheet:
    """In-memory customer sheet: the CSV text it was given."""

    def __init__(self, text: str) -> None:
        self.text = text

    def fetch(self) -> str:
        return self.text
