"""The owner's take-up roll-up: what is new since the last one, with running totals beside it.

Each roll-up covers ``[since, until)``: ``since`` is where the last one ended (the stored
high-water mark, ``offers.report_mark``), so a nudge, a tap or a sale is reported in exactly
one roll-up; the running totals add each period to the ones before. Nudges, taps, sales and
closed windows count by when they happened. The value of taken add-ons is their
price when offered, summed per currency: a tap inside the window put the add-on in the cart,
which is as far as this system can see (Shopify's order, not this mail, says whether it was paid).

A day with nothing new (nothing nudged, tapped, taken, closed, lost or degraded) sends no mail;
``quietReport: line`` sends one "all quiet" line on Mondays instead (handlers/common/quiet.py).
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
from handlers.common.metrics import CUSTOMER_REDACTED, MODEL_REFUSED
from handlers.common.unconfirmed_sends import OWNER_ADVICE
from handlers.upsell_recommender.domain import OfferState
from handlers.upsell_recommender.offers import Activity

FIRST_PERIOD_S = 7 * 24 * 3600
"""The first roll-up (no mark yet) looks back a week."""
SYMBOLS = {"GBP": "£", "USD": "$", "EUR": "€"}
EFFECTS = {
    MODEL_REFUSED: "No add-on offers are being picked today: the AI that chooses them is unavailable.",
    CUSTOMER_REDACTED: "Orders arrive without the customer's name, email and phone, so no offer can "
                       "be sent for them.",
}
"""What each fallback changes for the owner (``degradations.owner_lines``)."""


@dataclass(frozen=True)
class Rollup:
    """One roll-up: ``new`` since ``since``, ``totals`` since ``totals_since`` (both included);
    ``counts`` are the offers due in the period by state (waiting, not sent, no fit)."""

    new: Activity
    totals: Activity
    since: int
    until: int
    totals_since: int
    counts: Mapping[OfferState, int] = field(default_factory=dict)
    closed_now: int = 0
    unconfirmed: tuple[Mapping[str, Any], ...] = ()
    """Offers claimed but never confirmed sent, reported in the period."""
    degraded: tuple[degradations.Degradation, ...] = ()
    """Fallbacks taken in the period (a redacted customer, a refused model)."""
    alert_email: str = ""
    """Who has the fix of a fallback (``alertEmail``)."""

    def count(self, state: OfferState) -> int:
        return int(self.counts.get(state, 0))

    @property
    def quiet(self) -> bool:
        """Nothing new to act on or read."""
        return self.new.empty and not self.unconfirmed and not self.degraded


def take_up(activity: Activity) -> str:
    """Taken in time over closed windows; "not yet" before any closed."""
    return "not yet" if activity.closed == 0 else f"{activity.taken / activity.closed:.0%}"


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


def _when(ts: int, zone: str) -> str:
    return kit.local_time(dt.datetime.fromtimestamp(ts, dt.UTC), zone)


def render(rollup: Rollup, *, zone: str = "UTC") -> kit.Mail:
    """The roll-up mail (subject, plain text, HTML); the caller sends none on a quiet day."""
    new, totals = rollup.new, rollup.totals
    since = _when(rollup.since, zone)
    subject = (
        f"Upsell: {new.taken} add-on{'s' if new.taken != 1 else ''} taken ({money(new.value)}) "
        f"from {new.nudged} order{'s' if new.nudged != 1 else ''} nudged since the last roll-up"
        + (" (running on rules: see below)" if rollup.degraded else "")
    )
    started = _day(rollup.totals_since, zone)
    main = [
        ("Orders nudged", str(new.nudged), str(totals.nudged)),
        ("Taps on the link", str(new.taps), str(totals.taps)),
        ("Add-ons taken (tapped in time)", str(new.taken), str(totals.taken)),
        ("Value of add-ons taken", money(new.value), money(totals.value)),
        ("Take-up, of the windows closed", take_up(new), take_up(totals)),
    ]
    more = [
        ("Windows closed", new.closed),
        ("Waiting to be sent", rollup.count(OfferState.CHOSEN)),
        ("Not sent (opted out, or enough nudges this month)", rollup.count(OfferState.SUPPRESSED)),
        ("No add-on fitted the order", rollup.count(OfferState.NO_FIT)),
        ("Closed as not tapped in this run", rollup.closed_now),
    ]
    more = [(label, n) for label, n in more if n]  # a zero says nothing in four seconds
    text = [subject, "", f"New since the last roll-up ({since}; times in {zone}), and the running "
            f"total since {started}:", ""]
    text += [f"  {label}: {figure} (running total: {total})" for label, figure, total in main]
    lost = _unconfirmed_lines(rollup.unconfirmed, zone)
    if lost:
        text += ["", f"Nudges claimed but never confirmed sent: {len(lost)}"]
        text += [f"  {line}" for line in lost] + ["", OWNER_ADVICE]
    if rollup.degraded:
        text += ["", *degradations.owner_lines(rollup.degraded, EFFECTS, rollup.alert_email)]
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
            kit.para(f"New since the last roll-up ({since}), each counted once; beside it the "
                     f"running total since {started}."),
            kit.rows_table(("", "New", "Running total"), main, numeric=2),
            (
                kit.Html(f"<h2>Nudges claimed but never confirmed sent: {len(lost)}</h2>")
                + kit.join(kit.para(line) for line in lost)
                + kit.para(OWNER_ADVICE, strong=True)
                if lost
                else ""
            ),
            degradations.owner_html(rollup.degraded, EFFECTS, rollup.alert_email),
            rest,
            kit.detail(
                "The value is each taken add-on's price when it was offered; Shopify's orders "
                f"say whether it was paid. Times in {zone}."
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
