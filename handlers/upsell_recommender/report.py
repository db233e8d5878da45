"""The owner's take-up roll-up: plain text from offer counts by state.

Counted over the offers whose ``send_at`` lies in the last seven days, so the numbers move
slowly and the take-up rate reads as a weekly rolling figure even though it arrives daily.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from handlers.common.unconfirmed_sends import OWNER_ADVICE
from handlers.upsell_recommender.domain import OfferState

REPORT_PERIOD_S = 7 * 24 * 3600


@dataclass(frozen=True)
class Rollup:
    """Counts behind one report."""

    counts: Mapping[OfferState, int]
    closed_now: int
    since: int
    until: int
    unconfirmed: tuple[Mapping[str, Any], ...] = ()
    """Offers claimed but never confirmed sent, reported in the period."""

    @property
    def nudged(self) -> int:
        """Offers a nudge went out for."""
        return sum(
            self.counts.get(s, 0)
            for s in (
                OfferState.SENT,
                OfferState.TAKEN,
                OfferState.OUT_OF_WINDOW,
                OfferState.IGNORED,
            )
        )

    @property
    def take_up(self) -> float | None:
        """Taken inside the window over closed nudges; None before any closed."""
        closed = sum(
            self.counts.get(s, 0)
            for s in (OfferState.TAKEN, OfferState.OUT_OF_WINDOW, OfferState.IGNORED)
        )
        return None if closed == 0 else self.counts.get(OfferState.TAKEN, 0) / closed


def _day(ts: int) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%d %b %Y")


def _moment(ts: int) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%d %b %Y %H:%M UTC")


def render(rollup: Rollup) -> tuple[str, str]:
    """Subject and text of the report."""
    c = rollup.counts
    rate = rollup.take_up
    rate_text = "n/a (no window has closed yet)" if rate is None else f"{rate:.0%}"
    subject = f"Upsell take-up: {c.get(OfferState.TAKEN, 0)} taken of {rollup.nudged} nudged"
    lines = [
        f"Upsell recommender, offers due {_day(rollup.since)} to {_day(rollup.until)}:",
        "",
        f"  Nudges sent ................ {rollup.nudged}",
        f"  Taken inside the window .... {c.get(OfferState.TAKEN, 0)}",
        f"  Tapped after the window .... {c.get(OfferState.OUT_OF_WINDOW, 0)}",
        f"  Ignored .................... {c.get(OfferState.IGNORED, 0)}",
        f"  Window still open .......... {c.get(OfferState.SENT, 0)}",
        f"  Waiting to be sent ......... {c.get(OfferState.CHOSEN, 0)}",
        f"  Not sent (opt-out, cap) .... {c.get(OfferState.SUPPRESSED, 0)}",
        f"  No fitting add-on .......... {c.get(OfferState.NO_FIT, 0)}",
        "",
        f"  Take-up rate ............... {rate_text}",
        f"  Closed as ignored this run . {rollup.closed_now}",
        "",
    ]
    if rollup.unconfirmed:
        lines += [f"Nudges claimed but never confirmed sent: {len(rollup.unconfirmed)}", ""]
        for offer in rollup.unconfirmed:
            contact = offer.get("contact") or {}
            lines.append(
                f"  {offer.get('offer_id')}: customer {offer.get('customer_id', '-')}, "
                f"{contact.get('channel', '-')} to {contact.get('address', '-')}, "
                f"claimed {_moment(int(offer.get('sent_at') or 0))}"
            )
        lines += ["", OWNER_ADVICE, ""]
    return subject, "\n".join(lines)
