"""personal-data-retained: a store marked as holding personal data has an end.

What: a resource tagged ``crm:personal-data`` = ``held`` (the mark components/personal_data.py
puts on a store declared as holding personal data) must delete what it holds by itself:
- a DynamoDB table: TTL enabled on an attribute (``ttl.enabled`` and ``ttl.attributeName``);
- an S3 bucket: a BucketLifecycleConfiguration for it with an enabled rule expiring objects
  (``expiration.days``) and, when the bucket is versioned (a BucketVersioning ``Enabled``),
  an enabled rule expiring noncurrent versions (``noncurrentVersionExpiration.noncurrentDays``):
  S3's expiry of a current version only hides it behind a delete marker (S3 User Guide,
  "Expiring objects": https://docs.aws.amazon.com/AmazonS3/latest/userguide/lifecycle-expire-general-considerations.html);
- an SQS queue: ``messageRetentionSeconds`` set (at most 14 days: SQS refuses more);
- a CloudWatch log group: ``retentionInDays`` set (a group without it keeps logs forever).
A value other than ``held``, ``suppression`` or ``none`` is refused too, so a typo cannot hide
a store. ``suppression`` (an opt-out list, kept so the objection stays honoured) and ``none``
are not judged here.

Why: issue 42, "nothing personal without an end": UK GDPR's storage limitation (Art. 5(1)(e))
keeps personal data no longer than its purpose needs. A store kept forever by omission is the
usual way it is broken.

Fix: give the store its retention (GuardedTable's ``ttl_attribute`` and a handler that writes
it, PrivateBucket's ``expire_days`` and ``noncurrent_days``), or declare it ``Suppression`` or
``NoPersonalData`` if that is what it holds.
"""

from __future__ import annotations

from typing import Any, Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.graph import Stack
from policies.common.props import as_str, get_path
from policies.common.rule import stack_policy

NAME: Final = "personal-data-retained"
TAG: Final = "crm:personal-data"
MARKS: Final = ("held", "suppression", "none")
TABLE: Final = "aws:dynamodb/table:Table"
BUCKET: Final = "aws:s3/bucket:Bucket"
QUEUE: Final = "aws:sqs/queue:Queue"
LOG_GROUP: Final = "aws:cloudwatch/logGroup:LogGroup"
LIFECYCLE: Final = "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"
VERSIONING: Final = "aws:s3/bucketVersioning:BucketVersioning"


def _enabled_rules(stack: Stack, bucket: str) -> list[dict[str, Any]]:
    return [
        rule
        for node in stack.of_type(LIFECYCLE)
        if as_str(node.props.get("bucket")) == bucket
        for rule in node.props.get("rules") or []
        if isinstance(rule, dict) and rule.get("status") == "Enabled"
    ]


def _versioned(stack: Stack, bucket: str) -> bool:
    return any(
        as_str(node.props.get("bucket")) == bucket
        and get_path(node.props, "versioningConfiguration", "status") == "Enabled"
        for node in stack.of_type(VERSIONING)
    )


def _bucket_gaps(stack: Stack, bucket: str) -> list[str]:
    rules = _enabled_rules(stack, bucket)
    gaps = []
    if not any(get_path(rule, "expiration", "days") for rule in rules):
        gaps.append("no lifecycle rule expiring its objects")
    if _versioned(stack, bucket) and not any(
        get_path(rule, "noncurrentVersionExpiration", "noncurrentDays") for rule in rules
    ):
        gaps.append("versioned, with no lifecycle rule expiring noncurrent versions")
    return gaps


def _gaps(stack: Stack, resource_type: str, props: dict[str, Any]) -> list[str]:
    if resource_type == TABLE:
        on = get_path(props, "ttl", "enabled") is True and get_path(props, "ttl", "attributeName")
        return [] if on else ["no TTL"]
    if resource_type == QUEUE:
        return [] if props.get("messageRetentionSeconds") else ["no message retention"]
    if resource_type == LOG_GROUP:
        return [] if props.get("retentionInDays") else ["no log retention"]
    if resource_type == BUCKET:
        bucket = as_str(props.get("bucket"))
        return _bucket_gaps(stack, bucket) if bucket else ["no explicit bucket name to judge"]
    return []


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    stack = Stack(args.resources)
    for node in stack.of_type(TABLE, BUCKET, QUEUE, LOG_GROUP):
        tags = node.props.get("tags") or {}
        mark = tags.get(TAG) if isinstance(tags, dict) else None
        if mark is None:
            continue
        kind = node.resource_type.split(":")[-1]
        label = f"{kind} {node.props.get('name') or node.props.get('bucket') or node.name}"
        if mark not in MARKS:
            report(f"{label}: {TAG} is {mark!r}, not one of {', '.join(MARKS)}", node.urn)
            continue
        if mark != "held":
            continue
        for gap in _gaps(stack, node.resource_type, dict(node.props)):
            report(f"{label} holds personal data with {gap}: nothing personal without an end", node.urn)


POLICY: Final = stack_policy(
    NAME,
    "A store tagged as holding personal data has an end (TTL, lifecycle with noncurrent "
    "expiry, message or log retention).",
    _validate,
    remediation="Give the store its retention, or declare it a suppression list or as holding "
    "nothing personal.",
)
