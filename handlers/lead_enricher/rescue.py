"""Rescuing a dropped lead from the junk digest (ler-rescue's Function URL).

Each lead the digest lists carries a link ``<ler-rescue URL>/rescue?t=<token>``: a link token
(``handlers.common.link_tokens``) signed with the ``ler-rescue-link-key`` keyring, action
``rescue``, subject the lead's junk object key, expiring after ``rescueLinkDays``.

``GET /rescue?t=``   names the lead and why it was dropped, with one button (renders only: mail
                     scanners fetch every link in a mail, and a fetch must rescue nothing);
                     the button's form carries ``c``, a confirmation the GET issued
``POST /rescue?t=&c=`` rescues it when ``c`` is this link's, at least
                     ``CONFIRM_PAUSE_SECONDS`` old and unexpired (a scanner that submits the
                     form it fetched does so at once: it gets the button again, 409, and
                     nothing changes); records who and when on the junk object (an S3 write
                     conditional on the version read, so of two clicks exactly one wins), then
                     puts the lead back on ler-intake-queue marked ``rescue``; ler-filter keeps
                     a rescued lead whatever its signals, so it reaches ler-push.

The token is verified before anything is read; a bad, expired or already used link answers a
4xx page to a browser and the JSON error to a program (``html_kit.answer``) and writes nothing.
If the queue refuses the lead, the junk object is put back as it was (conditional on the
rescue just written) and the link keeps working. A rescue is recorded as made by the digest's
recipient, the one address the links are mailed to.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from handlers.common import function_url as fu
from handlers.common import html_kit as kit
from handlers.common import link_tokens as lt
from handlers.common.link_tokens import Keyring, LinkClaims
from handlers.common.observability import get_logger
from handlers.lead_enricher import rescue_pages as pages
from handlers.lead_enricher.contract import RESCUE_ACTION, RESCUE_PATH, RescueSettings
from handlers.lead_enricher.intake_queue import LeadQueue
from handlers.lead_enricher.lead import Lead, Rescue
from handlers.lead_enricher.rescue_pages import Dropped
from handlers.lead_enricher.storage import ObjectStore

JUNK_KEY = re.compile(r"junk/\d{4}-\d{2}-\d{2}/[A-Za-z0-9_-]{1,64}\.json")
"""What a rescue token's subject must be (``junk_log.junk_key``): a signed token naming anything
else (an old format, a bug) is refused before any read."""


CONFIRM_ACTION = "rescue-confirm"
CONFIRM_PAUSE_SECONDS = 3
"""A person reads the page before pressing; an automated GET-then-POST comes within a second.
Three seconds is the intake pre-screen's own floor for a form filled by a person
(``minSubmitSeconds``)."""
CONFIRM_TTL_SECONDS = 900
"""A page left open longer asks for one more press (with a fresh confirmation)."""


def rescue_link(keyring: Keyring, base: str, key: str, *, ttl_seconds: int, now: float) -> str:
    """The digest's link that rescues the lead kept under ``key``."""
    token = lt.issue_token(
        keyring, subject=key, action=RESCUE_ACTION, ttl_seconds=ttl_seconds, now=now
    )
    return f"{base.rstrip('/')}{RESCUE_PATH}?t={token}"


class RescueDesk:
    """The Function URL behind the digest's rescue links."""

    def __init__(
        self,
        config: RescueSettings,
        store: ObjectStore,
        queue: LeadQueue,
        keyring: Callable[[], Keyring],
        clock: Callable[[], dt.datetime],
    ) -> None:
        self.config = config
        self.store = store
        self.queue = queue
        self.keyring = keyring
        self.clock = clock

    def web(self, request: fu.Request) -> dict[str, Any]:
        method = request.method
        if request.path != RESCUE_PATH or method not in ("GET", "POST"):
            return kit.answer(request, 404, "not_found", "No such page", "There is no page at this address.")
        token = request.query.get("t")
        now = self.clock()
        try:
            claims = lt.verify_token(token, self.keyring(), action=RESCUE_ACTION, now=now.timestamp())
        except lt.TokenExpired:
            return pages.expired(request)
        except lt.TokenError:
            return pages.invalid(request)
        if not JUNK_KEY.fullmatch(claims.subject):
            return kit.answer(request, 400, "invalid_subject", "This link is not valid",
                              "This link does not name a dropped lead.")
        dropped = self._read(claims.subject)
        if dropped is None:
            return kit.answer(request, 404, "unknown_lead", "No such lead",
                              "This lead is no longer in the junk log.")
        if dropped.rescue is not None:
            return pages.already(request, dropped, self.config.timezone)
        assert token is not None
        action = f"{RESCUE_PATH}?t={token}&c={self._confirmation(claims, now)}"
        if method == "GET":
            return pages.confirm(dropped, action, self.config.timezone)
        if not self._confirmed(request, claims, now):
            return pages.unconfirmed(request, dropped, action)
        return self._rescue(request, dropped, claims, now)

    # Confirming ---------------------------------------------------------------------------

    def _confirmation(self, claims: LinkClaims, now: dt.datetime) -> str:
        """The value the page's form carries: this link's token id, signed, issued now."""
        return lt.issue_token(self.keyring(), subject=claims.token_id, action=CONFIRM_ACTION,
                              ttl_seconds=CONFIRM_TTL_SECONDS, now=now.timestamp())

    def _confirmed(self, request: fu.Request, claims: LinkClaims, now: dt.datetime) -> bool:
        try:
            confirmation = lt.verify_token(request.query.get("c"), self.keyring(),
                                           action=CONFIRM_ACTION, now=now.timestamp())
        except lt.TokenError:
            return False
        waited = now.timestamp() - confirmation.issued_at
        return confirmation.subject == claims.token_id and waited >= CONFIRM_PAUSE_SECONDS

    # Reading ------------------------------------------------------------------------------

    def _read(self, key: str) -> Dropped | None:
        try:
            found = self.store.get(self.config.junk_bucket, key)
        except ClientError as err:
            code = str(err.response.get("Error", {}).get("Code"))
            if code in ("NoSuchKey", "404"):
                return None
            if code in ("AccessDenied", "403"):
                # Without s3:ListBucket (this role lists nothing) S3 answers a missing key with
                # 403, not 404 (GetObject, "Permissions",
                # https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html).
                get_logger().error("junk record unreadable: missing, or GetObject not granted",
                                   key=key)
                return None
            raise
        entry = json.loads(found.body)
        return Dropped(key, found.etag, entry if isinstance(entry, dict) else {})

    # Acting -------------------------------------------------------------------------------

    def _rescue(
        self, request: fu.Request, dropped: Dropped, claims: LinkClaims, now: dt.datetime
    ) -> dict[str, Any]:
        by = self.config.digest_recipient
        at = now.astimezone(dt.UTC).isoformat()
        record = {"by": by, "at": at, "token_id": claims.token_id}
        rescued = {**dropped.entry, "rescue": record}
        bucket = self.config.junk_bucket
        etag = self.store.put_json_if(bucket, dropped.key, rescued, etag=dropped.etag)
        if etag is None:
            # Another click changed the object between our read and our write.
            again = self._read(dropped.key)
            if again is not None and again.rescue is not None:
                return pages.already(request, again, self.config.timezone)
            return pages.busy(request, dropped)
        logger = get_logger()
        try:
            lead = Lead.from_json(dropped.lead)
            lead.rescue = Rescue(by=by, at=at)
            lead.screening = None
            self.queue.send([lead])
        except Exception:
            logger.exception("rescue not queued; restoring the junk record", key=dropped.key)
            self.store.put_json_if(bucket, dropped.key, dropped.entry, etag=etag)
            return pages.failed(request, dropped)
        logger.info("lead rescued", lead_id=lead.lead_id, key=dropped.key, rescued_by=by,
                    token_id=claims.token_id, reason=dropped.entry.get("reason"))
        if not kit.wants_html(request):
            return fu.json_response(200, {"rescued": lead.lead_id, "by": by, "at": at})
        return pages.done(dropped, by, at, self.config.timezone)
