"""Where dm keeps people (handlers/common/privacy.py erases and exports them the same way for
all five systems): pairs hold both contact records, merges and decisions name the contacts,
and each undo bundle holds the whole records of a merge. dm remembers nobody after an
erasure: it mirrors the CRM, where the owner erases the contact."""

from __future__ import annotations

from handlers.common.privacy import Bucket, SystemStores, Table
from handlers.duplicate_merger import contract

STORES = SystemStores(
    "dm",
    (
        Table(contract.PAIRS, links=("pair_key",), why="candidate pairs: both contacts' names, emails, phones; the blocking index"),
        Table(contract.DECISIONS, links=("pair_key", "merge_id"), why="who decided a pair, and its merge"),
        Table(contract.MERGES, links=("merge_id", "pair_key", "kept_id", "merged_id"), why="merges, locks, used links"),
        Bucket(contract.UNDO_BUCKET, links=("merge_id",), why="undo bundles: whole contact records"),
    ),
)
