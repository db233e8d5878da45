"""GuardedTable: an on-demand DynamoDB table that hands out grants scoped to itself.

"Guarded" because the documents' concurrency story is a condition expression rather than a
lock: the table offers ``conditional_write`` grants and the handlers use conditional writes.
Point-in-time recovery is always on; deletion protection is on in prod.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from components.deployment import Deployment
from components.grants import Grant
from components.personal_data import Holding, component_inputs, tags
from handlers.common.degradations import key as degradation_key
from handlers.common.spend import Kind
from handlers.common.spend import key_prefix as spend_key_prefix
from handlers.common.tables import Index, Key, KeyType, StreamView, TableSpec

__all__ = ["GuardedTable", "GuardedTableArgs", "Index", "Key", "KeyType", "StreamView"]

READ_ACTIONS = ("dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem")
STREAM_READ_ACTIONS = (
    "dynamodb:DescribeStream",
    "dynamodb:GetRecords",
    "dynamodb:GetShardIterator",
)
LIST_STREAMS = "dynamodb:ListStreams"
"""The fourth action a DynamoDB-stream event source mapping needs. It accepts no resource ARN
(Service Authorization Reference), so it is granted on ``"*"``, as AWS's own
``AWSLambdaDynamoDBExecutionRole`` does."""


@dataclass(frozen=True)
class GuardedTableArgs:
    """Arguments of :class:`GuardedTable`.

    Attributes:
        deployment: Where the table lives.
        name: The document's table name (physical name is ``<prefix>-<name>``).
        partition_key: The partition key.
        sort_key: Optional sort key.
        indexes: Global secondary indexes.
        ttl_attribute: Attribute holding an epoch-seconds expiry; None for "never expires".
        stream: Stream view type, or None for no stream.
        personal_data: What the items hold about people (components/personal_data.py);
            required, None only for a table this program does not map (the package).
    """

    deployment: Deployment
    name: str
    partition_key: Key
    sort_key: Key | None = None
    indexes: Sequence[Index] = field(default_factory=tuple)
    ttl_attribute: str | None = None
    stream: StreamView | None = None
    personal_data: Holding | None = field(kw_only=True)

    @classmethod
    def of(
        cls, deployment: Deployment, spec: TableSpec, personal_data: Holding
    ) -> GuardedTableArgs:
        """The arguments of a table a system's contract declares."""
        return cls(
            deployment,
            spec.name,
            spec.partition_key,
            spec.sort_key,
            spec.indexes,
            spec.ttl_attribute,
            spec.stream,
            personal_data=personal_data,
        )


class GuardedTable(pulumi.ComponentResource):
    """On-demand DynamoDB table with PITR, optional TTL, GSIs and stream."""

    table: aws.dynamodb.Table
    table_name: pulumi.Output[str]
    table_arn: pulumi.Output[str]

    def __init__(
        self, resource_name: str, args: GuardedTableArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(
            "crm:index:GuardedTable", resource_name, component_inputs(args.personal_data), opts
        )
        d = args.deployment
        self.args = args
        self.physical_name = d.name(args.name)
        self.arn = d.arns.table(self.physical_name)

        attributes: dict[str, str] = {}
        for key in self._all_keys():
            if attributes.setdefault(key.name, key.type) != key.type:
                raise ValueError(f"table {args.name}: key {key.name} declared with two types")

        self.table = aws.dynamodb.Table(
            resource_name,
            name=self.physical_name,
            billing_mode="PAY_PER_REQUEST",
            hash_key=args.partition_key.name,
            range_key=args.sort_key.name if args.sort_key else None,
            attributes=[
                aws.dynamodb.TableAttributeArgs(name=n, type=t)
                for n, t in sorted(attributes.items())
            ],
            global_secondary_indexes=[
                aws.dynamodb.TableGlobalSecondaryIndexArgs(
                    name=index.name,
                    key_schemas=[
                        aws.dynamodb.TableGlobalSecondaryIndexKeySchemaArgs(
                            attribute_name=key.name, key_type=kind
                        )
                        for key, kind in ((index.partition_key, "HASH"), (index.sort_key, "RANGE"))
                        if key is not None
                    ],
                    projection_type="INCLUDE" if index.projection else "ALL",
                    non_key_attributes=list(index.projection) or None,
                )
                for index in args.indexes
            ]
            or None,
            ttl=aws.dynamodb.TableTtlArgs(attribute_name=args.ttl_attribute, enabled=True)
            if args.ttl_attribute
            else None,
            stream_enabled=args.stream is not None,
            stream_view_type=args.stream,
            point_in_time_recovery=aws.dynamodb.TablePointInTimeRecoveryArgs(enabled=True),
            server_side_encryption=aws.dynamodb.TableServerSideEncryptionArgs(enabled=True),
            deletion_protection_enabled=d.protect_data,
            tags=d.resource_tags(**{"crm:table": args.name}, **tags(args.personal_data)),
            opts=pulumi.ResourceOptions(parent=self, protect=d.protect_data),
        )
        self.table_name = self.table.name
        self.table_arn = self.table.arn
        self.stream_arn = self.table.stream_arn
        self.register_outputs({"table_name": self.table_name, "table_arn": self.table_arn})

    def _all_keys(self) -> list[Key]:
        keys = [self.args.partition_key] + ([self.args.sort_key] if self.args.sort_key else [])
        for index in self.args.indexes:
            keys.append(index.partition_key)
            if index.sort_key:
                keys.append(index.sort_key)
        return keys

    # Grants -------------------------------------------------------------------------------

    def index_arn(self, index: str) -> str:
        if index not in {i.name for i in self.args.indexes}:
            raise ValueError(f"table {self.args.name} has no index {index!r}")
        return self.args.deployment.arns.table_index(self.physical_name, index)

    def grant(self, *actions: str, indexes: Sequence[str] = (), sid: str | None = None) -> Grant:
        """Named DynamoDB actions on this table (and, for reads, the named indexes)."""
        for action in actions:
            if not action.startswith("dynamodb:"):
                raise ValueError(f"table {self.args.name}: {action!r} is not a DynamoDB action")
        resources = (self.arn, *(self.index_arn(i) for i in indexes))
        return Grant(sid or self._sid(actions), tuple(actions), resources)

    def grant_read(self, *, indexes: Sequence[str] = (), sid: str | None = None) -> Grant:
        """GetItem, Query and BatchGetItem on the table and the named indexes."""
        return self.grant(*READ_ACTIONS, indexes=indexes, sid=sid or self._sid(("Read",)))

    def grant_conditional_write(self, *, update: bool = True, sid: str | None = None) -> Grant:
        """PutItem (and UpdateItem): the handlers make these writes conditional."""
        actions = ("dynamodb:PutItem", "dynamodb:UpdateItem") if update else ("dynamodb:PutItem",)
        return self.grant(*actions, sid=sid or self._sid(("Write",)))

    def grant_degradation_items(
        self, action: str, notes: Sequence[tuple[str, str]], *, sid: str
    ) -> Grant:
        """One action on the degradation items of these (kind, function) pairs only
        (handlers/common/degradations.py names their keys):
        ``dynamodb:LeadingKeys`` limits the request to these partition keys (DynamoDB
        Developer Guide, "Using IAM policy conditions for fine-grained access control":
        https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html)."""
        keys = [degradation_key(kind, function) for kind, function in notes]
        if action not in {"dynamodb:UpdateItem", "dynamodb:GetItem"} or not keys:
            raise ValueError(f"table {self.args.name}: a degradation grant is one UpdateItem or GetItem on named keys")
        return Grant(
            sid,
            (action,),
            (self.arn,),
            {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": sorted(keys)}},
        )

    def grant_items_under(self, action: str, key_prefix: str, *, sid: str) -> Grant:
        """One item action on the items whose partition key starts with ``key_prefix`` only
        (``dynamodb:LeadingKeys`` with ``StringLike``, same page as above): markers a function
        keeps beside the table's business items without reaching them."""
        if action not in {"dynamodb:PutItem", "dynamodb:GetItem", "dynamodb:DeleteItem", "dynamodb:UpdateItem"}:
            raise ValueError(f"table {self.args.name}: a prefixed-items grant is one item action")
        if not key_prefix or "*" in key_prefix or "?" in key_prefix:
            raise ValueError(f"table {self.args.name}: the key prefix is literal and not empty")
        return Grant(
            sid,
            (action,),
            (self.arn,),
            {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"{key_prefix}*"]}},
        )

    def grant_spend(self, kind: Kind, *, sid: str) -> Grant:
        """UpdateItem on the daily counters of one kind of paid call only
        (handlers/common/spend.py: ``spend#<kind>#<day>``), for a function that spends it."""
        return self.grant_items_under("dynamodb:UpdateItem", spend_key_prefix(kind), sid=sid)

    def grant_stream_read(self, *, sid: str | None = None) -> Grant:
        """Read this table's stream (for a DynamoDB-stream event source)."""
        if self.args.stream is None:
            raise ValueError(f"table {self.args.name} has no stream")
        return Grant(
            sid or self._sid(("Stream",)),
            STREAM_READ_ACTIONS,
            (self.args.deployment.arns.table_streams(self.physical_name),),
        )

    def grant_stream_source(self, *, sid: str) -> tuple[Grant, Grant]:
        """What a DynamoDB-stream event source mapping's function role must hold.

        Lambda Developer Guide, "Using AWS Lambda with Amazon DynamoDB" (execution role
        permissions: ``dynamodb:DescribeStream``, ``GetRecords``, ``GetShardIterator``,
        ``ListStreams``) and the ``AWSLambdaDynamoDBExecutionRole`` managed policy:
        https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html
        """
        return (
            self.grant_stream_read(sid=sid),
            Grant(f"{sid}List", (LIST_STREAMS,), ("*",)),
        )

    def _sid(self, actions: Sequence[str]) -> str:
        words = [a.split(":")[-1] for a in actions]
        table = "".join(part.capitalize() for part in self.args.name.replace("_", "-").split("-"))
        return table + ("".join(words) if len(words) < 3 else "Access")
