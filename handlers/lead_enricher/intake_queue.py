"""ler-intake-queue, the chain's first queue: where intake puts survivors and ler-rescue puts a
rescued lead back (ler-normalize consumes it)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from handlers.common import formats
from handlers.common.aws_clients import client
from handlers.lead_enricher.contract import LEAD_MESSAGE_VERSION
from handlers.lead_enricher.lead import Lead


def message(lead: Lead) -> dict[str, Any]:
    """A lead as ler-intake-queue carries it: its wire form with the format version."""
    return formats.stamp(lead.to_json(), LEAD_MESSAGE_VERSION)


class LeadQueue:
    """SendMessageBatch to ler-intake-queue, ten at a time; a refused entry raises."""

    def __init__(self, queue_url: str, client: Any = None) -> None:
        self.queue_url = queue_url
        self._client = client

    def send(self, leads: Iterable[Lead]) -> int:
        if self._client is None:
            self._client = client("sqs")
        batch: list[Lead] = []
        sent = 0
        for lead in leads:
            batch.append(lead)
            if len(batch) == 10:
                sent += self._send_batch(batch)
                batch = []
        if batch:
            sent += self._send_batch(batch)
        return sent

    def _send_batch(self, leads: list[Lead]) -> int:
        answer = self._client.send_message_batch(
            QueueUrl=self.queue_url,
            Entries=[
                {"Id": str(i), "MessageBody": json.dumps(message(lead), separators=(",", ":"))}
                for i, lead in enumerate(leads)
            ],
        )
        failed = answer.get("Failed") or []
        if failed:
            raise RuntimeError(f"{len(failed)} lead(s) refused by the intake queue: {failed[0]}")
        return len(leads)
