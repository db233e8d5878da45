"""Names the infrastructure and dm's handlers share: functions, tables, queues, prefixes, settings.

``components/systems/duplicate_merger.py`` declares the tables from the :class:`TableSpec`
records below and builds each function's environment from its settings record, so a variable a
handler reads and the infra does not set fails ``make plan``, and a handler never re-defaults a
value the infra sets. No Pulumi here: this module ships in the function archives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from handlers.common.settings import Settings
from handlers.common.tables import Index, Key, TableSpec

# Functions ----------------------------------------------------------------------------------

BLOCK: Final = "dm-block"
SCORE: Final = "dm-score"
MERGE: Final = "dm-merge"
STAGE: Final = "dm-stage"
"""The split weekly run's stages (``fanout.py``), one message each from ``dm-stages``."""

# Tables -------------------------------------------------------------------------------------

REVIEW_INDEX: Final = "by-review"
"""dm-pairs' sparse GSI on review/score: only a run's proposed and automatic pairs."""
PAIRS: Final = TableSpec(
    "dm-pairs",
    Key("pair_key"),
    indexes=(Index(REVIEW_INDEX, Key("review"), Key("score", "N")),),
    ttl_attribute="ttl",
)
"""One row per pair (``min#max``), the run summaries (``run#<id>``, ``run#latest``), the
checkpoints of a large portal's read (``read#<run>``), the blocking index a week's
incremental run reads (``index#current``, ``index#<generation>#<n>``: ``incremental.py``) and
the split run's stage counters (``split#<run>#<started>#<stage>``)."""
READ_PREFIX: Final = "read#"
RUN_PREFIX: Final = "run#"
SPLIT_PREFIX: Final = "split#"
CLAIMS_INDEX: Final = "by-claim"
"""dm-decisions' sparse GSI on decision/lease_until: only claims in flight (``merging``,
``undoing``) carry ``lease_until``, so the sweep finds the expired ones with two Queries."""
DECISIONS_TTL: Final = "expires_at"
"""TTL attribute of dm-decisions, carried by the weekly notes only: a decision never expires."""
NOTES_KEEP_DAYS: Final = 35
"""A week's digest notes expire this long after the week began: the digest reads the last two
weeks', and a month more answers a question about one."""
DECISIONS: Final = TableSpec(
    "dm-decisions",
    Key("pair_key"),
    indexes=(Index(CLAIMS_INDEX, Key("decision"), Key("lease_until", "N")),),
    ttl_attribute=DECISIONS_TTL,
)
"""A person's (or an automatic merge's) decision per pair, the calibration counters
(``calibration#<week>``) and the notes for the digest (``notes#<week>``). A decision never
expires; only the notes carry ``expires_at`` (they name addresses a merge could not keep)."""
MERGES: Final = TableSpec("dm-merges", Key("merge_id"), ttl_attribute="expires_at")
"""Merges, per-record locks (``lock#<contact id>``) and used-link markers (``link#<token id>``);
each carries ``expires_at``: a merge a day after its undo window (``undo_days``), a lock or
marker when its claim or link ends."""

# Queues, bucket, secrets ----------------------------------------------------------------------

BLOCKS_QUEUE: Final = "dm-blocks"
"""dm-block -> dm-score: one message per block (or block window)."""
MERGES_QUEUE: Final = "dm-merges"
"""dm-score -> dm-merge: automatic-band pairs (the CRM write credential stays with dm-merge); and
dm-merge -> dm-merge: a reviewer's confirm or undo, claimed at the click and finished here."""
MERGE_REQUEST_VERSION: Final = 1
"""Format version of dm-score's automatic merge request on dm-merges (``handlers.common.formats``)."""
MERGE_CLICK_VERSION: Final = 2
"""Format version of dm-merge's own click on dm-merges: a request with ``claim`` (kind, holder,
merge id, by; ``MergeService.finish``). dm-merge reads both; a reader of 1 only refuses it
into the DLQ, never misreads it."""
STAGES_QUEUE: Final = "dm-stages"
"""dm-block and dm-stage -> dm-stage: one message per partition of the split run's next stage."""
STAGE_MESSAGE_VERSION: Final = 1
"""Format version of a dm-stages message (``handlers.common.formats``)."""
SHARDS_BUCKET: Final = "dm-shards"
SHARDS_PREFIX: Final = "shards/"
"""dm-shards: the split run's partitions, ``shards/<run>/<stage>/<partition>/<writer>``."""
SHARDS_DAYS: Final = 2
"""A run's shards expire this long after they are written: a run takes hours at most."""
SPLIT_ABOVE: Final = 500_000
"""``systems.dm.splitAbove``'s default: half the largest portal one dm-block invocation was
measured to block (1,000,000), so a run splits well before it could fail."""
UNDO_BUCKET: Final = "dm-undo"
UNDO_PREFIX: Final = "undo/"
"""dm-undo: one undo bundle per merge."""
CRM_READ_SECRET: Final = "dm-crm-read"
CRM_WRITE_SECRET: Final = "dm-crm-write"
LINK_KEY_SECRET: Final = "dm-link-key"

# Schedules and their payloads -----------------------------------------------------------------

BLOCK_SCHEDULE: Final = "dm-block-weekly"
DIGEST_SCHEDULE: Final = "dm-digest-weekly"
SWEEP_SCHEDULE: Final = "dm-sweep"
BLOCK_ACTION: Final = "block"
"""dm-block's event ``{"action": "block"}`` (the schedule, or its own continuation)."""
ERASE_DELETED_ACTION: Final = "erase-deleted"
"""dm-block's event ``{"action": "erase-deleted", "contacts": [...]}`` from itself: contacts
HubSpot deleted, erased from dm's stores (``deletions``)."""
FOLLOW_DELETIONS_ACTION: Final = "follow-deletions"
"""dm-block's event ``{"action": "follow-deletions", "run_id": ...}`` from itself after a split
run's read: the saved read's ids, to notice contacts HubSpot deleted (the split run never holds
every id in one place)."""
DIGEST_ACTION: Final = "digest"
"""dm-merge's event ``{"action": "digest"}`` (the weekly digest schedule)."""
SWEEP_ACTION: Final = "sweep"
"""dm-merge's event ``{"action": "sweep"}``: claims whose lease ran out are resumed."""

FULL_READ_EVERY_WEEKS: Final = 4
"""``systems.dm.fullReadEveryWeeks``' default: a full re-read every four weeks, the weeks between
reading only the changes (``incremental.py``; the figures, ``capacity.py``)."""
PAIR_TTL_DAYS: Final = 30
"""Pair rows and run summaries expire after this many days (the document's 30-day window)."""


# Settings: one record per function (variable = upper-cased field name) ------------------------


@dataclass(frozen=True)
class BlockSettings(Settings):
    """dm-block's environment."""

    crm_read_secret: str
    crm_base_url: str
    hubspot_api_version: str
    pairs_table: str
    decisions_table: str
    merges_table: str
    undo_bucket: str
    """The three only for erasing contacts HubSpot deleted (``deletions``)."""
    blocks_queue_url: str
    block_cap: int
    phone_region: str
    pair_ttl_days: int
    full_read_every_weeks: int
    stages_queue_url: str
    split_above: int
    portal_size: int
    """``systems.dm.portalContacts``, 0 when not given (``fanout.splits`` reads both)."""
    partition_contacts: int


@dataclass(frozen=True)
class StageSettings(Settings):
    """dm-stage's environment."""

    pairs_table: str
    shards_bucket: str
    stages_queue_url: str
    blocks_queue_url: str
    pair_ttl_days: int


@dataclass(frozen=True)
class ScoreSettings(Settings):
    """dm-score's environment."""

    pairs_table: str
    decisions_table: str
    merges_queue_url: str
    record_floor: float
    pair_ttl_days: int
    automatic_threshold: float
    propose_threshold: float


@dataclass(frozen=True)
class MergeSettings(Settings):
    """dm-merge's environment.

    ``public_url``: the links' base when set (tests and the local sandbox); absent in a stack,
    where the digest asks Lambda for the function's own URL.
    """

    merges_table: str
    decisions_table: str
    claims_index: str
    pairs_table: str
    review_index: str
    undo_bucket: str
    merges_queue_url: str
    crm_write_secret: str
    crm_base_url: str
    hubspot_api_version: str
    link_key_secret: str
    sender_email: str
    reviewer_email: str
    link_ttl_days: int
    undo_days: int
    automatic_threshold: float
    propose_threshold: float
    timezone: str
    """The business's IANA zone (the dm schedules' ``schedule_timezone``): pages show times in it."""
    public_url: str | None
