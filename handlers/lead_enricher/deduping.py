"""Deduping a lead (ler-dedupe): new, or link:<crm_id> against ler-identity.

1. Exact keys (EMAIL#, PHONE#, FP#), strongest first: a hit links.
2. Otherwise candidates from the blocking keys are scored deterministically (``matching``):
   at or above the link score they link; in the ambiguous band the model picks among them
   (``dedupe_model``, bounded); below, the lead is new.
The role reads ler-identity only; ler-push writes it once the CRM has the contact.
"""

from __future__ import annotations

from typing import Any

from handlers.common.observability import get_logger
from handlers.lead_enricher.contract import DEDUPED, ENRICHED, EVENT_BUS, DedupeSettings
from handlers.lead_enricher.dedupe_model import judge
from handlers.lead_enricher.events import EventBridgeSink, EventSink, lead_from_event
from handlers.lead_enricher.identity import IdentityIndex
from handlers.lead_enricher.lead import Dedupe, Lead
from handlers.lead_enricher.matching import exact_keys, lead_profile, near_keys, score

MAX_CANDIDATES = 5


class Deduper:
    def __init__(
        self,
        config: DedupeSettings,
        index: IdentityIndex | None = None,
        sink: EventSink | None = None,
        model_client: Any = None,
    ) -> None:
        self.config = config
        self.index = index or IdentityIndex(config.identity_table, config.identity_index)
        self.sink = sink or EventBridgeSink(config.event_source, EVENT_BUS)
        self.model_client = model_client

    def verdict(self, lead: Lead) -> Dedupe:
        contact = lead.contact
        if contact is None:
            return Dedupe(verdict="new", matched_on="no_contact")
        for key in exact_keys(contact, lead.enrichment):
            row = self.index.get(key)
            if row and row.get("crm_id"):
                return Dedupe(verdict=f"link:{row['crm_id']}", matched_on=key.split("#")[0])
        candidates = sorted(self.index.candidates(near_keys(contact, lead.enrichment)))
        if not candidates:
            return Dedupe(verdict="new")
        mine = lead_profile(contact, lead.enrichment)
        profiles = [self.index.profile(c) for c in candidates[: MAX_CANDIDATES * 2]]
        scored = sorted(
            ((p, score(mine, p)) for p in profiles), key=lambda pair: (-pair[1], pair[0].crm_id)
        )[:MAX_CANDIDATES]
        best, best_score = scored[0]
        if best_score >= self.config.link_score:
            return Dedupe(verdict=f"link:{best.crm_id}", matched_on="FUZZY", score=best_score)
        band = [(p, s) for p, s in scored if s >= self.config.ambiguous_score]
        if not band:
            return Dedupe(verdict="new", score=best_score)

        chosen, outcome = judge(mine, band, model_id=self.config.dedupe_model_id, client=self.model_client)
        if outcome.startswith("discarded"):
            get_logger().info("model answer discarded", lead_id=lead.lead_id, outcome=outcome)
        if chosen is None:
            return Dedupe(verdict="new", score=best_score, model=outcome)
        chosen_score = next(s for p, s in band if p.crm_id == chosen)
        return Dedupe(
            verdict=f"link:{chosen}", matched_on="MODEL", score=chosen_score, model=outcome
        )

    def handle(self, event: dict[str, Any]) -> Lead:
        lead = lead_from_event(event, ENRICHED)
        lead.dedupe = self.verdict(lead)
        self.sink.publish(DEDUPED, lead)
        return lead
