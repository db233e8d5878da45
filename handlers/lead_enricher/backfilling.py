"""Backfilling (ler-backfill, nightly): re-enrich pending leads, re-sync ler-identity from the CRM.

1. Every lead still marked enrichment_pending (whatever its pass: ler-retry has given up on
   the ones past its budget) re-enters the chain as le.normalized with the next pass.
2. The identity index is rewritten from the CRM's contact export, one page at a time, by
   invoking ler-push synchronously: push holds the CRM key and the index writes, so backfill
   needs neither; it only drives the pages and stops before its own timeout (the next night
   starts again from the first page).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from handlers.common.aws_clients import client
from handlers.common.observability import get_logger
from handlers.lead_enricher.contract import NORMALIZED, RESYNC_ACTION
from handlers.lead_enricher.enrich_cache import PendingMarkers
from handlers.lead_enricher.events import EventSink

SAFETY_MS = 60_000
"""Stop starting pages when less than this is left (a page takes well under push's 30 s)."""


class PageSyncer(Protocol):
    def sync_page(self, after: str | None) -> dict[str, Any]:
        """Re-sync one page of CRM contacts; the answer holds ``next`` (None at the end)."""
        ...


class PushPageSyncer:
    """Synchronous Invoke of ler-push with ``{"action": "resync_page", "after": ...}``."""

    def __init__(self, function_name: str, client: Any = None) -> None:
        self.function_name = function_name
        self._client = client

    def sync_page(self, after: str | None) -> dict[str, Any]:
        if self._client is None:
            self._client = client("lambda")
        answer = self._client.invoke(
            FunctionName=self.function_name,
            InvocationType="RequestResponse",
            Payload=json.dumps({"action": RESYNC_ACTION, "after": after}).encode("utf-8"),
        )
        body = json.loads(answer["Payload"].read() or b"{}")
        if answer.get("FunctionError"):
            raise RuntimeError(f"{self.function_name} failed a re-sync page: {body}")
        return dict(body)


@dataclass
class BackfillReport:
    re_enriched: int = 0
    pages: int = 0
    contacts: int = 0
    keys: int = 0
    repointed: int = 0
    complete: bool = False
    notes: list[str] = field(default_factory=list)


class Backfill:
    def __init__(self, pending: PendingMarkers, sink: EventSink, syncer: PageSyncer) -> None:
        self.pending = pending
        self.sink = sink
        self.syncer = syncer

    def re_enrich(self) -> int:
        count = 0
        for waiting in self.pending.pending():
            self.sink.publish(NORMALIZED, waiting.next_pass())
            count += 1
        return count

    def resync(self, report: BackfillReport, time_left_ms: Callable[[], int]) -> None:
        after: str | None = None
        while time_left_ms() > SAFETY_MS:
            page = self.syncer.sync_page(after)
            report.pages += 1
            report.contacts += int(page.get("contacts", 0))
            report.keys += int(page.get("keys", 0))
            report.repointed += int(page.get("repointed", 0))
            after = page.get("next")
            if after is None:
                report.complete = True
                return
        report.notes.append(f"re-sync stopped for time after {report.pages} page(s)")

    def run(self, time_left_ms: Callable[[], int] = lambda: 10**9) -> BackfillReport:
        report = BackfillReport(re_enriched=self.re_enrich())
        self.resync(report, time_left_ms)
        get_logger().info("backfill done", **report.__dict__)
        return report
