"""Merging two contacts, and putting them back: plain logic over three small ports.

The order is the design: take both per-record locks (two merges touching one record never run
together), re-check the decision, snapshot both contacts and every related record, write the
undo bundle (full snapshots and the complete ``moved`` list) **before** the first CRM write,
then repoint the associations in both directions, fill the kept contact's empty properties
from the absorbed one, archive the absorbed one, and record the merge and the decision. A
merge failing part way is put back by the same restore an undo uses; an undo restores the
snapshots whatever happened to the kept contact since (full snapshots, not diffs).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from handlers.common import metrics
from handlers.duplicate_merger.crm import Association, ContactSnapshot, CrmWriter
from handlers.duplicate_merger.evidence import split_pair_key

BUNDLE_VERSION = 1
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
    "rolled_back",
    "undone",
    "already_undone",
    "undo_expired",
    "unknown_merge",
]


class Ledger(Protocol):
    """Decisions, merge records and per-record locks (DynamoDB in production)."""

    def decision(self, pair_key: str) -> Mapping[str, Any] | None: ...

    def put_decision(self, item: Mapping[str, Any], *, over_merged: bool = False) -> bool:
        """Record a decision if none exists (or, with ``over_merged``, over a "merged" one)."""
        ...

    def acquire(
        self, record_id: str, holder: str, now: int, lease_s: int
    ) -> tuple[bool, Mapping[str, Any] | None]:
        """Take the record's lock: (won, the previous lock item if it had expired or is held)."""
        ...

    def release(self, record_id: str, holder: str) -> None: ...

    def put_merge(self, item: Mapping[str, Any]) -> bool:
        """Create a merge record; False if the id exists."""
        ...

    def move_merge(
        self, merge_id: str, expected: str, new: str, fields: Mapping[str, Any]
    ) -> bool: ...

    def merge(self, merge_id: str) -> Mapping[str, Any] | None: ...


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
    the two contacts themselves is dropped on both sides (``to`` is None).
    """
    moved: list[dict[str, Any]] = []
    for assoc in merged.associations:
        entry = {**assoc.to_item(), "from": merged.id}
        if assoc.type == "contacts" and assoc.id == kept.id:
            moved.append({**entry, "to": None, "on_kept": False})
        else:
            moved.append({**entry, "to": kept.id, "on_kept": assoc in kept.associations})
    for assoc in kept.associations:
        if assoc.type == "contacts" and assoc.id == merged.id:
            moved.append({**assoc.to_item(), "from": kept.id, "to": None, "on_kept": True})
    return moved


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


class MergeService:
    """Merges and undoes over a CRM writer, a ledger and a bundle store."""

    def __init__(
        self,
        crm: CrmWriter,
        ledger: Ledger,
        bundles: Bundles,
        *,
        undo_days: int,
        lease_s: int = LOCK_LEASE_SECONDS,
    ) -> None:
        self.crm = crm
        self.ledger = ledger
        self.bundles = bundles
        self.undo_days = undo_days
        self.lease_s = lease_s

    # Locks ---------------------------------------------------------------------------------

    def _lock(self, ids: list[str], holder: str, now: dt.datetime) -> list[str] | None:
        """Both records' locks in id order, or None (and nothing held) if one is taken."""
        taken: list[str] = []
        for record_id in sorted(ids):
            won, previous = self.ledger.acquire(record_id, holder, int(now.timestamp()), self.lease_s)
            if not won:
                self._unlock(taken, holder)
                return None
            taken.append(record_id)
            if previous and previous.get("holder") not in (None, holder):
                self._recover(str(previous["holder"]), now)
        return taken

    def _unlock(self, ids: list[str], holder: str) -> None:
        for record_id in ids:
            self.ledger.release(record_id, holder)

    def _recover(self, merge_id: str, now: dt.datetime) -> None:
        """A crashed merge left its lock: put its records back from its bundle first."""
        record = self.ledger.merge(merge_id)
        if record and record.get("state") == "bundled":
            bundle = json.loads(self.bundles.get(str(record["bundle_key"])))
            self.restore(bundle)
            self.ledger.move_merge(
                merge_id, "bundled", "rolled_back", {"rolled_back_at": now.isoformat()}
            )

    # Merge ---------------------------------------------------------------------------------

    def merge(self, pair_key: str, *, decided_by: str, now: dt.datetime) -> Outcome:
        """Merge the pair's two contacts; see the module docstring for the order."""
        low, high = split_pair_key(pair_key)
        if self.ledger.decision(pair_key):
            return Outcome("already_decided", "this pair has already been decided")
        merge_id = merge_id_for(pair_key, now)
        held = self._lock([low, high], merge_id, now)
        if held is None:
            return Outcome("busy", "another merge involving one of these contacts is running")
        try:
            outcome = self._merge_locked(pair_key, low, high, merge_id, decided_by, now)
        except MergeFailed:
            self._unlock(held, merge_id)
            raise
        # Any other error may have left the records split with the restore unfinished: the
        # locks stay until their lease runs out, and the next merge touching either record
        # restores this merge from its bundle first (``_recover``).
        self._unlock(held, merge_id)
        return outcome

    def _merge_locked(
        self, pair_key: str, low: str, high: str, merge_id: str, decided_by: str, now: dt.datetime
    ) -> Outcome:
        if self.ledger.decision(pair_key):
            return Outcome("already_decided", "this pair has already been decided")
        first, second = self.crm.snapshot(low), self.crm.snapshot(high)
        if first is None or second is None:
            return Outcome("gone", "one of the two contacts no longer exists")
        kept, merged = choose_kept(first, second)
        related: dict[Association, Any] = {}
        for assoc in (*kept.associations, *merged.associations):
            if assoc not in related:
                related[assoc] = self.crm.related(assoc)
        moved = plan_moves(kept, merged)
        fills = plan_fills(kept, merged)
        undoable_until = (now + dt.timedelta(days=self.undo_days)).date().isoformat()
        bundle = {
            "version": BUNDLE_VERSION,
            "merge_id": merge_id,
            "pair_key": pair_key,
            "created_at": now.isoformat(),
            "kept": kept.to_item(),
            "merged": merged.to_item(),
            "related": [
                {**assoc.to_item(), "properties": props} for assoc, props in sorted(related.items())
            ],
            "moved": moved,
            "fills": fills,
        }
        key = bundle_key(merge_id)
        # The bundle exists before the first CRM write: whatever fails next, it puts things back.
        self.bundles.put(key, json.dumps(bundle, sort_keys=True).encode("utf-8"))
        record = {
            "merge_id": merge_id,
            "state": "bundled",
            "pair_key": pair_key,
            "kept_id": kept.id,
            "merged_id": merged.id,
            "bundle_key": key,
            "moved": moved,
            "decided_by": decided_by,
            "created_at": now.isoformat(),
            "undoable_until": undoable_until,
            "undone_at": None,
        }
        if not self.ledger.put_merge(record):
            return Outcome("busy", "a merge with this id is already recorded; try again")
        try:
            self._apply(kept, merged, moved, fills)
        except Exception as err:
            self.restore(bundle)
            self.ledger.move_merge(
                merge_id, "bundled", "rolled_back", {"rolled_back_at": now.isoformat(), "error": str(err)[:300]}
            )
            raise MergeFailed(
                Outcome(
                    "rolled_back",
                    "the merge failed part way and both contacts were restored from the bundle",
                    merge_id,
                    kept.id,
                    merged.id,
                )
            ) from err
        self.ledger.move_merge(merge_id, "bundled", "merged", {"merged_at": now.isoformat()})
        self.ledger.put_decision(
            {
                "pair_key": pair_key,
                "decision": "merged",
                "decided_by": decided_by,
                "decided_at": _stamp(now),
                "merge_id": merge_id,
            }
        )
        metrics.count("Merges")
        return Outcome(
            "merged",
            f"contact {merged.id} was merged into {kept.id}",
            merge_id,
            kept.id,
            merged.id,
            {"moved": len(moved), "filled": sorted(fills), "undoable_until": undoable_until},
        )

    def _apply(
        self,
        kept: ContactSnapshot,
        merged: ContactSnapshot,
        moved: list[dict[str, Any]],
        fills: Mapping[str, str],
    ) -> None:
        for entry in moved:
            assoc = Association.from_item(entry)
            if entry["to"] is not None and not entry["on_kept"]:
                self.crm.associate(kept.id, assoc)
            self.crm.dissociate(str(entry["from"]), assoc)
        if fills:
            self.crm.set_properties(kept.id, fills)
        self.crm.archive(merged.id)

    # Restore and undo ----------------------------------------------------------------------

    def restore(self, bundle: Mapping[str, Any]) -> dict[str, Any]:
        """Put both contacts back as the bundle's snapshots say; safe to repeat.

        Returns the absorbed contact's id (a CRM that cannot un-archive gives a new one) and
        the kept contact's property values the restore overwrote (edits made since).
        """
        kept = ContactSnapshot.from_item(bundle["kept"])
        merged = ContactSnapshot.from_item(bundle["merged"])
        current_merged = self.crm.snapshot(merged.id)
        merged_id = merged.id if current_merged is not None else self.crm.restore(merged)
        current_merged = self.crm.snapshot(merged_id)
        assert current_merged is not None
        self._reset_properties(merged_id, current_merged, merged)
        for assoc in merged.associations:
            if assoc not in current_merged.associations:
                self.crm.associate(merged_id, assoc)
        current_kept = self.crm.snapshot(kept.id)
        if current_kept is None:
            current_kept = ContactSnapshot(kept.id, {}, ())
            self.crm.restore(kept)
        overwritten = self._reset_properties(kept.id, current_kept, kept)
        for entry in bundle["moved"]:
            assoc = Association.from_item(entry)
            if entry["to"] is not None and not entry["on_kept"] and assoc in current_kept.associations:
                self.crm.dissociate(kept.id, assoc)
        for assoc in kept.associations:
            if assoc not in current_kept.associations:
                self.crm.associate(kept.id, assoc)
        return {"merged_id": merged_id, "overwritten": overwritten}

    def _reset_properties(
        self, contact_id: str, current: ContactSnapshot, target: ContactSnapshot
    ) -> dict[str, str | None]:
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
        if changes:
            self.crm.set_properties(contact_id, changes)
        return overwritten

    def undo(self, merge_id: str, *, undone_by: str, now: dt.datetime) -> Outcome:
        """Restore a merge from its bundle (until ``undoable_until``); the pair then counts as
        "not a duplicate", so it is never proposed or merged automatically again."""
        record = self.ledger.merge(merge_id)
        if record is None:
            return Outcome("unknown_merge", "no such merge")
        if record.get("state") == "undone":
            return Outcome("already_undone", "this merge was already undone", merge_id)
        if record.get("state") != "merged":
            return Outcome("unknown_merge", "this merge did not complete", merge_id)
        if now.date().isoformat() > str(record["undoable_until"]):
            return Outcome("undo_expired", "this merge can no longer be undone", merge_id)
        kept_id, merged_id = str(record["kept_id"]), str(record["merged_id"])
        holder = f"undo_{merge_id}"
        held = self._lock([kept_id, merged_id], holder, now)
        if held is None:
            return Outcome("busy", "another merge involving one of these contacts is running")
        try:
            bundle = json.loads(self.bundles.get(str(record["bundle_key"])))
            restored = self.restore(bundle)
            if not self.ledger.move_merge(
                merge_id,
                "merged",
                "undone",
                {
                    "undone_at": now.isoformat(),
                    "undone_by": undone_by,
                    "restored_id": restored["merged_id"],
                    "undo_overwrote": restored["overwritten"],
                },
            ):
                return Outcome("already_undone", "this merge was already undone", merge_id)
            self.ledger.put_decision(
                {
                    "pair_key": str(record["pair_key"]),
                    "decision": "not_a_duplicate",
                    "decided_by": undone_by,
                    "decided_at": _stamp(now),
                    "merge_id": merge_id,
                },
                over_merged=True,
            )
        finally:
            self._unlock(held, holder)
        metrics.count("Undos")
        return Outcome(
            "undone",
            f"contact {restored['merged_id']} is back and {kept_id} is as it was before the merge",
            merge_id,
            kept_id,
            restored["merged_id"],
            {"overwritten": restored["overwritten"]},
        )

    # Rejection -----------------------------------------------------------------------------

    def reject(self, pair_key: str, *, decided_by: str, now: dt.datetime) -> Outcome:
        """Record "not a duplicate": the pair is never proposed again."""
        split_pair_key(pair_key)
        won = self.ledger.put_decision(
            {
                "pair_key": pair_key,
                "decision": "not_a_duplicate",
                "decided_by": decided_by,
                "decided_at": _stamp(now),
            }
        )
        if not won:
            return Outcome("already_decided", "this pair has already been decided")
        return Outcome("rejected", "recorded: not a duplicate; this pair will not be proposed again")


def _stamp(now: dt.datetime) -> str:
    return now.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
