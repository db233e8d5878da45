"""Create the graph's data plane in the emulator: tables, queues, buckets, topics, secrets,
SES identities and receipt rules, schedule groups, schedules and event rules.

Everything is created from the ``Topology`` specs, in each resource's own region, with the
settings the program declared (keys and GSIs, TTL, streams, DLQ redrive, versioning...).
Functions are not created in the emulator (moto would need Docker to run them): the sandbox
runs them in-process. Secrets are created empty, as the program creates them; a scenario sets
local demo values the way an operator would.

Over an existing state (``existing``: ``make upgrade-check``, the new release's ``pulumi up``)
what exists is kept, as an update keeps it: tables with their items, queues with their
messages, secrets with the values set, one-off schedules; queue attributes and the declared
schedules are updated to the new release's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from botocore.exceptions import ClientError

from components.offline.engine import gsi_keys
from components.secret_slot import PLACEHOLDER
from sandbox.graph import Topology

ClientFactory = Callable[[str, str], Any]


@dataclass
class DeployReport:
    """What was created, and what could not be (with the emulator's reason)."""

    created: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, name, region)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, name, reason)
    kept: list[tuple[str, str]] = field(default_factory=list)  # (kind, name) found existing

    def count(self, kind: str) -> int:
        return sum(1 for k, _, _ in self.created if k == kind)


_EXISTS = frozenset(
    {
        "ResourceInUseException",  # dynamodb
        "ResourceExistsException",  # secretsmanager
        "ParameterAlreadyExists",  # ssm
        "BucketAlreadyOwnedByYou",  # s3
        "BucketAlreadyExists",
        "AlreadyExistsException",  # sesv2
        "ConflictException",  # scheduler
        "QueueAlreadyExists",  # sqs, other attributes
        "QueueNameExists",
    }
)


def deploy(topology: Topology, client: ClientFactory, *, existing: bool = False) -> DeployReport:
    """Create every declared data-plane resource (keeping what exists, with ``existing``);
    return what happened."""
    report = DeployReport()

    @contextmanager
    def kept(kind: str, name: str, update: Callable[[], object] | None = None) -> Iterator[None]:
        try:
            yield
        except ClientError as err:
            if not existing or err.response.get("Error", {}).get("Code") not in _EXISTS:
                raise
            if update is not None:
                update()
            report.kept.append((kind, name))

    _tables(topology, client, report, kept)
    _queues(topology, client, report, kept)
    _buckets(topology, client, report, kept, existing=existing)
    for name, region in topology.topics:
        client("sns", region).create_topic(Name=name)
        report.created.append(("topic", name, region))
    for name, region, description in topology.secrets:
        with kept("secret", name):  # a value the operator set survives the update
            if name in topology.parameters:  # what `pulumi up` writes: the placeholder, version 1
                client("ssm", region).put_parameter(
                    Name=name, Description=description, Value=PLACEHOLDER, Type="SecureString"
                )
            else:
                client("secretsmanager", region).create_secret(Name=name, Description=description)
            report.created.append(("secret", name, region))
    for identity, region in topology.identities:
        with kept("ses-identity", identity):
            client("sesv2", region).create_email_identity(EmailIdentity=identity)
            report.created.append(("ses-identity", identity, region))
    _receipt_rules(topology, client, report)
    for name, region in topology.schedule_groups:
        scheduler = client("scheduler", region)
        # moto replaces an existing group (and drops its schedules) where AWS refuses: look first.
        if existing and _exists(partial(scheduler.get_schedule_group, Name=name)):
            report.kept.append(("schedule-group", name))
            continue
        scheduler.create_schedule_group(Name=name)
        report.created.append(("schedule-group", name, region))
    for s in topology.schedules:
        schedule: dict[str, Any] = {
            "Name": s.name,
            "GroupName": s.group,
            "ScheduleExpression": s.expression,
            "ScheduleExpressionTimezone": s.timezone,
            "FlexibleTimeWindow": {"Mode": "OFF"},
            "Target": {"Arn": s.target_arn, "RoleArn": s.role_arn, "Input": s.input},
        }
        scheduler = client("scheduler", s.region)
        with kept("schedule", s.name, partial(scheduler.update_schedule, **schedule)):
            scheduler.create_schedule(**schedule)
            report.created.append(("schedule", s.name, s.region))
    for rule in topology.rules:
        client("events", rule.region).put_rule(
            Name=rule.name, EventBusName=rule.bus, EventPattern=json.dumps(rule.pattern)
        )
        report.created.append(("event-rule", rule.name, rule.region))
    return report


Kept = Callable[..., Any]
"""``deploy``'s ``kept(kind, name, update=None)`` context: an existing resource kept (updated)."""


def _tables(topology: Topology, client: ClientFactory, report: DeployReport, kept: Kept) -> None:
    for t in topology.tables:
        keys = [{"AttributeName": t.hash_key, "KeyType": "HASH"}]
        if t.range_key:
            keys.append({"AttributeName": t.range_key, "KeyType": "RANGE"})
        args: dict[str, Any] = {
            "TableName": t.name,
            "KeySchema": keys,
            "AttributeDefinitions": [
                {"AttributeName": n, "AttributeType": v} for n, v in t.attributes.items()
            ],
            "BillingMode": "PAY_PER_REQUEST",
        }
        if t.indexes:
            args["GlobalSecondaryIndexes"] = [_index(i) for i in t.indexes]
        if t.stream_view:
            args["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": t.stream_view}
        ddb = client("dynamodb", t.region)
        with kept("table", t.name):
            ddb.create_table(**args)
            if t.ttl_attribute:
                ddb.update_time_to_live(
                    TableName=t.name,
                    TimeToLiveSpecification={"Enabled": True, "AttributeName": t.ttl_attribute},
                )
            report.created.append(("table", t.name, t.region))


def _index(spec: dict[str, Any]) -> dict[str, Any]:
    partition, sort = gsi_keys(spec)
    keys = [{"AttributeName": partition, "KeyType": "HASH"}]
    if sort:
        keys.append({"AttributeName": sort, "KeyType": "RANGE"})
    projection: dict[str, Any] = {"ProjectionType": spec.get("projectionType") or "ALL"}
    if spec.get("nonKeyAttributes"):
        projection["NonKeyAttributes"] = list(spec["nonKeyAttributes"])
    return {"IndexName": spec["name"], "KeySchema": keys, "Projection": projection}


def _queues(topology: Topology, client: ClientFactory, report: DeployReport, kept: Kept) -> None:
    # Dead-letter queues first, so every redrive policy names an existing queue.
    ordered = sorted(topology.queues, key=lambda q: q.dead_letter_arn is not None)
    for q in ordered:
        attributes = {"VisibilityTimeout": str(q.visibility_timeout_s)}
        if q.fifo:
            attributes["FifoQueue"] = "true"
        if q.dead_letter_arn:
            attributes["RedrivePolicy"] = json.dumps(
                {"deadLetterTargetArn": q.dead_letter_arn, "maxReceiveCount": q.max_receive_count}
            )
        sqs = client("sqs", q.region)
        with kept("queue", q.name, partial(_set_attributes, sqs, q.name, attributes)):
            sqs.create_queue(QueueName=q.name, Attributes=attributes)
            report.created.append(("queue", q.name, q.region))


def _exists(describe: Callable[[], object]) -> bool:
    try:
        describe()
    except ClientError:
        return False
    return True


def _set_attributes(sqs: Any, name: str, attributes: dict[str, str]) -> None:
    sqs.set_queue_attributes(QueueUrl=sqs.get_queue_url(QueueName=name)["QueueUrl"], Attributes=attributes)


def _buckets(
    topology: Topology, client: ClientFactory, report: DeployReport, kept: Kept, *, existing: bool
) -> None:
    for b in topology.buckets:
        s3 = client("s3", b.region)
        if existing and _exists(partial(s3.head_bucket, Bucket=b.name)):  # as for groups above
            report.kept.append(("bucket", b.name))
            continue
        with kept("bucket", b.name):
            if b.region == "us-east-1":
                s3.create_bucket(Bucket=b.name)
            else:
                s3.create_bucket(
                    Bucket=b.name, CreateBucketConfiguration={"LocationConstraint": b.region}
                )
        if b.versioned:
            s3.put_bucket_versioning(Bucket=b.name, VersioningConfiguration={"Status": "Enabled"})
        report.created.append(("bucket", b.name, b.region))


def _receipt_rules(topology: Topology, client: ClientFactory, report: DeployReport) -> None:
    made: set[tuple[str, str]] = set()
    for rule in topology.receipt_rules:
        ses = client("ses", rule.region)
        try:
            if (rule.rule_set, rule.region) not in made:
                ses.create_receipt_rule_set(RuleSetName=rule.rule_set)
                made.add((rule.rule_set, rule.region))
            ses.create_receipt_rule(
                RuleSetName=rule.rule_set,
                Rule={
                    "Name": rule.name,
                    "Enabled": True,
                    "Recipients": list(rule.recipients),
                    "Actions": [
                        {"S3Action": {"BucketName": b, "ObjectKeyPrefix": p}}
                        for b, p in rule.s3_actions
                    ],
                },
            )
            if rule.active:
                ses.set_active_receipt_rule_set(RuleSetName=rule.rule_set)
            report.created.append(("receipt-rule", rule.name, rule.region))
        except Exception as err:  # moto's SES v1 receipt rules are partial; the lane still works
            report.skipped.append(("receipt-rule", rule.name, str(err)))
