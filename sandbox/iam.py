"""Identity-policy evaluation: may this function's role make this AWS call?

Each AWS call a handler makes is turned into the IAM requirements AWS would check (action and
resource ARN, plus a few condition keys), and each requirement is evaluated against the
statements of the function's own role policy, read from the program's graph: an explicit Deny
wins, then any Allow whose Action, Resource and Condition match, else the call is denied, as in
AWS. Wildcards ``*`` and ``?`` match as IAM matches them (actions case-insensitively, ARNs
case-sensitively).

What is not modelled: resource-based policies (bucket, queue, key policies), permission
boundaries, SCPs, session policies, and condition keys this module does not supply (such a
condition is treated as satisfied and reported in ``Decision.unevaluated``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import parseaddr
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from components.offline.engine import ACCOUNT_ID


@dataclass(frozen=True)
class Requirement:
    """One permission a call needs: an action on a resource (None: the resource is unknown)."""

    action: str
    resource: str | None
    context: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Decision:
    """The outcome for one requirement."""

    allowed: bool
    requirement: Requirement
    statement: str | None = None
    explicit_deny: bool = False
    unevaluated: tuple[str, ...] = ()


@lru_cache(maxsize=4096)
def _pattern(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    regex = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    flags = (re.IGNORECASE | re.DOTALL) if ignore_case else re.DOTALL
    return re.compile(f"^{regex}$", flags)


def wildcard_match(pattern: str, value: str, *, ignore_case: bool = False) -> bool:
    """IAM's wildcard match: ``*`` any run of characters, ``?`` any one character."""
    return bool(_pattern(pattern, ignore_case).match(value))


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def _action_matches(statement: Mapping[str, Any], action: str) -> bool:
    if "NotAction" in statement:
        return not any(
            wildcard_match(p, action, ignore_case=True) for p in _as_list(statement["NotAction"])
        )
    return any(
        wildcard_match(p, action, ignore_case=True) for p in _as_list(statement.get("Action"))
    )


def _resource_matches(statement: Mapping[str, Any], resource: str | None) -> bool:
    if resource is None:
        # The resource of this call cannot be named: any statement allowing the action counts.
        return True
    if "NotResource" in statement:
        return not any(wildcard_match(p, resource) for p in _as_list(statement["NotResource"]))
    return any(wildcard_match(p, resource) for p in _as_list(statement.get("Resource")))


def _compare(operator: str, wanted: list[str], actual: str) -> bool:
    op = operator
    if op in ("StringEquals", "ArnEquals"):
        return actual in wanted
    if op == "StringEqualsIgnoreCase":
        return actual.lower() in {w.lower() for w in wanted}
    if op in ("StringLike", "ArnLike"):
        return any(wildcard_match(w, actual) for w in wanted)
    if op == "Bool":
        return actual.lower() in {w.lower() for w in wanted}
    if op.startswith("Numeric"):
        number = float(actual)
        checks = {
            "NumericEquals": lambda w: number == w,
            "NumericLessThan": lambda w: number < w,
            "NumericLessThanEquals": lambda w: number <= w,
            "NumericGreaterThan": lambda w: number > w,
            "NumericGreaterThanEquals": lambda w: number >= w,
        }
        return any(checks[op](float(w)) for w in wanted)
    raise KeyError(op)


_NEGATED = {
    "StringNotEquals": "StringEquals",
    "StringNotEqualsIgnoreCase": "StringEqualsIgnoreCase",
    "StringNotLike": "StringLike",
    "ArnNotEquals": "ArnEquals",
    "ArnNotLike": "ArnLike",
    "NumericNotEquals": "NumericEquals",
}


def _conditions(
    statement: Mapping[str, Any], context: Mapping[str, Any]
) -> tuple[bool, tuple[str, ...]]:
    """Whether the statement's Condition block holds, and the keys it could not evaluate."""
    unevaluated: list[str] = []
    lowered = {k.lower(): v for k, v in context.items()}
    for raw_operator, entries in (statement.get("Condition") or {}).items():
        qualifier, _, operator = raw_operator.rpartition(":")
        if_exists = operator.endswith("IfExists")
        operator = operator.removesuffix("IfExists")
        for key, wanted_raw in entries.items():
            wanted = _as_list(wanted_raw)
            if key.lower() not in lowered:
                if operator == "Null":
                    if "true" not in [w.lower() for w in wanted]:
                        unevaluated.append(key)
                    continue
                if not if_exists:
                    unevaluated.append(key)
                continue
            value = lowered[key.lower()]
            values = [str(v) for v in value] if isinstance(value, list | tuple) else [str(value)]
            if operator == "Null":
                if "true" in [w.lower() for w in wanted]:
                    return False, tuple(unevaluated)
                continue
            negated = operator in _NEGATED
            base = _NEGATED.get(operator, operator)
            try:
                results = [_compare(base, wanted, v) for v in values]
            except KeyError:
                unevaluated.append(f"{raw_operator}:{key}")
                continue
            if negated:
                results = [not r for r in results]
            holds = all(results) if qualifier == "ForAllValues" else any(results)
            if not holds:
                return False, tuple(unevaluated)
    return True, tuple(unevaluated)


def evaluate(statements: Sequence[Mapping[str, Any]], requirement: Requirement) -> Decision:
    """Evaluate one requirement against a role's identity-policy statements."""
    allow: Decision | None = None
    for statement in statements:
        if not _action_matches(statement, requirement.action):
            continue
        if not _resource_matches(statement, requirement.resource):
            continue
        holds, unevaluated = _conditions(statement, requirement.context)
        if not holds:
            continue
        sid = statement.get("Sid")
        if statement.get("Effect") == "Deny":
            return Decision(False, requirement, sid, explicit_deny=True, unevaluated=unevaluated)
        if allow is None:
            allow = Decision(True, requirement, sid, unevaluated=unevaluated)
    return allow or Decision(False, requirement)


def denial_message(role: str, session: str, decision: Decision) -> str:
    """The message AWS gives for an identity-policy denial."""
    req = decision.requirement
    why = (
        "with an explicit deny in an identity-based policy"
        if decision.explicit_deny
        else f"because no identity-based policy allows the {req.action} action"
    )
    return (
        f"User: arn:aws:sts::{ACCOUNT_ID}:assumed-role/{role}/{session} is not authorized to "
        f"perform: {req.action} on resource: {req.resource or '*'} {why}"
    )


# Requirements of a call -------------------------------------------------------------------

_GEOGRAPHIES = ("global.", "us.", "eu.", "apac.", "jp.", "au.")


def _bedrock_resources(model_id: str, region: str) -> list[str]:
    if model_id.startswith("arn:"):
        return [model_id]
    for geography in _GEOGRAPHIES:
        if model_id.startswith(geography):
            base = model_id.removeprefix(geography)
            found = [
                f"arn:aws:bedrock:{region}:{ACCOUNT_ID}:inference-profile/{model_id}",
                f"arn:aws:bedrock:{region}::foundation-model/{base}",
            ]
            if geography == "global.":
                found.append(f"arn:aws:bedrock:::foundation-model/{base}")
            return found
    return [f"arn:aws:bedrock:{region}::foundation-model/{model_id}"]


def _queue_arn(url_or_name: str, region: str) -> str:
    if url_or_name.startswith("arn:"):
        return url_or_name
    parts = urlsplit(url_or_name)
    name = parts.path.rstrip("/").rsplit("/", 1)[-1] if parts.scheme else url_or_name
    host = parts.hostname or ""
    match = re.match(r"^sqs\.([a-z0-9-]+)\.amazonaws\.com", host)
    queue_region = match.group(1) if match else region
    return f"arn:aws:sqs:{queue_region}:{ACCOUNT_ID}:{name}"


def _table_arn(name: str, region: str, index: str | None = None) -> str:
    base = (
        name if name.startswith("arn:") else f"arn:aws:dynamodb:{region}:{ACCOUNT_ID}:table/{name}"
    )
    return f"{base}/index/{index}" if index else base


def _secret_arn(secret_id: str, region: str) -> str:
    if secret_id.startswith("arn:"):
        return secret_id
    # Secrets Manager appends "-" and six random characters to the name.
    return f"arn:aws:secretsmanager:{region}:{ACCOUNT_ID}:secret:{secret_id}-Sbx0Ab"


def _sms_identity_arn(identity: str, region: str) -> str | None:
    if identity.startswith("arn:"):
        return identity
    prefix = f"arn:aws:sms-voice:{region}:{ACCOUNT_ID}:"
    if "/" in identity:  # "pool/pool-..." as the stack config spells it
        return prefix + identity
    for start, kind in (("pool-", "pool"), ("phone-", "phone-number"), ("sender-", "sender-id")):
        if identity.startswith(start):
            return f"{prefix}{kind}/{identity}"
    return None


def ses_identity_arn(address: str, region: str, identities: Iterable[str]) -> str:
    """The identity AWS authorises a send against: the address if it is an identity, else
    its domain."""
    email = parseaddr(address)[1] or address
    known = {i.lower() for i in identities}
    identity = email if email.lower() in known else email.rpartition("@")[2]
    return f"arn:aws:ses:{region}:{ACCOUNT_ID}:identity/{identity}"


_S3_OBJECT_ACTIONS = {
    "HeadObject": "GetObject",
    "CreateMultipartUpload": "PutObject",
    "UploadPart": "PutObject",
    "CompleteMultipartUpload": "PutObject",
    "AbortMultipartUpload": "AbortMultipartUpload",
    "GetObjectAttributes": "GetObjectAttributes",
}
_S3_BUCKET_ACTIONS = {
    "ListObjectsV2": "ListBucket",
    "ListObjects": "ListBucket",
    "HeadBucket": "ListBucket",
    "ListObjectVersions": "ListBucketVersions",
    "ListMultipartUploads": "ListBucketMultipartUploads",
    "GetBucketNotificationConfiguration": "GetBucketNotification",
    "PutBucketNotificationConfiguration": "PutBucketNotification",
}
_BATCH_ALIASES = {
    "sqs": {
        "SendMessageBatch": "SendMessage",
        "DeleteMessageBatch": "DeleteMessage",
        "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
    },
    "sns": {"PublishBatch": "Publish"},
}


def requirements(
    service: str,
    operation: str,
    params: Mapping[str, Any],
    region: str,
    *,
    ses_identities: Iterable[str] = (),
) -> list[Requirement]:
    """What IAM checks for ``operation`` of ``service`` (the IAM prefix) with ``params``."""
    p = params
    base = {"aws:RequestedRegion": region, "aws:SecureTransport": "true"}

    def req(action: str, resource: str | None, **extra: Any) -> Requirement:
        return Requirement(action, resource, {**base, **extra})

    if service == "sts" and operation == "GetCallerIdentity":
        return []
    if service == "dynamodb":
        if operation in ("BatchGetItem", "BatchWriteItem"):
            return [
                req(f"dynamodb:{operation}", _table_arn(t, region))
                for t in p.get("RequestItems", {})
            ]
        if operation in ("TransactWriteItems", "TransactGetItems"):
            kinds = {
                "Put": "PutItem",
                "Update": "UpdateItem",
                "Delete": "DeleteItem",
                "ConditionCheck": "ConditionCheckItem",
                "Get": "GetItem",
            }
            found = []
            for item in p.get("TransactItems", []):
                for kind, body in item.items():
                    found.append(
                        req(f"dynamodb:{kinds[kind]}", _table_arn(body["TableName"], region))
                    )
            return found
        if "StreamArn" in p:
            return [req(f"dynamodb:{operation}", str(p["StreamArn"]))]
        if "TableName" in p:
            return [
                req(f"dynamodb:{operation}", _table_arn(p["TableName"], region, p.get("IndexName")))
            ]
        return [req(f"dynamodb:{operation}", None)]
    if service == "s3":
        bucket = p.get("Bucket")
        if operation == "CopyObject":
            source = p.get("CopySource")
            if isinstance(source, Mapping):
                source_arn = f"arn:aws:s3:::{source.get('Bucket')}/{source.get('Key')}"
            else:
                source_arn = "arn:aws:s3:::" + str(source).lstrip("/").split("?", 1)[0]
            return [
                req("s3:GetObject", source_arn),
                req("s3:PutObject", f"arn:aws:s3:::{bucket}/{p.get('Key')}"),
            ]
        if operation == "DeleteObjects":
            return [
                req("s3:DeleteObject", f"arn:aws:s3:::{bucket}/{o['Key']}")
                for o in p.get("Delete", {}).get("Objects", [])
            ]
        if "Key" in p:
            action = _S3_OBJECT_ACTIONS.get(operation, operation)
            if p.get("VersionId") and action in ("GetObject", "DeleteObject", "GetObjectTagging"):
                action = action.replace("Object", "ObjectVersion", 1)
            return [req(f"s3:{action}", f"arn:aws:s3:::{bucket}/{p['Key']}")]
        if bucket:
            action = _S3_BUCKET_ACTIONS.get(operation, operation)
            extra = {"s3:prefix": p["Prefix"]} if "Prefix" in p else {}
            return [req(f"s3:{action}", f"arn:aws:s3:::{bucket}", **extra)]
        return [req(f"s3:{operation}", None)]
    if service == "sqs":
        action = _BATCH_ALIASES["sqs"].get(operation, operation)
        if "QueueUrl" in p:
            return [req(f"sqs:{action}", _queue_arn(str(p["QueueUrl"]), region))]
        if "QueueName" in p:
            return [req(f"sqs:{action}", _queue_arn(str(p["QueueName"]), region))]
        return [req(f"sqs:{action}", None)]
    if service == "sns":
        action = _BATCH_ALIASES["sns"].get(operation, operation)
        target = p.get("TopicArn") or p.get("TargetArn")
        if operation == "Publish" and p.get("PhoneNumber"):
            return [req("sns:Publish", "*")]
        return [req(f"sns:{action}", str(target) if target else None)]
    if service == "secretsmanager":
        if "SecretId" in p:
            return [req(f"secretsmanager:{operation}", _secret_arn(str(p["SecretId"]), region))]
        return [req(f"secretsmanager:{operation}", None)]
    if service == "events":
        if operation == "PutEvents":
            found = []
            for entry in p.get("Entries", []):
                bus = str(entry.get("EventBusName") or "default")
                arn = (
                    bus
                    if bus.startswith("arn:")
                    else f"arn:aws:events:{region}:{ACCOUNT_ID}:event-bus/{bus}"
                )
                found.append(
                    req(
                        "events:PutEvents",
                        arn,
                        **{
                            "events:source": entry.get("Source", ""),
                            "events:detail-type": entry.get("DetailType", ""),
                        },
                    )
                )
            return found
        return [req(f"events:{operation}", None)]
    if service == "scheduler":
        found = []
        if "Name" in p and operation.endswith("Schedule"):
            group = str(p.get("GroupName") or "default")
            found.append(
                req(
                    f"scheduler:{operation}",
                    f"arn:aws:scheduler:{region}:{ACCOUNT_ID}:schedule/{group}/{p['Name']}",
                )
            )
        elif "Name" in p and operation.endswith("ScheduleGroup"):
            found.append(
                req(
                    f"scheduler:{operation}",
                    f"arn:aws:scheduler:{region}:{ACCOUNT_ID}:schedule-group/{p['Name']}",
                )
            )
        else:
            found.append(req(f"scheduler:{operation}", None))
        role = (p.get("Target") or {}).get("RoleArn")
        if operation in ("CreateSchedule", "UpdateSchedule") and role:
            found.append(
                req("iam:PassRole", str(role), **{"iam:PassedToService": "scheduler.amazonaws.com"})
            )
        return found
    if service == "ses":
        if operation in ("SendEmail", "SendRawEmail", "SendTemplatedEmail", "SendBulkEmail"):
            sender = (
                p.get("FromEmailAddressIdentityArn")
                or p.get("SourceArn")
                or p.get("FromArn")
                or None
            )
            address = str(p.get("FromEmailAddress") or p.get("Source") or "")
            identity = str(sender) if sender else ses_identity_arn(address, region, ses_identities)
            raw = operation == "SendRawEmail"
            found = [
                req(
                    "ses:SendRawEmail" if raw else "ses:SendEmail",
                    identity,
                    **{"ses:FromAddress": parseaddr(address)[1] or address},
                )
            ]
            config_set = p.get("ConfigurationSetName")
            if config_set:
                found.append(
                    req(
                        "ses:SendRawEmail" if raw else "ses:SendEmail",
                        f"arn:aws:ses:{region}:{ACCOUNT_ID}:configuration-set/{config_set}",
                    )
                )
            return found
        return [req(f"ses:{operation}", None)]
    if service == "sms-voice":
        if operation == "SendTextMessage":
            found = [
                req(
                    "sms-voice:SendTextMessage",
                    _sms_identity_arn(str(p.get("OriginationIdentity") or ""), region),
                )
            ]
            if p.get("ConfigurationSetName"):
                found.append(
                    req(
                        "sms-voice:SendTextMessage",
                        f"arn:aws:sms-voice:{region}:{ACCOUNT_ID}:configuration-set/{p['ConfigurationSetName']}",
                    )
                )
            return found
        return [req(f"sms-voice:{operation}", None)]
    if service == "bedrock":
        action = {
            "Converse": "InvokeModel",
            "ConverseStream": "InvokeModelWithResponseStream",
        }.get(operation, operation)
        model = p.get("modelId")
        if model:
            return [req(f"bedrock:{action}", arn) for arn in _bedrock_resources(str(model), region)]
        return [req(f"bedrock:{action}", None)]
    if service == "ssm" and "Name" in p:
        name = str(p["Name"]).lstrip("/")
        return [req(f"ssm:{operation}", f"arn:aws:ssm:{region}:{ACCOUNT_ID}:parameter/{name}")]
    if service == "lambda" and "FunctionName" in p:
        name = str(p["FunctionName"])
        arn = (
            name
            if name.startswith("arn:")
            else f"arn:aws:lambda:{region}:{ACCOUNT_ID}:function:{name}"
        )
        action = "InvokeFunction" if operation == "Invoke" else operation
        return [req(f"lambda:{action}", arn)]
    return [req(f"{service}:{operation}", None)]


def known_action(action: str) -> bool | None:
    """Whether policy_sentry's database knows ``action`` (None when it cannot tell)."""
    try:
        from policy_sentry.querying.actions import get_action_data
    except ImportError:  # pragma: no cover - policy_sentry is a dev dependency
        return None
    service, _, name = action.partition(":")
    try:
        data = get_action_data(service, name)
    except Exception:
        return None
    return bool(data and data.get(service))
