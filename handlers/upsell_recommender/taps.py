"""Taps (upsr-addlink): the one-tap link (public Function URL) -> record the tap -> 302 to the cart.

The signed token is checked before anything else is read; a malformed, forged, expired or
misdirected token gets a 4xx JSON error and nothing is written. The token signs
``<offer id>:<variant id>``, so the redirect target is as authentic as the token.

A tap moves the offer only if it is still ``sent``: to ``taken`` inside the attribution
window, to ``out-of-window`` after it. A second tap, or a tap after the sweep closed the offer,
changes nothing and still gets the redirect (the customer wants the product either way).

Link previewers and mail scanners fetch links nobody tapped. ``HEAD`` requests and user agents
of known previewers get the same redirect but are not recorded, so they cannot fake a take-up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from handlers.common import function_url as http
from handlers.common.aws_clients import table
from handlers.common.link_tokens import (
    Keyring,
    MalformedToken,
    TokenError,
    TokenExpired,
    verify_token,
)
from handlers.common.observability import get_logger
from handlers.common.secrets import get_secret
from handlers.upsell_recommender.domain import ADD_ACTION, is_variant_id
from handlers.upsell_recommender.offers import record_tap
from handlers.upsell_recommender.store import cart_url

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

    from handlers.common.link_tokens import Keyring
    from handlers.upsell_recommender.contract import AddlinkSettings

PREFETCH_AGENTS = (
    "facebookexternalhit",
    "whatsapp",
    "slackbot",
    "twitterbot",
    "telegrambot",
    "discordbot",
    "linkedinbot",
    "skypeuripreview",
    "googlebot",
    "bingbot",
    "bingpreview",
    "applebot",
    "google-safety",
    "barracuda",
    "proofpoint",
    "mimecast",
)
"""Substrings (lower case) of user agents that preview or scan links rather than tap them."""


@dataclass(frozen=True)
class AddlinkDeps:
    """What upsr-addlink touches.

    Attributes:
        offers: upsr-offers (conditional UpdateItem only).
        keyring: The add-link keyring (its own secret).
        store_domain: The shop the cart URL points at.
    """

    offers: Table
    keyring: Callable[[], Keyring]
    store_domain: str

    @classmethod
    def from_settings(cls, config: AddlinkSettings) -> AddlinkDeps:
        key_id = config.addlink_key_secret_id
        return cls(
            offers=table(config.offers_table),
            keyring=lambda: Keyring.from_secret_string(get_secret(key_id)),
            store_domain=config.store_domain,
        )


def is_prefetch(event: Mapping[str, Any]) -> bool:
    """A request that is not a person tapping: HEAD, or a known previewer / scanner."""
    if http.http_method(event) == "HEAD":
        return True
    agent = (http.header(event, "user-agent") or "").lower()
    return any(marker in agent for marker in PREFETCH_AGENTS)


def handle(event: Mapping[str, Any], deps: AddlinkDeps, *, now: float) -> dict[str, Any]:
    """Answer one tap."""
    log = get_logger()
    try:
        claims = verify_token(
            http.query_param(event, "t"), deps.keyring(), action=ADD_ACTION, now=now
        )
    except TokenExpired:
        return http.json_error(410, "link_expired", "this link has expired")
    except MalformedToken:
        return http.json_error(400, "invalid_link", "this link is not valid")
    except TokenError as err:
        log.warning("link token refused", extra={"reason": err.reason.value})
        return http.json_error(403, "invalid_link", "this link is not valid")

    if http.http_method(event) not in ("GET", "HEAD"):
        return http.json_error(405, "method_not_allowed", "open the link in a browser")
    offer_id, _, variant_id = claims.subject.rpartition(":")
    if not offer_id or not is_variant_id(variant_id):
        return http.json_error(400, "invalid_link", "this link is not valid")
    target = cart_url(deps.store_domain, variant_id)
    log.append_keys(offer_id=offer_id)
    if is_prefetch(event):
        log.info("prefetch redirected, not recorded")
        return http.redirect(target)


    result = record_tap(deps.offers, offer_id, now)
    if not result.found:
        return http.json_error(404, "offer_not_found", "this offer no longer exists")
    state = (result.item or {}).get("state")
    log.info(
        "tap",
        extra={"moved_to": result.moved_to.value if result.moved_to else None, "state": state},
    )
    return http.redirect(target)
