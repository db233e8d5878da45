"""What rrs-sweep does: find requests whose schedule misfired and re-drive or escalate them.

It acts only inside opening hours (the business's time zone), on requests still ``scheduled``
whose due time passed more than the grace period ago: a dropped or misfired schedule, a send
message that went to the dead-letter queue, or an ask deferred by quiet hours. Each is re-driven
with a ``send`` message (the sender's once-only write makes a race with the live path
harmless) up to ``max_attempts`` times, then given up (``suppressed``) and escalated to the
owner. Requests already asked or diverted are never in its query, so never re-sent.

It is also the reconciler of at-most-once asks: a request asked or diverted (claimed) more than
``UNCONFIRMED_AFTER`` ago whose send was never confirmed (no ``delivered_at``: the sender died
between its claim and the provider's answer, or the answer was lost) is reported once: counted
(``UnconfirmedAsks``, alarmed) and escalated to the owner with what to do. It is never re-sent.

And it asks for the owner's notice of degradations (``handlers.review_requests.notice``): when
the ledger holds a note made since the last notice and none went out today, one ``escalate``
message (reason ``degraded``, one dedupe key per business day) goes to rrs-escalator, then the
notes are marked notified. Enqueue first: a sweep that dies before marking only repeats the
message, which the escalator's claim drops.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from handlers.common import metrics
from handlers.common.degradations import Ledger
from handlers.common.unconfirmed_sends import LOOKBACK, UNCONFIRMED_AFTER
from handlers.review_requests import notice
from handlers.review_requests.contract import DEGRADABLE, DEGRADED_REASON, NOTICES_ID
from handlers.review_requests.domain import escalate_message, send_message
from handlers.review_requests.store import Requests
from handlers.review_requests.timing import Window, iso, zone
from handlers.review_requests.work import WorkQueue

GIVE_UP_REASON = "undelivered_after_sweeps"
UNCONFIRMED_REASON = "unconfirmed_send"
"""The escalation reason (and dedupe key, with ``-``) of a claimed ask never confirmed sent."""
BATCH_LIMIT = 500
"""Requests handled per run; the next run (15 minutes later) continues."""


@dataclass(frozen=True)
class SweepConfig:
    window: Window
    business_timezone: str
    grace: dt.timedelta
    max_attempts: int


@dataclass
class Sweep:
    requests: Requests
    work: WorkQueue
    config: SweepConfig
    ledger: Ledger | None = None
    """rrs's degradation notes (rrs-requests); None: no notice is asked for."""

    def run(self, now: dt.datetime) -> dict[str, int | str]:
        """One pass; returns counts (or why it did nothing)."""
        cfg = self.config
        if not cfg.window.contains(now, zone(cfg.business_timezone, "UTC")):
            return {"skipped": "outside_opening_hours"}
        requeued = escalated = lost = 0
        for item in self.requests.stragglers(iso(now - cfg.grace), BATCH_LIMIT):
            request_id = str(item["request_id"])
            sweeps = int(item.get("sweeps", 0) or 0)
            if sweeps < cfg.max_attempts:
                if self.requests.mark_swept(request_id, sweeps, iso(now)):
                    self.work.put(send_message(request_id))
                    requeued += 1
                else:
                    lost += 1
                continue
            # Enqueue first: if the give-up then loses to a late send, the escalator sees
            # the request asked or diverted and drops the escalation.
            self.work.put(escalate_message(request_id, "straggler", "straggler"))
            if self.requests.give_up(request_id, GIVE_UP_REASON, iso(now)):
                escalated += 1
            else:
                lost += 1
        unconfirmed = self.report_unconfirmed(now)
        return {
            "requeued": requeued,
            "escalated": escalated,
            "lost_races": lost,
            "unconfirmed": unconfirmed,
            "degraded_notice": self.ask_for_notice(now),
        }

    def ask_for_notice(self, now: dt.datetime) -> int:
        """Enqueue today's notice of degradations if one is due; returns 1 if it did."""
        if self.ledger is None:
            return 0
        found = self.ledger.seen(DEGRADABLE, now.timestamp() - self.ledger.retention_s)
        if not notice.due(found, now, self.config.business_timezone):
            return 0
        key = notice.dedupe_key(now, self.config.business_timezone)
        self.work.put(escalate_message(NOTICES_ID, DEGRADED_REASON, key))
        for d in found:
            self.ledger.mark_notified(d.kind, d.function, now.timestamp())
        return 1

    def report_unconfirmed(self, now: dt.datetime) -> int:
        """Report each claim never confirmed sent, once; returns how many this run reported."""
        reported = 0
        found = self.requests.unconfirmed(
            claimed_before=iso(now - UNCONFIRMED_AFTER),
            due_since=iso(now - LOOKBACK),
            due_until=iso(now),
        )
        for item in found:
            request_id = str(item["request_id"])
            # Mark first: a concurrent sweep loses here, so the owner hears of it once.
            if self.requests.mark_unconfirmed(request_id, str(item["state"]), iso(now)):
                dedupe = UNCONFIRMED_REASON.replace("_", "-")
                self.work.put(escalate_message(request_id, UNCONFIRMED_REASON, dedupe))
                reported += 1
        metrics.count("UnconfirmedAsks", reported)
        return reported
