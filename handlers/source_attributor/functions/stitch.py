"""ls-stitch: the DynamoDB-stream consumer on enquiries (logic in ``stitching``).

Each INSERT record is stitched on its own; a failing record is a partial batch failure,
retried a bounded number of times by the event source mapping, then sent to
``ls-stitch-failures``. Stitching is idempotent, so a retried record changes nothing.
"""

from __future__ import annotations

from typing import Any

from handlers.common import batch, settings
from handlers.common.observability import logged
from handlers.source_attributor import contract, stitching
from handlers.source_attributor.store import DynamoStore

_store: DynamoStore | None = None


@logged
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """DynamoDB-stream entry point."""
    global _store
    if _store is None:
        config = settings.current(contract.StitchSettings)
        _store = DynamoStore(
            touches_table=config.touches_table, identities_table=config.identities_table
        )
    store = _store
    return batch.stream_batch(
        event, context, lambda record: stitching.process_record(store, record)
    )
