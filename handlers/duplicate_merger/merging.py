"""Merging two contacts, and putting them back: plain logic over three small ports.

One serialisation point per pair. Confirm, reject, undo and an automatic merge all start with
one ``Ledger.claim`` (a DynamoDB ``TransactWriteItems`` in production): the pair's decision item
moves to ``merging`` / ``undoing`` (or straight to ``not_a_duplicate`` for a reject), both
records' locks are taken and the link's single-use marker is consumed, all together or not at
all. So of two requests on one pair exactly one wins; the other changed nothing and is told
what the winner did. A request refused before the claim (pair gone, subject malformed, undo
window over) consumes nothing.

Under the claim the order is the design: snapshot both contacts and every related record,
write the undo bundle (full snapshots and the complete ``moved`` list) **before** the first CRM
write, then repoint every association in both directions (records and engagements: notes,
emails, calls, meetings, tasks; in batches of one object type), fill the kept contact's empty
properties from the absorbed one, archive the absorbed one, keep its addresses on the kept
contact as secondary emails (so mail from them still matches), and settle (merge record,
decision and locks in one transaction). A merge failing part way is put back by the same restore an
undo uses; an undo restores the snapshots whatever happened to the kept contact since.

Progress is recorded per CRM write in the merge record (``steps``), so a claim left by a crashed
invocation (its lease ran out) is taken over by the next request touching the pair, or by the
sweep (``MergeService.sweep``, the ``dm-sweep`` schedule) when none comes, which
resumes where the crash stopped: a merge rolls forward (its writes are idempotent), a
rollback or an undo goes on restoring, and no step already recorded is repeated. The one CRM
write that is not idempotent, re-creating an archived contact (HubSpot gives it a new id), is
fenced by a ``started`` mark: a crash between that call and its record leaves the merge
``needs_attention`` instead of re-creating the contact a second time.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal, Protocol

from handlers.common import metrics
from handlers.common.hubspot import chunks
from handlers.common.observability import get_logger
from handlers.duplicate_merger.crm import (
    PRIMARY_COMPANY,
    Association,
    ContactSnapshot,
    CrmWriter,
    additional_emails,
)
from handlers.duplicate_merger.matcher import counter_name, split_pair_key, week_of

BUNDLE_VERSION = 2
"""2: v4 association types (category, type id), engagements, secondary ``emails``."""
LOCK_LEASE_SECONDS = 180
"""Longer than dm-merge's 60 s timeout: a lock outliving it belongs to a crashed merge."""
SYSTEM_PROPERTIES = frozenset(
    {"createdate", "lastmodifieddate", "hs_object_id", "hs_createdate", "hs_lastmodifieddate"}
)

Status = Literal[
    "merged",
    "rejected",
    "already_decided",
    "busy",
    "gone",
    "withdrawn",  # the page's answer: the run's automatic merges took one of the pair
    "rolled_back",
    "undone",
    "already_undone",
    "undo_expired",
    "unknown_merge",
    "link_used",
    "needs_attention",
    "check",
    "merging",
    "undoing",
]


ClaimKind = Literal["merging", "undoing"]
Lost = Literal["decided", "busy", "link_used"]
TRANSIENT = ("merging", "undoing")
"""Decision states held by a running (or crashed) request; the others are final."""


@dataclass(frozen=True)
class LinkUse:
    """A signed link's single-use marker, consumed with the claim."""

    token_id: str
    expires_at: int


@dataclass(frozen=True)
class Claim:
    """One request's hold on a pair, taken in one transaction.

    Attributes:
        kind: ``merging`` (confirm, automatic) or ``undoing``.
        pair_key: The pair; its decision item is the serialisation point.
        holder: This request's id; every later write is conditioned on it.
        records: Both contacts' ids; their ``lock#`` items are taken too.
        lease_until: When the claim counts as abandoned (longer than the function's timeout).
        merge_id: The merge being made (merging) or undone (undoing).
        by: Who decided (the reviewer's address or ``automatic``).
        link: The link whose marker is consumed with the claim (None: the queue).
        stale_holder: Take over this crashed holder's claim instead of a fresh one.
        stale_locks: Record id -> crashed holder of an orphaned lock to take over.
        takes_record: Move the merge record too (undo: merged -> undoing; takeover: holder).
        handover: Take ``stale_holder``'s claim while its lease is live: a click's claim
            handed to the queue (``MergeService.finish``), never a running request's.
    """

    kind: ClaimKind
    pair_key: str
    holder: str
    records: tuple[str, ...]
    lease_until: int
    merge_id: str
    by: str
    link: LinkUse | None = None
    stale_holder: str | None = None
    stale_locks: Mapping[str, str] = field(default_factory=dict)
    takes_record: bool = False
    handover: bool = False


HandOff = Callable[["Claim"], None]
"""Puts a click's claim on the queue for dm-merge to finish (``MergeService.finish``)."""


@dataclass(frozen=True)
class Settlement:
    """How a claim ends, in one transaction: the merge record's last move, the decision item
    (``None`` deletes the claim: nothing was decided), the locks released, the link marker
    released (the person may try again) or kept (it was used)."""

    pair_key: str
    holder: str
    records: tuple[str, ...]
    merge_id: str | None
    merge_from: tuple[str, ...] = ()
    merge_to: str | None = None
    merge_fields: Mapping[str, Any] = field(default_factory=dict)
    decision: Mapping[str, Any] | None = None
    release_link: str | None = None


class ClaimLost(Exception):
    """This request's claim was taken over (its lease ran out): stop writing."""


class NeedsAttention(Exception):
    """Resuming would repeat a CRM write that may already have happened; a person decides."""


class Ledger(Protocol):
    """Decisions, merge records, per-record locks and link markers (DynamoDB in production)."""

    def decision(self, pair_key: str) -> Mapping[str, Any] | None: ...

    def merge(self, merge_id: str) -> Mapping[str, Any] | None: ...

    def lock(self, record_id: str) -> Mapping[str, Any] | None: ...

    def claim(self, claim: Claim, now: int) -> Lost | None:
        """Take the claim (None) or report why not; a loss changed nothing."""
        ...

    def reject(self, item: Mapping[str, Any], link: LinkUse | None, now: int) -> Lost | None:
        """Record "not a duplicate" where nothing is decided, consuming the link with it."""
        ...

    def put_merge(self, item: Mapping[str, Any]) -> bool:
        """Create a merge record; False if the id exists."""
        ...

    def progress(
        self, merge_id: str, holder: str, step: str | None, fields: Mapping[str, Any]
    ) -> None:
        """Record one step done (and fields) on the merge record; ``ClaimLost`` if not ours."""
        ...

    def settle(self, settlement: Settlement) -> bool:
        """End the claim as the settlement says; False if the claim is no longer ours."""
        ...

    def expired_claims(self, now: int) -> list[Mapping[str, Any]]:
        """Decision items still ``merging`` / ``undoing`` whose lease ended before ``now``."""
        ...


class Bundles(Protocol):
    """Where undo bundles are kept (S3 ``undo/`` in production)."""

    def put(self, key: str, body: bytes) -> None: ...

    def get(self, key: str) -> bytes: ...


@dataclass(frozen=True)
class Outcome:
    """What a merge or an undo did, for the page, the queue and the logs."""

    status: Status
    message: str
    merge_id: str | None = None
    kept_id: str | None = None
    merged_id: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


class MergeFailed(Exception):
    """A merge failed part way and was restored from its bundle; safe to try again."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.message)
        self.outcome = outcome


def merge_id_for(pair_key: str, now: dt.datetime) -> str:
    """``mrg_2026_08_05_c41a9e``: the date and a hash of the pair and the instant."""
    digest = hashlib.sha256(f"{pair_key}|{now.isoformat()}".encode()).hexdigest()[:6]
    return f"mrg_{now:%Y_%m_%d}_{digest}"


def bundle_key(merge_id: str) -> str:
    return f"undo/{merge_id}.json"


def choose_kept(a: ContactSnapshot, b: ContactSnapshot) -> tuple[ContactSnapshot, ContactSnapshot]:
    """(kept, absorbed): the older record survives (``createdate``), then the lower id."""

    def age(s: ContactSnapshot) -> tuple[str, str]:
        return (str(s.properties.get("createdate") or "9999"), s.id)

    return (a, b) if age(a) <= age(b) else (b, a)


def plan_moves(kept: ContactSnapshot, merged: ContactSnapshot) -> list[dict[str, Any]]:
    """Every association the merge changes, in both directions.

    Each of the absorbed contact's associations moves to the kept one (``on_kept`` says the
    kept contact already had it, so only the absorbed side is removed); an association between
    the two contacts themselves is dropped on both sides (``to`` is None). The absorbed
    contact's primary company stays a plain association when the kept one has a primary
    company already (a contact has one), which ``on_kept`` also covers: nothing is created.
    """
    kept_has_primary = any(_is_primary_company(a) for a in kept.associations)
    moved: list[dict[str, Any]] = []
    for assoc in merged.associations:
        entry = {**assoc.to_item(), "from": merged.id}
        if assoc.type == "contacts" and assoc.id == kept.id:
            moved.append({**entry, "to": None, "on_kept": False})
        else:
            on_kept = assoc in kept.associations or (
                kept_has_primary and _is_primary_company(assoc)
            )
            moved.append({**entry, "to": kept.id, "on_kept": on_kept})
    for assoc in kept.associations:
        if assoc.type == "contacts" and assoc.id == merged.id:
            moved.append({**assoc.to_item(), "from": kept.id, "to": None, "on_kept": True})
    return moved


def _is_primary_company(assoc: Association) -> bool:
    return (assoc.type, assoc.category, assoc.type_id) == PRIMARY_COMPANY


def plan_emails(kept: ContactSnapshot, merged: ContactSnapshot) -> list[str]:
    """The absorbed contact's addresses the kept one lacks: they become its secondary emails."""
    have = {e.lower() for e in [kept.properties.get("email") or "", *additional_emails(kept.properties)] if e}
    wanted: list[str] = []
    for email in [merged.properties.get("email") or "", *additional_emails(merged.properties)]:
        if email and email.lower() not in have and email.lower() not in {w.lower() for w in wanted}:
            wanted.append(email)
    return wanted


def to_create(moved: list[dict[str, Any]]) -> list[Association]:
    """The associations a merge creates on the kept contact (the ones it did not have)."""
    return [Association.from_item(e) for e in moved if e["to"] is not None and not e["on_kept"]]


def batches(associations: list[Association]) -> list[tuple[str, list[Association]]]:
    """``(step suffix, associations)`` per object type, in the client's batch size: one CRM
    call each, so a contact with hundreds of engagements is a handful of calls."""
    by_type: dict[str, list[Association]] = {}
    for assoc in associations:
        by_type.setdefault(assoc.type, []).append(assoc)
    return [
        (f"{kind}:{n}", batch)
        for kind, group in sorted(by_type.items())
        for n, batch in enumerate(chunks(group))
    ]


def plan_fills(kept: ContactSnapshot, merged: ContactSnapshot) -> dict[str, str]:
    """Properties the kept contact lacks and the absorbed one has."""
    return {
        name: str(value)
        for name, value in sorted(merged.properties.items())
        if value not in (None, "")
        and name not in SYSTEM_PROPERTIES
        and not name.startswith("hs_")
        and kept.properties.get(name) in (None, "")
    }


class Tally(Protocol):
    """The reviewer-decision counters (``calibration``): ``store.DecisionTally`` in production."""

    def count(self, week: str, changes: Mapping[str, int]) -> None: ...


class Notes(Protocol):
    """What the next digest lists beyond the run's pairs: merges the sweep finished or put back,
    addresses a merge could not keep (``store.DynamoLedger.note`` in production)."""

    def note(self, week: str, entry: Mapping[str, Any]) -> None: ...


Shown = Callable[[str], "tuple[float, str] | None"]
"""A pair's score and evidence class as last shown (its pairs row), or None if it has none."""


class MergeService:
    """Merges, rejections and undoes over a CRM writer, a ledger and a bundle store.

    With ``shown`` and ``tally``, every decision item keeps the score and evidence class the
    pair was decided at, and the decision is counted for the bands' calibration.
    """

    def __init__(
        self,
        crm: CrmWriter | None,
        ledger: Ledger,
        bundles: Bundles,
        *,
        undo_days: int,
        lease_s: int = LOCK_LEASE_SECONDS,
        shown: Shown | None = None,
        tally: Tally | None = None,
        notes: Notes | None = None,
        make_crm: Callable[[], CrmWriter] | None = None,
    ) -> None:
        self._crm = crm
        self._make_crm = make_crm
        self.ledger = ledger
        self.bundles = bundles
        self.undo_days = undo_days
        self.lease_s = lease_s
        self.shown = shown
        self.tally = tally
        self.notes = notes

    @property
    def crm(self) -> CrmWriter:
        """The CRM, built on first use (``make_crm``): a click only claims and queues, so it
        never reads the CRM's credential."""
        if self._crm is None:
            if self._make_crm is None:
                raise ValueError("MergeService needs crm or make_crm")
            self._crm = self._make_crm()
        return self._crm

    # What a decision was made on -----------------------------------------------------------

    def _evidence(self, pair_key: str) -> dict[str, Any]:
        """``score`` and ``evidence`` for the decision item ({} when unknown)."""
        found = self.shown(pair_key) if self.shown else None
        if found is None:
            return {}
        score, evidence = found
        return {"score": round(float(score), 3), "evidence": evidence}

    def _count(self, decision: Mapping[str, Any], now: dt.datetime, changes: Mapping[bool, int]) -> None:
        """Count a settled decision; a failure here leaves the decision as made (it is only
        missing from calibration, which can only delay a band's raise) and is logged."""
        if self.tally is None or "score" not in decision or "evidence" not in decision:
            return
        try:
            named = {
                counter_name(str(decision["evidence"]), float(decision["score"]), merged): n
                for merged, n in changes.items()
            }
            self.tally.count(week_of(now), named)
        except Exception as err:  # the decision stands whatever the counter does
            get_logger().error(
                "decision not counted for calibration",
                extra={"pair_key": decision.get("pair_key"), "error": str(err)[:200]},
            )

    def _note(self, now: dt.datetime, entry: Mapping[str, Any]) -> None:
        """Keep ``entry`` for the next digest; like a count, a failure here is logged and the
        outcome stands (the log line and the metric still say it)."""
        if self.notes is None:
            return
        try:
            self.notes.note(week_of(now), {**entry, "at": _stamp(now)})
        except Exception as err:
            get_logger().error(
                "not noted for the digest", extra={**entry, "error": str(err)[:200]}
            )

    # What is there already -----------------------------------------------------------------

    def _settled(self, current: Mapping[str, Any]) -> Outcome:
        """The answer for a pair someone else has decided (or is deciding)."""
        state = current.get("decision")
        by, at = current.get("decided_by", "someone"), current.get("decided_at", "")
        merge_id = current.get("merge_id")
        if state == "merged":
            return Outcome(
                "already_decided",
                f"this pair was already merged (merge {merge_id}, by {by} at {at})",
                str(merge_id),
            )
        if state == "not_a_duplicate":
            after = " after its merge was undone" if current.get("undone") else ""
            return Outcome(
                "already_decided",
                f"this pair was already recorded as not a duplicate{after} (by {by} at {at})",
                None if merge_id is None else str(merge_id),
            )
        doing = "an undo" if state == "undoing" else "a merge"
        return Outcome("busy", f"{doing} of this pair is in progress")

    def _live(self, item: Mapping[str, Any], now: dt.datetime) -> bool:
        return int(item.get("lease_until") or 0) >= int(now.timestamp())

    def _free_locks(self, ids: tuple[str, ...], pair_key: str, now: dt.datetime) -> dict[str, str] | str | None:
        """Orphaned locks to take over ({} when free); the pair key of another pair whose
        crashed request holds one (resume it first); None when a live request holds one."""
        stale: dict[str, str] = {}
        for record_id in ids:
            lock = self.ledger.lock(record_id)
            if lock is None:
                continue
            if self._live(lock, now):
                return None
            other = str(lock.get("pair_key") or "")
            if other and other != pair_key:
                other_decision = self.ledger.decision(other) or {}
                if other_decision.get("holder") == lock.get("holder"):
                    return other
            stale[record_id] = str(lock["holder"])
        return stale

    def _claim(self, claim: Claim, now: dt.datetime) -> Lost | None:
        return self.ledger.claim(claim, int(now.timestamp()))

    def _lost(self, lost: Lost, pair_key: str) -> Outcome:
        if lost == "link_used":
            return Outcome("link_used", "this link has already been used")
        current = self.ledger.decision(pair_key)
        if lost == "decided" and current:
            return self._settled(current)
        return Outcome("busy", "another request on one of these contacts is running")

    # Merge ---------------------------------------------------------------------------------

    def merge(
        self, pair_key: str, *, decided_by: str, now: dt.datetime, link: LinkUse | None = None,
        check: bool = False, hand_off: HandOff | None = None,
    ) -> Outcome:
        """Merge the pair's two contacts; see the module docstring for the order. A ``check``
        pair (``make verify``'s synthetic proposal) is claimed like any other, then released
        before the CRM is read: status ``check``, nothing merged, the link usable again.
        With ``hand_off`` (a reviewer's click) the claim is taken here and queued: status
        ``merging``, and ``finish`` makes the merge from the queue."""
        low, high = split_pair_key(pair_key)
        for _ in range(4):
            current = self.ledger.decision(pair_key)
            if current:
                if current.get("decision") not in TRANSIENT or self._live(current, now):
                    return self._settled(current)
                resumed = self._resume(pair_key, current, now)
                if resumed.status != "rolled_back":
                    return resumed
                continue  # the crashed merge was put back: the pair is free again
            locks = self._free_locks((low, high), pair_key, now)
            if locks is None:
                return Outcome("busy", "another merge involving one of these contacts is running")
            if isinstance(locks, str):
                self._resume(locks, self.ledger.decision(locks) or {}, now)
                continue
            merge_id = merge_id_for(pair_key, now)
            claim = Claim(
                "merging",
                pair_key,
                merge_id,
                (low, high),
                int(now.timestamp()) + self.lease_s,
                merge_id,
                decided_by,
                link,
                stale_locks=locks,
            )
            lost = self._claim(claim, now)
            if lost is not None:
                return self._lost(lost, pair_key)
            if check:
                self._release(pair_key, claim.holder, claim.records, link.token_id if link else None)
                return Outcome("check", "this is a check proposal from make verify: nothing was merged")
            if hand_off is not None:
                return self._handed(claim, hand_off)
            return self._merge_claimed(claim, now)
        return Outcome("busy", "another request on one of these contacts is running")

    def _release(self, claim_pair: str, holder: str, records: tuple[str, ...], link: str | None,
                 merge_id: str | None = None, merge_from: tuple[str, ...] = (),
                 merge_fields: Mapping[str, Any] | None = None) -> None:
        """Nothing was decided: the claim, the locks and the link marker go."""
        self.ledger.settle(
            Settlement(
                claim_pair, holder, records, merge_id, merge_from,
                "rolled_back" if merge_from else None, dict(merge_fields or {}), None, link,
            )
        )

    def _handed(self, claim: Claim, hand_off: HandOff) -> Outcome:
        """Queue a click's claim. A merge that cannot be queued is let go (nothing changed, the
        link works again: ``MergeFailed``); an undo's claim stays, and the sweep finishes it
        when its lease runs out, as after a crash."""
        try:
            hand_off(claim)
        except Exception as err:
            get_logger().error("a click could not be queued", extra={
                "merge_id": claim.merge_id, "kind": claim.kind, "error": str(err)[:200]})
            if claim.kind == "undoing":
                return Outcome("undoing", "the undo of this merge is in progress", claim.merge_id)
            self._release(claim.pair_key, claim.holder, claim.records,
                          claim.link.token_id if claim.link else None)
            raise MergeFailed(Outcome("rolled_back", "the merge could not be started: nothing "
                                      "was changed", claim.merge_id)) from err
        if claim.kind == "undoing":
            return Outcome("undoing", "the undo of this merge is in progress", claim.merge_id)
        return Outcome("merging", "the merge of this pair is in progress", claim.merge_id)

    def finish(
        self, kind: ClaimKind, pair_key: str, merge_id: str, holder: str, by: str, now: dt.datetime
    ) -> Outcome:
        """Finish a click's claim from the queue. The click's claim is taken over in one
        transaction under a fresh lease (of two deliveries of one message exactly one wins), then
        merged or undone as the click would have. A claim that is no longer the click's (done,
        put back after a failure, resumed by the sweep) is answered as a new request would be:
        the ledger says what became of it, and a merge put back is made again."""
        current = self.ledger.decision(pair_key) or {}
        if current.get("decision") != kind or current.get("holder") != holder:
            if kind == "undoing":
                return self.undo(merge_id, undone_by=by, now=now)
            return self.merge(pair_key, decided_by=by, now=now)
        fresh = f"{kind}@{merge_id}@{int(now.timestamp())}"
        link = current.get("link")
        claim = Claim(
            kind, pair_key, fresh, tuple(str(r) for r in current.get("records") or ()),
            int(now.timestamp()) + self.lease_s, merge_id, by,
            stale_holder=holder, takes_record=kind == "undoing", handover=True,
        )
        if self._claim(claim, now) is not None:
            return Outcome("busy", "another delivery is finishing this pair", merge_id)
        if kind == "undoing":
            record = self.ledger.merge(merge_id) or {}
            return self._run_undo({**record, "holder": fresh}, fresh, by, set(), now)
        held = Claim(kind, pair_key, fresh, claim.records, claim.lease_until, merge_id, by,
                     None if link is None else LinkUse(str(link), 0))
        return self._merge_claimed(held, now)

    def _merge_claimed(self, claim: Claim, now: dt.datetime) -> Outcome:
        low, high = claim.records
        link = claim.link.token_id if claim.link else None
        first, second = self.crm.snapshot(low), self.crm.snapshot(high)
        if first is None or second is None:
            self._release(claim.pair_key, claim.holder, claim.records, link)
            return Outcome("gone", "one of the two contacts no longer exists")
        kept, merged = choose_kept(first, second)
        related = self.crm.related_all(sorted({*kept.associations, *merged.associations}))
        moved = plan_moves(kept, merged)
        fills = plan_fills(kept, merged)
        emails = plan_emails(kept, merged)
        undoable_until = (now + dt.timedelta(days=self.undo_days)).date().isoformat()
        bundle = {
            "version": BUNDLE_VERSION,
            "merge_id": claim.merge_id,
            "pair_key": claim.pair_key,
            "created_at": now.isoformat(),
            "kept": kept.to_item(),
            "merged": merged.to_item(),
            "related": [
                {**assoc.to_item(), "properties": props} for assoc, props in sorted(related.items())
            ],
            "moved": moved,
            "fills": fills,
            "emails": emails,
        }
        key = bundle_key(claim.merge_id)
        # The bundle exists before the first CRM write: whatever fails next, it puts things back.
        self.bundles.put(key, json.dumps(bundle, sort_keys=True).encode("utf-8"))
        record = {
            "merge_id": claim.merge_id,
            "state": "bundled",
            "holder": claim.holder,
            "pair_key": claim.pair_key,
            "kept_id": kept.id,
            "merged_id": merged.id,
            "bundle_key": key,
            "moved": moved,
            "decided_by": claim.by,
            "created_at": now.isoformat(),
            "undoable_until": undoable_until,
            "undone_at": None,
            # dm-merges' TTL: the record goes a day after its undo window, with its bundle.
            "expires_at": int((now + dt.timedelta(days=self.undo_days + 1)).timestamp()),
        }
        if not self.ledger.put_merge(record):
            raise ClaimLost(f"merge record {claim.merge_id} exists already")
        return self._roll_forward(record, bundle, claim.holder, link, set(), now)

    def _roll_forward(
        self,
        record: Mapping[str, Any],
        bundle: Mapping[str, Any],
        holder: str,
        link: str | None,
        done: set[str],
        now: dt.datetime,
    ) -> Outcome:
        """Apply the bundle's plan (skipping recorded steps), then settle as merged; a CRM
        refusal on the way is rolled back at once and reported as ``MergeFailed``."""
        merge_id, pair_key = str(record["merge_id"]), str(record["pair_key"])
        kept_id, merged_id = str(record["kept_id"]), str(record["merged_id"])
        records = tuple(sorted((kept_id, merged_id)))
        try:
            self._apply(bundle, merge_id, holder, done)
        except (ClaimLost, NeedsAttention):
            raise
        except Exception as err:
            self.ledger.progress(merge_id, holder, None, {"state": "rolling_back", "error": str(err)[:300]})
            self._restore(bundle, {**record, "state": "rolling_back"}, holder, "rollback", done)
            self._release(
                pair_key, holder, records, link, merge_id, ("rolling_back",),
                {"rolled_back_at": now.isoformat()},
            )
            raise MergeFailed(
                Outcome(
                    "rolled_back",
                    "the merge failed part way and both contacts were restored from the bundle",
                    merge_id,
                    kept_id,
                    merged_id,
                )
            ) from err
        decided_by = str(record.get("decided_by") or "automatic")
        decision = {
            "pair_key": pair_key,
            "decision": "merged",
            "decided_by": decided_by,
            "decided_at": _stamp(now),
            "merge_id": merge_id,
            **self._evidence(pair_key),
        }
        settled = self.ledger.settle(
            Settlement(
                pair_key,
                holder,
                records,
                merge_id,
                ("bundled",),
                "merged",
                {"merged_at": now.isoformat()},
                decision,
            )
        )
        if not settled:
            raise ClaimLost(f"merge {merge_id} was taken over before it settled")
        self._count(decision, now, {True: 1})
        moved = bundle["moved"]
        metrics.count("Merges")
        not_added = [
            str(e) for i, e in enumerate(bundle.get("emails") or []) if f"apply:email:{i}:failed" in done
        ]
        if not_added:
            self._note(now, {"kind": "emails_not_added", "pair_key": pair_key, "merge_id": merge_id,
                             "kept_id": kept_id, "merged_id": merged_id, "emails": not_added})
        return Outcome(
            "merged",
            f"contact {merged_id} was merged into {kept_id}",
            merge_id,
            kept_id,
            merged_id,
            {
                "moved": len(moved),
                "engagements": sum(1 for e in moved if Association.from_item(e).engagement),
                "filled": sorted(bundle.get("fills") or {}),
                "emails": list(bundle.get("emails") or []),
                "emails_not_added": not_added,
                "undoable_until": record["undoable_until"],
            },
        )

    def _step(self, merge_id: str, holder: str, done: set[str], name: str,
              write: Callable[[], Any], fields: Mapping[str, Any] | None = None) -> None:
        """One CRM write, skipped when already recorded, recorded as soon as it returns."""
        if name in done:
            return
        write()
        self.ledger.progress(merge_id, holder, name, dict(fields or {}))
        done.add(name)

    def _apply(self, bundle: Mapping[str, Any], merge_id: str, holder: str, done: set[str]) -> None:
        kept_id = str(bundle["kept"]["id"])
        merged_id = str(bundle["merged"]["id"])
        moved = bundle["moved"]
        # Batches per object type: association writes are idempotent, so a batch in flight at
        # a crash is repeated whole on resume, and no recorded batch is.
        for suffix, batch in batches(to_create(moved)):
            self._step(merge_id, holder, done, f"apply:link:{suffix}",
                       partial(self.crm.associate_all, kept_id, batch))
        for source in sorted({str(e["from"]) for e in moved}):
            removed = [Association.from_item(e) for e in moved if str(e["from"]) == source]
            for suffix, batch in batches(removed):
                self._step(merge_id, holder, done, f"apply:unlink:{source}:{suffix}",
                           partial(self.crm.dissociate_all, source, batch))
        fills = bundle.get("fills") or {}
        if fills:
            self._step(merge_id, holder, done, "apply:fill", lambda: self.crm.set_properties(kept_id, fills))
        if "apply:archive" not in done and self.crm.snapshot(merged_id) is None:
            done.add("apply:archive")  # archived by the crashed run just before it died
        self._step(merge_id, holder, done, "apply:archive", lambda: self.crm.archive(merged_id))
        # After the archive: HubSpot lets an address belong to one live contact only.
        self._add_emails(bundle, merge_id, holder, done)

    def _add_emails(
        self, bundle: Mapping[str, Any], merge_id: str, holder: str, done: set[str]
    ) -> None:
        """Keep the absorbed addresses on the kept contact, best effort.

        The legacy ``/contacts/v1/secondary-email`` path is the one call without a date-based
        version (and HubSpot says nothing of Service Keys on legacy paths): its refusal must
        not undo a merge whose records are already moved. A refused address is recorded (the
        step ``apply:email:<n>:failed``, ``email_failures`` in the merge record and the undo
        bundle), counted, reported in the outcome, and the merge goes on; an undo skips it.
        """
        kept_id = str(bundle["kept"]["id"])
        emails = [str(e) for e in bundle.get("emails") or []]
        failures = list(bundle.get("email_failures") or [])
        refused = 0
        for index, email in enumerate(emails):
            name = f"apply:email:{index}"
            if name in done or f"{name}:failed" in done:
                continue
            try:
                self.crm.add_email(kept_id, email)
            except (ClaimLost, NeedsAttention):
                raise
            except Exception as err:
                failures.append({"email": email, "error": str(err)[:200]})
                get_logger().warning(
                    "secondary email not added; the merge goes on",
                    extra={"merge_id": merge_id, "error": str(err)[:200]},
                )
                self.ledger.progress(merge_id, holder, f"{name}:failed", {"email_failures": failures})
                done.add(f"{name}:failed")
                self.bundles.put(
                    bundle_key(merge_id),
                    json.dumps({**bundle, "email_failures": failures}, sort_keys=True).encode(),
                )
                refused += 1
                continue
            self.ledger.progress(merge_id, holder, name, {})
            done.add(name)
        metrics.count("SecondaryEmailsNotAdded", refused)

    # Restore and undo ----------------------------------------------------------------------

    def _bring_back(
        self, snapshot: ContactSnapshot, merge_id: str, holder: str, step: str,
        done: set[str], ids: dict[str, str],
    ) -> str:
        """The contact's live id, re-creating it at most once (``started`` fences the call)."""
        if step in done:
            return ids.get(step, snapshot.id)
        if self.crm.snapshot(snapshot.id) is not None:
            ids[step] = snapshot.id
            return snapshot.id
        if f"{step}:started" in done:
            raise NeedsAttention(
                f"contact {snapshot.id} may already have been re-created by an interrupted "
                f"restore; check the CRM for {snapshot.properties.get('email') or 'it'} before "
                "anything is restored again"
            )
        self.ledger.progress(merge_id, holder, f"{step}:started", {})
        done.add(f"{step}:started")
        new_id = self.crm.restore(snapshot)
        ids[step] = new_id
        self.ledger.progress(merge_id, holder, step, {"restored_ids": dict(ids)})
        done.add(step)
        return new_id

    def _restore(
        self, bundle: Mapping[str, Any], record: Mapping[str, Any], holder: str, prefix: str,
        done: set[str],
    ) -> dict[str, Any]:
        """Put both contacts back as the bundle's snapshots say, one recorded step at a time.

        Returns the absorbed contact's id (a CRM that cannot un-archive gives a new one) and
        the kept contact's property values the restore overwrote (edits made since).
        """
        merge_id = str(record["merge_id"])
        ids: dict[str, str] = {str(k): str(v) for k, v in (record.get("restored_ids") or {}).items()}
        kept = ContactSnapshot.from_item(bundle["kept"])
        merged = ContactSnapshot.from_item(bundle["merged"])
        # First the absorbed contact's addresses leave the kept one: it cannot be re-created
        # while another live contact holds them (removing an absent one is a no-op).
        for index, email in enumerate(bundle.get("emails") or []):
            if f"apply:email:{index}:failed" in done:
                continue  # never added: nothing to remove (and the path may refuse us)
            self._step(merge_id, holder, done, f"{prefix}:kept:email:{index}",
                       partial(self.crm.remove_email, kept.id, str(email)))
        merged_id = self._bring_back(merged, merge_id, holder, f"{prefix}:absorbed", done, ids)
        current = self.crm.snapshot(merged_id)
        if current is None:
            raise NeedsAttention(f"contact {merged_id} vanished during the restore")
        self._step(merge_id, holder, done, f"{prefix}:absorbed:props",
                   lambda: self._reset_properties(merged_id, current, merged))
        # A re-created contact gets its own secondary emails back (HubSpot does not let a
        # create or an update write them).
        have = additional_emails(current.properties)
        for index, email in enumerate(e for e in additional_emails(merged.properties) if e not in have):
            self._step(merge_id, holder, done, f"{prefix}:absorbed:email:{index}",
                       partial(self.crm.add_email, merged_id, email))
        missing = [a for a in merged.associations if a not in current.associations]
        for suffix, batch in batches(missing):
            self._step(merge_id, holder, done, f"{prefix}:absorbed:link:{suffix}",
                       partial(self.crm.associate_all, merged_id, batch))
        kept_id = self._bring_back(kept, merge_id, holder, f"{prefix}:kept", done, ids)
        current_kept = self.crm.snapshot(kept_id) or ContactSnapshot(kept_id, {}, ())
        overwritten: dict[str, str | None] = dict(record.get("undo_overwrote") or {})
        name = f"{prefix}:kept:props"
        if name not in done:
            changes, seen = _diff_properties(current_kept, kept)
            if f"{name}:planned" not in done:
                # What the restore overwrites is recorded before it writes: a resumed restore
                # would find the values already overwritten.
                overwritten = seen
                self.ledger.progress(merge_id, holder, f"{name}:planned", {"undo_overwrote": overwritten})
                done.add(f"{name}:planned")
            if changes:
                self.crm.set_properties(kept_id, changes)
            self.ledger.progress(merge_id, holder, name, {})
            done.add(name)
        created = [a for a in to_create(bundle["moved"]) if a in current_kept.associations]
        for suffix, batch in batches(created):
            self._step(merge_id, holder, done, f"{prefix}:kept:unlink:{suffix}",
                       partial(self.crm.dissociate_all, kept_id, batch))
        lost = [a for a in kept.associations if a not in current_kept.associations]
        for suffix, batch in batches(lost):
            self._step(merge_id, holder, done, f"{prefix}:kept:link:{suffix}",
                       partial(self.crm.associate_all, kept_id, batch))
        return {"merged_id": merged_id, "overwritten": overwritten}

    def _reset_properties(
        self, contact_id: str, current: ContactSnapshot, target: ContactSnapshot
    ) -> dict[str, str | None]:
        changes, overwritten = _diff_properties(current, target)
        if changes:
            self.crm.set_properties(contact_id, changes)
        return overwritten

    def undo(
        self, merge_id: str, *, undone_by: str, now: dt.datetime, link: LinkUse | None = None,
        hand_off: HandOff | None = None,
    ) -> Outcome:
        """Restore a merge from its bundle (until ``undoable_until``); the pair then counts as
        "not a duplicate", so it is never proposed or merged automatically again. With
        ``hand_off`` the claim is taken here and queued (status ``undoing``), as for a merge."""
        for _ in range(4):
            record = self.ledger.merge(merge_id)
            if record is None:
                return Outcome("unknown_merge", "no such merge")
            state = record.get("state")
            if state == "undone":
                return Outcome(
                    "already_undone",
                    f"this merge was already undone (by {record.get('undone_by')} at {record.get('undone_at')})",
                    merge_id,
                )
            pair_key = str(record["pair_key"])
            if state == "undoing":
                current = self.ledger.decision(pair_key) or {}
                if current.get("decision") != "undoing":
                    continue  # the undo settled between the two reads: read the merge again
                if self._live(current, now):
                    return Outcome("busy", "an undo of this merge is in progress", merge_id)
                return self._resume(pair_key, current, now)
            if state != "merged":
                return Outcome("unknown_merge", "this merge did not complete", merge_id)
            if now.date().isoformat() > str(record["undoable_until"]):
                return Outcome("undo_expired", "this merge can no longer be undone", merge_id)
            records = tuple(sorted((str(record["kept_id"]), str(record["merged_id"]))))
            locks = self._free_locks(records, pair_key, now)
            if locks is None:
                return Outcome("busy", "another merge involving one of these contacts is running")
            if isinstance(locks, str):
                self._resume(locks, self.ledger.decision(locks) or {}, now)
                continue
            holder = f"undo@{merge_id}@{int(now.timestamp())}"
            claim = Claim(
                "undoing", pair_key, holder, records, int(now.timestamp()) + self.lease_s,
                merge_id, undone_by, link, stale_locks=locks, takes_record=True,
            )
            lost = self._claim(claim, now)
            if lost == "link_used":
                return Outcome("link_used", "this link has already been used", merge_id)
            if lost is not None:
                again = self.ledger.merge(merge_id) or {}
                if again.get("state") == "undone":
                    return Outcome("already_undone", "this merge was already undone", merge_id)
                return Outcome("busy", "an undo of this merge is in progress", merge_id)
            if hand_off is not None:
                return self._handed(claim, hand_off)
            return self._run_undo({**record, "state": "undoing", "holder": holder}, holder, undone_by, set(), now)
        return Outcome("busy", "another request on one of these contacts is running", merge_id)

    def _run_undo(
        self, record: Mapping[str, Any], holder: str, undone_by: str, done: set[str], now: dt.datetime
    ) -> Outcome:
        merge_id, pair_key = str(record["merge_id"]), str(record["pair_key"])
        bundle = json.loads(self.bundles.get(str(record["bundle_key"])))
        restored = self._restore(bundle, record, holder, "undo", done)
        records = tuple(sorted((str(record["kept_id"]), str(record["merged_id"]))))
        held = self.ledger.decision(pair_key) or {}  # the merged decision, now ``undoing``
        decision = {
            "pair_key": pair_key,
            "decision": "not_a_duplicate",
            "decided_by": undone_by,
            "decided_at": _stamp(now),
            "merge_id": merge_id,
            "undone": True,
            **{k: held[k] for k in ("score", "evidence") if k in held},
        }
        settled = self.ledger.settle(
            Settlement(
                pair_key,
                holder,
                records,
                merge_id,
                ("undoing",),
                "undone",
                {
                    "undone_at": now.isoformat(),
                    "undone_by": undone_by,
                    "restored_id": restored["merged_id"],
                    "undo_overwrote": restored["overwritten"],
                },
                decision,
            )
        )
        if not settled:
            raise ClaimLost(f"undo of {merge_id} was taken over before it settled")
        self._count(decision, now, {True: -1, False: 1})  # the merge was not a duplicate
        kept_id = str(record["kept_id"])
        metrics.count("Undos")
        return Outcome(
            "undone",
            f"contact {restored['merged_id']} is back and {kept_id} is as it was before the merge",
            merge_id,
            kept_id,
            restored["merged_id"],
            {"overwritten": restored["overwritten"]},
        )

    # Resuming a crashed request --------------------------------------------------------------

    def _resume(self, pair_key: str, current: Mapping[str, Any], now: dt.datetime) -> Outcome:
        """Take over a claim whose lease ran out and finish what it was doing."""
        kind = current.get("decision")
        if kind not in TRANSIENT:
            return self._settled(current) if current else Outcome("gone", "nothing to resume")
        if self._live(current, now):
            return self._settled(current)
        merge_id = str(current["merge_id"])
        record = self.ledger.merge(merge_id)
        if record is not None and record.get("attention"):
            return Outcome("needs_attention", str(record["attention"]), merge_id)
        holder = f"{kind}@{merge_id}@{int(now.timestamp())}"
        records = tuple(str(r) for r in current.get("records") or ())
        claim = Claim(
            kind,
            pair_key, holder, records, int(now.timestamp()) + self.lease_s, merge_id,
            str(current.get("by") or "automatic"),
            stale_holder=str(current["holder"]),
            takes_record=record is not None,
        )
        if self._claim(claim, now) is not None:
            return Outcome("busy", "another request is finishing this pair", merge_id)
        link = current.get("link")
        link_id = None if link is None else str(link)
        try:
            if record is None:  # died before the merge record: no CRM write happened
                self._release(pair_key, holder, records, link_id)
                return Outcome("rolled_back", "an interrupted merge had changed nothing", merge_id)
            done = {str(s) for s in record.get("steps") or ()}
            record = {**record, "holder": holder}
            if kind == "undoing":
                return self._run_undo(record, holder, claim.by, done, now)
            bundle = json.loads(self.bundles.get(str(record["bundle_key"])))
            if record.get("state") == "bundled":
                return self._roll_forward(record, bundle, holder, link_id, done, now)
            self._restore(bundle, record, holder, "rollback", done)
            self._release(
                pair_key, holder, records, link_id, merge_id, ("rolling_back",),
                {"rolled_back_at": now.isoformat()},
            )
            return Outcome("rolled_back", "an interrupted merge was put back", merge_id)
        except NeedsAttention as stuck:
            self.ledger.progress(merge_id, holder, None, {"attention": str(stuck)})
            return Outcome("needs_attention", str(stuck), merge_id)

    # Claims nobody came back for ------------------------------------------------------------

    def sweep(self, now: dt.datetime) -> list[tuple[str, Outcome]]:
        """Resume every claim whose lease ran out and that no request came back for (a crash
        nobody clicked again; an automatic merge whose redeliveries all fell inside the lease and
        went to the DLQ): a merge rolls forward or is put back, an undo goes on, exactly as the
        next click would. Returns (pair, outcome) for each claim acted on; each one finished is
        noted for the digest. A claim waiting for a person (``needs_attention``) is not retried:
        every digest lists it (``stuck``)."""
        results: list[tuple[str, Outcome]] = []
        for found in self.ledger.expired_claims(int(now.timestamp())):
            pair_key = str(found["pair_key"])
            current = self.ledger.decision(pair_key) or {}  # the index lags the table
            if current.get("decision") not in TRANSIENT or self._live(current, now):
                continue
            merge_id = str(current.get("merge_id") or "")
            record = (self.ledger.merge(merge_id) if merge_id else None) or {}
            if record.get("attention"):
                continue
            try:
                outcome = self._resume(pair_key, current, now)
            except MergeFailed as failed:  # the CRM refused a write: put back, the pair is free
                outcome = failed.outcome
            except ClaimLost:
                continue  # a click or a redelivery took it over meanwhile: theirs to finish
            except Exception as err:  # the CRM down, say: the lease ran out again, next sweep
                get_logger().error("an expired claim could not be resumed; the next sweep retries",
                                   extra={"pair_key": pair_key, "error": str(err)[:200]})
                continue
            if outcome.status == "busy":
                continue  # another request holds it now
            if outcome.status in ("merged", "rolled_back", "undone"):
                self._note(now, {"kind": "resumed", "pair_key": pair_key, "claim": str(current["decision"]),
                                 "status": outcome.status, "merge_id": outcome.merge_id or "",
                                 "by": str(current.get("by") or "automatic")})
            results.append((pair_key, outcome))
        return results

    # Rejection -----------------------------------------------------------------------------

    def reject(
        self, pair_key: str, *, decided_by: str, now: dt.datetime, link: LinkUse | None = None
    ) -> Outcome:
        """Record "not a duplicate": the pair is never proposed again."""
        split_pair_key(pair_key)
        for _ in range(3):
            current = self.ledger.decision(pair_key)
            if current:
                if current.get("decision") not in TRANSIENT or self._live(current, now):
                    return self._settled(current)
                resumed = self._resume(pair_key, current, now)
                if resumed.status != "rolled_back":
                    return self._settled(self.ledger.decision(pair_key) or {}) if resumed.status in (
                        "merged", "undone") else resumed
                continue
            item = {
                "pair_key": pair_key,
                "decision": "not_a_duplicate",
                "decided_by": decided_by,
                "decided_at": _stamp(now),
                **self._evidence(pair_key),
            }
            lost = self.ledger.reject(item, link, int(now.timestamp()))
            if lost is not None:
                return self._lost(lost, pair_key)
            self._count(item, now, {False: 1})
            return Outcome("rejected", "Recorded: not a duplicate. This pair will not be proposed again.")
        return Outcome("busy", "another request on this pair is running")


def stuck(ledger: Ledger, now: dt.datetime) -> list[tuple[str, Mapping[str, Any]]]:
    """Claims stopped for a person (a restore that may already have re-created a contact):
    (pair, merge record with its ``attention``), which every digest lists until resolved."""
    found = []
    for claim in ledger.expired_claims(int(now.timestamp())):
        merge_id = str(claim.get("merge_id") or "")
        record = (ledger.merge(merge_id) if merge_id else None) or {}
        if record.get("attention"):
            found.append((str(claim["pair_key"]), record))
    return found


def _diff_properties(
    current: ContactSnapshot, target: ContactSnapshot
) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """(the writes that make ``current`` equal ``target``, the values those writes overwrite)."""
    changes: dict[str, str | None] = {}
    overwritten: dict[str, str | None] = {}
    for name in sorted(set(current.properties) | set(target.properties)):
        if name in SYSTEM_PROPERTIES:
            continue
        want = target.properties.get(name)
        have = current.properties.get(name)
        if (want or None) != (have or None):
            changes[name] = want if want not in ("",) else None
            overwritten[name] = have
    return changes, overwritten


def _stamp(now: dt.datetime) -> str:
    return now.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
