"""The junk log's layout in ler-junk: one object per dropped lead, by the UTC day it arrived.

``junk/<YYYY-MM-DD>/<lead_id>.json`` holds the lead, the reason and the stage that dropped it.
The key depends only on the lead (its id and the day it was received), so a redelivered drop
finds its own object instead of adding a second one, and the digest reads one day by listing
one prefix. The first drop is the record (``keep_junk``): a redelivery never rewrites it, since
a person may have rescued the lead since and the rescue (who, when) is kept on that object.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from handlers.common.observability import get_logger
from handlers.lead_enricher.contract import JUNK, JUNK_PREFIX
from handlers.lead_enricher.events import lead_from_event
from handlers.lead_enricher.lead import Lead
from handlers.lead_enricher.storage import ObjectStore


def day_prefix(day: dt.date) -> str:
    return f"{JUNK_PREFIX}{day.isoformat()}/"


def junk_key(lead: Lead) -> str:
    received = dt.datetime.fromisoformat(lead.received_at)
    if received.tzinfo is None:
        received = received.replace(tzinfo=dt.UTC)
    return f"{day_prefix(received.astimezone(dt.UTC).date())}{lead.lead_id}.json"


def junk_entry(lead: Lead, *, reason: str, stage: str, dropped_at: dt.datetime) -> dict[str, Any]:
    """What the junk log keeps: enough to read the reason and to replay the lead."""
    return {
        "lead_id": lead.lead_id,
        "lane": lead.lane,
        "reason": reason,
        "stage": stage,
        "dropped_at": dropped_at.astimezone(dt.UTC).isoformat(),
        "lead": lead.to_json(),
    }


def keep_junk(store: ObjectStore, bucket: str, lead: Lead, entry: dict[str, Any]) -> bool:
    """Write ``lead``'s junk record unless it has one; whether this call wrote it.

    Create-only (``If-None-Match: *``, 412 when the object exists: "How to prevent object
    overwrites with conditional writes",
    https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html), so a
    redelivered drop (EventBridge and S3 deliver at least once, ler-retry re-drives) never
    erases a rescue ler-rescue recorded on the object in between.
    """
    return store.put_json_if(bucket, junk_key(lead), entry, etag=None) is not None


def write_junk(event: dict[str, Any], store: ObjectStore, bucket: str, now: dt.datetime) -> str:
    """Keep one dropped lead (an le.junk event) in the log; return its key."""
    lead = lead_from_event(event, JUNK)
    screening = lead.screening
    reason = screening.reason if screening else "unknown"
    stage = screening.stage if screening else "filter"
    key = junk_key(lead)
    entry = junk_entry(lead, reason=reason, stage=stage, dropped_at=now)
    if keep_junk(store, bucket, lead, entry):
        get_logger().info("lead dropped", lead_id=lead.lead_id, reason=reason, key=key)
    else:
        get_logger().info("drop already recorded", lead_id=lead.lead_id, key=key)
    return key
