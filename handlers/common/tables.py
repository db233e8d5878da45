"""Key schemas as plain data, so a system's contract names them once for infra and handlers.

``handlers/<system>/contract.py`` declares each table (seed name, keys, indexes, TTL, stream)
with these types; ``components/guarded_table.py`` builds the table from the same record
(``GuardedTableArgs.of``) and the handlers and tests read key and index names from it.
Nothing here imports Pulumi: it ships in the function archives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

KeyType = Literal["S", "N", "B"]
StreamView = Literal["NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY"]


@dataclass(frozen=True)
class Key:
    """One key attribute: its name and DynamoDB scalar type."""

    name: str
    type: KeyType = "S"


@dataclass(frozen=True)
class Index:
    """A global secondary index (projection ALL unless ``projection`` names attributes)."""

    name: str
    partition_key: Key
    sort_key: Key | None = None
    projection: tuple[str, ...] = ()


@dataclass(frozen=True)
class TableSpec:
    """One table of a system, as its document names it.

    Attributes:
        name: The seed name (physical ``<prefix>-<name>``).
        partition_key: The partition key.
        sort_key: Optional sort key.
        indexes: Global secondary indexes.
        ttl_attribute: Attribute holding an epoch-seconds expiry; None for "never expires".
        stream: Stream view type, or None for no stream.
    """

    name: str
    partition_key: Key
    sort_key: Key | None = None
    indexes: tuple[Index, ...] = ()
    ttl_attribute: str | None = None
    stream: StreamView | None = None

    def index(self, name: str) -> Index:
        """The index called ``name``; KeyError when the table has none such."""
        for index in self.indexes:
            if index.name == name:
                return index
        raise KeyError(f"table {self.name} has no index {name!r}")
