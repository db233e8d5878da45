"""dm-merge's work: the public review links, automatic merges from ``dm-merges``, the digest.

The entry point is ``functions/merge.py``; :class:`App` is everything behind it.

Function URL routes (every one verifies its signed link token first, from the query string,
before reading anything else; GET only renders, POST acts, so a mail scanner fetching links
changes nothing):

``GET /review?t=``   the proposal: evidence, Confirm and Not a duplicate (token action ``review``)
``POST /confirm?t=`` merge the pair (``confirm``, single use)
``POST /reject?t=``  record "not a duplicate" (``reject``, single use)
``GET /undo?t=``     what undo will do (``undo``)
``POST /undo?t=``    undo the merge (``undo``, single use)

Tokens are scoped to one pair (or one merge for undo), expire with the pairs' 30-day window,
and are consumed once (a ``link#<token id>`` marker in the merges table), in the same
transaction that changes the pair's state: a request refused or lost to a concurrent click
consumes nothing, and a merge that failed and was put back releases its link.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from handlers.common import function_url as fu
from handlers.common import link_tokens as lt
from handlers.common.aws_clients import client, table
from handlers.common.link_tokens import Keyring, issue_token
from handlers.common.secrets import get_secret
from handlers.duplicate_merger import digest as dg
from handlers.duplicate_merger import pages
from handlers.duplicate_merger.calibration import describe
from handlers.duplicate_merger.contract import MergeSettings
from handlers.duplicate_merger.crm import CrmWriter
from handlers.duplicate_merger.evidence import Thresholds, split_pair_key
from handlers.duplicate_merger.merging import LinkUse, MergeFailed, MergeService, Outcome
from handlers.duplicate_merger.store import (
    RUN_LATEST,
    DecisionTally,
    DynamoLedger,
    PairReader,
    S3Bundles,
    calibration_key,
)

MERGE_ID = re.compile(r"mrg_\d{4}_\d{2}_\d{2}_[0-9a-f]{6}")
ROUTES = {
    ("GET", "/review"): "review",
    ("POST", "/confirm"): "confirm",
    ("POST", "/reject"): "reject",
    ("GET", "/undo"): "undo",
    ("POST", "/undo"): "undo",
}


class App:
    """The three entry points over the tables, the bucket, the keyring and the CRM."""

    def __init__(
        self,
        env: MergeSettings,
        crm: Callable[[], CrmWriter],
        clock: Callable[[], dt.datetime],
    ) -> None:
        """``crm`` builds the CRM writer when a merge needs it (never to render a page);
        ``clock`` is the time (tests and the sandbox move it)."""
        self.env = env
        self.crm = crm
        self.clock = clock
        self.merges = table(env.merges_table)
        self.ledger = DynamoLedger(self.merges, table(env.decisions_table))
        self.pairs = PairReader(table(env.pairs_table), env.review_index)
        self.bundles = S3Bundles(env.undo_bucket)

    # Collaborators, created when first needed --------------------------------------------

    def keyring(self) -> Any:
        return Keyring.from_secret_string(get_secret(self.env.link_key_secret))

    def service(self) -> MergeService:
        """The merge service; the CRM write credential is read only here (confirm, undo,
        automatic merge), never to render a page."""
        crm = self.crm()
        return MergeService(
            crm, self.ledger, self.bundles, undo_days=self.env.undo_days,
            shown=self.pairs.shown, tally=DecisionTally(self.ledger.decisions),
        )

    # Web ---------------------------------------------------------------------------------

    def web(self, event: Mapping[str, Any]) -> dict[str, Any]:
        route = ROUTES.get((fu.http_method(event), str(event.get("rawPath") or "/")))
        if route is None:
            return fu.json_error(404, "not_found", "no such page")
        now = self.clock()
        try:
            claims = lt.verify_token(
                fu.query_param(event, "t"), self.keyring(), action=route, now=now.timestamp()
            )
        except lt.TokenExpired:
            return fu.json_error(410, "link_expired", "this link has expired")
        except lt.TokenError:
            return fu.json_error(403, "invalid_link", "this link is not valid")
        if not _valid_subject(route, claims.subject):
            return fu.json_error(400, "invalid_subject", "this link does not name a pair or a merge")
        base = f"https://{fu.header(event, 'host') or 'localhost'}"
        if fu.http_method(event) == "GET":
            return self._render(route, claims, base, now)
        return self._act(route, claims, base, now)

    def _link(self, base: str, path: str, action: str, subject: str, expires_at: int, now: dt.datetime) -> str:
        ttl = max(1, expires_at - int(now.timestamp()))
        token = issue_token(self.keyring(), subject=subject, action=action, ttl_seconds=ttl, now=now.timestamp())
        return f"{base}{path}?t={token}"

    def _render(self, route: str, claims: Any, base: str, now: dt.datetime) -> dict[str, Any]:
        if route == "review":
            pair = self.pairs.get(claims.subject)
            if pair is None:
                return fu.json_error(410, "proposal_expired", "this proposal is no longer current")
            if self.ledger.decision(claims.subject):
                return pages.result("Already decided", "This pair has already been decided.")
            confirm = self._link(base, "/confirm", "confirm", claims.subject, claims.expires_at, now)
            reject = self._link(base, "/reject", "reject", claims.subject, claims.expires_at, now)
            return pages.proposal(pair, confirm, reject)
        record = self.ledger.merge(claims.subject)
        if record is None:
            return fu.json_error(404, "unknown_merge", "no such merge")
        return pages.undo_confirmation(record, f"{base}/undo?t={_token_of(claims, self)}")

    def _act(self, route: str, claims: Any, base: str, now: dt.datetime) -> dict[str, Any]:
        """Act on a POST. Everything that can refuse without writing (pair gone, merge unknown)
        is checked first; the link's single-use marker is consumed only inside the claim that
        changes the pair's state, so a refused or lost request leaves the link usable."""
        who = self.env.reviewer_email
        link = LinkUse(claims.token_id, int(claims.expires_at))
        if route == "confirm":
            pair = self.pairs.get(claims.subject)
            if pair is None or pair.get("band") not in ("automatic", "propose"):
                return fu.json_error(410, "proposal_expired", "this proposal is no longer current")
        elif route == "undo" and self.ledger.merge(claims.subject) is None:
            return fu.json_error(404, "unknown_merge", "no such merge")
        try:
            service = self.service()
            if route == "confirm":
                outcome = service.merge(claims.subject, decided_by=who, now=now, link=link)
            elif route == "reject":
                outcome = service.reject(claims.subject, decided_by=who, now=now, link=link)
            else:
                outcome = service.undo(claims.subject, undone_by=who, now=now, link=link)
        except MergeFailed as failed:
            return fu.json_error(503, "merge_failed_restored", failed.outcome.message)
        if outcome.status in ("already_decided", "already_undone") and self.ledger.link_used(link.token_id):
            outcome = Outcome("link_used", "this link has already been used", outcome.merge_id)
        refusals = {
            "link_used": (409, "this link has already been used"),
            "already_decided": (409, outcome.message),
            "busy": (409, outcome.message + "; try again in a few minutes"),
            "needs_attention": (409, outcome.message),
            "gone": (410, outcome.message),
            "unknown_merge": (404, outcome.message),
            "undo_expired": (410, outcome.message),
        }
        if outcome.status in refusals:
            status, message = refusals[outcome.status]
            return fu.json_error(status, outcome.status, message)
        if outcome.status == "merged" and outcome.merge_id:
            undo = self._link(base, "/undo", "undo", outcome.merge_id, _undo_expiry(now, self.env), now)
            return pages.result("Merged", outcome.message, undo)
        titles = {"rejected": "Recorded", "undone": "Undone", "already_undone": "Already undone"}
        return pages.result(titles.get(outcome.status, "Nothing to do"), outcome.message)

    # Automatic merges --------------------------------------------------------------------

    def automatic(self, body: str) -> Outcome:
        """One automatic-band pair from dm-score; busy or failed raises (SQS retries)."""
        message = json.loads(body)
        pair_key = str(message["pair_key"])
        pair = self.pairs.get(pair_key)
        if pair is None or pair.get("band") != "automatic":
            return Outcome("gone", "the pair is no longer in the automatic band")
        outcome = self.service().merge(pair_key, decided_by="automatic", now=self.clock())
        if outcome.status == "busy":
            raise RuntimeError(outcome.message)  # SQS redelivers it after the visibility timeout
        return outcome

    # Digest ------------------------------------------------------------------------------

    def _bands_lines(self, run_id: str) -> list[str]:
        """What dm-score noted of the run's calibrated bands, in the digest's words."""
        note = self.pairs.get(calibration_key(run_id))
        if not note or not isinstance(note.get("summary"), dict):
            return []  # no message of the run scored yet, or an older dm-score
        configured = Thresholds(automatic=self.env.automatic_threshold,
                                propose=self.env.propose_threshold)
        return describe(note["summary"], configured)

    def digest(self, base: str) -> dict[str, Any]:
        now = self.clock()
        run = self.pairs.get(RUN_LATEST)
        if run is None:
            return {"sent": False, "reason": "no run yet"}
        run_id = str(run["run_id"])
        expires = int(now.timestamp()) + self.env.link_ttl_days * 86_400
        proposals = []
        for pair in self.pairs.review(run_id, "propose"):
            if self.ledger.decision(pair["pair_key"]):
                continue
            url = self._link(base, "/review", "review", pair["pair_key"], expires, now)
            proposals.append(dg.DigestItem(pair["pair_key"], pair["explanation"], pair["score"], url))
        automatic = []
        for pair in self.pairs.review(run_id, "automatic"):
            decision = self.ledger.decision(pair["pair_key"]) or {}
            merge_id = decision.get("merge_id")
            if decision.get("decision") != "merged" or not merge_id:
                continue
            url = self._link(base, "/undo", "undo", str(merge_id), min(expires, _undo_expiry(now, self.env)), now)
            automatic.append(dg.DigestItem(pair["pair_key"], pair["explanation"], pair["score"], url))
        composed = dg.compose(run, proposals, automatic, bands=self._bands_lines(run_id))
        message_id = dg.send(client("ses"), self.env.sender_email, self.env.reviewer_email, composed)
        return {"sent": True, "message_id": message_id, "run_id": run_id,
                "proposals": composed.proposals, "automatic": composed.automatic}


def _token_of(claims: Any, app: App) -> str:
    """Re-issue the undo token the page was opened with (same id, same expiry), for its form."""
    return issue_token(
        app.keyring(),
        subject=claims.subject,
        action=claims.action,
        ttl_seconds=claims.expires_at - claims.issued_at,
        now=claims.issued_at,
        token_id=claims.token_id,
    )


def _undo_expiry(now: dt.datetime, env: MergeSettings) -> int:
    """Undo links live as long as the other links, and never past the undo window."""
    return int(now.timestamp()) + min(env.link_ttl_days, env.undo_days) * 86_400


def _valid_subject(route: str, subject: str) -> bool:
    """A signed token can still carry a subject no pair or merge has (an old format, a bug):
    refused with a 400 before anything is read or written."""
    if route == "undo":
        return bool(MERGE_ID.fullmatch(subject))
    try:
        split_pair_key(subject)
    except ValueError:
        return False
    return len(subject) <= 256
