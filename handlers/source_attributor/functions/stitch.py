"""ls-stitch: the DynamoDB-stream consumer on enquiries (logic in ``stitching``).

Each INSERT record is stitched on its own; a failing record is a partial batch failure,
retried a bounded number of times by the event source mapping, then sent to
``ls-stitch-failures``. Stitching is idempotent, so a retried record changes nothing.
"""

from __future__ import annotations

from typing import Any

from handlers.common import entry
from handlers.common.clock import Clock
from handlers.source_attributor import contract, stitching
from handlers.source_attributor.store import DynamoStore


def wire(config: contract.StitchSettings, clock: Clock) -> DynamoStore:
    return DynamoStore(touches_table=config.touches_table, identities_table=config.identities_table)


def run(store: DynamoStore, record: Any, context: Any, clock: Clock) -> Any:
    return stitching.process_record(store, record)


handler = entry.handler(__name__, contract.StitchSettings, wire, run, batch="stream")
