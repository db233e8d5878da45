"""The owner's notice that rrs runs degraded: which fallback, since when, how often, what to do.

rrs has no digest, so its degradation notes (handlers/common/degradations.py) go out
through the escalation path every other mail of rrs takes, as two mails: the fix to the person
who deployed the stack (``alertEmail``: the console page and the CLI check), and to the owner
only what changes for the business. The path: rrs-sweep, which runs through
the opening hours, enqueues one ``escalate`` message per business day on which new notes were
made (``due``), and rrs-escalator reads the notes and mails this notice, de-duplicated like a
handover. One mail a day while a model stays refused, none once the cause is fixed: the owner
hears of it the same working day, and is not mailed once per refused call.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from handlers.common import degradations
from handlers.common import html_kit as kit
from handlers.review_requests.contract import DEGRADED_REASON
from handlers.review_requests.timing import zone as zone_of

EFFECT = (
    "Review requests go out in the standard wording today, and customers are offered the "
    "private feedback form instead of being asked for a public review."
)
"""What the rules do instead (handlers/review_requests/grading.py and drafting.py), in the
owner's words: what changes for the business, nothing to do in AWS."""

RULES = (
    "rrs runs on its rules: nobody is graded happy, so nobody is asked for a public review, "
    "and asks go out in the fixed wording."
)
"""The same, for the person who deployed the stack."""

ONCE_A_DAY = "You get this notice at most once a day while it goes on, and none once it is fixed."


def local_day(moment: dt.datetime, business_zone: str) -> str:
    """The business's date of ``moment`` (the notice's period), ISO ``YYYY-MM-DD``."""
    return moment.astimezone(zone_of(business_zone, "UTC")).date().isoformat()


def due(found: Sequence[degradations.Degradation], now: dt.datetime, business_zone: str) -> bool:
    """True when a note was made since the last notice and no notice went out today."""
    today = local_day(now, business_zone)
    for d in found:
        if d.notified_at == 0:
            return True
        notified = dt.datetime.fromtimestamp(d.notified_at, dt.UTC)
        if d.last_at > d.notified_at and local_day(notified, business_zone) < today:
            return True
    return False


def dedupe_key(now: dt.datetime, business_zone: str) -> str:
    """One notice per business day: a second sweep (or a redelivery) finds it sent."""
    return f"{DEGRADED_REASON}-{local_day(now, business_zone)}"


def build(
    found: Sequence[degradations.Degradation], *, business: str, zone: str, alert_email: str
) -> kit.Mail:
    """The owner's notice: what the business sees today, and that the fix went to
    ``alert_email`` (who deployed the stack). Nothing for the owner to do in AWS."""
    since = min(d.first_at for d in found)
    started = dt.datetime.fromtimestamp(since, dt.UTC).astimezone(zone_of(zone, "UTC"))
    subject = f"[{business}] Review requests use the standard wording today"[:150]
    who = f"The fix has gone to {alert_email}, who set up this system; nothing for you to do."
    when = f"Since {started:%d %b %Y %H:%M} ({zone})."
    text = [EFFECT, "", when, who, "", ONCE_A_DAY]
    body = kit.join([kit.para(EFFECT, strong=True), kit.para(when), kit.para(who), kit.detail(ONCE_A_DAY)])
    return kit.mail(subject, text, body)


def for_deployer(
    found: Sequence[degradations.Degradation], *, business: str, zone: str, region: str
) -> kit.Mail:
    """The notice for the person who deployed the stack (``alertEmail``): what Bedrock refuses,
    since when, how often, and the exact fix; ``region`` is rrs's, where access is enabled."""
    return degradations.deployer_mail(
        found, system="rrs", region=region, zone=zone,
        subject=f"[{business}] rrs: Bedrock refuses its model in {region}",
        lead=f"Bedrock answers AccessDeniedException for rrs-sender's model in {region}. {RULES}",
    )
