"""The first-party visitor id: read from the cookie or the beacon, minted when absent.

Two carriers, because a beacon is often cross-site: when the capture URL is served under the
site's own domain, the browser sends the ``ls_vid`` cookie this function sets (Secure,
HttpOnly, SameSite=Lax, two years), which script cannot read or shorten; when it is not, the
site's script keeps the id in its own first-party cookie and sends it in the body (script
cookies cannot be HttpOnly: "HttpOnly where the beacon allows"). The cookie wins when both
are present and differ; the body's id is then recorded on the touch as a link for stitching.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from handlers.source_attributor.records import VISITOR_ID

COOKIE = "ls_vid"
MAX_AGE_SECONDS = 2 * 365 * 24 * 3600


@dataclass(frozen=True)
class VisitorIds:
    """Who the beacon is from.

    Attributes:
        visitor_id: The id the touch is stored under.
        linked_visitor_id: A second valid id the same browser presented, or "".
        set_cookie: Whether the response must (re)set the cookie.
    """

    visitor_id: str
    linked_visitor_id: str
    set_cookie: bool


def mint() -> str:
    """A new random visitor id (144 bits, URL-safe, 24 characters)."""
    return secrets.token_urlsafe(18)


def resolve(cookie_id: str | None, body_id: str | None) -> VisitorIds:
    """Pick the visitor id: a valid cookie, else a valid body id, else a new one."""
    cookie = cookie_id if cookie_id and VISITOR_ID.match(cookie_id) else None
    body = body_id if body_id and VISITOR_ID.match(body_id) else None
    if cookie:
        linked = body if body and body != cookie else ""
        return VisitorIds(cookie, linked, set_cookie=False)
    return VisitorIds(body or mint(), "", set_cookie=True)


def set_cookie(visitor_id: str) -> str:
    """The Set-Cookie value that stores ``visitor_id`` for two years."""
    return (
        f"{COOKIE}={visitor_id}; Max-Age={MAX_AGE_SECONDS}; Path=/; Secure; HttpOnly; "
        "SameSite=Lax"
    )
