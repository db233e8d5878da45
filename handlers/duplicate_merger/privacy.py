"""Where dm keeps people (handlers/common/privacy.py erases and exports them the same way for
all five systems): pairs hold both contact records, merges and decisions name the contacts,
and each undo bundle holds the whole records of a merge; the pairs table also packs contacts
into compressed chunks (a large portal's read checkpoints, the blocking index a week reads):
only the person's contacts in a chunk are found and exported, and the chunk is erased whole (a
week then reads in full). dm remembers nobody after an erasure: it mirrors the CRM, where the
owner erases the contact."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from handlers.common.privacy import Bucket, SystemStores, Table
from handlers.duplicate_merger import contract
from handlers.duplicate_merger.reading import decode_chunk


def packed(item: Mapping[str, Any]) -> list[Any]:
    """The contacts in a chunk of contacts (``read#<run>#<n>``, ``index#<generation>#<n>``),
    each as ``{"id", "properties"}``; any other item is its own record."""
    key = str(item.get("pair_key") or "")
    data = item.get("data")
    if data is None or key.count("#") != 2 or not key.startswith(("read#", "index#")):
        return [item]
    raw = bytes(data.value if hasattr(data, "value") else data)
    return [{"id": cid, "properties": props} for cid, props in decode_chunk(raw)]


STORES = SystemStores(
    "dm",
    (
        Table(contract.PAIRS, links=("pair_key",), why="candidate pairs: both contacts' names, emails, phones; the blocking index",
              records=packed),
        Table(contract.DECISIONS, links=("pair_key", "merge_id"), why="who decided a pair, and its merge"),
        Table(contract.MERGES, links=("merge_id", "pair_key", "kept_id", "merged_id"), why="merges, locks, used links"),
        Bucket(contract.UNDO_BUCKET, links=("merge_id",), why="undo bundles: whole contact records"),
    ),
)
