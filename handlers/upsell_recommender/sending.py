"""Sending (upsr-sender, every 5 minutes): release due offers, one nudge each, never two.

For each chosen offer whose ``send_at`` has come (state/send_at index):

1. read upsr-optout and the frequency cap: a customer who opted out or is capped since the
   order gets nothing (the offer becomes ``suppressed`` with the reason), without a claim;
2. claim the nudge with one transaction: the offer chosen -> sent (conditioned on its state),
   the cap stamped on upsr-customers (conditioned on the cap's version) and a ConditionCheck
   that upsr-optout holds no item for the customer. Only the winner goes on, so two overlapping
   runs send once, and an opt-out stored after step 1 still wins (the offer is suppressed);
3. sign the one-tap link (subject: offer and variant; valid through the window plus a grace)
   and send one nudge by SMS, or by email when the customer consented to email only; an
   accepted nudge stamps the offer ``delivered_at``.

The claim happens before the send on purpose: if the function dies in between, the offer stays
``sent`` without a message rather than risking a second message on the next run, and upsr-sweep
reports it (``UnconfirmedNudges``, the owner's roll-up) without re-sending. A channel that
definitely refused (``NudgeRejected``) turns the offer ``suppressed``; an unknown outcome (a
timeout) leaves it ``sent`` and unconfirmed, so it is reported the same way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from handlers.common import metrics
from handlers.common.aws_clients import table
from handlers.common.clock import Clock, utc_now
from handlers.common.degradations import Ledger
from handlers.common.link_tokens import Keyring, issue_short_token
from handlers.common.mail_from import from_address
from handlers.common.observability import get_logger
from handlers.common.secrets import get_secret
from handlers.common.spend import CapReached, SpendGuard
from handlers.upsell_recommender import customers, offers
from handlers.upsell_recommender.contract import OFFERS_KEY, OFFERS_TTL
from handlers.upsell_recommender.domain import (
    ADD_ACTION,
    Channel,
    Contact,
    OfferState,
    is_variant_id,
)
from handlers.upsell_recommender.nudges import AwsMessenger, NudgeRejected, compose
from handlers.upsell_recommender.offers import due_offers
from handlers.upsell_recommender.picking import clean_line

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

    from handlers.upsell_recommender.contract import SenderSettings
    from handlers.upsell_recommender.nudges import Messenger

RUN_LIMIT = 200
"""Offers one run handles; the rest wait five minutes (a run must end well inside 120 s)."""


@dataclass(frozen=True)
class SenderDeps:
    """What upsr-sender touches.

    Attributes:
        offers: upsr-offers (index Query, conditional UpdateItem).
        index: The state/send_at index name.
        customers: upsr-customers (cap read and stamp).
        optout: upsr-optout (read).
        messenger: Delivers the nudge (SMS or email).
        keyring: The add-link signing keyring (from its own secret).
        addlink_url: The upsr-addlink Function URL.
        window_s: Attribution window.
        retention_s: Offer retention after the window (TTL).
        grace_s: How long after the window the link still works (late taps are recorded).
        max_nudges: Nudges allowed per 30 days.
        business: The shop's name, first in every nudge.
        spend: The day's SMS counter (``dailySms``): an SMS nudge takes one before its claim.
    """

    offers: Table
    index: str
    customers: Table
    optout: Table
    messenger: Messenger
    keyring: Callable[[], Keyring]
    addlink_url: str
    window_s: int
    retention_s: int
    grace_s: int
    max_nudges: int
    business: str
    spend: SpendGuard

    @classmethod
    def from_settings(
        cls, config: SenderSettings, *, messenger: Messenger | None = None, clock: Clock = utc_now
    ) -> SenderDeps:
        key_id = config.addlink_key_secret_id
        offers_table = table(config.offers_table)
        ledger = Ledger(offers_table, OFFERS_KEY, OFFERS_TTL)
        return cls(
            offers=offers_table,
            index=config.offers_index,
            customers=table(config.customers_table),
            optout=table(config.optout_table),
            messenger=messenger
            or AwsMessenger(
                origination_identity=config.sms_origination_identity,
                sender_email=from_address(config.sender_name or config.business_name, config.sender_email),
                reply_to=config.reply_to_email,
            ),
            keyring=lambda: Keyring.from_secret_string(get_secret(key_id)),
            addlink_url=config.addlink_url,
            window_s=config.attribution_window_hours * 3600,
            retention_s=config.offer_retention_days * 86400,
            grace_s=config.link_grace_days * 86400,
            max_nudges=config.max_nudges_per_30_days,
            business=config.business_name,
            spend=SpendGuard.beside(ledger, {"sms": config.daily_sms}, clock),
        )


def link_url(base: str, token: str) -> str:
    """The one-tap link: the add-link Function URL with the short token as its path."""
    return f"{base.rstrip('/')}/{token}"


def link_subject(offer_id: str) -> str:
    """What the short token signs: the order number (the offer id without its prefix)."""
    return offer_id.removeprefix("ofr-")


def run(deps: SenderDeps, *, now: float) -> dict[str, int]:
    """Release every due offer (up to ``RUN_LIMIT``)."""
    # Load the key first: a missing key must fail the run before any offer is claimed.
    keyring = deps.keyring()
    outcomes: Counter[str] = Counter()
    for offer in due_offers(deps.offers, deps.index, now, RUN_LIMIT):
        outcomes[send_one(offer, deps, keyring, now=now)] += 1
    get_logger().info("sender run", extra={"outcomes": dict(outcomes)})
    return dict(outcomes)


def send_one(offer: Mapping[str, Any], deps: SenderDeps, keyring: Keyring, *, now: float) -> str:
    """Nudge for one due offer at most once; returns the outcome name."""
    log = get_logger()
    offer_id = str(offer["offer_id"])
    customer_id = str(offer.get("customer_id", ""))
    log.append_keys(offer_id=offer_id)

    def suppressed(reason: str, expected: OfferState = OfferState.CHOSEN) -> str:
        result = offers.suppress(deps.offers, offer_id, expected, reason, now)
        return f"suppressed:{reason}" if result.won else "already-moved"

    contact = Contact.from_item(offer.get("contact") or {})
    variant_id = str(offer.get("variant_id", ""))
    if contact is None or not customer_id:
        return suppressed("no-contact")
    if not is_variant_id(variant_id):
        return suppressed("bad-offer")
    # A shortcut only: the claim below checks the opt-out again inside its own write.
    if customers.is_opted_out(deps.optout, customer_id):
        return suppressed("opted-out")
    if customers.is_capped(customers.get_customer(deps.customers, customer_id), now, deps.max_nudges):
        return suppressed("capped")

    if contact.channel is Channel.SMS:
        try:
            deps.spend.reserve("sms")
        except CapReached as capped:
            # Nothing is dropped: the offer is due again when the next UTC day's SMS start.
            until = capped.resume_at.timestamp()
            moved = offers.postpone(
                deps.offers, offer_id, until, until + deps.window_s + deps.retention_s, "sms-cap"
            )
            return "postponed:sms-cap" if moved.won else "already-moved"

    claim = offers.claim_for_send(
        deps.offers,
        offer_id,
        now,
        deps.window_s,
        deps.retention_s,
        customers=deps.customers,
        optout=deps.optout,
        customer_id=customer_id,
        max_nudges=deps.max_nudges,
    )
    if not claim.won:
        if claim.refused in ("opted-out", "capped"):
            return suppressed(str(claim.refused))
        log.info("offer not claimed", extra={"refused": claim.refused})
        return str(claim.refused)

    token = issue_short_token(
        keyring,
        subject=link_subject(offer_id),
        action=ADD_ACTION,
        ttl_seconds=deps.window_s + deps.grace_s,
        now=now,
    )
    title = str(offer.get("title", "it"))
    # The pitch passed the bound when it was picked; checked again here, the last point before
    # the customer (an offer stored by an older picker, or a bound tightened since).
    line = clean_line(str(offer.get("line") or ""), title)
    nudge = compose(contact, title, line, link_url(deps.addlink_url, token), business=deps.business)
    try:
        message_id = deps.messenger.send(nudge)
    except NudgeRejected as err:
        log.warning("nudge refused by the channel", extra={"reason": err.reason})
        return suppressed(f"rejected:{err.reason}", OfferState.SENT)
    except Exception:
        log.exception("nudge outcome unknown; the offer stays sent, unconfirmed, not retried")
        return "unknown"
    offers.confirm_delivered(deps.offers, offer_id, now, str(message_id))
    metrics.count("NudgesSent")
    return "sent"
