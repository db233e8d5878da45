"""ler-backfill: every pending lead enriched again, the index re-synced, paging stopped before the timeout."""

from __future__ import annotations

import datetime as dt

from handlers.lead_enricher.backfilling import Backfill
from handlers.lead_enricher.enrich_cache import PendingMarkers
from handlers.lead_enricher.events import EventBridgeSink
from handlers.lead_enricher.functions import backfill
from tests.handlers.ler.conftest import (
    CACHE,
    NOW,
    InProcessSyncer,
    Ler,
    context,
    mark_pending,
)


def test_backfill_re_enriches_every_pending_lead_and_re_syncs_the_index(ler: Ler) -> None:
    mark_pending(3, NOW - dt.timedelta(hours=5), "f-tired")
    mark_pending(0, NOW - dt.timedelta(hours=5), "f-new")
    for n in range(5):
        ler.crm.add(email=f"person{n}@acme-widgets.co.uk", firstname=f"P{n}", lastname="Doe")

    report = backfill.handler({"job": "ler-backfill"}, context())
    assert report["re_enriched"] == 2
    assert sorted((e["detail"]["lead_id"], e["detail"]["pass_no"]) for e in ler.emitted()) == [
        ("f-new", 1),
        ("f-tired", 4),
    ]
    assert (report["pages"], report["contacts"], report["complete"]) == (3, 5, True)  # 2 a page
    assert (ler.identity("EMAIL#person4@acme-widgets.co.uk") or {})["source"] == "crm-export"


def test_backfill_stops_paging_before_its_timeout(ler: Ler) -> None:
    for n in range(5):
        ler.crm.add(email=f"person{n}@acme-widgets.co.uk")
    remaining = iter([600_000, 100_000, 30_000])
    job = Backfill(
        PendingMarkers(CACHE),
        EventBridgeSink("crm.dev.ler"),
        InProcessSyncer(),
    )
    report = job.run(lambda: next(remaining))
    assert (report.pages, report.complete) == (2, False)
    assert report.notes == ["re-sync stopped for time after 2 page(s)"]
