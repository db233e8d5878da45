"""What a beacon may say, checked field by field before anything is written.

The site's script sends one beacon per arrival (a session start or a referrer change) and one
per enquiry, as a small JSON object (``text/plain`` from ``navigator.sendBeacon`` is fine):

    {"kind": "arrival", "url": location.href, "referrer": document.referrer,
     "visitor_id": "<its first-party id, if any>"}
    {"kind": "enquiry", "url": location.href, "email": "...", "heard_about": "free text",
     "submission_id": "<random, reused on a retry of the same submission>",
     "visitor_id": "..."}

Known bots are dropped silently: they are not arrivals, and telling them so helps nobody.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from handlers.common.function_url import RequestError
from handlers.source_attributor.email_hash import normalise_email

MAX_BODY_BYTES = 8 * 1024
"""A beacon is a few hundred bytes; anything over 8 KiB is refused before it is parsed."""
MAX_URL = 2048
MAX_ANSWER = 1000
SUBMISSION_ID = re.compile(r"^[A-Za-z0-9_-]{8,64}$")

_BOT = re.compile(
    r"bot(?:[/;)\s_-]|$)|crawl|spider|slurp|headless|lighthouse|pingdom|uptime|monitoring|"
    r"curl/|wget/|python-requests|python-urllib|aiohttp|httpx|go-http-client|java/|okhttp|"
    r"facebookexternalhit|scrapy|phantomjs|selenium|puppeteer|playwright|preview",
    re.IGNORECASE,
)


def is_bot(user_agent: str | None) -> bool:
    """Whether a user agent is a known bot or tool (no user agent at all counts as one)."""
    return not user_agent or not user_agent.strip() or bool(_BOT.search(user_agent))


@dataclass(frozen=True)
class Arrival:
    """A page load the script judged an arrival."""

    url: str
    referrer: str
    visitor_id: str | None


@dataclass(frozen=True)
class EnquirySubmission:
    """An enquiry form submission."""

    url: str
    email: str
    heard_about: str
    submission_id: str | None
    visitor_id: str | None


def _string(data: Mapping[str, Any], name: str, limit: int, *, required: bool = False) -> str:
    value = data.get(name)
    if value is None or value == "":
        if required:
            raise RequestError(400, "missing_field", f"{name} is required")
        return ""
    if not isinstance(value, str):
        raise RequestError(400, "invalid_field", f"{name} must be a string")
    if len(value) > limit:
        raise RequestError(400, "invalid_field", f"{name} is longer than {limit} characters")
    return value


_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of an absolute http(s) URL without credentials, lower case and
    without its scheme's default port; None when ``url`` is not one (or does not parse)."""
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError for a port that is not a number in range
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in _DEFAULT_PORTS or not host or parts.username is not None:
        return None
    if port is None or port == _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def _url(data: Mapping[str, Any], site_origins: frozenset[str]) -> str:
    url = _string(data, "url", MAX_URL, required=True)
    origin = origin_of(url)
    if origin is None or origin not in {origin_of(o) for o in site_origins}:
        raise RequestError(400, "invalid_field", "url must be an absolute URL of the site's pages")
    return url


def parse(data: Mapping[str, Any], site_origins: frozenset[str]) -> Arrival | EnquirySubmission:
    """The beacon in ``data``; RequestError (400) naming the first bad field.

    ``site_origins``: the origins whose pages may send beacons; the beacon's own ``url`` must
    be a page of one of them, as its Origin header already had to be.
    """
    kind = data.get("kind", "arrival")
    visitor_id = _string(data, "visitor_id", 128) or None
    if kind == "arrival":
        referrer = _string(data, "referrer", MAX_URL)
        return Arrival(url=_url(data, site_origins), referrer=referrer, visitor_id=visitor_id)
    if kind == "enquiry":
        email = _string(data, "email", 320, required=True)
        try:
            normalise_email(email)
        except ValueError:
            raise RequestError(400, "invalid_email", "email is not an email address") from None
        submission_id = _string(data, "submission_id", 64) or None
        if submission_id is not None and not SUBMISSION_ID.match(submission_id):
            raise RequestError(400, "invalid_field", "submission_id must be 8-64 URL-safe chars")
        return EnquirySubmission(
            url=_url(data, site_origins),
            email=email,
            heard_about=_string(data, "heard_about", MAX_ANSWER),
            submission_id=submission_id,
            visitor_id=visitor_id,
        )
    raise RequestError(400, "invalid_kind", "kind must be 'arrival' or 'enquiry'")
