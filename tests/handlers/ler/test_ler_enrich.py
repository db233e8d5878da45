"""ler-enrich: skip personal domains, cache per domain with a TTL, tag fields, pend on outage."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from handlers.lead_enricher.enrich_cache import EnrichCache, PendingMarkers
from handlers.lead_enricher.enriching import Enricher, company_domain
from handlers.lead_enricher.events import EventBridgeSink
from handlers.lead_enricher.lead import Contact, Lead
from tests.handlers.ler.conftest import CACHE, SOURCE, Clock, Ler

NOW = dt.datetime(2026, 11, 28, 10, 0, tzinfo=dt.UTC)
ACME = {"company_name": "Acme Widgets", "employees": 40}


@pytest.fixture
def clock() -> Clock:
    return Clock(NOW)


@pytest.fixture
def enricher(ler: Ler, clock: Clock) -> Enricher:
    return Enricher(
        EnrichCache(CACHE, 90), PendingMarkers(CACHE), ler.provider, EventBridgeSink(SOURCE), clock
    )


def lead(
    email: str | None, website: str | None = None, lead_id: str = "f-1", pass_no: int = 0
) -> Lead:
    return Lead(
        lead_id=lead_id,
        lane="form",
        received_at=NOW.isoformat(),
        contact=Contact(email=email, website=website, first_name="Jane"),
        pass_no=pass_no,
    )


def cache_item(ler: Ler, key: str) -> dict[str, Any] | None:
    item = ler.clients["dynamodb"].Table(CACHE).get_item(Key={"domain": key}).get("Item")
    return None if item is None else dict(item)


@pytest.mark.parametrize(
    ("email", "website", "expected"),
    [
        ("jane@acme-widgets.co.uk", None, ("acme-widgets.co.uk", "email_domain")),
        ("jane@gmail.com", None, (None, "free_mail")),
        ("jane@gmail.com", "acme-widgets.co.uk", ("acme-widgets.co.uk", "website")),
        ("jane@mail.yahoo.co.uk", None, (None, "free_mail")),
        ("jane@example.com", None, (None, "placeholder")),
        ("jane@mailinator.com", None, (None, "disposable")),
        (None, None, (None, "no_domain")),
    ],
)
def test_personal_domains_are_skipped(
    email: str | None, website: str | None, expected: tuple[str | None, str]
) -> None:
    assert company_domain(Contact(email=email, website=website)) == expected


def test_a_free_mail_lead_is_not_looked_up(ler: Ler, enricher: Enricher) -> None:
    done = enricher.enrich(lead("jane.doe@gmail.com"))
    assert done.enrichment is not None and done.enrichment.status == "skipped"
    assert ler.provider.calls == []


def test_a_miss_calls_the_provider_caches_with_ttl_and_tags_each_field(
    ler: Ler, enricher: Enricher
) -> None:
    ler.provider.profiles["acme-widgets.co.uk"] = ACME
    done = enricher.enrich(lead("jane@acme-widgets.co.uk"))
    assert done.enrichment is not None and done.enrichment.status == "enriched"
    assert done.enrichment.fields == {
        "company_name": {"value": "Acme Widgets", "source": "fake", "as_of": "2026-11-28"},
        "employees": {"value": 40, "source": "fake", "as_of": "2026-11-28"},
    }
    item = cache_item(ler, "acme-widgets.co.uk")
    assert item is not None
    assert int(item["ttl"]) == int((NOW + dt.timedelta(days=90)).timestamp())
    assert item["fetched_at"] == NOW.isoformat() and item["source"] == "fake"


def test_a_cached_domain_is_not_looked_up_again_until_it_expires(
    ler: Ler, enricher: Enricher, clock: Clock
) -> None:
    ler.provider.profiles["acme-widgets.co.uk"] = ACME
    enricher.enrich(lead("jane@acme-widgets.co.uk"))
    clock.now = NOW + dt.timedelta(days=89)
    again = enricher.enrich(lead("bob@acme-widgets.co.uk", lead_id="f-2"))
    assert ler.provider.calls == ["acme-widgets.co.uk"]
    assert (
        again.enrichment is not None
        and again.enrichment.fields["employees"]["as_of"] == "2026-11-28"
    )
    clock.now = NOW + dt.timedelta(days=91)  # DynamoDB deletes lazily: the handler checks ttl
    enricher.enrich(lead("bob@acme-widgets.co.uk", lead_id="f-3"))
    assert ler.provider.calls == ["acme-widgets.co.uk", "acme-widgets.co.uk"]


def test_an_unknown_company_is_cached_briefly(ler: Ler, enricher: Enricher) -> None:
    done = enricher.enrich(lead("jane@tiny-shop.co.uk"))
    assert done.enrichment is not None and done.enrichment.status == "not_found"
    item = cache_item(ler, "tiny-shop.co.uk")
    assert item is not None and "profile" not in item
    assert int(item["ttl"]) == int((NOW + dt.timedelta(days=7)).timestamp())


def test_an_outage_marks_the_lead_pending_and_it_still_goes_on(
    ler: Ler, enricher: Enricher
) -> None:
    ler.provider.down = True
    event = {"detail-type": "le.normalized", "detail": lead("jane@acme-widgets.co.uk").to_json()}
    done = enricher.handle(event)
    assert done.enrichment is not None and done.enrichment.status == "pending"
    [emitted] = ler.emitted()
    assert emitted["detail-type"] == "le.enriched"
    assert emitted["detail"]["enrichment"]["status"] == "pending"
    marker = cache_item(ler, "pending#f-1")
    assert marker is not None and (marker["status"], marker["pass_no"]) == ("pending", 0)
    assert cache_item(ler, "acme-widgets.co.uk") is None  # a failure is never cached


def test_pending_markers_only_move_forward(ler: Ler) -> None:
    markers = PendingMarkers(CACHE)
    assert markers.mark(lead("a@acme.co.uk", pass_no=2), "down", NOW)
    assert not markers.mark(lead("a@acme.co.uk", pass_no=1), "late duplicate", NOW)
    assert not markers.resolve(lead("a@acme.co.uk", pass_no=1), NOW)
    [waiting] = markers.pending()
    assert (waiting.pass_no, waiting.reason) == (2, "down")
    assert markers.resolve(lead("a@acme.co.uk", pass_no=2), NOW)
    assert markers.pending() == []


def test_a_retry_pass_that_succeeds_resolves_the_marker(ler: Ler, enricher: Enricher) -> None:
    ler.provider.down = True
    enricher.enrich(lead("jane@acme-widgets.co.uk"))
    ler.provider.down = False
    ler.provider.profiles["acme-widgets.co.uk"] = ACME
    enricher.enrich(lead("jane@acme-widgets.co.uk", pass_no=1))
    marker = cache_item(ler, "pending#f-1")
    assert marker is not None and (marker["status"], marker["pass_no"]) == ("resolved", 1)
    assert PendingMarkers(CACHE).pending() == []


def test_a_throttled_provider_pends_the_lead_until_the_wait_it_asked_for(
    ler: Ler, enricher: Enricher
) -> None:
    ler.provider.throttle = 3600.0  # a 429 whose window resets in an hour
    done = enricher.enrich(lead("jane@acme-widgets.co.uk"))
    assert done.enrichment is not None and done.enrichment.status == "pending"
    [waiting] = PendingMarkers(CACHE).pending()
    assert waiting.retry_at == (NOW + dt.timedelta(hours=1)).isoformat()
    assert cache_item(ler, "acme-widgets.co.uk") is None


def test_a_spent_daily_lookup_cap_pends_the_lead_until_the_next_utc_day(
    ler: Ler, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #41: past ``dailyEnrichmentLookups`` the provider is not asked; the lead goes on
    unenriched and pending, and ler-retry enriches it once the UTC day turns."""
    from handlers.lead_enricher.contract import EnrichSettings
    from handlers.lead_enricher.functions import enrich as enrich_function

    monkeypatch.setenv("DAILY_ENRICHMENT_LOOKUPS", "1")
    ler.provider.profiles.update({"acme-widgets.co.uk": ACME, "other-firm.co.uk": ACME})
    service = enrich_function.wire(EnrichSettings.from_environ(), clock, provider=ler.provider)
    first = service.enrich(lead("jane@acme-widgets.co.uk"))
    assert first.enrichment is not None and first.enrichment.status == "enriched"
    held = service.enrich(lead("bob@other-firm.co.uk", lead_id="f-2"))
    assert held.enrichment is not None and held.enrichment.status == "pending"
    assert ler.provider.calls == ["acme-widgets.co.uk"]  # the second lookup was not made
    [waiting] = PendingMarkers(CACHE).pending()
    assert (waiting.lead.lead_id, waiting.retry_at) == ("f-2", "2026-11-29T00:00:00+00:00")

    clock.now = dt.datetime(2026, 11, 29, 0, 5, tzinfo=dt.UTC)
    again = service.enrich(lead("bob@other-firm.co.uk", lead_id="f-2", pass_no=1))
    assert again.enrichment is not None and again.enrichment.status == "enriched"
