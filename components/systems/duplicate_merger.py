"""Duplicate contact merger (document 000): block weekly, score with visible evidence, merge
with an undo bundle. No model anywhere, by design: every decision is explained by evidence.

- ``dm-block`` (the weekly ``dm-block-weekly`` schedule): reads the CRM with the read
  credential, counts value rarity, forms capped blocks and sends them to ``dm-blocks``.
- ``dm-score`` (SQS ``dm-blocks``): scores each block's pairs, skips decided pairs, upserts
  pairs; automatic-band pairs go to ``dm-merges``.
- ``dm-merge`` (public Function URL for the signed review / confirm / reject / undo links; SQS
  ``dm-merges`` for automatic merges; the ``dm-digest-weekly`` schedule for the digest): merges
  with an undo bundle, and only it reads the CRM write credential. Its ``dm-sweep`` schedule
  resumes claims whose lease ran out with no request coming back (``MergeService.sweep``).
- ``dm-stage`` (SQS ``dm-stages``): the split weekly run of a portal larger than
  ``splitAbove`` (``fanout.py``): dm-block queues one read message per saved read chunk, and
  each stage's last partition queues the next stage; ``emit`` feeds dm-blocks as dm-block does.
  One function for the eight stages: they share every grant and the code, and one message
  names its stage.

Each function's grants are the code below, each with a statement id saying why; docs/systems/dm.md's
generated table (``make docs``) lists them per function, so they are not repeated here.

Tables: ``dm-pairs`` (pair_key; TTL ``ttl``; sparse GSI ``by-review`` on review/score holds
only the proposed and automatic pairs of a run), ``dm-decisions`` (pair_key; a decision never
expires, only the weekly notes carry the TTL attribute ``expires_at``; sparse GSI ``by-claim``
on decision/lease_until holds only the claims in flight), ``dm-merges`` (merge_id; per-record
locks ``lock#<contact id>`` and used-link markers ``link#<token id>`` live beside the merges;
all carry the TTL attribute ``expires_at``, a merge a day after its undo window). Bucket
``dm-undo`` (versioned; bundles under ``undo/``, expired a day after the undo window, old
versions 7 days after they are replaced). Bucket ``dm-shards`` (the split run's partitions
under ``shards/``, expired two days after they are written). Secrets: CRM read
credential, CRM write credential (readable by dm-merge alone), link-signing key.
"""

from __future__ import annotations

import json

import pulumi

from components.config import DmSettings
from components.deployment import Deployment
from components.grants import Grant
from components.guarded_table import GuardedTable, GuardedTableArgs
from components.personal_data import (
    SCHEDULE_EVENTS,
    NoPersonalData,
    PersonalData,
    Retention,
    Suppression,
    function_logs,
    messages,
)
from components.private_bucket import PrivateBucket, PrivateBucketArgs
from components.scheduled_job import Schedule
from components.scoped_lambda import FunctionUrl, QueueTrigger, ScopedLambda
from components.secret_slot import SecretSlot, SecretSlotArgs
from components.systems.base import Build, System, SystemArgs, settings_values
from components.systems.function_factory import FunctionFactory
from components.work_queue import WorkQueue, WorkQueueArgs, consumer_visibility
from handlers.duplicate_merger import contract

PACKAGE = "handlers.duplicate_merger"
MAX_RECEIVES = 5
SIZES: dict[str, tuple[int, int]] = {
    contract.BLOCK: (3008, 300),
    contract.SCORE: (1024, 60),
    contract.MERGE: (1024, 60),
    contract.STAGE: (512, 120),
}
"""Memory (MB) and timeout (s) per function, from the document; dm-stage's from the split run's
measured invocations (at most about 2 CPU s and 150 MB, docs/systems/dm.md)."""
MATCHER = ("jellyfish", "nicknames", "us")
"""What the matcher imports (handlers.common.strings, normalize's nicknames and state codes)."""
CONTACT_FIELDS = ("CRM contact ids", "names", "email addresses", "phone numbers", "companies")
"""What dm reads of a CRM contact to compare it."""
NONCURRENT_DAYS = 7
"""Days an overwritten undo bundle's old version is kept: a week to notice the overwrite."""


class DuplicateMerger(System):
    """Four functions, three tables, three queues, two buckets, three secrets."""

    pairs: GuardedTable
    decisions: GuardedTable
    merges: GuardedTable
    undo: PrivateBucket
    shards: PrivateBucket
    blocks: WorkQueue
    stages: WorkQueue
    merge_queue: WorkQueue
    crm_read: SecretSlot
    crm_write: SecretSlot
    link_key: SecretSlot
    block: ScopedLambda
    score: ScopedLambda
    merge: ScopedLambda
    stage: ScopedLambda

    def __init__(
        self,
        resource_name: str,
        args: SystemArgs[DmSettings],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("DuplicateMerger", resource_name, opts)
        d, s = args.deployment, args.settings
        child = pulumi.ResourceOptions(parent=self)
        function = FunctionFactory(
            d,
            PACKAGE,
            SIZES,
            child,
            logs=function_logs("CRM contact ids", "pair keys"),
            failed_events=SCHEDULE_EVENTS,
        )
        self._data(d, s, child)
        self._queues(d, function, child)
        self._secrets(d, child)
        values = self._environment(args)
        b = Build(d, s, function, values)
        self._block(b)
        self._score(b)
        self._merge(b)
        self._stage(b)
        self._outputs()

    def _data(self, d: Deployment, s: DmSettings, child: pulumi.ResourceOptions) -> None:
        """The pairs, decisions and merges tables and the versioned undo bucket."""
        undo = Retention.setting(
            "dm", s, "undo_days", "a merge can be undone this long (HubSpot keeps archived records 90 days)"
        )
        pairs = PersonalData(
            (*CONTACT_FIELDS, "match evidence"),
            "the weekly review: each pair's two contacts and why they look like one person; "
            "the blocking index a week's changes are compared against (each contact's matching "
            "fields as last read, rewritten every run)",
            Retention.fixed(contract.PAIR_TTL_DAYS, "the document's 30-day review window"),
        )
        self.pairs = GuardedTable(
            contract.PAIRS.name, GuardedTableArgs.of(d, contract.PAIRS, pairs), child
        )
        decisions = Suppression(
            ("pair of CRM contact ids", "the decision", "the reviewer's address", "score"),
            "a pair judged not a duplicate is never proposed again (the weekly digest notes "
            "beside the decisions name addresses and expire by TTL 35 days after their week)",
        )
        self.decisions = GuardedTable(
            contract.DECISIONS.name,
            GuardedTableArgs.of(d, contract.DECISIONS, decisions),
            child,
        )
        merges = PersonalData(
            ("CRM contact ids", "the reviewer's address", "moved associations"),
            "the merge's state while it can be undone",
            undo,
        )
        self.merges = GuardedTable(
            contract.MERGES.name, GuardedTableArgs.of(d, contract.MERGES, merges), child
        )
        bundles = PersonalData(
            ("both contacts' whole CRM records", "their associated records"),
            "the undo bundle that puts both contacts back",
            undo,
        )
        self.undo = PrivateBucket(
            contract.UNDO_BUCKET,
            PrivateBucketArgs(
                d,
                contract.UNDO_BUCKET,
                versioned=True,
                expire_days=s.undo_days + 1,
                noncurrent_days=NONCURRENT_DAYS,
                personal_data=bundles,
            ),
            child,
        )
        partitions = PersonalData(
            CONTACT_FIELDS,
            "the split weekly run's partitions of the portal's contacts, between its stages",
            Retention.fixed(contract.SHARDS_DAYS, "a run takes hours; its objects end with it"),
            on_request="not erased on request: a run's partitions expire two days after it",
        )
        self.shards = PrivateBucket(
            contract.SHARDS_BUCKET,
            PrivateBucketArgs(
                d, contract.SHARDS_BUCKET, expire_days=contract.SHARDS_DAYS, personal_data=partitions
            ),
            child,
        )

    def _queues(
        self, d: Deployment, function: FunctionFactory, child: pulumi.ResourceOptions
    ) -> None:
        """dm-blocks (dm-block to dm-score), dm-merges (dm-score, and dm-merge's clicks, to
        dm-merge) and dm-stages (the split run's stages, to dm-stage)."""
        self.blocks = WorkQueue(
            contract.BLOCKS_QUEUE,
            WorkQueueArgs(
                d,
                contract.BLOCKS_QUEUE,
                max_receive_count=MAX_RECEIVES,
                visibility_timeout_s=consumer_visibility(function.timeout(contract.SCORE)),
                personal_data=messages(*CONTACT_FIELDS, why="a block of contacts dm-score compares"),
            ),
            child,
        )
        self.merge_queue = WorkQueue(
            "dm-merges-queue",
            WorkQueueArgs(
                d,
                contract.MERGES_QUEUE,
                max_receive_count=MAX_RECEIVES,
                visibility_timeout_s=consumer_visibility(function.timeout(contract.MERGE)),
                personal_data=messages(
                    "pair of CRM contact ids", "reviewer's email address",
                    why="an automatic merge to make, or a reviewer's confirm or undo to finish",
                ),
            ),
            child,
        )
        self.stages = WorkQueue(
            contract.STAGES_QUEUE,
            WorkQueueArgs(
                d,
                contract.STAGES_QUEUE,
                max_receive_count=MAX_RECEIVES,
                visibility_timeout_s=consumer_visibility(function.timeout(contract.STAGE)),
                personal_data=NoPersonalData("a run id, a stage and a partition number"),
            ),
            child,
        )

    def _secrets(self, d: Deployment, child: pulumi.ResourceOptions) -> None:
        """The CRM read and write credentials and the link-signing keyring."""
        self.crm_read = SecretSlot(
            contract.CRM_READ_SECRET,
            SecretSlotArgs(
                d,
                contract.CRM_READ_SECRET,
                "CRM read credential of dm-block: a HubSpot Service Key with scope "
                "crm.objects.contacts.read, as the bare token or JSON {\"token\": ...}.",
            ),
            child,
        )
        self.crm_write = SecretSlot(
            contract.CRM_WRITE_SECRET,
            SecretSlotArgs(
                d,
                contract.CRM_WRITE_SECRET,
                "CRM write credential, read by dm-merge alone: a HubSpot Service Key with "
                "scopes crm.objects.contacts.read, crm.objects.contacts.write, "
                "crm.schemas.contacts.read, crm.objects.companies.read, "
                "crm.objects.companies.write, crm.objects.deals.read, crm.objects.deals.write, "
                "tickets, sales-email-read (docs/hubspot.md, Service Keys); the bare token "
                "or JSON {\"token\": ...}.",
            ),
            child,
        )
        self.link_key = SecretSlot(
            contract.LINK_KEY_SECRET,
            SecretSlotArgs(
                d,
                contract.LINK_KEY_SECRET,
                'Keyring signing the review, confirm, reject and undo links: JSON {"active_kid":'
                ' "k1", "keys": {"k1": "<at least 32 random characters>"}}.',
            ),
            child,
        )

    def _environment(self, args: SystemArgs[DmSettings]) -> dict[str, object]:
        """Every value the three functions' settings read (each takes its own subset)."""
        s = args.settings
        return {
            **settings_values(s),
            "crm_read_secret": self.crm_read.physical_name,
            "crm_write_secret": self.crm_write.physical_name,
            "link_key_secret": self.link_key.physical_name,
            "hubspot_api_version": args.hubspot_api_version,
            "pairs_table": self.pairs.physical_name,
            "decisions_table": self.decisions.physical_name,
            "claims_index": contract.CLAIMS_INDEX,
            "merges_table": self.merges.physical_name,
            "review_index": contract.REVIEW_INDEX,
            "undo_bucket": self.undo.physical_name,
            "shards_bucket": self.shards.physical_name,
            "stages_queue_url": self.stages.url,
            "portal_size": s.portal_contacts or 0,
            "blocks_queue_url": self.blocks.url,
            "merges_queue_url": self.merge_queue.url,
            "pair_ttl_days": contract.PAIR_TTL_DAYS,
            "automatic_threshold": s.thresholds.automatic,
            "propose_threshold": s.thresholds.propose,
            "timezone": s.schedule_timezone,
            "public_url": None,  # a stack's digest asks Lambda for the function's own URL
        }

    def _block(self, b: Build[DmSettings]) -> None:
        """dm-block: the weekly read of the CRM into capped blocks."""
        self.block = b.function(
            contract.BLOCK,
            "Weekly: reads the CRM, computes four keys per contact, forms capped blocks",
            (
                self.crm_read.grant_read(sid="ReadCrmReadCredential"),
                # Run summary, the checkpointed read of a large portal (reading.py) and the
                # blocking index a week reads and rewrites (incremental.py).
                self.pairs.grant("dynamodb:PutItem", "dynamodb:GetItem", sid="RunSummaryAndReadState"),
                self.blocks.grant_send(sid="SendBlocks"),
                self.stages.grant_send(sid="StartSplitRun"),
                Grant(
                    "ContinueOwnRead",
                    ("lambda:InvokeFunction",),
                    (b.d.arns.lambda_function(b.d.name(contract.BLOCK)),),
                ),
                # Contacts HubSpot deleted: found by a scan of the ids dm holds, erased by the
                # engine make forget uses (handlers/duplicate_merger/deletions.py), which reads
                # every item and every object version and deletes what names them.
                self.pairs.grant("dynamodb:Scan", "dynamodb:DeleteItem", sid="ErasePairsOfDeleted"),
                self.decisions.grant("dynamodb:Scan", "dynamodb:DeleteItem", sid="EraseDecisionsOfDeleted"),
                self.merges.grant("dynamodb:Scan", "dynamodb:DeleteItem", sid="EraseMergesOfDeleted"),
                Grant("ListUndoVersions", ("s3:ListBucketVersions",), (self.undo.arn,)),
                self.undo.grant(
                    "s3:GetObjectVersion",
                    "s3:DeleteObjectVersion",
                    prefixes=(contract.UNDO_PREFIX,),
                    sid="EraseUndoOfDeleted",
                ),
            ),
            contract.BlockSettings.environment(b.values),
            # A long read continues in an asynchronous invocation of dm-block itself.
            schedules=(
                Schedule(
                    contract.BLOCK_SCHEDULE,
                    b.s.schedule,
                    "Weekly blocking run of the duplicate merger",
                    json.dumps({"action": contract.BLOCK_ACTION}),
                    b.s.schedule_timezone,
                ),
            ),
            # email-validator, idna: the erasure engine's (handlers.common.privacy) email rule.
            vendored=("phonenumberslite", "email-validator", "idna", *MATCHER),
        )

    def _score(self, b: Build[DmSettings]) -> None:
        """dm-score: scores each block's pairs; automatic-band pairs go to dm-merges."""
        self.score = b.function(
            contract.SCORE,
            "Scores each block's pairs with rarity-weighted evidence; upserts pairs",
            (
                self.pairs.grant("dynamodb:Query", "dynamodb:UpdateItem", sid="ScorePairs"),
                self.decisions.grant("dynamodb:Query", "dynamodb:UpdateItem", sid="ScoreDecisions"),
                self.merge_queue.grant_send(sid="SendAutomaticMerges"),
            ),
            contract.ScoreSettings.environment(b.values),
            queues=(QueueTrigger(self.blocks, batch_size=1, maximum_concurrency=10),),
            vendored=MATCHER,
        )

    def _merge(self, b: Build[DmSettings]) -> None:
        """dm-merge: the signed link pages, automatic merges and the weekly digest."""
        self.merge = b.function(
            contract.MERGE,
            "Proposal pages, signed confirm / reject / undo links, merges with an undo bundle",
            (
                self.undo.grant(
                    "s3:PutObject", "s3:GetObject", prefixes=(contract.UNDO_PREFIX,), sid="UndoBundles"
                ),
                self.crm_write.grant_read(sid="ReadCrmWriteCredential"),
                self.link_key.grant_read(sid="ReadLinkKey"),
                self.merges.grant(
                    "dynamodb:PutItem",
                    "dynamodb:GetItem",
                    "dynamodb:UpdateItem",
                    "dynamodb:DeleteItem",
                    sid="MergesLocksAndLinks",
                ),
                # The pair's decision item is the serialisation point of confirm, reject
                # and undo: claimed (Put / Update), settled (Put) or released (Delete)
                # inside TransactWriteItems, which IAM authorises per underlying action
                # ("Using IAM with DynamoDB transactions",
                # https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
                self.decisions.grant(
                    "dynamodb:GetItem",
                    "dynamodb:PutItem",
                    "dynamodb:UpdateItem",
                    "dynamodb:DeleteItem",
                    sid="RecordDecisions",
                ),
                # The sweep finds the claims whose lease ran out on the sparse claims index.
                self.decisions.grant(
                    "dynamodb:Query", indexes=(contract.CLAIMS_INDEX,), sid="FindExpiredClaims"
                ),
                self.pairs.grant("dynamodb:GetItem", sid="ReadPairs"),
                self.pairs.grant(
                    "dynamodb:Query", indexes=(contract.REVIEW_INDEX,), sid="QueryReview"
                ),
                b.d.grant_send_email("SendDigest", b.s.sender_email),
                # A reviewer's confirm or undo is claimed at the click and finished from this
                # queue, so the person does not wait on HubSpot. One hop, never a chain: the
                # consumer sends nothing back (Lambda's recursive loop detection stops a chain
                # of Lambda-SQS-Lambda calls only after about 16 hops,
                # https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html).
                self.merge_queue.grant_send(sid="HandOverClicks"),
                Grant(
                    "ReadOwnFunctionUrl",
                    ("lambda:GetFunctionUrlConfig",),
                    (b.d.arns.lambda_function(b.d.name(contract.MERGE)),),
                ),
            ),
            contract.MergeSettings.environment(b.values),
            url=FunctionUrl(
                "NONE",
                public_reason=(
                    "signed review / confirm / reject / undo links: an HMAC link token "
                    "scoped to one pair or merge, single use, expiring, is verified before "
                    "anything else is read; GET only renders, POST acts"
                ),
            ),
            queues=(QueueTrigger(self.merge_queue, batch_size=1, maximum_concurrency=2),),
            schedules=(
                Schedule(
                    contract.DIGEST_SCHEDULE,
                    b.s.digest_schedule,
                    "Weekly digest of the duplicate merger's proposals",
                    json.dumps({"action": contract.DIGEST_ACTION}),
                    b.s.schedule_timezone,
                ),
                Schedule(
                    contract.SWEEP_SCHEDULE,
                    b.s.sweep_schedule,
                    "Resumes dm merges and undoes whose claim ran out",
                    json.dumps({"action": contract.SWEEP_ACTION}),
                    b.s.schedule_timezone,
                ),
            ),
            vendored=(*MATCHER, "tzdata"),  # its pages show times in the business's zone
        )

    def _stage(self, b: Build[DmSettings]) -> None:
        """dm-stage: one partition of one stage of the split weekly run."""
        self.stage = b.function(
            contract.STAGE,
            "The split weekly run: one partition of one stage; the last queues the next stage",
            (
                self.shards.grant(
                    "s3:GetObject", "s3:PutObject", prefixes=(contract.SHARDS_PREFIX,), sid="Shards"
                ),
                # A partition's inputs are one listing of its prefix (shards.S3Shards.keys).
                self.shards.grant_list(prefix=contract.SHARDS_PREFIX, sid="ListShards"),
                self.pairs.grant_items_under(
                    "dynamodb:GetItem", contract.READ_PREFIX, sid="ReadSavedChunks"
                ),
                self.pairs.grant_items_under(
                    "dynamodb:UpdateItem", contract.SPLIT_PREFIX, sid="StageCounters"
                ),
                self.pairs.grant_items_under("dynamodb:PutItem", contract.RUN_PREFIX, sid="RunSummary"),
                self.stages.grant_send(sid="SendNextStage"),
                self.blocks.grant_send(sid="SendBlocks"),
            ),
            contract.StageSettings.environment(b.values),
            # Five partitions at once: a weekly batch; its need stays small beside dm-score's.
            queues=(QueueTrigger(self.stages, batch_size=1, maximum_concurrency=5),),
            vendored=("phonenumberslite", *MATCHER),
        )

    def _outputs(self) -> None:
        """The operator-facing outputs."""
        self.finish(
            {
                "review_url": self.merge.function_url,
                "pairs_table": self.pairs.physical_name,
                "decisions_table": self.decisions.physical_name,
                "merges_table": self.merges.physical_name,
                "undo_bucket": self.undo.physical_name,
                "shards_bucket": self.shards.physical_name,
                "stages_queue": self.stages.physical_name,
                "blocks_queue": self.blocks.physical_name,
                "merges_queue": self.merge_queue.physical_name,
                "secrets": {
                    "crm_read": self.crm_read.physical_name,
                    "crm_write": self.crm_write.physical_name,
                    "link_key": self.link_key.physical_name,
                },
            }
        )
