"""The owner's take-up roll-up: orders nudged, taps, add-ons taken and what they are worth.

Counted over the offers whose ``send_at`` lies in the last seven days, so the numbers move
slowly and the take-up rate reads as a weekly rolling figure even though it arrives daily.
The value of taken add-ons is their price when offered, summed per currency: a tap inside the
window put the add-on in the cart, which is as far as this system can see (Shopify's order,
not this mail, says whether it was paid).

A quiet week (nothing nudged, tapped or waiting) is one line, or no mail at all, as the stack's
``quietReport`` says.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from handlers.common import degradations
from handlers.common import html_kit as kit
from handlers.common.unconfirmed_sends import OWNER_ADVICE
from handlers.upsell_recommender.domain import OfferState

REPORT_PERIOD_S = 7 * 24 * 3600
QUIET_LINE = "line"
QUIET_NONE = "none"
SYMBOLS = {"GBP": "£", "USD": "$", "EUR": "€"}


@dataclass(frozen=True)
class Rollup:
    """Counts behind one report; ``taken_value`` is the taken add-ons' prices per currency."""

    counts: Mapping[OfferState, int]
    closed_now: int
    since: int
    until: int
    taken_value: Mapping[str, Decimal] = field(default_factory=dict)
    unconfirmed: tuple[Mapping[str, Any], ...] = ()
    """Offers claimed but never confirmed sent, reported in the period."""
    degraded: tuple[degradations.Degradation, ...] = ()
    """Fallbacks taken in the period (a redacted customer, a refused model), with what to do."""

    def count(self, state: OfferState) -> int:
        return int(self.counts.get(state, 0))

    @property
    def nudged(self) -> int:
        """Orders a nudge went out for."""
        return sum(
            self.count(s)
            for s in (OfferState.SENT, OfferState.TAKEN, OfferState.OUT_OF_WINDOW, OfferState.IGNORED)
        )

    @property
    def taps(self) -> int:
        """Nudges tapped, inside the window or after it."""
        return self.count(OfferState.TAKEN) + self.count(OfferState.OUT_OF_WINDOW)

    @property
    def closed(self) -> int:
        """Nudges whose window has closed (taken in time, tapped late, or not tapped)."""
        return sum(
            self.count(s) for s in (OfferState.TAKEN, OfferState.OUT_OF_WINDOW, OfferState.IGNORED)
        )

    @property
    def take_up(self) -> float | None:
        """Taken inside the window over closed nudges; None before any closed."""
        return None if self.closed == 0 else self.count(OfferState.TAKEN) / self.closed

    @property
    def quiet(self) -> bool:
        """Nothing nudged, tapped, waiting to be sent or lost in the period."""
        return (
            self.nudged == 0
            and self.taps == 0
            and self.count(OfferState.CHOSEN) == 0
            and not self.unconfirmed
            and not self.degraded
        )


def money(amounts: Mapping[str, Decimal]) -> str:
    """"£84.00", "£84.00 + $12.50", or "none" when nothing was taken."""
    parts = []
    for currency, amount in sorted(amounts.items()):
        symbol = SYMBOLS.get(currency.upper())
        figure = f"{Decimal(amount):,.2f}"
        parts.append(f"{symbol}{figure}" if symbol else f"{figure} {currency.upper()}")
    return " + ".join(parts) if parts else "none"


def _day(ts: int, zone: str) -> str:
    local = dt.datetime.fromtimestamp(ts, dt.UTC).astimezone(ZoneInfo(zone))
    return kit.local_day(local.date())


def render(rollup: Rollup, *, zone: str = "UTC", quiet: str = QUIET_LINE) -> kit.Mail | None:
    """The roll-up mail (subject, plain text, HTML); None on a quiet week when ``quiet`` is
    ``none``."""
    period = f"{_day(rollup.since, zone)} to {_day(rollup.until, zone)}"
    if rollup.quiet:
        if quiet == QUIET_NONE:
            return None
        subject = "Upsell: a quiet week, no add-on offers sent"
        line = f"No orders were nudged, tapped or waiting between {period}."
        return kit.mail(subject, [subject, "", line], kit.para(line))
    taken = rollup.count(OfferState.TAKEN)
    value = money(rollup.taken_value)
    rate = rollup.take_up
    rate_text = "not yet (no window has closed)" if rate is None else f"{rate:.0%}"
    # Over closed windows only, and said so: "30%" beside "3 of 12 nudged" reads as a sum error.
    rate_label = "Take-up rate" if rate is None else f"Take-up, of the {rollup.closed} closed windows"
    subject = (
        f"Upsell: {taken} add-on{'s' if taken != 1 else ''} taken ({value}) "
        f"from {rollup.nudged} order{'s' if rollup.nudged != 1 else ''} nudged"
        + (" (running degraded: see below)" if rollup.degraded else "")
    )
    main = [
        ("Orders nudged", str(rollup.nudged)),
        ("Taps on the link", str(rollup.taps)),
        ("Add-ons taken (tapped in time)", str(taken)),
        ("Value of add-ons taken", value),
        (rate_label, rate_text),
    ]
    more = [
        ("Tapped after the window", rollup.count(OfferState.OUT_OF_WINDOW)),
        ("Not tapped", rollup.count(OfferState.IGNORED)),
        ("Window still open", rollup.count(OfferState.SENT)),
        ("Waiting to be sent", rollup.count(OfferState.CHOSEN)),
        ("Not sent (opted out, or enough nudges this month)", rollup.count(OfferState.SUPPRESSED)),
        ("No add-on fitted the order", rollup.count(OfferState.NO_FIT)),
        ("Closed as not tapped in this run", rollup.closed_now),
    ]
    more = [(label, n) for label, n in more if n]  # a zero says nothing in four seconds
    text = [subject, "", f"Offers due to go out {period} (dates in {zone}):", ""]
    text += [f"  {label}: {figure}" for label, figure in main]
    lost = _unconfirmed_lines(rollup.unconfirmed, zone)
    if lost:
        text += ["", f"Nudges claimed but never confirmed sent: {len(lost)}"]
        text += [f"  {line}" for line in lost] + ["", OWNER_ADVICE]
    if rollup.degraded:
        text += ["", *degradations.text_lines(rollup.degraded, zone)]
    if more:
        text += ["", "The rest:"] + [f"  {label}: {figure}" for label, figure in more]
    rest = (
        kit.Html("<h2>The rest</h2>")
        + kit.rows_table(("Offer", "Count"), [(label, str(n)) for label, n in more], numeric=1)
        if more
        else ""
    )
    body = kit.join(
        (
            kit.para(f"Offers due to go out {period}."),
            kit.rows_table(("This week", "Figure"), main, numeric=1),
            (
                kit.Html(f"<h2>Nudges claimed but never confirmed sent: {len(lost)}</h2>")
                + kit.join(kit.para(line) for line in lost)
                + kit.para(OWNER_ADVICE, strong=True)
                if lost
                else ""
            ),
            degradations.html(rollup.degraded, zone),
            rest,
            kit.detail(
                "The value is each taken add-on's price when it was offered; Shopify's orders "
                "say whether it was paid."
            ),
        )
    )
    return kit.mail(subject, text, body)


def _unconfirmed_lines(offers: tuple[Mapping[str, Any], ...], zone: str) -> list[str]:
    """One line per nudge claimed and never confirmed sent: who, how, when it was claimed."""
    lines = []
    for offer in offers:
        contact = offer.get("contact") or {}
        claimed = dt.datetime.fromtimestamp(int(offer.get("sent_at") or 0), dt.UTC)
        when = claimed.astimezone(ZoneInfo(zone)).strftime("%d %b %Y %H:%M")
        lines.append(
            f"Order {str(offer.get('offer_id', '-')).removeprefix('ofr-')} "
            f"(offer {offer.get('offer_id', '-')}): "
            f"{contact.get('channel', '-')} to {contact.get('address', '-')}, "
            f"claimed {when} ({zone})"
        )
    return lines
