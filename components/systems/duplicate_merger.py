"""Duplicate contact merger (document 000): block weekly, score with visible evidence, merge
with an undo bundle. No model anywhere (DESIGN.md: "There is no model in this system").

Functions, each with its own role (the document's IAM table, plus what DESIGN.md adds and what
each handler needs, named below):

- ``dm-block`` (weekly ``dm-block-weekly`` schedule; 300 s / 3008 MB): reads the CRM with the
  read credential, counts value rarity, forms capped blocks and sends them to ``dm-blocks``.
  Document: GetSecretValue on the read credential, PutItem on pairs (the run summary row).
  DESIGN.md: SendMessage on ``dm-blocks`` only.
- ``dm-score`` (SQS ``dm-blocks``; 60 s / 1024 MB): scores each block's pairs, skips decided
  pairs, upserts pairs. Document: Query and UpdateItem on pairs and decisions. Design note:
  SendMessage on ``dm-merges`` only (automatic-band pairs).
- ``dm-merge`` (public Function URL for the signed review / confirm / reject / undo links; SQS
  ``dm-merges`` for automatic merges; ``dm-digest-weekly`` schedule for the digest;
  60 s / 1024 MB). Document: PutObject on ``undo/``, GetSecretValue on the write credential,
  PutItem on merges. Added, each because the handler does it: GetObject on ``undo/`` (undo
  reads the bundle); GetItem / UpdateItem / DeleteItem on merges (per-record locks are items
  there, released by a conditional delete; merge state moves); GetItem / PutItem / UpdateItem /
  DeleteItem on decisions (a pair's decision item is claimed, settled or released together
  with the locks and the link marker in one TransactWriteItems); GetItem on pairs and Query on
  its ``by-review`` index (the proposal page and the digest); GetSecretValue on the link-signing
  key; SendEmail from
  ``sender_email`` only (the digest); GetFunctionUrlConfig on itself (the digest's links need
  the function's own URL, which is only known after deployment).

Tables: ``dm-pairs`` (pair_key; TTL ``ttl``; sparse GSI ``by-review`` on review/score holds
only the proposed and automatic pairs of a run), ``dm-decisions`` (pair_key; no TTL, ever),
``dm-merges`` (merge_id; per-record locks ``lock#<contact id>`` and used-link markers
``link#<token id>`` live beside the merges, and only those carry the TTL attribute
``expires_at``). Bucket ``dm-undo`` (versioned; bundles under ``undo/``). Secrets: CRM read
credential, CRM write credential (readable by dm-merge alone), link-signing key.
"""

from __future__ import annotations

import json

import pulumi

from components.config import DmSettings
from components.deployment import Deployment
from components.grants import Grant
from components.guarded_table import GuardedTable, GuardedTableArgs, Index, Key
from components.private_bucket import PrivateBucket, PrivateBucketArgs
from components.scheduled_job import ScheduledJob, ScheduledJobArgs, schedule_group
from components.scoped_lambda import (
    FunctionCode,
    FunctionUrl,
    QueueTrigger,
    ScopedLambda,
    ScopedLambdaArgs,
)
from components.secret_slot import SecretSlot, SecretSlotArgs
from components.systems.base import System, SystemArgs
from components.work_queue import WorkQueue, WorkQueueArgs

PACKAGE = "handlers.duplicate_merger"
REVIEW_INDEX = "by-review"
UNDO_PREFIX = "undo/"
QUEUE_VISIBILITY_S = 360
"""Six times the consumers' 60 s timeout, as AWS advises for SQS event sources."""
MAX_RECEIVES = 5
PAIR_TTL_DAYS = 30


def send_email(d: Deployment, sid: str, sender: str) -> Grant:
    """SendEmail on the sender's SES identity, as that one From address only."""
    return Grant(
        sid,
        ("ses:SendEmail",),
        (d.sender_identity_arn(sender),),
        {"StringEquals": {"ses:FromAddress": [sender]}},
    )


class DuplicateMerger(System):
    """Three functions, three tables, two queues, one undo bucket, three secrets."""

    pairs: GuardedTable
    decisions: GuardedTable
    merges: GuardedTable
    block: ScopedLambda
    score: ScopedLambda
    merge: ScopedLambda

    def __init__(
        self,
        resource_name: str,
        args: SystemArgs[DmSettings],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("DuplicateMerger", resource_name, opts)
        d, s = args.deployment, args.settings
        child = pulumi.ResourceOptions(parent=self)

        # Storage ------------------------------------------------------------------------
        self.pairs = GuardedTable(
            "dm-pairs",
            GuardedTableArgs(
                d,
                "dm-pairs",
                Key("pair_key"),
                indexes=(Index(REVIEW_INDEX, Key("review"), Key("score", "N")),),
                ttl_attribute="ttl",
            ),
            child,
        )
        self.decisions = GuardedTable(
            "dm-decisions", GuardedTableArgs(d, "dm-decisions", Key("pair_key")), child
        )
        self.merges = GuardedTable(
            "dm-merges",
            GuardedTableArgs(d, "dm-merges", Key("merge_id"), ttl_attribute="expires_at"),
            child,
        )
        undo = PrivateBucket("dm-undo", PrivateBucketArgs(d, "dm-undo", versioned=True), child)
        blocks = WorkQueue(
            "dm-blocks",
            WorkQueueArgs(
                d,
                "dm-blocks",
                max_receive_count=MAX_RECEIVES,
                visibility_timeout_s=QUEUE_VISIBILITY_S,
            ),
            child,
        )
        merge_queue = WorkQueue(
            "dm-merges-queue",
            WorkQueueArgs(
                d,
                "dm-merges",
                max_receive_count=MAX_RECEIVES,
                visibility_timeout_s=QUEUE_VISIBILITY_S,
            ),
            child,
        )
        crm_read = SecretSlot(
            "dm-crm-read",
            SecretSlotArgs(
                d,
                "dm-crm-read",
                "CRM read credential of dm-block: a HubSpot Service Key with scope "
                "crm.objects.contacts.read, as the bare token or JSON {\"token\": ...}.",
            ),
            child,
        )
        crm_write = SecretSlot(
            "dm-crm-write",
            SecretSlotArgs(
                d,
                "dm-crm-write",
                "CRM write credential, read by dm-merge alone: a HubSpot Service Key with "
                "scopes crm.objects.contacts.read, crm.objects.contacts.write, "
                "crm.schemas.contacts.read, crm.objects.companies.read, "
                "crm.objects.companies.write, crm.objects.deals.read, crm.objects.deals.write, "
                "tickets, sales-email-read (README: dm, HubSpot Service Keys); the bare token "
                "or JSON {\"token\": ...}.",
            ),
            child,
        )
        link_key = SecretSlot(
            "dm-link-key",
            SecretSlotArgs(
                d,
                "dm-link-key",
                'Keyring signing the review, confirm, reject and undo links: JSON {"active_kid":'
                ' "k1", "keys": {"k1": "<at least 32 random characters>"}}.',
            ),
            child,
        )
        thresholds = {
            "AUTOMATIC_THRESHOLD": repr(s.thresholds.automatic),
            "PROPOSE_THRESHOLD": repr(s.thresholds.propose),
        }

        # Functions ----------------------------------------------------------------------
        self.block = ScopedLambda(
            "dm-block",
            ScopedLambdaArgs(
                d,
                "dm-block",
                "Weekly: reads the CRM, computes four keys per contact, forms capped blocks",
                FunctionCode(f"{PACKAGE}.block.handler", vendored=("phonenumberslite", "jellyfish", "nicknames")),
                memory_mb=3008,
                timeout_s=300,
                grants=(
                    crm_read.grant_read(sid="ReadCrmReadCredential"),
                    # Run summary, and the checkpointed read of a large portal (reading.py).
                    self.pairs.grant("dynamodb:PutItem", "dynamodb:GetItem", sid="RunSummaryAndReadState"),
                    blocks.grant_send(sid="SendBlocks"),
                    Grant(
                        "ContinueOwnRead",
                        ("lambda:InvokeFunction",),
                        (d.arns.lambda_function(d.name("dm-block")),),
                    ),
                ),
                environment={
                    "CRM_READ_SECRET": crm_read.physical_name,
                    "CRM_BASE_URL": s.crm_base_url,
                    "HUBSPOT_API_VERSION": args.hubspot_api_version,
                    "PAIRS_TABLE": self.pairs.physical_name,
                    "BLOCKS_QUEUE_URL": blocks.url,
                    "BLOCK_CAP": str(s.block_cap),
                    "PHONE_REGION": s.phone_region,
                    "PAIR_TTL_DAYS": str(PAIR_TTL_DAYS),
                },
                invoked_async=True,  # the weekly schedule
            ),
            child,
        )
        self.score = ScopedLambda(
            "dm-score",
            ScopedLambdaArgs(
                d,
                "dm-score",
                "Scores each block's pairs with rarity-weighted evidence; upserts pairs",
                FunctionCode(f"{PACKAGE}.score.handler", vendored=("jellyfish", "nicknames")),
                memory_mb=1024,
                timeout_s=60,
                grants=(
                    self.pairs.grant("dynamodb:Query", "dynamodb:UpdateItem", sid="ScorePairs"),
                    self.decisions.grant(
                        "dynamodb:Query", "dynamodb:UpdateItem", sid="ScoreDecisions"
                    ),
                    merge_queue.grant_send(sid="SendAutomaticMerges"),
                ),
                environment={
                    "PAIRS_TABLE": self.pairs.physical_name,
                    "DECISIONS_TABLE": self.decisions.physical_name,
                    "MERGES_QUEUE_URL": merge_queue.url,
                    "RECORD_FLOOR": repr(s.record_floor),
                    "PAIR_TTL_DAYS": str(PAIR_TTL_DAYS),
                    **thresholds,
                },
                queue_triggers=(QueueTrigger(blocks, batch_size=1, maximum_concurrency=10),),
            ),
            child,
        )
        merge_physical = d.name("dm-merge")
        self.merge = ScopedLambda(
            "dm-merge",
            ScopedLambdaArgs(
                d,
                "dm-merge",
                "Proposal pages, signed confirm / reject / undo links, merges with an undo bundle",
                FunctionCode(f"{PACKAGE}.merge.handler", vendored=("jellyfish", "nicknames")),
                memory_mb=1024,
                timeout_s=60,
                grants=(
                    undo.grant("s3:PutObject", "s3:GetObject", prefixes=(UNDO_PREFIX,), sid="UndoBundles"),
                    crm_write.grant_read(sid="ReadCrmWriteCredential"),
                    link_key.grant_read(sid="ReadLinkKey"),
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
                    self.pairs.grant("dynamodb:GetItem", sid="ReadPairs"),
                    self.pairs.grant("dynamodb:Query", indexes=(REVIEW_INDEX,), sid="QueryReview"),
                    send_email(d, "SendDigest", s.sender_email),
                    Grant(
                        "ReadOwnFunctionUrl",
                        ("lambda:GetFunctionUrlConfig",),
                        (d.arns.lambda_function(merge_physical),),
                    ),
                ),
                environment={
                    "MERGES_TABLE": self.merges.physical_name,
                    "DECISIONS_TABLE": self.decisions.physical_name,
                    "PAIRS_TABLE": self.pairs.physical_name,
                    "REVIEW_INDEX": REVIEW_INDEX,
                    "UNDO_BUCKET": undo.physical_name,
                    "CRM_WRITE_SECRET": crm_write.physical_name,
                    "CRM_BASE_URL": s.crm_base_url,
                    "HUBSPOT_API_VERSION": args.hubspot_api_version,
                    "LINK_KEY_SECRET": link_key.physical_name,
                    "SENDER_EMAIL": s.sender_email,
                    "REVIEWER_EMAIL": s.reviewer_email,
                    "LINK_TTL_DAYS": str(s.link_ttl_days),
                    "UNDO_DAYS": str(s.undo_days),
                    **thresholds,
                },
                url=FunctionUrl(
                    "NONE",
                    public_reason=(
                        "signed review / confirm / reject / undo links: an HMAC link token "
                        "scoped to one pair or merge, single use, expiring, is verified before "
                        "anything else is read; GET only renders, POST acts"
                    ),
                ),
                queue_triggers=(QueueTrigger(merge_queue, batch_size=1, maximum_concurrency=2),),
                invoked_async=True,  # the weekly digest schedule
            ),
            child,
        )

        # Schedules ----------------------------------------------------------------------
        jobs_group = schedule_group("dm-schedules", d, d.system, child)
        ScheduledJob(
            "dm-block-weekly",
            ScheduledJobArgs(
                d,
                "dm-block-weekly",
                s.schedule,
                self.block,
                jobs_group,
                timezone=s.schedule_timezone,
                payload=json.dumps({"action": "block"}),
                description="Weekly blocking run of the duplicate merger",
            ),
            child,
        )
        ScheduledJob(
            "dm-digest-weekly",
            ScheduledJobArgs(
                d,
                "dm-digest-weekly",
                s.digest_schedule,
                self.merge,
                jobs_group,
                timezone=s.schedule_timezone,
                payload=json.dumps({"action": "digest"}),
                description="Weekly digest of the duplicate merger's proposals",
            ),
            child,
        )

        self.finish(
            {
                "review_url": self.merge.function_url,
                "pairs_table": self.pairs.physical_name,
                "decisions_table": self.decisions.physical_name,
                "merges_table": self.merges.physical_name,
                "undo_bucket": undo.physical_name,
                "blocks_queue": blocks.physical_name,
                "merges_queue": merge_queue.physical_name,
                "secrets": {
                    "crm_read": crm_read.physical_name,
                    "crm_write": crm_write.physical_name,
                    "link_key": link_key.physical_name,
                },
            }
        )
