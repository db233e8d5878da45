"""dm-merge's work: the public review links, automatic merges from ``dm-merges``, the digest.

The entry point is ``functions/merge.py``; :class:`App` is everything behind it.

Function URL routes (every one verifies its signed link token first, from the query string,
before reading anything else; GET only renders, POST acts, so a mail scanner fetching links
changes nothing):

``GET /review?t=``   the proposal: evidence, Confirm and Not a duplicate (token action ``review``)
``GET /confirm?t=``  the proposal with Confirm as its main button (the digest's one-tap link)
``POST /confirm?t=`` merge the pair (``confirm``, single use): claimed at once, merged from the queue
``GET /reject?t=``   the proposal with Not a duplicate as its main button
``POST /reject?t=``  record "not a duplicate" (``reject``, single use)
``GET /undo?t=``     what undo will do (``undo``)
``POST /undo?t=``    undo the merge (``undo``, single use): claimed at once, undone from the queue

Tokens are scoped to one pair (or one merge for undo), expire with the pairs' 30-day window,
and are consumed once (a ``link#<token id>`` marker in the merges table), in the same
transaction that changes the pair's state: a request refused or lost to a concurrent click
consumes nothing, and a merge that failed and was put back releases its link.

A confirm or an undo writes HubSpot several times, which a person should not wait for: the
click takes the claim (DynamoDB only), puts it on ``dm-merges`` and answers "merging now" with a
link to the result (a GET of the same link); dm-merge then takes the claim over from the queue
(``MergeService.finish``) and writes HubSpot. The claim makes the answer true: only the click
that won it is told "merging now"; every other is told what the winner did.

A browser gets a page for every outcome (done, already used, expired, tampered, busy, failed),
naming the contacts where the link names a pair; a client asking for JSON gets the JSON error
(``html_kit.answer`` reads the Accept header).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from handlers.common import formats, metrics
from handlers.common import function_url as fu
from handlers.common import html_kit as kit
from handlers.common import link_tokens as lt
from handlers.common.aws_clients import client, table
from handlers.common.link_tokens import Keyring, issue_token
from handlers.common.secrets import get_secret
from handlers.duplicate_merger import digest as dg
from handlers.duplicate_merger import pages, people
from handlers.duplicate_merger.contract import MERGE_CLICK_VERSION, MergeSettings
from handlers.duplicate_merger.crm import CrmWriter
from handlers.duplicate_merger.matcher import Thresholds, describe, split_pair_key, week_of
from handlers.duplicate_merger.merging import (
    Claim,
    LinkUse,
    MergeFailed,
    MergeService,
    Outcome,
    stuck,
)
from handlers.duplicate_merger.store import (
    RUN_LATEST,
    DecisionTally,
    DynamoLedger,
    PairReader,
    QueueSender,
    S3Bundles,
    calibration_key,
)

MERGE_ID = re.compile(r"mrg_\d{4}_\d{2}_\d{2}_[0-9a-f]{6}")
NOTES_DAYS = 7
"""The digest lists the notes of the week before it (it is weekly)."""
ROUTES = {
    ("GET", "/review"): "review",
    ("GET", "/confirm"): "confirm",
    ("POST", "/confirm"): "confirm",
    ("GET", "/reject"): "reject",
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
        self.ledger = DynamoLedger(self.merges, table(env.decisions_table), env.claims_index)
        self.pairs = PairReader(table(env.pairs_table), env.review_index)
        self.bundles = S3Bundles(env.undo_bucket)

    # Collaborators, created when first needed --------------------------------------------

    def hand_off(self, claim: Claim) -> None:
        """Queue a click's claim for ``automatic`` to finish (``MergeService.finish``)."""
        message = {"pair_key": claim.pair_key, "claim": {
            "kind": claim.kind, "holder": claim.holder, "merge_id": claim.merge_id, "by": claim.by}}
        QueueSender(self.env.merges_queue_url).send(formats.stamp(message, MERGE_CLICK_VERSION))

    def keyring(self) -> Any:
        return Keyring.from_secret_string(get_secret(self.env.link_key_secret))

    def service(self) -> MergeService:
        """The merge service; the CRM write credential is read only when it writes (a merge or
        an undo from the queue), never to render a page or take a click's claim."""
        return MergeService(
            None, self.ledger, self.bundles, undo_days=self.env.undo_days,
            shown=self.pairs.shown, tally=DecisionTally(self.ledger.decisions), notes=self.ledger,
            make_crm=self.crm,
        )

    # Web ---------------------------------------------------------------------------------

    def web(self, request: fu.Request) -> dict[str, Any]:
        route = ROUTES.get((request.method, request.path))
        if route is None:
            return kit.answer(request, 404, "not_found", "No such page", "There is no page at this address.")
        now = self.clock()
        try:
            claims = lt.verify_token(
                request.query.get("t"), self.keyring(), action=route, now=now.timestamp()
            )
        except lt.TokenExpired:
            return kit.answer(request, 410, "link_expired", "This link has expired",
                              "This link has expired. Next week's digest has fresh links.")
        except lt.TokenError:
            return kit.answer(request, 403, "invalid_link", "This link is not valid",
                              "This link is not valid: it may have been cut or changed. "
                              "Open it again from the digest mail.")
        if not _valid_subject(route, claims.subject):
            return kit.answer(request, 400, "invalid_subject", "This link is not valid",
                              "This link does not name a pair or a merge.")
        # Forms post to an origin-relative path: the browser keeps the page's own scheme and
        # host (https on a Function URL, http://127.0.0.1:<port> in the sandbox).
        base = ""
        if request.method == "GET":
            return self._render(request, route, claims, base, now)
        return self._act(request, route, claims, base, now)

    def _link(self, base: str, path: str, action: str, subject: str, expires_at: int, now: dt.datetime) -> str:
        ttl = max(1, expires_at - int(now.timestamp()))
        token = issue_token(self.keyring(), subject=subject, action=action, ttl_seconds=ttl, now=now.timestamp())
        return f"{base}{path}?t={token}"

    def _render(
        self, request: fu.Request, route: str, claims: Any, base: str, now: dt.datetime
    ) -> dict[str, Any]:
        """A GET: the proposal (review, or confirm / reject from the digest, whose own link is
        the button's target), or what undo will do. Renders only."""

        if route in ("review", "confirm", "reject"):
            pair = self.pairs.get(claims.subject)
            if pair is None:
                return kit.answer(request, 410, "proposal_expired", "This proposal has expired",
                                  "This proposal is no longer current: the pair was scored again "
                                  "or has left the review.")
            decided = self._decided(pair)
            if decided:
                return kit.answer(request, 409, "already_decided", f"Already decided: {pages.who(pair)}",
                                  decided, more=self._still(pair, base, now))
            if (self.ledger.decision(claims.subject) or {}).get("decision") == "merging":
                return pages.in_progress(pages.who(pair), f"{base}/{route}?t={_token_of(claims, self)}",
                                         undo=False)
            if route == "review" and pair.get("band") == "propose" and pair.get("run_id"):
                run_id = str(pair["run_id"])
                gone = self._gone(run_id)
                if gone.intersection(split_pair_key(claims.subject)):  # an automatic merge took one
                    return kit.answer(request, 410, "proposal_withdrawn", f"Nothing to decide: {pages.who(pair)}",
                                      pages.WITHDRAWN)
                found = people.person_of(claims.subject, self._people(run_id, gone))
                if found is not None and len(found.records) > 2:
                    return pages.person([self._choice(p, base, claims.expires_at, now, found)
                                         for p in found.pairs])
            this = f"{base}/{route}?t={_token_of(claims, self)}"
            confirm = this if route == "confirm" else self._link(
                base, "/confirm", "confirm", claims.subject, claims.expires_at, now)
            reject = this if route == "reject" else self._link(
                base, "/reject", "reject", claims.subject, claims.expires_at, now)
            return pages.proposal(pair, confirm, reject, chosen=route,
                                  link_days=self.env.link_ttl_days, undo_days=self.env.undo_days)
        record = self.ledger.merge(claims.subject)
        if record is None:
            return kit.answer(request, 404, "unknown_merge", "No such merge", "This link names no merge.")
        this = f"{base}/undo?t={_token_of(claims, self)}"
        about = self._about("undo", "", None, record)
        if record.get("state") == "undoing":
            return pages.in_progress(about, this, undo=True)
        if record.get("state") == "undone":
            return kit.answer(request, 409, "already_undone", f"Undone: {about}" if about else "Undone",
                              f"This merge was undone on {pages.day(record.get('undone_at'))}: "
                              "both contacts are back as they were before it.")
        return pages.undo_confirmation(
            record, f"{base}/undo?t={_token_of(claims, self)}", self._names(record)
        )

    def _names(self, record: Mapping[str, Any] | None) -> dict[str, str]:
        """Contact id -> name for a merge record (from its pair's cards); {} when unknown."""

        pair = self.pairs.get(str(record["pair_key"])) if record and record.get("pair_key") else None
        return pages.names(pair) if pair else {}

    def _decided(self, pair: Mapping[str, Any]) -> str:
        """"Ann and Ann were already merged by ... on ..." when the pair is decided; "" otherwise."""
        verdict = self._verdict(pair)
        return f"{pages.who(pair)} were already {verdict}." if verdict else ""

    def _verdict(self, pair: Mapping[str, Any]) -> str:
        """"merged by ... on ..." when the pair is decided; "" otherwise."""

        decision = self.ledger.decision(str(pair["pair_key"]))
        if not decision or decision.get("decision") not in ("merged", "not_a_duplicate"):
            return ""
        what = "merged" if decision["decision"] == "merged" else "recorded as not a duplicate"
        if decision.get("undone"):
            what = "merged, and the merge was undone: they count as not a duplicate"
        by = str(decision.get("decided_by") or "someone")
        by = "automatically" if by == "automatic" else f"by {by}"
        at = str(decision.get("decided_at") or "")
        try:
            when = f" on {kit.local_time(dt.datetime.fromisoformat(at), self.env.timezone)}"
        except ValueError:
            when = ""
        return f"{what} {by}{when}"

    def _still(self, pair: Mapping[str, Any], base: str, now: dt.datetime) -> kit.Html:
        """What can still be done about a decided pair: the undo while it can be undone, or
        what not a duplicate means."""
        decision = self.ledger.decision(str(pair["pair_key"])) or {}
        if decision.get("decision") == "not_a_duplicate":
            return kit.para(pages.NOT_A_DUPLICATE_NEXT)
        record = self.ledger.merge(str(decision["merge_id"])) if decision.get("merge_id") else None
        if decision.get("decision") != "merged" or not record:
            return kit.Html("")
        until = str(record.get("undoable_until") or "")
        try:
            last = dt.datetime.combine(dt.date.fromisoformat(until[:10]), dt.time(23, 59), dt.UTC)
        except ValueError:
            return kit.Html("")
        expires = min(int(last.timestamp()), _undo_expiry(now, self.env))
        if expires <= int(now.timestamp()):
            return kit.para("The time to undo it has passed.")
        return pages.undo_offer(self._link(base, "/undo", "undo", str(record["merge_id"]), expires, now), until)

    def _taken_by_automatic(self, pair_key: str, pair: Mapping[str, Any] | None) -> bool:
        """Whether the run's automatic merges took one of a proposed pair's records."""
        if pair is None or pair.get("band") != "propose" or not pair.get("run_id"):
            return False
        return bool(self._gone(str(pair["run_id"])).intersection(split_pair_key(pair_key)))

    def _gone(self, run_id: str) -> frozenset[str]:
        """The records the run's automatic merges took or will take (``people.absorbed``)."""
        return people.absorbed(self.pairs.review(run_id, "automatic"), self.ledger.decision,
                               self.ledger.merge)

    def _people(self, run_id: str, gone: frozenset[str] | None = None) -> list[people.Person]:
        """The run's proposals as people, without those an automatic merge took a record of."""
        taken = self._gone(run_id) if gone is None else gone
        return people.people(self.pairs.review(run_id, "propose"), taken)

    def _choice(self, pair: Mapping[str, Any], base: str, expires: int, now: dt.datetime,
                found: people.Person) -> pages.Choice:
        """One pair of a person's page: what was decided, or its confirm and reject links."""
        key = str(pair["pair_key"])
        verdict = self._verdict(pair)
        if verdict:
            return pages.Choice(pair, f"Already {verdict}.", still=self._still(pair, base, now))
        merged = self._merged_away(found)
        taken = [c for c in split_pair_key(key) if c in merged]
        if taken:
            return pages.Choice(pair, merged_away=(taken[0], merged[taken[0]]))
        return pages.Choice(pair, "", self._link(base, "/confirm", "confirm", key, expires, now),
                            self._link(base, "/reject", "reject", key, expires, now))

    def _merged_away(self, found: people.Person) -> dict[str, str]:
        """Absorbed id -> kept id, for the merges of this person's pairs."""
        out: dict[str, str] = {}
        for pair in found.pairs:
            decision = self.ledger.decision(str(pair["pair_key"])) or {}
            if decision.get("decision") == "merged" and decision.get("merge_id"):
                record = self.ledger.merge(str(decision["merge_id"])) or {}
                if record.get("merged_id"):
                    out[str(record["merged_id"])] = str(record.get("kept_id"))
        return out

    def _act(
        self, request: fu.Request, route: str, claims: Any, base: str, now: dt.datetime
    ) -> dict[str, Any]:
        """Act on a POST. Everything that can refuse without writing (pair gone, merge unknown)
        is checked first; the link's single-use marker is consumed only inside the claim that
        changes the pair's state, so a refused or lost request leaves the link usable."""
        who = self.env.reviewer_email
        link = LinkUse(claims.token_id, int(claims.expires_at))
        record = None
        pair = None
        if route == "confirm":
            pair = self.pairs.get(claims.subject)
            if pair is None or pair.get("band") not in ("automatic", "propose"):
                return kit.answer(request, 410, "proposal_expired", "This proposal has expired",
                                  "This proposal is no longer current: the pair was scored again "
                                  "or has left the review.")
        elif route == "undo":
            record = self.ledger.merge(claims.subject)
            if record is None:
                return kit.answer(request, 404, "unknown_merge", "No such merge", "This link names no merge.")
        about = self._about(route, claims.subject, pair, record)
        try:
            service = self.service()
            if route == "confirm" and self._taken_by_automatic(claims.subject, pair):
                # Known from dm's own records, before any claim: a click is not told "merging
                # now" for a pair the queue would then find gone.
                outcome = Outcome("withdrawn", "an automatic merge took one of the two contacts")
            elif route == "confirm":
                # A check proposal (make verify put it in dm-pairs) is claimed, then refused.
                outcome = service.merge(claims.subject, decided_by=who, now=now, link=link,
                                        check=bool(pair and pair.get("check")), hand_off=self.hand_off)
            elif route == "reject":
                outcome = service.reject(claims.subject, decided_by=who, now=now, link=link)
            else:
                outcome = service.undo(claims.subject, undone_by=who, now=now, link=link,
                                       hand_off=self.hand_off)
        except MergeFailed as failed:
            return kit.answer(request, 503, "merge_failed_restored", "The merge failed; nothing changed",
                              _sentence(failed.outcome.message) + " The link still works: try again "
                              "in a few minutes.", more=kit.para(f"About {about}.") if about else None)
        if outcome.status in ("already_decided", "already_undone", "busy") and self.ledger.link_used(link.token_id):
            outcome = Outcome("link_used", "this link has already been used", outcome.merge_id)
        refusals = {
            "link_used": (409, "This link was already used", "this link has already been used"),
            "already_decided": (409, "Already decided", outcome.message),
            "busy": (409, "Busy: try again in a few minutes",
                     outcome.message + "; try again in a few minutes"),
            "needs_attention": (409, "This merge needs a person", outcome.message),
            "gone": (410, "A contact is gone", outcome.message),
            "withdrawn": (410, "Nothing to decide", outcome.message),
            "unknown_merge": (404, "No such merge", outcome.message),
            "undo_expired": (410, "Too late to undo", outcome.message),
            "check": (409, "A check: nothing was merged", outcome.message),
        }
        if outcome.status in refusals:
            status, title, message = refusals[outcome.status]
            if not kit.wants_html(request):
                return kit.answer(request, status, outcome.status, title, message)
            return self._refused(request, outcome.status, status, title, message, route, base, now,
                                 pair if pair is not None else self._about_pair(claims.subject, record),
                                 about)
        if outcome.status in ("merging", "undoing"):
            return pages.in_progress(about or "the two contacts", f"{base}{request.path}?t="
                                     f"{_token_of(claims, self)}", undo=route == "undo")
        if outcome.status == "merged" and outcome.merge_id:
            undo = self._link(base, "/undo", "undo", outcome.merge_id, _undo_expiry(now, self.env), now)
            until = dt.datetime.fromtimestamp(_undo_expiry(now, self.env), dt.UTC).date().isoformat()
            named = pages.names(pair) if pair else {}
            return pages.merged(named, str(outcome.kept_id), str(outcome.merged_id), undo, until)
        titles = {"rejected": "Recorded: not a duplicate", "undone": "Undone",
                  "already_undone": "Already undone"}
        title = titles.get(outcome.status, "Nothing to do")
        return pages.result(f"{title}: {about}" if about else title, outcome.message)

    def _about(
        self, route: str, subject: str, pair: Mapping[str, Any] | None,
        record: Mapping[str, Any] | None,
    ) -> str:
        """Who a POST is about, in names: the pair's, or the undone merge's pair's."""

        found = pair if pair is not None and route != "undo" else self._about_pair(
            subject if route != "undo" else "", record)
        return pages.who(found) if found else ""

    def _about_pair(self, subject: str, record: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """The pair row a link is about: its own, or the pair of the merge it undoes."""
        key = str((record or {}).get("pair_key") or subject or "")
        return self.pairs.get(key) if key else None

    def _refused(
        self, request: fu.Request, code: str, status: int, title: str, message: str,
        route: str, base: str, now: dt.datetime, pair: Mapping[str, Any] | None, about: str,
    ) -> dict[str, Any]:
        """A refusal as a page: who, what was decided (when and by whom) and what can still be
        done; a used or decided link says what became of the pair, not only that it was used."""
        decided = self._decided(pair) if pair is not None else ""
        if code in ("link_used", "already_decided") and decided:
            return kit.answer(request, status, code, f"{title}: {pages.who(pair or {})}"
                              if pair else title, decided, more=self._still(pair or {}, base, now))
        if code == "gone":
            return kit.answer(request, status, code, f"Nothing to merge: {about}" if about else title,
                              pages.GONE)
        if code == "withdrawn":
            return kit.answer(request, status, "proposal_withdrawn",
                              f"Nothing to decide: {about}" if about else title, pages.WITHDRAWN)
        return kit.answer(request, status, code, title, _sentence(message),
                          more=kit.para(f"About {about}.") if about else None)

    # Automatic merges --------------------------------------------------------------------

    def automatic(self, body: str) -> Outcome:
        """One automatic-band pair from dm-score, or a reviewer's click to finish (``claim``);
        busy or failed raises (SQS retries), a format this code does not read is refused
        (``formats.read``)."""
        message = json.loads(body)
        formats.read(message, current=MERGE_CLICK_VERSION, what="merge request")
        pair_key = str(message["pair_key"])
        claim = message.get("claim")
        if isinstance(claim, dict):
            outcome = self.service().finish(
                claim["kind"], pair_key, str(claim["merge_id"]), str(claim["holder"]),
                str(claim["by"]), self.clock(),
            )
            if outcome.status == "busy":
                raise RuntimeError(outcome.message)  # SQS redelivers it after the visibility timeout
            return outcome
        pair = self.pairs.get(pair_key)
        if pair is None or pair.get("band") != "automatic":
            return Outcome("gone", "the pair is no longer in the automatic band")
        outcome = self.service().merge(pair_key, decided_by="automatic", now=self.clock())
        if outcome.status == "busy":
            raise RuntimeError(outcome.message)  # SQS redelivers it after the visibility timeout
        return outcome

    # Claims nobody came back for --------------------------------------------------------

    def sweep(self) -> dict[str, Any]:
        """The ``dm-sweep`` schedule: resume every claim whose lease ran out (``MergeService.sweep``).
        The CRM write credential is read only when there is one."""
        now = self.clock()
        if not self.ledger.expired_claims(int(now.timestamp())):
            return {"resumed": 0}
        done = self.service().sweep(now)
        if done:
            metrics.count("ClaimsResumed", len(done))
        statuses: dict[str, int] = {}
        for _, outcome in done:
            statuses[outcome.status] = statuses.get(outcome.status, 0) + 1
        return {"resumed": len(done), **statuses}

    # Digest ------------------------------------------------------------------------------

    def _bands_lines(self, run_id: str) -> list[str]:
        """What dm-score noted of the run's calibrated bands, in the digest's words."""
        note = self.pairs.get(calibration_key(run_id))
        if not note or not isinstance(note.get("summary"), dict):
            return []  # no message of the run scored yet, or an older dm-score
        configured = Thresholds(automatic=self.env.automatic_threshold,
                                propose=self.env.propose_threshold)
        return describe(note["summary"], configured)

    def _notices(self, base: str, now: dt.datetime, expires: int) -> list[dg.Notice]:
        """The week's notes (claims the sweep finished, addresses a merge could not keep) and
        every merge waiting for a person."""
        since = _stamp(now - dt.timedelta(days=NOTES_DAYS))
        weeks = dict.fromkeys([week_of(now - dt.timedelta(days=NOTES_DAYS)), week_of(now)])
        notes = [n for n in self.ledger.notes(weeks) if str(n.get("at") or "") > since]
        until = min(expires, _undo_expiry(now, self.env))
        return dg.notices(
            notes,
            stuck(self.ledger, now),
            self.pairs.get,
            lambda merge_id: self._link(base, "/undo", "undo", merge_id, until, now),
        )

    def digest(self, base: str) -> dict[str, Any]:
        now = self.clock()
        run = self.pairs.get(RUN_LATEST)
        if run is None:
            return {"sent": False, "reason": "no run yet"}
        run_id = str(run["run_id"])
        expires = int(now.timestamp()) + self.env.link_ttl_days * 86_400
        proposals = []
        for person in self._people(run_id):
            open_pairs = [p for p in person.pairs if not self.ledger.decision(str(p["pair_key"]))]
            if not open_pairs:
                continue
            pair, key = open_pairs[0], str(open_pairs[0]["pair_key"])
            review = self._link(base, "/review", "review", key, expires, now)
            if len(person.records) > 2:  # one item, one page for the person
                proposals.append(dg.DigestItem(
                    key, pages.everyone(person.pairs), pages.company(pair), pages.reason(pair),
                    pages.confidence(float(pair["score"])), float(pair["score"]), review=review,
                    records=len(person.records),
                ))
                continue
            proposals.append(dg.DigestItem(
                key, pages.who(pair), pages.company(pair), pages.reason(pair),
                pages.confidence(float(pair["score"])), float(pair["score"]), review=review,
                confirm=self._link(base, "/confirm", "confirm", key, expires, now),
                reject=self._link(base, "/reject", "reject", key, expires, now),
            ))
        automatic = []
        for pair in self.pairs.review(run_id, "automatic"):
            decision = self.ledger.decision(pair["pair_key"]) or {}
            merge_id = decision.get("merge_id")
            if decision.get("decision") != "merged" or not merge_id:
                continue
            url = self._link(base, "/undo", "undo", str(merge_id), min(expires, _undo_expiry(now, self.env)), now)
            automatic.append(dg.DigestItem(
                str(pair["pair_key"]), pages.who(pair), pages.company(pair), pages.reason(pair),
                pages.confidence(float(pair["score"])), float(pair["score"]), undo=url,
            ))
        composed = dg.compose(run, proposals, automatic, bands=self._bands_lines(run_id),
                              notices=self._notices(base, now, expires))
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


def _stamp(now: dt.datetime) -> str:
    return now.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")


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
