"""Capturing (ls-capture, the public beacon Function URL): normalise the source, write one touch.

Authenticity on this public surface is the origin allowlist (the site's own pages) and the bot
filter, checked before the body is read; every refusal writes nothing. An arrival becomes one
touch; internal navigation is not an arrival and writes nothing. An enquiry becomes one
enquiry row (the email only as a keyed hash, the free-text answer raw) plus one touch with
medium ``asked``, in one transaction, idempotent per form submission. The role may only
PutItem on touches and enquiries, and read the one email-hash key secret.

Settings: ``contract.CaptureSettings``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from handlers.common import metrics
from handlers.common.clock import Clock, utc_now
from handlers.common.function_url import (
    Request,
    RequestError,
    cors_headers,
    json_error,
    json_response,
    preflight_response,
)
from handlers.common.observability import get_logger
from handlers.common.secrets import get_secret_bytes
from handlers.source_attributor import beacon, visitor
from handlers.source_attributor.contract import CaptureSettings
from handlers.source_attributor.email_hash import email_hash
from handlers.source_attributor.records import Enquiry, Touch, iso, month_of
from handlers.source_attributor.sources import classify, classify_answer, landing_path
from handlers.source_attributor.store import CaptureStore, DynamoStore

METHODS = ("POST", "OPTIONS")


def enquiry_id_for(visitor_id: str, submission_id: str) -> str:
    """A stable id for one form submission of one visitor: a retry maps to the same row."""
    return hashlib.sha256(f"{visitor_id}\n{submission_id}".encode()).hexdigest()[:32]


@dataclass
class CaptureApp:
    """The capture logic with its collaborators, so tests and benchmarks can swap them.

    Attributes:
        store: Where touches and enquiries are written.
        site_origins: Origins whose pages may send beacons.
        hash_key: Returns the email-hash key (fetched only for enquiries).
        ttl_days: Touch lifetime.
        clock: The current time.
    """

    store: CaptureStore
    site_origins: frozenset[str]
    hash_key: Callable[[], bytes]
    ttl_days: int
    clock: Clock = utc_now
    site_hosts: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.site_hosts = frozenset(
            (urlsplit(o).hostname or "").lower() for o in self.site_origins
        )

    def __call__(self, request: Request) -> dict[str, Any]:
        origin = request.headers.get("origin")
        if not origin or origin not in self.site_origins:
            return json_error(403, "origin_not_allowed", "this origin may not send beacons")
        cors = cors_headers(origin, self.site_origins, methods=METHODS)
        if request.method == "OPTIONS":
            return preflight_response(request, self.site_origins, methods=METHODS)
        if request.method != "POST":
            return json_error(405, "method_not_allowed", "send beacons with POST", cors)
        if beacon.is_bot(request.headers.get("user-agent")):
            return {"statusCode": 204, "headers": cors, "body": "", "isBase64Encoded": False}
        try:
            message = beacon.parse(request.json_object(), self.site_origins)
        except RequestError as err:
            return err.response(cors)
        ids = visitor.resolve(request.cookie(visitor.COOKIE), message.visitor_id)
        # make verify's beacon is recorded like any (the check then removes it) but is not
        # business, so it is counted nowhere. The mark only ever withholds a count: with no
        # authenticity on this endpoint to come first, it changes nothing else.
        counted = not request.check
        if isinstance(message, beacon.Arrival):
            answer = self._arrival(message, ids)
            if answer["recorded"] and counted:
                metrics.count("Beacons")
        else:
            try:
                key = self.hash_key()
            except Exception:
                get_logger().exception("the email hash key is not available")
                return json_error(503, "not_configured", "enquiries cannot be taken now", cors)
            answer = self._enquiry(message, ids, key)
            if answer["recorded"] and counted:
                metrics.count("Enquiries")
                # No answer and a device never seen before: no touch and no stitch can give
                # it a source yet (the report's own share is computed per rule at read time).
                first_seen = ids.set_cookie and ids.visitor_id != message.visitor_id
                if first_seen and not message.heard_about.strip():
                    metrics.count("EnquiriesUnattributed")
        response = json_response(200, answer, cors)
        if ids.set_cookie:
            response["cookies"] = [visitor.set_cookie(ids.visitor_id)]
        return response

    def _ttl(self, now: dt.datetime) -> int:
        return int(now.timestamp()) + self.ttl_days * 86400

    def _arrival(self, message: beacon.Arrival, ids: visitor.VisitorIds) -> dict[str, Any]:
        detected = classify(message.url, message.referrer, self.site_hosts)
        if detected is None:
            return {"visitor_id": ids.visitor_id, "recorded": False}
        now = self.clock()
        touch = Touch(
            visitor_id=ids.visitor_id,
            at=iso(now),
            source=detected.source,
            medium=detected.medium,
            campaign=detected.campaign,
            referrer_host=detected.referrer_host,
            landing=detected.landing,
            how_detected=detected.how_detected,
            ttl=self._ttl(now),
            linked_visitor_id=ids.linked_visitor_id,
        )
        recorded = self.store.put_touch(touch)
        get_logger().debug(  # one line per arrival would be most of the log bill
            "arrival", extra={"source": touch.source, "medium": touch.medium, "recorded": recorded}
        )
        return {"visitor_id": ids.visitor_id, "recorded": recorded}

    def _enquiry(
        self, message: beacon.EnquirySubmission, ids: visitor.VisitorIds, key: bytes
    ) -> dict[str, Any]:
        now = self.clock()
        at = iso(now)
        landing = landing_path(message.url)
        submission = message.submission_id or visitor.mint()
        enquiry = Enquiry(
            month=month_of(at),
            enquiry_id=enquiry_id_for(ids.visitor_id, submission),
            at=at,
            visitor_id=ids.visitor_id,
            email_hash=email_hash(message.email, key),
            heard_about=message.heard_about,
            landing=landing,
            ttl=self._ttl(now),
        )
        asked = None
        if message.heard_about.strip():
            asked = Touch(
                visitor_id=ids.visitor_id,
                at=at,
                source=classify_answer(message.heard_about),
                medium="asked",
                campaign="",
                referrer_host="",
                landing=landing,
                how_detected="none",
                ttl=self._ttl(now),
                linked_visitor_id=ids.linked_visitor_id,
            )
        recorded = self.store.put_enquiry(enquiry, asked)
        get_logger().info("enquiry", extra={"enquiry_id": enquiry.enquiry_id, "recorded": recorded})
        return {"visitor_id": ids.visitor_id, "enquiry_id": enquiry.enquiry_id, "recorded": recorded}


def app(settings: CaptureSettings, clock: Clock) -> CaptureApp:
    """The app of the function's settings (the secret's name only, its value on first use)."""
    return CaptureApp(
        store=DynamoStore(
            touches_table=settings.touches_table, enquiries_table=settings.enquiries_table
        ),
        site_origins=settings.origins(),
        hash_key=lambda: get_secret_bytes(settings.email_hash_secret),
        ttl_days=settings.touch_ttl_days,
        clock=clock,
    )
