"""tag-values: every tag key and value is one its service accepts.

What: for every resource that carries ``tags`` (and an AWS provider's ``defaultTags``, which
reach every resource it creates), each key and value against its service's documented
limits:
- characters: Unicode letters, digits and white space plus ``_ . : / = + - @`` (DynamoDB
  allows no ``@``); parentheses, commas, quotes, ``#``, ``&``, ``*``... are refused;
- lengths: key 1-128 and value 0-256 characters (Secrets Manager 127 / 255; SQS and
  EventBridge Scheduler refuse an empty value);
- the reserved prefix ``aws:`` (any case) on a key or a value.
A resource of a service not listed below is held to the common set AWS documents for tags
across services. A provider's default tags are held to every family's limits at once.

Why: the mock engine and moto accept any string, the services do not, and a refused tag fails
``pulumi up`` half way (S3 answers ``InvalidTag``; SQS, DynamoDB, IAM and the others refuse
the CreateX / TagResource call), after the resources before it were created. The pages:
- SQS: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-queues.html
  ("Queue tag": letters, digits, white space, ``_ . : / = + - @``; value not empty;
  no ``aws:`` in a key or value)
- SNS: https://docs.aws.amazon.com/sns/latest/api/API_Tag.html (key 1-128, value 0-256)
- S3: https://docs.aws.amazon.com/AmazonS3/latest/API/API_control_S3Tag.html
  (pattern ``^([\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*)$``)
- DynamoDB: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TaggingRestrictions.html
  (letters, white space, numbers and ``+ - = . _ : /`` only)
- Lambda: https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-properties-lambda-function-tag.html
- EventBridge Scheduler: https://docs.aws.amazon.com/scheduler/latest/APIReference/API_Tag.html
  (value 1-256; only schedule groups carry tags)
- KMS: https://docs.aws.amazon.com/kms/latest/APIReference/API_Tag.html
- Secrets Manager: https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_TagResource.html
  (key 127, value 255, the common characters, no ``aws:``)
- Systems Manager (parameters): https://docs.aws.amazon.com/systems-manager/latest/APIReference/API_Tag.html
  (key 1-128, value 0-256, the common characters)
- CloudWatch Logs: https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_TagLogGroup.html
  (key and value patterns ``[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]``)
- CloudWatch alarms: https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_Tag.html
- EventBridge rules: https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_Tag.html
- IAM: https://docs.aws.amazon.com/IAM/latest/APIReference/API_Tag.html
  (pattern ``[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]``)
- the common set: https://docs.aws.amazon.com/tag-editor/latest/userguide/tagging.html

Fix: say it with the allowed characters (``schedules of group dev-rrs-requests from
rrs-webhook``, not ``... (rrs-webhook)``); shorten a long value; drop an ``aws:`` prefix.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pulumi_policy import ReportViolation, ResourceValidationArgs

from policies.common.props import as_str, is_unknown, props_of
from policies.common.rule import resource_policy

NAME: Final = "tag-values"
PROVIDER: Final = "pulumi:providers:aws"
RESERVED_PREFIX: Final = "aws:"


@dataclass(frozen=True)
class TagLimits:
    """What one service accepts in a tag.

    Attributes:
        service: The service's name, for messages.
        symbols: The punctuation allowed beside letters, digits and white space.
        key_max: Longest key, in characters.
        value_max: Longest value, in characters.
        value_min: Shortest value (1 where the service refuses an empty value).
    """

    service: str
    symbols: str = "_.:/=+-@"
    key_max: int = 128
    value_max: int = 256
    value_min: int = 0

    def problems(self, text: str, what: str, longest: int, shortest: int) -> Iterator[str]:
        """What is wrong with one key or value (``what`` is "key" or "value")."""
        if len(text) > longest:
            yield f"{what} is {len(text)} characters (at most {longest})"
        if len(text) < shortest:
            yield f"{what} is empty" if not text else f"{what} is shorter than {shortest}"
        bad = sorted({c for c in text if not self.allows(c)})
        if bad:
            shown = " ".join(repr(c) for c in bad)
            yield (
                f"{what} has {shown}: {self.service} allows letters, digits, white space and "
                f"{' '.join(self.symbols)} only"
            )
        if text.lower().startswith(RESERVED_PREFIX):
            yield f"{what} starts with the reserved prefix aws:"

    def allows(self, char: str) -> bool:
        # Unicode letters (L*), digits and numbers (N*), separators/white space (Z*): the
        # \p{L}\p{Z}\p{N} of the services' patterns.
        return char in self.symbols or unicodedata.category(char)[0] in "LNZ"


COMMON: Final = TagLimits("AWS (common tag rules)")
FAMILIES: Final[dict[str, TagLimits]] = {
    "aws:sqs/": TagLimits("SQS", value_min=1),
    "aws:sns/": TagLimits("SNS"),
    "aws:s3/": TagLimits("S3"),
    "aws:dynamodb/": TagLimits("DynamoDB", symbols="_.:/=+-"),
    "aws:lambda/": TagLimits("Lambda"),
    "aws:scheduler/": TagLimits("EventBridge Scheduler", value_min=1),
    "aws:kms/": TagLimits("KMS"),
    "aws:secretsmanager/": TagLimits("Secrets Manager", key_max=127, value_max=255),
    "aws:ssm/": TagLimits("Systems Manager"),
    "aws:cloudwatch/logGroup:": TagLimits("CloudWatch Logs"),
    "aws:cloudwatch/eventRule:": TagLimits("EventBridge"),
    "aws:cloudwatch/eventBus:": TagLimits("EventBridge"),
    "aws:cloudwatch/": TagLimits("CloudWatch"),
    "aws:iam/": TagLimits("IAM"),
}
"""Type-token prefixes to their service's limits; the longest matching prefix wins
(``aws:cloudwatch/`` holds alarms, log groups and EventBridge rules, three services)."""


STRICTEST: Final = TagLimits(
    "every service",
    symbols="".join(c for c in COMMON.symbols if all(c in f.symbols for f in FAMILIES.values())),
    key_max=min(f.key_max for f in FAMILIES.values()),
    value_max=min(f.value_max for f in FAMILIES.values()),
    value_min=max(f.value_min for f in FAMILIES.values()),
)
"""What a provider's default tags must meet: they reach every resource it creates."""


def limits_for(resource_type: str) -> TagLimits:
    """The limits of the service that owns ``resource_type``."""
    matches = [p for p in FAMILIES if resource_type.startswith(p)]
    return FAMILIES[max(matches, key=len)] if matches else COMMON


def tag_problems(tags: Mapping[str, Any], limits: TagLimits) -> Iterator[str]:
    """One line per problem of ``tags`` under ``limits``; unknown values are skipped."""
    for key, value in tags.items():
        for problem in limits.problems(key, "key", limits.key_max, 1):
            yield f"tag {key!r}: {problem}"
        if is_unknown(value) or value is None:
            continue
        text = as_str(value)
        if text is None:
            yield f"tag {key!r}: value is not a string"
            continue
        for problem in limits.problems(text, "value", limits.value_max, limits.value_min):
            yield f"tag {key!r}: {problem}"


def _default_tags(props: Mapping[str, Any]) -> dict[str, Any]:
    raw = props.get("defaultTags")
    if isinstance(raw, str):  # provider inputs reach the engine JSON-encoded
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return {}
    tags = raw.get("tags") if isinstance(raw, Mapping) else None
    return dict(tags) if isinstance(tags, Mapping) else {}


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    props = props_of(args)
    if args.resource_type == PROVIDER:
        for problem in tag_problems(_default_tags(props), STRICTEST):
            report(f"default tags of provider {args.name}: {problem}", None)
        return
    tags = props.get("tags")
    if not isinstance(tags, Mapping):
        return
    limits = limits_for(args.resource_type)
    label = as_str(props.get("name")) or args.name
    for problem in tag_problems(tags, limits):
        report(f"{limits.service} {args.resource_type.rsplit(':', 1)[-1]} {label}: {problem}", None)


POLICY: Final = resource_policy(
    NAME,
    "Every tag key and value uses the characters, lengths and prefixes its service accepts.",
    _validate,
    remediation="Use letters, digits, spaces and _ . : / = + - @ (no @ on DynamoDB), keep keys "
    "to 128 and values to 256 characters (127 / 255 on Secrets Manager), no aws: prefix.",
)
