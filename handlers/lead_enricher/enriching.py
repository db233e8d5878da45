"""Enriching a lead (ler-enrich): firmographics for its company domain, cached with a TTL.

Free and personal mail domains are skipped (the website the lead gave is used instead, if
any). A domain is looked up in ler-enrich-cache first; on a miss the provider is called with
the key read at call time, and its answer cached with a TTL. Each field is tagged with its
source and date. When the provider fails, the lead is marked ``enrichment_pending`` (a marker
ler-retry and ler-backfill pick up) and still emitted: enrichment is a bonus, never a blocker.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from handlers.common.observability import get_logger
from handlers.common.secrets import get_secret
from handlers.lead_enricher import lead_metrics
from handlers.lead_enricher.contract import ENRICHED, NORMALIZED, EnrichSettings
from handlers.lead_enricher.domains import is_disposable, is_free_mail, is_placeholder
from handlers.lead_enricher.enrich_cache import EnrichCache, PendingMarkers
from handlers.lead_enricher.events import EventSink, lead_from_event
from handlers.lead_enricher.lead import Contact, Enrichment, Lead
from handlers.lead_enricher.providers import factory
from handlers.lead_enricher.providers.base import (
    FirmographicProvider,
    ProviderUnavailable,
    RateLimited,
)


def company_domain(contact: Contact | None) -> tuple[str | None, str]:
    """(domain to look up, why) — the mail domain unless it is personal, else the website."""
    if contact is None:
        return None, "no_contact"
    domain = contact.email_domain
    if domain and not (is_free_mail(domain) or is_disposable(domain) or is_placeholder(domain)):
        return domain, "email_domain"
    if contact.website and not is_free_mail(contact.website):
        return contact.website, "website"
    if not domain:
        return None, "no_domain"
    # Which kind of personal domain, said as such (a reserved example.com is no free mailbox).
    return None, "placeholder" if is_placeholder(domain) else "disposable" if is_disposable(domain) else "free_mail"


def tagged(fields: dict[str, Any], source: str, as_of: str) -> dict[str, dict[str, Any]]:
    """Each value with where it came from and when."""
    return {
        name: {"value": value, "source": source, "as_of": as_of} for name, value in fields.items()
    }


class Enricher:
    """Cache, provider and pending markers around one lead."""

    def __init__(
        self,
        cache: EnrichCache,
        pending: PendingMarkers,
        provider: FirmographicProvider,
        sink: EventSink,
        clock: Callable[[], dt.datetime],
    ) -> None:
        self.cache = cache
        self.pending = pending
        self.provider = provider
        self.sink = sink
        self.clock = clock

    def enrich(self, lead: Lead) -> Lead:
        now = self.clock()
        domain, why = company_domain(lead.contact)
        if domain is None:
            lead.enrichment = Enrichment(status="skipped", reason=why)
            return lead
        cached = self.cache.get(domain, now)
        if cached is None and lead.is_check:
            # make verify's lead: the cache was read, the paid provider is not called.
            lead.enrichment = Enrichment(status="skipped", domain=domain, reason="check")
            return lead
        if cached is None:
            try:
                profile = self.provider.lookup(domain)
            except ProviderUnavailable as err:
                get_logger().warning(
                    "enrichment pending",
                    lead_id=lead.lead_id,
                    domain=domain,
                    provider=self.provider.name,
                    error=str(err),
                    retry_after_s=err.retry_after_s if isinstance(err, RateLimited) else None,
                )
                lead.enrichment = Enrichment(status="pending", domain=domain, reason=str(err))
                wait = err.retry_after_s if isinstance(err, RateLimited) else None
                retry_at = None if wait is None else now + dt.timedelta(seconds=wait)
                self.pending.mark(lead, str(err), now, retry_at)
                lead_metrics.count(lead, "EnrichmentPending")
                return lead
            cached = self.cache.put(domain, profile, self.provider.name, now)
        if cached.profile is None:
            lead.enrichment = Enrichment(status="not_found", domain=domain, reason="unknown")
        else:
            as_of = cached.fetched_at[:10]
            lead.enrichment = Enrichment(
                status="enriched",
                domain=domain,
                fields=tagged(cached.profile, cached.source, as_of),
                reason=why,
            )
        if lead.pass_no > 0:
            self.pending.resolve(lead, now)
        return lead

    def handle(self, event: dict[str, Any]) -> Lead:
        lead = self.enrich(lead_from_event(event, NORMALIZED))
        self.sink.publish(ENRICHED, lead)
        return lead


def make_provider(
    config: EnrichSettings, clock: Callable[[], dt.datetime], transport: Any = None
) -> FirmographicProvider:
    """The configured provider, reading its key from Secrets Manager at call time (cached).

    ``transport`` replaces the HTTP call (the sandbox's provider stand-in).
    """
    def key() -> str:
        return get_secret(config.enrichment_secret_id).strip()

    return factory.make_provider(
        config.enrichment_provider,
        key,
        clock=clock,
        base_url=config.enrichment_base_url,
        api_version=config.enrichment_api_version,
        transport=transport,
    )
