"""Which AWS regions exist and which services each offers, from botocore's own data.

A region name that merely looks right (``us-east-9``) passes a pattern and the mock engine,
and fails at ``pulumi up``. botocore ships the partition data the SDKs resolve endpoints with
(``partitions.json``: every region of every partition) and the per-service endpoint list
(``endpoints.json``); the stack config is checked against both before anything is declared.
botocore is pinned in ``uv.lock``, so a region AWS opened after that release is refused until
the lock moves (``uv lock --upgrade-package botocore``).

SES email receiving is offered in fewer regions than SES sending, and botocore does not say
which: ``RECEIVING_REGIONS`` encodes the "Email receiving endpoints" table of the AWS General
Reference, "Amazon Simple Email Service endpoints and quotas"
(https://docs.aws.amazon.com/general/latest/gr/ses.html#ses_inbound_endpoints), also linked from
the SES developer guide, "Regions and Amazon SES"
(https://docs.aws.amazon.com/ses/latest/dg/regions.html#region-endpoints).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import botocore.session
from botocore.loaders import create_loader

RECEIVING_PAGE = "https://docs.aws.amazon.com/general/latest/gr/ses.html#ses_inbound_endpoints"

# The inbound-smtp.<region>.amazonaws.com endpoints of the table named above. The first eleven
# are the table as published in 2024; eu-west-3, eu-north-1 and ap-northeast-2 were added since
# (their inbound-smtp endpoints are in use, and the Seoul one is cited from the same table in
# 2026). Add a region here when the table lists it.
RECEIVING_REGIONS: frozenset[str] = frozenset(
    {
        "us-east-1",
        "us-east-2",
        "us-west-2",
        "ap-southeast-3",
        "ap-southeast-1",
        "ap-southeast-2",
        "ap-northeast-1",
        "ca-central-1",
        "eu-central-1",
        "eu-west-1",
        "eu-west-2",
        "eu-west-3",
        "eu-north-1",
        "ap-northeast-2",
    }
)

# Services as people name them -> how botocore's endpoint data names them.
SERVICES: dict[str, str] = {
    "EventBridge Scheduler": "scheduler",
    "Amazon Bedrock runtime": "bedrock-runtime",
    "SES sending": "sesv2",
    "SES email receiving": "ses-receiving",
    "End User Messaging SMS": "pinpoint-sms-voice-v2",
    "EventBridge": "events",
    "Lambda": "lambda",
    "DynamoDB": "dynamodb",
    "SQS": "sqs",
    "S3": "s3",
    "Secrets Manager": "secretsmanager",
}


@cache
def _partitions() -> list[dict[str, Any]]:
    data: dict[str, Any] = create_loader().load_data("partitions")
    return list(data["partitions"])


@cache
def _endpoints() -> dict[str, dict[str, Any]]:
    data: dict[str, Any] = create_loader().load_data("endpoints")
    return {p["partition"]: p["services"] for p in data["partitions"]}


@cache
def _available(service: str, partition: str) -> frozenset[str]:
    """Regions botocore resolves ``service`` in (it maps the client name to its endpoint
    prefix: ``sesv2`` is ``email``, ``pinpoint-sms-voice-v2`` is ``sms-voice``)."""
    session = botocore.session.get_session()
    return frozenset(session.get_available_regions(service, partition_name=partition))


def partition_of(region: str) -> str | None:
    """The partition (``aws``, ``aws-cn``, ``aws-us-gov``...) that has ``region``, if any."""
    for partition in _partitions():
        if region in partition.get("regions", {}) and not region.endswith("-global"):
            return str(partition["id"])
    return None


def is_region(region: str) -> bool:
    return partition_of(region) is not None


def offers(region: str, service: str) -> bool:
    """Whether ``service`` (a botocore endpoint prefix, or ``ses-receiving``) is in ``region``."""
    partition = partition_of(region)
    if partition is None:
        return False
    if service == "ses-receiving":
        return region in RECEIVING_REGIONS
    services = _endpoints().get(partition, {})
    if service == "bedrock-runtime":
        # Bedrock's runtime endpoints are listed under "bedrock" as bedrock-runtime-<region>.
        return f"bedrock-runtime-{region}" in services.get("bedrock", {}).get("endpoints", {})
    return region in _available(service, partition)


def missing(region: str, needed: tuple[str, ...]) -> list[str]:
    """The services of ``needed`` (names as in ``SERVICES``) that ``region`` does not offer."""
    return [name for name in needed if not offers(region, SERVICES[name])]


PROFILES_PAGE = (
    "https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html"
)

# A geographic cross-Region inference profile is called from a source Region inside its
# geography; a global one from a commercial Region ("Supported Regions and models for inference
# profiles", Bedrock user guide, PROFILES_PAGE). Lenient on purpose: only a profile called from
# outside its geography is refused here (which source Regions each model lists is the model
# page's business, and changes).
_GEOGRAPHY: dict[str, tuple[str, ...]] = {
    "us": ("us-", "ca-"),
    "eu": ("eu-",),
    "apac": ("ap-",),
    "jp": ("ap-northeast-1", "ap-northeast-3"),
    "au": ("ap-southeast-2", "ap-southeast-4"),
}


def profile_refusal(model_id: str, region: str) -> str | None:
    """Why ``model_id`` (an inference profile such as ``eu.anthropic...``) cannot be called
    from ``region``; ``None`` when it can, or when it is a plain model id."""
    prefix, dot, _ = model_id.partition(".")
    if not dot or (prefix != "global" and prefix not in _GEOGRAPHY):
        return None
    if partition_of(region) != "aws":
        return f"{model_id} is a cross-Region profile of the commercial partition, not {region}'s"
    if prefix == "global" or region.startswith(_GEOGRAPHY[prefix]):
        return None
    return f"{model_id} is a {prefix}. inference profile, called only from {prefix} Regions"
