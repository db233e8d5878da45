"""The owner's notice that rrs runs degraded: which fallback, since when, how often, what to do.

rrs has no digest, so its degradation notes (handlers/common/degradations.py) reach the owner
through the escalation path every other owner mail of rrs takes: rrs-sweep, which runs through
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
    "While the grading model is refused, nobody is graded happy, so nobody is asked for a "
    "public review (everyone gets the private feedback form instead). While the writing model "
    "is refused, asks go out in a fixed wording."
)
"""What the rules do instead (handlers/review_requests/grading.py and drafting.py), in words."""


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
    found: Sequence[degradations.Degradation], *, business: str, zone: str, region: str
) -> kit.Mail:
    """The notice (subject, plain text, HTML) naming every note in ``found`` (rrs notes one
    kind, a refused model: ``contract.DEGRADABLE``); ``region`` is rrs's, where access is
    enabled."""
    what = ", ".join(dict.fromkeys(degradations.WHAT[d.kind].lower() for d in found))
    subject = f"[{business}] Review requests running degraded: {what}"[:150]
    lead = (
        "Bedrock is refusing the AI model, so review requests are running on fixed rules until "
        f"model access is enabled in Region {region}."
    )
    text = [lead, "", EFFECT, "", *degradations.text_lines(found, zone), ""]
    text.append(
        "You get this notice at most once a day while it goes on, and none once it is fixed."
    )
    body = kit.join(
        [
            kit.para(lead, strong=True),
            kit.actions(
                kit.button(
                    degradations.BEDROCK_ACCESS_PAGE,
                    "How to enable model access",
                    primary=True,
                    method="get",
                )
            ),
            kit.para(EFFECT),
            degradations.html(found, zone),
            kit.detail(
                "You get this notice at most once a day while it goes on, and none once it is "
                f"fixed. Times in {zone}."
            ),
        ]
    )
    return kit.mail(subject, text, body)
