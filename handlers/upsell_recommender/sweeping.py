"""Sweeping (upsr-sweep, hourly): close windows, and once a day send the owner the take-up roll-up.

Sent offers whose attribution window ended without a tap become ``ignored``. The move is
conditional on ``sent``, so a tap racing the sweep leaves exactly one terminal state, and a
re-run skips everything already closed.

Before closing, it reconciles at-most-once nudges: a sent offer claimed more than
``UNCONFIRMED_AFTER`` ago that the channel never confirmed (the sender died between its claim
and the send, or the outcome was unknown) is marked ``unconfirmed_at`` once, counted
(``UnconfirmedNudges``, alarmed) and listed in the roll-up with what to do. It is never re-sent.

The roll-up is due once per day, at the first run at or after ``report_hour`` (local time in
``report_timezone``), guarded by a first-writer-wins marker item in upsr-offers: hourly runs,
Scheduler retries and overlapping runs cannot send it twice. It reports what is new since the
last roll-up (the high-water mark, ``offers.report_mark``, moved before the mail goes) with
running totals; a day with nothing new sends nothing (``quiet``). If SES fails, that day's
news are skipped (logged; they stay in the running totals) rather than risked twice. A fallback
taken mails its fix to ``alertEmail``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from handlers.common import degradations, metrics
from handlers.common import quiet as quiet_rule
from handlers.common.aws_clients import client, table
from handlers.common.degradations import Ledger
from handlers.common.html_kit import simple_content
from handlers.common.observability import get_logger
from handlers.upsell_recommender.contract import DEGRADABLE, OFFERS_KEY, OFFERS_TTL
from handlers.upsell_recommender.offers import (
    ReportMark,
    activity,
    claim_daily_report,
    close_ignored,
    count_by_state,
    expired_sent_offers,
    report_mark,
    report_unconfirmed,
    save_report_mark,
    unconfirmed_offers,
)
from handlers.upsell_recommender.report import FIRST_PERIOD_S, Rollup, render

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
        quiet_report: ``line`` (Mondays' one line when nothing is new) or ``none``.
        ledger: The system's degradation notes (upsr-offers), named in the roll-up.
        mail_alert: Sends a fallback's fix to ``alertEmail``.
        alert_email: ``alertEmail``, named to the owner as who has the fix.
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
    mail_alert: Mailer | None = None
    alert_email: str = ""

    @classmethod
    def from_settings(
        cls, config: SweepSettings, *, mail_owner: Mailer | None = None, mail_alert: Mailer | None = None
    ) -> SweepDeps:
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
            mail_alert=mail_alert or ses_mailer(config.sender_email, config.alert_email),
            alert_email=config.alert_email,
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
    """Send today's roll-up if the hour has come, no run sent it yet and it has news."""
    local = local_time(now, deps.report_timezone)
    if local.hour < deps.report_hour:
        return False
    if not claim_daily_report(deps.offers, local.date().isoformat(), now, deps.retention_s):
        return False
    until = int(now)
    mark = report_mark(deps.offers)
    since = mark.until if mark else until - FIRST_PERIOD_S
    new = activity(deps.offers, deps.index, since, until)
    totals = mark.totals.plus(new) if mark else new
    started = mark.since if mark else since
    save_report_mark(deps.offers, ReportMark(until, totals, started))
    lost = unconfirmed_offers(deps.offers, deps.index, since, until)
    degraded = deps.ledger.seen(DEGRADABLE, since) if deps.ledger else []
    if degraded and deps.mail_alert is not None and deps.ledger is not None:
        region = str(deps.ledger.table.meta.client.meta.region_name)  # upsr's one Region
        _send(deps.mail_alert, degradations.deployer_mail(
            degraded, system="Upsell recommender", region=region, zone=deps.report_timezone))
    rollup = Rollup(new, totals, since, until, started,
                    counts=count_by_state(deps.offers, deps.index, since, until - 1),
                    closed_now=closed_now, unconfirmed=tuple(lost), degraded=tuple(degraded),
                    alert_email=deps.alert_email)
    if rollup.quiet:
        if not quiet_rule.all_quiet_due(local.date(), deps.quiet_report):
            get_logger().info("nothing new: no roll-up mailed")
            return False
        return _send(deps.mail_owner, quiet_rule.all_quiet(
            "Upsell recommender", "No order was nudged, tapped or taken since the last roll-up."))
    return _send(deps.mail_owner, render(rollup, zone=deps.report_timezone))


def _send(mailer: Mailer, mail: Mail) -> bool:
    try:
        mailer(mail)
    except Exception:
        get_logger().exception("roll-up mail not sent; it is skipped, not retried")
        return False
    return True
