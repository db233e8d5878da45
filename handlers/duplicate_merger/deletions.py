"""HubSpot deletions followed: a contact gone from HubSpot is erased from dm's stores.

dm-block's full weekly read sees every live contact. An id dm still holds (a pair, a decision,
a merge) that the read did not see, that no live contact lists as merged into it, and that
HubSpot no longer answers for even among archived contacts, was permanently deleted there, and
dm erases what it holds about it with the engine ``make forget`` uses
(handlers/common/privacy.py), in an asynchronous invocation of dm-block of its own.

What counts as a deletion (HubSpot's pages):

* A GDPR delete is permanent at once ("Permanently delete a contact (GDPR-compliant)",
  https://developers.hubspot.com/docs/api-reference/legacy/crm/objects/contacts/gdpr/gdpr-delete-contact).
* An ordinary delete only archives: "Deleted contacts can be restored within 90 days of
  deletion" ("Delete a contact",
  https://developers.hubspot.com/docs/api-reference/2026-03/crm/objects/contacts/delete-contact).
  An archived contact is still answered by a batch read with ``archived=true``, so dm keeps it
  while it can come back; the first full read after HubSpot purges it erases it.
* A merge is not a deletion: the surviving contact lists the merged-away ids in
  ``hs_merged_object_ids`` (read with every contact), and those ids are kept.
* dm's own merges archive the absorbed contact; while a merge's undo window is open
  (``dm-merges`` item not yet expired) both of its contacts are kept, so its undo bundle
  survives that window.

HubSpot's ``contact.privacyDeletion`` webhook would say so at once, but dm reads HubSpot with a
Service Key, and "Service Keys do not support webhooks"
(https://developers.hubspot.com/changelog/service-keys): the weekly read is what notices.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from handlers.common import metrics
from handlers.common.observability import get_logger
from handlers.common.privacy import Person, Where, erase, find
from handlers.duplicate_merger import contract
from handlers.duplicate_merger.crm import Contact
from handlers.duplicate_merger.privacy import STORES

MERGED_IDS: Final = "hs_merged_object_ids"
"""HubSpot's list (``;``-separated) of the ids merged into a contact."""
ERASE_BATCH: Final = 500
"""Contacts erased per invocation: one full pass over dm's stores erases them together, and
their ids stay far under Lambda's asynchronous payload limit."""


class DeletionCheck(Protocol):
    def known(self, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` HubSpot still answers for, live or archived."""
        ...


@dataclass
class Seen:
    """The ids a full read met, and the ids its contacts list as merged into them."""

    ids: set[str] = field(default_factory=set)
    merged: set[str] = field(default_factory=set)

    def watch(self, contacts: Iterable[Contact]) -> Iterator[Contact]:
        """``contacts`` unchanged, noted as the blocking consumes them (never all held)."""
        for contact_id, properties in contacts:
            self.ids.add(contact_id)
            merged = properties.get(MERGED_IDS)
            if merged:
                self.merged.update(p.strip() for p in str(merged).split(";") if p.strip())
            yield contact_id, properties


def _contact_ids(pair_key: str) -> list[str]:
    """The two contact ids of a pair key (``min#max``); none for a run, read or note row."""
    parts = pair_key.split("#")
    return parts if len(parts) == 2 and all(p.isdigit() for p in parts) else []


def _scan(table: Any, projection: str, names: Mapping[str, str]) -> Iterator[dict[str, Any]]:
    kwargs: dict[str, Any] = {"ProjectionExpression": projection, "ExpressionAttributeNames": dict(names)}
    while True:
        page = table.scan(**kwargs)
        yield from page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def held_ids(pairs: Any, decisions: Any, merges: Any, now: float) -> tuple[set[str], set[str]]:
    """(contact ids dm holds, ids in a merge whose undo window is still open)."""
    held: set[str] = set()
    for table in (pairs, decisions):
        for item in _scan(table, "#k", {"#k": "pair_key"}):
            held.update(_contact_ids(str(item["pair_key"])))
    kept: set[str] = set()
    names = {"#m": "merge_id", "#k": "kept_id", "#d": "merged_id", "#e": "expires_at"}
    for item in _scan(merges, "#m, #k, #d, #e", names):
        ids = {str(item[a]) for a in ("kept_id", "merged_id") if item.get(a) is not None}
        open_window = item.get("expires_at") is None or float(item["expires_at"]) > now
        (kept if open_window else held).update(ids)
    return held, kept


def deleted(seen: Seen, held: set[str], kept: set[str], crm: DeletionCheck) -> list[str]:
    """The held ids HubSpot deleted for good: not read, not merged away, not in an open undo
    window, and not answered by HubSpot even as archived (a partial read deletes nothing)."""
    missing = sorted(held - seen.ids - seen.merged - kept)
    if not missing:
        return []
    still = crm.known(missing)
    return [i for i in missing if i not in still]


def follow(
    seen: Seen, tables: tuple[Any, Any, Any], crm: DeletionCheck, now: float, invoke: Any, function_name: str
) -> int:
    """After a full read: find the contacts HubSpot deleted, hand them to dm-block's erase
    invocations (``ERASE_BATCH`` each); how many were found."""
    held, kept = held_ids(*tables, now)
    gone = deleted(seen, held, kept, crm)
    for start in range(0, len(gone), ERASE_BATCH):
        invoke(
            FunctionName=function_name,
            InvocationType="Event",
            Payload=json.dumps({"action": contract.ERASE_DELETED_ACTION, "contacts": gone[start : start + ERASE_BATCH]}),
        )
    get_logger().info(
        "HubSpot deletions followed", extra={"held": len(held), "undo_window": len(kept), "deleted": len(gone)}
    )
    return len(gone)


def erase_deleted(contact_ids: Sequence[str], where: Where) -> dict[str, int]:
    """Erase, in one pass over dm's stores, what dm holds about these deleted contacts; per
    store, how many records went. Logged as counts only."""
    ids = [str(i) for i in contact_ids if str(i).isdigit()]
    if not ids:
        return {}
    person = Person(ids=frozenset(ids))
    counts = erase(STORES, where, person, find(STORES, where, person), None)
    metrics.count("DeletedContactsErased", len(ids))
    get_logger().info("deleted contacts erased", extra={"contacts": len(ids), "erased": counts})
    return counts
