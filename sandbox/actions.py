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
from collections.abc import Iterable, Mapping
from email.utils import parseaddr
from typing import Any
from urllib.parse import urlsplit

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
                source_arn = arns(region).object(str(source.get("Bucket")), str(source.get("Key")))
            else:
                source_bucket, _, source_key = (
                    str(source).lstrip("/").split("?", 1)[0].partition("/")
                )
                source_arn = arns(region).object(source_bucket, source_key)
            return [
                req("s3:GetObject", source_arn),
                req("s3:PutObject", arns(region).object(str(bucket), str(p.get("Key")))),
            ]
        if operation == "DeleteObjects":
            return [
                req("s3:DeleteObject", arns(region).object(str(bucket), str(o["Key"])))
                for o in p.get("Delete", {}).get("Objects", [])
            ]
        if "Key" in p:
            action = _S3_OBJECT_ACTIONS.get(operation, operation)
            if p.get("VersionId") and action in ("GetObject", "DeleteObject", "GetObjectTagging"):
                action = action.replace("Object", "ObjectVersion", 1)
            return [req(f"s3:{action}", arns(region).object(str(bucket), str(p["Key"])))]
        if bucket:
            action = _S3_BUCKET_ACTIONS.get(operation, operation)
            extra = {"s3:prefix": p["Prefix"]} if "Prefix" in p else {}
            return [req(f"s3:{action}", arns(region).bucket(str(bucket)), **extra)]
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
                arn = bus if bus.startswith("arn:") else arns(region).event_bus(bus)
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
                    arns(region).schedule(group, str(p["Name"])),
                )
            )
        elif "Name" in p and operation.endswith("ScheduleGroup"):
            found.append(
                req(
                    f"scheduler:{operation}",
                    arns(region).schedule_group(str(p["Name"])),
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
                        arns(region).ses_configuration_set(str(config_set)),
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
                        arns(region).sms_configuration_set(str(p["ConfigurationSetName"])),
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
        return [req(f"ssm:{operation}", arns(region).ssm_parameter(str(p["Name"])))]
    if service == "lambda" and "FunctionName" in p:
        name = str(p["FunctionName"])
        arn = name if name.startswith("arn:") else arns(region).lambda_function(name)
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
