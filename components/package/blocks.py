"""The building blocks as other Pulumi languages see them: argument types schema inference reads.

Each class here *is* the block (a subclass, same type token ``crm:index:<Name>``, same
resources, same policy-pack-clean shape), with a front door that Pulumi's schema inference
(``pulumi.provider.experimental``'s analyzer) can read: a TypedDict of strings, numbers,
booleans, enums, lists and nested TypedDicts instead of the Python-only arguments (a
``Deployment`` holding a provider object, ``Key`` dataclasses, grants as objects). The Python
systems keep using the blocks directly (``components/*.py``); nothing here changes them.

Grants are objects with methods in Python; across languages a block hands out what a grant
becomes, the IAM policy document (JSON) scoped to its own ARNs, for the caller to attach to its
own roles.

No ``from __future__ import annotations`` here: the analyzer reads annotations as objects, so
the outputs the blocks declare (as strings, in their own modules) are declared again below.
"""

import json
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import NotRequired, TypedDict

import pulumi
import pulumi_aws as aws

from components.deployment import Deployment
from components.grants import Grant
from components.guarded_table import GuardedTable as _GuardedTable
from components.guarded_table import GuardedTableArgs as _GuardedTableArgs
from components.monitoring import Monitoring
from components.work_queue import ServiceSender
from components.work_queue import WorkQueue as _WorkQueue
from components.work_queue import WorkQueueArgs as _WorkQueueArgs
from handlers.common.tables import Index, Key

PACKAGE = "crm"
"""The package name: tokens are ``crm:index:<Name>``, as the blocks' own."""


class AttributeType(Enum):
    """A DynamoDB key attribute's type."""

    S = "S"
    """String."""
    N = "N"
    """Number."""
    B = "B"
    """Binary."""


class StreamViewType(Enum):
    """What a DynamoDB stream record holds."""

    NEW_IMAGE = "NEW_IMAGE"
    OLD_IMAGE = "OLD_IMAGE"
    NEW_AND_OLD_IMAGES = "NEW_AND_OLD_IMAGES"
    KEYS_ONLY = "KEYS_ONLY"


class TableKey(TypedDict):
    """A key attribute of a table or index."""

    name: str
    """Attribute name."""
    type: NotRequired[AttributeType]
    """Attribute type; S when omitted."""


class TableIndex(TypedDict):
    """A global secondary index."""

    name: str
    """Index name."""
    partition_key: TableKey
    """Partition key of the index."""
    sort_key: NotRequired[TableKey]
    """Sort key of the index."""
    projection: NotRequired[list[str]]
    """Non-key attributes projected (INCLUDE); all attributes when omitted."""


class GuardedTableArgs(TypedDict):
    """Arguments of GuardedTable: an on-demand table with PITR, encryption, optional TTL,
    indexes and stream, deletion protection when ``protectData``."""

    prefix: str
    """First part of the physical name: the table is ``<prefix>-<name>``."""
    name: str
    """The table's name within its system (``rrs-optout``)."""
    partition_key: TableKey
    """The partition key."""
    sort_key: NotRequired[TableKey]
    """The sort key."""
    indexes: NotRequired[list[TableIndex]]
    """Global secondary indexes."""
    ttl_attribute: NotRequired[str]
    """Attribute holding an epoch-seconds expiry; no TTL when omitted."""
    stream: NotRequired[StreamViewType]
    """Stream view type; no stream when omitted."""
    protect_data: NotRequired[bool]
    """Deletion protection and Pulumi ``protect`` (prod); false when omitted."""
    system: NotRequired[str]
    """Tagged as ``crm:system``; ``shared`` when omitted."""


class ServiceSenderArgs(TypedDict):
    """An AWS service allowed to send to a queue, for one source ARN."""

    service: str
    """Service principal, e.g. ``events.amazonaws.com``."""
    source_arn: str
    """The one resource it sends for (``aws:SourceArn``)."""


class WorkQueueArgs(TypedDict):
    """Arguments of WorkQueue: an SQS queue with its DLQ, SSE and a TLS-only policy."""

    prefix: str
    """First part of the physical name: the queue is ``<prefix>-<name>``."""
    name: str
    """The queue's name within its system (``rrs-work``)."""
    max_receive_count: NotRequired[int]
    """Receives before a message moves to the DLQ; 5 when omitted."""
    visibility_timeout_seconds: NotRequired[int]
    """At least six times the consuming function's timeout; 60 when omitted."""
    dead_letter: NotRequired[bool]
    """This queue is itself a dead-letter queue (no DLQ of its own, 14-day retention)."""
    service_senders: NotRequired[list[ServiceSenderArgs]]
    """AWS services that may send, each for one source ARN."""
    alarm_topic_arn: NotRequired[str]
    """SNS topic the queue's depth and age alarms notify; alarms without action when omitted."""
    system: NotRequired[str]
    """Tagged as ``crm:system``; ``shared`` when omitted."""


def _policy(*grants: Grant) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [g.statement() for g in grants]})


def _publish(
    block: pulumi.ComponentResource,
    outputs: Mapping[str, pulumi.Input[str]],
    policies: Mapping[str, Sequence[Grant]],
) -> None:
    """Set each ``<name>_policy_json`` the block hands out (an IAM policy document of its
    grants; "" for none) and register them with the block's other outputs."""
    for name, grants in policies.items():
        setattr(block, name, pulumi.Output.from_input(_policy(*grants) if grants else ""))
    block.register_outputs({**outputs, **{name: getattr(block, name) for name in policies}})


def _deployment(
    prefix: str,
    *,
    system: str,
    protect: bool,
    opts: pulumi.ResourceOptions | None,
    alarm_topic_arn: str = "",
) -> Deployment:
    """The block's context from the caller's provider: ARNs need the region and account."""
    provider = _aws_provider(opts)
    invoke = pulumi.InvokeOptions(provider=provider)
    region = aws.get_region(opts=invoke).region
    identity = aws.get_caller_identity(opts=invoke)
    partition = aws.get_partition(opts=invoke).partition
    return Deployment(
        prefix=prefix,
        environment="prod" if protect else "dev",
        system=system,
        region=region,
        account_id=identity.account_id,
        partition=partition,
        provider=None,  # children inherit the caller's provider from the component
        powertools_layer_arn="",
        monitoring=Monitoring(alarm_topic_arn=alarm_topic_arn, namespace=f"crm/{prefix}"),
    )


def _aws_provider(opts: pulumi.ResourceOptions | None) -> pulumi.ProviderResource | None:
    if opts is None:
        return None
    if isinstance(opts.provider, aws.Provider):
        return opts.provider
    providers = opts.providers
    found = providers.values() if isinstance(providers, dict) else (providers or [])
    return next((p for p in found if isinstance(p, aws.Provider)), None)


def _key(key: TableKey) -> Key:
    kind = key.get("type", AttributeType.S)
    return Key(key["name"], AttributeType(kind).value)


class GuardedTable(_GuardedTable):
    """An on-demand DynamoDB table with point-in-time recovery, encryption, optional TTL,
    indexes and stream; it hands out IAM policy documents scoped to its own ARNs."""

    table: aws.dynamodb.Table
    """The table."""
    table_name: pulumi.Output[str]
    """Its physical name, ``<prefix>-<name>``."""
    table_arn: pulumi.Output[str]
    """Its ARN."""
    read_policy_json: pulumi.Output[str]
    """GetItem, Query and BatchGetItem on the table and every index: attach to a reader's role."""
    write_policy_json: pulumi.Output[str]
    """PutItem and UpdateItem on the table (make them conditional): attach to a writer's role."""
    stream_policy_json: pulumi.Output[str]
    """What a stream event source mapping's role needs; empty when the table has no stream."""

    def __init__(
        self, resource_name: str, args: GuardedTableArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        protect = bool(args.get("protect_data", False))
        deployment = _deployment(
            args["prefix"], system=args.get("system", "shared"), protect=protect, opts=opts
        )
        stream = args.get("stream")
        block_args = _GuardedTableArgs(
            deployment=deployment,
            name=args["name"],
            partition_key=_key(args["partition_key"]),
            sort_key=_key(args["sort_key"]) if "sort_key" in args else None,
            indexes=tuple(
                Index(
                    i["name"],
                    _key(i["partition_key"]),
                    _key(i["sort_key"]) if "sort_key" in i else None,
                    tuple(i.get("projection", ())),
                )
                for i in args.get("indexes", [])
            ),
            ttl_attribute=args.get("ttl_attribute"),
            stream=StreamViewType(stream).value if stream else None,
            personal_data=None,  # the caller's program maps its own stores
        )
        super().__init__(resource_name, block_args, opts)
        indexes = [i.name for i in block_args.indexes]
        _publish(
            self,
            {"table_name": self.table_name, "table_arn": self.table_arn},
            {
                "read_policy_json": (self.grant_read(indexes=indexes),),
                "write_policy_json": (self.grant_conditional_write(),),
                "stream_policy_json": self.grant_stream_source(sid="Stream") if stream else (),
            },
        )


class WorkQueue(_WorkQueue):
    """An SQS queue with its dead-letter queue, SSE and a TLS-only queue policy, and depth and
    age alarms; it hands out IAM policy documents scoped to its own ARN."""

    queue: aws.sqs.Queue
    """The queue."""
    dlq: aws.sqs.Queue | None
    """Its dead-letter queue; none for a queue that is itself a dead-letter queue."""
    queue_url: pulumi.Output[str]
    """The queue's URL."""
    queue_arn: pulumi.Output[str]
    """The queue's ARN."""
    send_policy_json: pulumi.Output[str]
    """SendMessage on this queue: attach to a producer's role."""
    consume_policy_json: pulumi.Output[str]
    """What a Lambda SQS event source mapping's role needs on this queue."""

    def __init__(
        self, resource_name: str, args: WorkQueueArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        deployment = _deployment(
            args["prefix"],
            system=args.get("system", "shared"),
            protect=False,
            opts=opts,
            alarm_topic_arn=args.get("alarm_topic_arn", ""),
        )
        block_args = _WorkQueueArgs(
            deployment=deployment,
            name=args["name"],
            max_receive_count=args.get("max_receive_count", 5),
            visibility_timeout_s=args.get("visibility_timeout_seconds", 60),
            dead_letter=bool(args.get("dead_letter", False)),
            service_senders=tuple(
                ServiceSender(s["service"], s["source_arn"])
                for s in args.get("service_senders", [])
            ),
            personal_data=None,  # the caller's program maps its own stores
        )
        super().__init__(resource_name, block_args, opts)
        self.queue_arn = self.queue.arn
        _publish(
            self,
            {"queue_url": self.queue_url, "queue_arn": self.queue_arn},
            {
                "send_policy_json": (self.grant_send(),),
                "consume_policy_json": (self.grant_event_source(),),
            },
        )


COMPONENTS: list[type[pulumi.ComponentResource]] = [GuardedTable, WorkQueue]
"""What the package hosts (PulumiPlugin.yaml, ``__main__.py``)."""
