"""Taps (upsr-addlink): the one-tap link (public Function URL) -> record the tap -> 302 to the cart.

The signed token is checked before anything else is read; a malformed, forged, expired or
misdirected token gets a 4xx (a page for a browser, the JSON error for a program) and nothing
is written. The SMS link is ``<Function URL>/<short token>``, the token signing the order
number and its expiry (``link_tokens.issue_short_token``: 30 characters, so the link is at
most 100 and fits one SMS segment); the redirect goes to the variant the offer holds, read
back by the write that records the tap. Links sent before carry ``?t=<token>`` signing
``<offer id>:<variant id>``, or the earlier short form; both keep working until they expire.

A tap moves the offer only if it is still ``sent``: to ``taken`` inside the attribution
window, to ``out-of-window`` after it. A second tap, or a tap after the sweep closed the offer,
changes nothing and still gets the redirect (the customer wants the product either way).

Link previewers and mail scanners fetch links nobody tapped. ``HEAD`` requests and user agents
of known previewers get the same redirect but are not recorded, so they cannot fake a take-up.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from handlers.common import function_url as http
from handlers.common import html_kit as kit
from handlers.common.aws_clients import table
from handlers.common.link_tokens import (
    Keyring,
    MalformedToken,
    TokenError,
    TokenExpired,
    verify_short_token,
    verify_token,
)
from handlers.common.observability import get_logger
from handlers.common.secrets import get_secret
from handlers.upsell_recommender.domain import ADD_ACTION, is_variant_id, offer_id_for
from handlers.upsell_recommender.offers import record_tap
from handlers.upsell_recommender.store import cart_url, shop_domain

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
        business: The shop's name, on every page a tap lands on.
        website: The shop's own web address, the way back from a refused link.
    """

    offers: Table
    keyring: Callable[[], Keyring]
    store_domain: str
    business: str
    website: str

    @classmethod
    def from_settings(cls, config: AddlinkSettings) -> AddlinkDeps:
        key_id = config.addlink_key_secret_id
        return cls(
            offers=table(config.offers_table),
            keyring=lambda: Keyring.from_secret_string(get_secret(key_id)),
            store_domain=config.store_domain,
            business=config.business_name,
            # The myshopify.com address answers with a redirect to the shop's primary domain.
            website=config.website_url or f"https://{shop_domain(config.store_domain)}",
        )


def is_prefetch(request: http.Request) -> bool:
    """A request that is not a person tapping: HEAD, or a known previewer / scanner."""
    if request.method == "HEAD":
        return True
    agent = (request.headers.get("user-agent") or "").lower()
    return any(marker in agent for marker in PREFETCH_AGENTS)


def _claims(request: http.Request, deps: AddlinkDeps, now: float) -> tuple[str, str | None]:
    """(offer id, variant id or None) from an authentic token; ``TokenError`` otherwise.

    The SMS link carries a short token in its path (``/<token>``, it signs the order number;
    the variant is the offer's own); a link sent before carries a full token in ``?t=`` that
    signs ``<offer id>:<variant id>``."""
    long = request.query.get("t")
    if long is not None:
        claims = verify_token(long, deps.keyring(), action=ADD_ACTION, now=now)
        offer_id, _, variant_id = claims.subject.rpartition(":")
        if not offer_id or not is_variant_id(variant_id):
            raise MalformedToken("the subject names no offer and variant")
        return offer_id, variant_id
    token = request.path.removeprefix("/")
    claims = verify_short_token(token, deps.keyring(), action=ADD_ACTION, now=now)
    return offer_id_for(claims.subject), None


def _refuse(
    request: http.Request, deps: AddlinkDeps, status: int, code: str, title: str, message: str
) -> dict[str, Any]:
    """A customer's browser gets a page it can read, naming the shop, with the way back to it;
    anything else the JSON error."""
    return kit.answer(request, status, code, title, message,
                      more=kit.way_back(deps.business, deps.website))


def handle(request: http.Request, deps: AddlinkDeps, *, now: float) -> dict[str, Any]:
    """Answer one tap."""
    log = get_logger()
    try:
        offer_id, variant_id = _claims(request, deps, now)
    except TokenExpired:
        return _refuse(request, deps, 410, "link_expired", "This offer has ended",
                       "This link has expired. The offer it was for has ended.")
    except MalformedToken:
        return _refuse(request, deps, 400, "invalid_link", "This link is not valid",
                       "This link is not valid: part of it may be missing. Open it from the message again.")
    except TokenError as err:
        log.warning("link token refused", extra={"reason": err.reason.value})
        return _refuse(request, deps, 403, "invalid_link", "This link is not valid",
                       "This link is not valid: part of it may be missing. Open it from the message again.")

    if request.method not in ("GET", "HEAD"):
        return http.json_error(405, "method_not_allowed", "open the link in a browser")
    log.append_keys(offer_id=offer_id)
    if is_prefetch(request):
        log.info("prefetch redirected, not recorded")
        # A previewer adds nothing to anyone's cart: the short link's variant is the offer's,
        # which only a recorded tap reads, so a previewer is sent to the cart page itself.
        return http.redirect(cart_url(deps.store_domain, variant_id) if variant_id
                             else f"https://{shop_domain(deps.store_domain)}/cart")


    result = record_tap(deps.offers, offer_id, now)
    item = result.item or {}
    variant = variant_id or str(item.get("variant_id") or "")
    if not result.found or not is_variant_id(variant):
        return _refuse(request, deps, 404, "offer_not_found", "This offer has ended",
                       "This offer no longer exists.")
    log.info(
        "tap",
        extra={"moved_to": result.moved_to.value if result.moved_to else None,
               "state": item.get("state")},
    )
    return http.redirect(cart_url(deps.store_domain, variant))
