"""Screening a lead (ler-filter): junk signals weighed -> clean, or junk with the reason.

At or above the junk score the lead is dropped; below the borderline score it is clean; in
between the model decides within the rules (``filter_model``). The role holds no data store:
the decision travels in the event (ler-push and ler-junk-writer keep it).
"""

from __future__ import annotations

from typing import Any

from handlers.common.observability import get_logger
from handlers.lead_enricher import lead_metrics
from handlers.lead_enricher.contract import CLEAN, DEDUPED, EVENT_BUS, JUNK, FilterSettings
from handlers.lead_enricher.events import EventBridgeSink, EventSink, lead_from_event
from handlers.lead_enricher.filter_model import judge
from handlers.lead_enricher.junk_signals import weigh
from handlers.lead_enricher.lead import Lead, Screening


class JunkFilter:
    def __init__(
        self, config: FilterSettings, sink: EventSink | None = None, model_client: Any = None
    ) -> None:
        self.config = config
        self.sink = sink or EventBridgeSink(config.event_source, EVENT_BUS)
        self.model_client = model_client

    def screen(self, lead: Lead) -> Screening:
        weighed = weigh(lead)

        def decided(decision: str, reason: str, model: str | None = None) -> Screening:
            return Screening(
                decision="junk" if decision == "junk" else "clean",
                reason=reason,
                score=weighed.score,
                signals=weighed.signals,
                model=model,
            )

        if lead.is_check:
            # make verify's lead (a reserved example.com address, which the signals junk):
            # it passes by being a check, to prove the way to ler-push.
            return decided("clean", "check")
        if lead.rescue is not None:
            # A person read this lead in the junk digest and sent it back: it is not junk,
            # whatever the signals say (they stay on the record).
            return decided("clean", "rescued")
        if weighed.decisive or weighed.score >= self.config.junk_score:
            return decided("junk", weighed.reason)
        if weighed.score < self.config.borderline_score:
            return decided("clean", "below_borderline")

        drop, outcome = judge(
            lead, weighed, model_id=self.config.filter_model_id, client=self.model_client
        )
        if outcome.startswith("discarded"):
            get_logger().info("model answer discarded", lead_id=lead.lead_id, outcome=outcome)
        if drop:
            return decided("junk", drop, outcome)
        return decided("clean", "borderline_kept", outcome)

    def handle(self, event: dict[str, Any]) -> Lead:
        lead = lead_from_event(event, DEDUPED)
        lead.screening = self.screen(lead)
        self.sink.publish(JUNK if lead.screening.decision == "junk" else CLEAN, lead)
        if lead.screening.decision == "junk":
            reason = "model" if lead.screening.model else lead.screening.reason
            lead_metrics.count(lead, "LeadsJunked", reason)
        return lead
