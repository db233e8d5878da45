"""What IAM checks for an AWS call: the action and resource ARN(s) of each request.

Each botocore operation is mapped to the action AWS authorises (the service's IAM prefix is
the client's signing name: ``sesv2`` signs as ``ses``, ``pinpoint-sms-voice-v2`` as
``sms-voice``, ``bedrock-runtime`` as ``bedrock``) with the exceptions AWS documents
(``Converse`` is ``bedrock:InvokeModel``, ``ListObjectsV2`` is ``s3:ListBucket``, batch
operations are their single-item actions, ``TransactWriteItems`` is each item's action,
``CreateSchedule`` also needs ``iam:PassRole`` on the target role), and the resource is built
from the request (table and index, bucket and key, queue URL, secret, topic, bus, schedule,
sending identity, origination identity, model or inference profile). An action the mapping
does not know is ``<prefix>:<Operation>`` on an unknown resource (any grant of the action
passes).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from email.utils import parseaddr
from typing import Any
from urllib.parse import urlsplit

from components.arns import Arns
from sandbox.account import arns
from sandbox.iam import Requirement

_GEOGRAPHIES = ("global.", "us.", "eu.", "apac.", "jp.", "au.")


def _bedrock_resources(model_id: str, region: str) -> list[str]:
    if model_id.startswith("arn:"):
        return [model_id]
    for geography in _GEOGRAPHIES:
        if model_id.startswith(geography):
            base = model_id.removeprefix(geography)
            found = [
                arns(region).inference_profile(model_id),
                arns(region).foundation_model(base),
            ]
            if geography == "global.":
                found.append(arns(region).foundation_model(base, region=""))
            return found
    return [arns(region).foundation_model(model_id)]


def _queue_arn(url_or_name: str, region: str) -> str:
    if url_or_name.startswith("arn:"):
        return url_or_name
    parts = urlsplit(url_or_name)
    name = parts.path.rstrip("/").rsplit("/", 1)[-1] if parts.scheme else url_or_name
    host = parts.hostname or ""
    match = re.match(r"^sqs\.([a-z0-9-]+)\.amazonaws\.com", host)
    queue_region = match.group(1) if match else region
    return arns(queue_region).queue(name)


def _table_arn(name: str, region: str, index: str | None = None) -> str:
    if name.startswith("arn:"):
        return f"{name}/index/{index}" if index else name
    return arns(region).table_index(name, index) if index else arns(region).table(name)


def _secret_arn(secret_id: str, region: str) -> str:
    if secret_id.startswith("arn:"):
        return secret_id
    return arns(region).secret(secret_id, suffix="Sbx0Ab")  # one created secret's suffix


def _sms_identity_arn(identity: str, region: str) -> str | None:
    if identity.startswith("arn:"):
        return identity
    if "/" in identity:  # "pool/pool-..." as the stack config spells it
        return arns(region).sms_resource(identity)
    for start, kind in (("pool-", "pool"), ("phone-", "phone-number"), ("sender-", "sender-id")):
        if identity.startswith(start):
            return arns(region).sms_resource(f"{kind}/{identity}")
    return None


def ses_identity_arn(address: str, region: str, identities: Iterable[str]) -> str:
    """The identity AWS authorises a send against: the address if it is an identity, else
    its domain."""
    email = parseaddr(address)[1] or address
    known = {i.lower() for i in identities}
    identity = email if email.lower() in known else email.rpartition("@")[2]
    return arns(region).ses_identity(identity)


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


@dataclass(frozen=True)
class _Call:
    """One request: the operation, its parameters and where it is made."""

    service: str
    operation: str
    params: Mapping[str, Any]
    region: str
    ses_identities: tuple[str, ...] = ()
    partition_keys: Mapping[str, str] = field(default_factory=dict)
    """Each table's partition key attribute (physical table name -> attribute)."""

    @property
    def arns(self) -> Arns:
        return arns(self.region)

    def req(self, action: str, resource: str | None, **extra: Any) -> Requirement:
        """The request context every call carries, plus the action's own condition keys."""
        base = {"aws:RequestedRegion": self.region, "aws:SecureTransport": "true"}
        return Requirement(action, resource, {**base, **extra})

    def unknown_resource(self, action: str | None = None) -> list[Requirement]:
        return [self.req(action or f"{self.service}:{self.operation}", None)]


_TRANSACT_KINDS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}


def _dynamodb(c: _Call) -> list[Requirement]:
    p, op = c.params, c.operation
    if op in ("BatchGetItem", "BatchWriteItem"):
        return [c.req(f"dynamodb:{op}", _table_arn(t, c.region)) for t in p.get("RequestItems", {})]
    if op in ("TransactWriteItems", "TransactGetItems"):
        return [
            c.req(f"dynamodb:{_TRANSACT_KINDS[kind]}", _table_arn(body["TableName"], c.region))
            for item in p.get("TransactItems", [])
            for kind, body in item.items()
        ]
    if "StreamArn" in p:
        return [c.req(f"dynamodb:{op}", str(p["StreamArn"]))]
    if "TableName" in p:
        arn = _table_arn(p["TableName"], c.region, p.get("IndexName"))
        return [c.req(f"dynamodb:{op}", arn, **_leading_keys(c, str(p["TableName"])))]
    return c.unknown_resource()


_ITEM_FIELD = {"GetItem": "Key", "UpdateItem": "Key", "DeleteItem": "Key", "PutItem": "Item"}


def _leading_keys(c: _Call, table: str) -> dict[str, Any]:
    """``dynamodb:LeadingKeys`` of a one-item request: its partition key's value (DynamoDB
    Developer Guide, "Using IAM policy conditions for fine-grained access control":
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html).
    The value arrives as boto3's resource layer left it: plain, or typed (``{"S": ...}``)."""
    attribute, field_name = c.partition_keys.get(table), _ITEM_FIELD.get(c.operation)
    if attribute is None or field_name is None:
        return {}
    value = (c.params.get(field_name) or {}).get(attribute)
    if isinstance(value, Mapping):
        value = next(iter(value.values()), None)
    return {} if value is None else {"dynamodb:LeadingKeys": [str(value)]}


def _s3_copy_source(c: _Call) -> str:
    source = c.params.get("CopySource")
    if isinstance(source, Mapping):
        return c.arns.object(str(source.get("Bucket")), str(source.get("Key")))
    bucket, _, key = str(source).lstrip("/").split("?", 1)[0].partition("/")
    return c.arns.object(bucket, key)


def _s3(c: _Call) -> list[Requirement]:
    p, op = c.params, c.operation
    bucket = str(p.get("Bucket"))
    if op == "CopyObject":
        return [
            c.req("s3:GetObject", _s3_copy_source(c)),
            c.req("s3:PutObject", c.arns.object(bucket, str(p.get("Key")))),
        ]
    if op == "DeleteObjects":
        return [
            c.req("s3:DeleteObject", c.arns.object(bucket, str(o["Key"])))
            for o in p.get("Delete", {}).get("Objects", [])
        ]
    if "Key" in p:
        action = _S3_OBJECT_ACTIONS.get(op, op)
        if p.get("VersionId") and action in ("GetObject", "DeleteObject", "GetObjectTagging"):
            action = action.replace("Object", "ObjectVersion", 1)
        # Conditional writes carry their header as a condition key ("Enforce conditional
        # writes on Amazon S3 buckets": s3:if-match, s3:if-none-match).
        conditional = {
            f"s3:{key}": p[param]
            for key, param in (("if-match", "IfMatch"), ("if-none-match", "IfNoneMatch"))
            if param in p
        }
        return [c.req(f"s3:{action}", c.arns.object(bucket, str(p["Key"])), **conditional)]
    if p.get("Bucket"):
        extra = {"s3:prefix": p["Prefix"]} if "Prefix" in p else {}
        return [c.req(f"s3:{_S3_BUCKET_ACTIONS.get(op, op)}", c.arns.bucket(bucket), **extra)]
    return c.unknown_resource()


def _sqs(c: _Call) -> list[Requirement]:
    action = "sqs:" + _BATCH_ALIASES["sqs"].get(c.operation, c.operation)
    for key in ("QueueUrl", "QueueName"):
        if key in c.params:
            return [c.req(action, _queue_arn(str(c.params[key]), c.region))]
    return c.unknown_resource(action)


def _sns(c: _Call) -> list[Requirement]:
    if c.operation == "Publish" and c.params.get("PhoneNumber"):
        return [c.req("sns:Publish", "*")]
    target = c.params.get("TopicArn") or c.params.get("TargetArn")
    action = "sns:" + _BATCH_ALIASES["sns"].get(c.operation, c.operation)
    return [c.req(action, str(target) if target else None)]


def _secretsmanager(c: _Call) -> list[Requirement]:
    if "SecretId" in c.params:
        secret = _secret_arn(str(c.params["SecretId"]), c.region)
        return [c.req(f"secretsmanager:{c.operation}", secret)]
    return c.unknown_resource()


def _events(c: _Call) -> list[Requirement]:
    if c.operation != "PutEvents":
        return c.unknown_resource()
    found = []
    for entry in c.params.get("Entries", []):
        bus = str(entry.get("EventBusName") or "default")
        conditions = {
            "events:source": entry.get("Source", ""),
            "events:detail-type": entry.get("DetailType", ""),
        }
        arn = bus if bus.startswith("arn:") else c.arns.event_bus(bus)
        found.append(c.req("events:PutEvents", arn, **conditions))
    return found


def _scheduler(c: _Call) -> list[Requirement]:
    p, op = c.params, c.operation
    if "Name" in p and op.endswith("Schedule"):
        group = str(p.get("GroupName") or "default")
        found = [c.req(f"scheduler:{op}", c.arns.schedule(group, str(p["Name"])))]
    elif "Name" in p and op.endswith("ScheduleGroup"):
        found = [c.req(f"scheduler:{op}", c.arns.schedule_group(str(p["Name"])))]
    else:
        found = c.unknown_resource()
    role = (p.get("Target") or {}).get("RoleArn")
    if op in ("CreateSchedule", "UpdateSchedule") and role:
        passed = {"iam:PassedToService": "scheduler.amazonaws.com"}
        found.append(c.req("iam:PassRole", str(role), **passed))
    return found


_SES_SENDS = ("SendEmail", "SendRawEmail", "SendTemplatedEmail", "SendBulkEmail")


def _ses(c: _Call) -> list[Requirement]:
    if c.operation not in _SES_SENDS:
        return c.unknown_resource()
    p = c.params
    sender = p.get("FromEmailAddressIdentityArn") or p.get("SourceArn") or p.get("FromArn") or None
    address = str(p.get("FromEmailAddress") or p.get("Source") or "")
    identity = str(sender) if sender else ses_identity_arn(address, c.region, c.ses_identities)
    action = "ses:SendRawEmail" if c.operation == "SendRawEmail" else "ses:SendEmail"
    found = [c.req(action, identity, **{"ses:FromAddress": parseaddr(address)[1] or address})]
    config_set = p.get("ConfigurationSetName")
    if config_set:
        found.append(c.req(action, c.arns.ses_configuration_set(str(config_set))))
    return found


def _sms_voice(c: _Call) -> list[Requirement]:
    if c.operation != "SendTextMessage":
        return c.unknown_resource()
    p = c.params
    origin = _sms_identity_arn(str(p.get("OriginationIdentity") or ""), c.region)
    found = [c.req("sms-voice:SendTextMessage", origin)]
    if p.get("ConfigurationSetName"):
        config_set = c.arns.sms_configuration_set(str(p["ConfigurationSetName"]))
        found.append(c.req("sms-voice:SendTextMessage", config_set))
    return found


_BEDROCK_ACTIONS = {"Converse": "InvokeModel", "ConverseStream": "InvokeModelWithResponseStream"}


def _bedrock(c: _Call) -> list[Requirement]:
    action = "bedrock:" + _BEDROCK_ACTIONS.get(c.operation, c.operation)
    model = c.params.get("modelId")
    if model:
        return [c.req(action, arn) for arn in _bedrock_resources(str(model), c.region)]
    return c.unknown_resource(action)


def _ssm(c: _Call) -> list[Requirement]:
    if "Name" not in c.params:
        return c.unknown_resource()
    return [c.req(f"ssm:{c.operation}", c.arns.ssm_parameter(str(c.params["Name"])))]


def _lambda(c: _Call) -> list[Requirement]:
    if "FunctionName" not in c.params:
        return c.unknown_resource()
    name = str(c.params["FunctionName"])
    arn = name if name.startswith("arn:") else c.arns.lambda_function(name)
    action = "InvokeFunction" if c.operation == "Invoke" else c.operation
    return [c.req(f"lambda:{action}", arn)]


def _sts(c: _Call) -> list[Requirement]:
    # No permission is needed to call GetCallerIdentity:
    # https://docs.aws.amazon.com/STS/latest/APIReference/API_GetCallerIdentity.html
    return [] if c.operation == "GetCallerIdentity" else c.unknown_resource()


_BY_SERVICE: dict[str, Callable[[_Call], list[Requirement]]] = {
    "dynamodb": _dynamodb,
    "s3": _s3,
    "sqs": _sqs,
    "sns": _sns,
    "secretsmanager": _secretsmanager,
    "events": _events,
    "scheduler": _scheduler,
    "ses": _ses,
    "sms-voice": _sms_voice,
    "bedrock": _bedrock,
    "ssm": _ssm,
    "lambda": _lambda,
    "sts": _sts,
}
"""Each service family's reading of a request; any other service is its action on an unknown
resource."""


def requirements(
    service: str,
    operation: str,
    params: Mapping[str, Any],
    region: str,
    *,
    ses_identities: Iterable[str] = (),
    partition_keys: Mapping[str, str] | None = None,
) -> list[Requirement]:
    """What IAM checks for ``operation`` of ``service`` (the IAM prefix) with ``params``."""
    call = _Call(
        service, operation, params, region, tuple(ses_identities), dict(partition_keys or {})
    )
    rule = _BY_SERVICE.get(service)
    return rule(call) if rule else call.unknown_resource()


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
