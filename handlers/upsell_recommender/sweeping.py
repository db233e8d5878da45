"""Sweeping (upsr-sweep, hourly): close windows, and once a day send the owner the take-up roll-up.

Sent offers whose attribution window ended without a tap become ``ignored``. The move is
conditional on ``sent``, so a tap racing the sweep leaves exactly one terminal state, and a
re-run skips everything already closed.

Before closing, it reconciles at-most-once nudges: a sent offer claimed more than
``UNCONFIRMED_AFTER`` ago that the channel never confirmed (the sender died between its claim
and the send, or the outcome was unknown) is marked ``unconfirmed_at`` once, counted
(``UnconfirmedNudges``, alarmed) and listed in the roll-up with what to do. It is never re-sent.

The roll-up goes once per day, by the first run at or after ``report_hour`` (local time in
``report_timezone``), guarded by a first-writer-wins marker item in upsr-offers: hourly runs,
Scheduler retries and overlapping runs cannot send it twice. It is sent at most once: if SES
fails after the marker, that day's report is skipped (logged) rather than risked twice.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from handlers.common import metrics
from handlers.common.aws_clients import client, table
from handlers.common.degradations import Ledger
from handlers.common.html_kit import simple_content
from handlers.common.observability import get_logger
from handlers.upsell_recommender.contract import DEGRADABLE, OFFERS_KEY, OFFERS_TTL
from handlers.upsell_recommender.offers import (
    claim_daily_report,
    close_ignored,
    count_by_state,
    expired_sent_offers,
    report_unconfirmed,
    taken_value,
    unconfirmed_offers,
)
from handlers.upsell_recommender.report import REPORT_PERIOD_S, Rollup, render

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

    from handlers.common.html_kit import Mail
    from handlers.upsell_recommender.contract import SweepSettings

Mailer = Callable[["Mail"], None]
"""Sends one mail (subject, plain text and HTML) to the owner."""


@dataclass(frozen=True)
class SweepDeps:
    """What upsr-sweep touches.

    Attributes:
        offers: upsr-offers (index Query, conditional UpdateItem, report marker PutItem).
        index: The state/send_at index name.
        mail_owner: Sends the roll-up to the owner (SES from the sender address).
        window_s: Attribution window.
        retention_s: Marker lifetime (TTL).
        report_hour: Local hour from which the day's roll-up may go.
        report_timezone: IANA zone of ``report_hour``, and of the dates the roll-up shows.
        quiet_report: ``line`` (one line on a quiet week) or ``none`` (no mail).
        ledger: The system's degradation notes (upsr-offers), named in the roll-up.
    """

    offers: Table
    index: str
    mail_owner: Mailer
    window_s: int
    retention_s: int
    report_hour: int
    report_timezone: str
    quiet_report: str = "line"
    ledger: Ledger | None = None

    @classmethod
    def from_settings(cls, config: SweepSettings, *, mail_owner: Mailer | None = None) -> SweepDeps:
        return cls(
            offers=table(config.offers_table),
            index=config.offers_index,
            mail_owner=mail_owner
            or ses_mailer(config.sender_email, config.owner_email),
            window_s=config.attribution_window_hours * 3600,
            retention_s=config.offer_retention_days * 86400,
            report_hour=config.report_hour,
            report_timezone=config.report_timezone,
            quiet_report=config.quiet_report,
            ledger=Ledger(table(config.offers_table), OFFERS_KEY, OFFERS_TTL),
        )


def ses_mailer(sender: str, owner: str) -> Mailer:
    """A mailer sending a text and HTML mail from ``sender`` to ``owner`` with SES v2."""

    def send(mail: Mail) -> None:

        client("sesv2").send_email(
            FromEmailAddress=sender,
            Destination={"ToAddresses": [owner]},
            Content={"Simple": simple_content(mail)},
        )

    return send


def local_time(now: float, zone: str) -> dt.datetime:
    """``now`` in ``zone``; UTC when the runtime has no data for the zone (logged)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        tz: dt.tzinfo = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        get_logger().warning("time zone unknown here; using UTC", extra={"zone": zone})
        tz = dt.UTC
    return dt.datetime.fromtimestamp(now, tz)


def run(deps: SweepDeps, *, now: float) -> dict[str, Any]:
    """Close expired windows; send the day's roll-up if it is due and not yet sent."""
    unconfirmed = report_unconfirmed(deps.offers, deps.index, now)
    metrics.count("UnconfirmedNudges", len(unconfirmed))
    closed = 0
    skipped = 0
    for offer in expired_sent_offers(deps.offers, deps.index, now, deps.window_s):
        if close_ignored(deps.offers, str(offer["offer_id"]), now).won:
            closed += 1
        else:
            skipped += 1  # a tap (or another sweep) got there first
    reported = maybe_report(deps, now, closed)
    summary = {
        "closed": closed,
        "already_closed": skipped,
        "reported": reported,
        "unconfirmed": len(unconfirmed),
    }
    get_logger().info("sweep run", extra=summary)
    return summary


def maybe_report(deps: SweepDeps, now: float, closed_now: int) -> bool:
    """Send today's roll-up if the hour has come and no run sent it yet."""
    local = local_time(now, deps.report_timezone)
    if local.hour < deps.report_hour:
        return False
    if not claim_daily_report(deps.offers, local.date().isoformat(), now, deps.retention_s):
        return False
    until = int(now)
    since = until - REPORT_PERIOD_S
    counts = count_by_state(deps.offers, deps.index, since, until)
    value = taken_value(deps.offers, deps.index, since, until)
    lost = unconfirmed_offers(deps.offers, deps.index, since, until)
    degraded = deps.ledger.seen(DEGRADABLE, since) if deps.ledger else []
    mail = render(
        Rollup(
            counts,
            closed_now,
            since,
            until,
            value,
            unconfirmed=tuple(lost),
            degraded=tuple(degraded),
        ),
        zone=deps.report_timezone,
        quiet=deps.quiet_report,
    )
    if mail is None:
        get_logger().info("quiet week: no roll-up mailed (quietReport none)")
        return False
    try:
        deps.mail_owner(mail)
    except Exception:
        get_logger().exception("owner roll-up not sent; today's report is skipped")
        return False
    return True
