"""Config values AWS refuses are refused before anything is declared, naming the key.

Schedule expressions by EventBridge Scheduler's grammar (components/schedule_expression.py,
"Schedule types in EventBridge Scheduler"), time zones by zoneinfo, regions by botocore's
partition data and the services each system needs there (components/aws_regions.py).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from components import aws_regions
from components.config import (
    ConfigError,
    DmSettings,
    LerSettings,
    LsSettings,
    RrsSettings,
    ScheduleExpression,
    UpsrSettings,
    from_pulumi_config,
    parse,
)
from components.offline.engine import stack_config_values
from components.schedule_expression import ScheduleExpressionError, check
from tests.infra.test_config import _raw

BASE = _raw()


def _with(path: str, value: Any) -> dict[str, Any]:
    """The dev stack's raw config with the dotted key ``path`` set to ``value``."""
    raw = copy.deepcopy(BASE)
    node: dict[str, Any] = raw
    *parents, leaf = path.split(".")
    for part in parents:
        node = node[part]
    node[leaf] = value
    return raw


# The six values of issue 12, then more of the same kinds.
REFUSED = [
    ("systems.dm.schedule", "cron(0 6 * * MON *)", "exactly one of day-of-month and day-of-week"),
    ("systems.dm.digestSchedule", "cron(0 6 ? * MON)", "six fields"),
    ("systems.upsr.senderSchedule", "rate(5 minute)", "plural unit: rate(5 minutes)"),
    ("systems.upsr.sweepSchedule", "rate(1 hours)", "singular unit: rate(1 hour)"),
    ("systems.dm.scheduleTimezone", "London", "not an IANA time zone"),
    ("systems.ler.region", "us-east-9", "not a region in botocore's partition data"),
    ("systems.ler.retrySchedule", "rate(0 minutes)", "not a positive number"),
    ("systems.ler.backfillSchedule", "cron(0 3 ? * ? *)", "exactly one of day-of-month"),
    ("systems.ler.digestSchedule", "cron(0 24 * * ? *)", "hours '24': 24 is outside 0-23"),
    ("systems.rrs.sweepSchedule", "rate(15 seconds)", "not minute(s), hour(s) or day(s)"),
    ("systems.rrs.syncSchedule", "cron(0 9 ? * FRI-MON *)", "runs backwards"),
    ("systems.upsr.catalogSyncSchedule", "cron(0 9 ? * 3#2,6#3 *)", "'#' takes one day"),
    ("systems.dm.schedule", "at(2026-02-30T09:00:00)", "not a date and time"),
    ("systems.rrs.openingHours.timezone", "Europe/Londn", "not an IANA time zone"),
    ("systems.upsr.reportTimezone", "GMT+1", "not an IANA time zone"),
    ("systems.ler.region", "us-west-1", "does not offer SES email receiving"),
    ("systems.upsr.region", "ap-east-1", "End User Messaging SMS, Amazon Bedrock runtime"),
    ("systems.rrs.region", "mars-north-1", "an AWS region such as eu-west-2"),
    ("powertoolsLayerArns", {"eu-west-9": "arn:aws:lambda:eu-west-9:1:layer:x:1"}, "partition"),
]


@pytest.mark.parametrize(("key", "value", "reason"), REFUSED, ids=[str(r[1]) for r in REFUSED])
def test_a_value_aws_refuses_is_refused_naming_the_key(key: str, value: Any, reason: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(_with(key, value))
    message = str(err.value)
    named = f"crm-automations:{key}"
    if isinstance(value, dict):
        named += "." + next(iter(value))
    assert named in message, message
    assert reason in message, message


def test_a_refused_schedule_points_at_the_scheduler_guide() -> None:
    with pytest.raises(ConfigError, match=r"scheduler/latest/UserGuide/schedule-types\.html"):
        parse(_with("systems.dm.schedule", "cron(0 6 * * MON *)"))


def test_receiving_refusal_names_the_receiving_regions_and_their_page() -> None:
    with pytest.raises(ConfigError) as err:
        parse(_with("systems.ler.region", "ap-south-1"))
    assert "SES receives mail in" in str(err.value)
    assert aws_regions.RECEIVING_PAGE in str(err.value)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_both_stack_files_are_accepted(stack: str) -> None:
    config = from_pulumi_config(stack_config_values(stack))
    assert set(config.systems.enabled()) == {"dm", "ler", "ls", "upsr", "rrs"}


def test_every_default_is_accepted() -> None:
    """Only the required keys given: every default schedule, zone and region validates."""
    required: dict[type[BaseModel], dict[str, Any]] = {
        DmSettings: {"senderEmail": "a@example.com", "reviewerEmail": "b@example.com"},
        LerSettings: {
            "inboundAddress": "in@example.com",
            "senderEmail": "a@example.com",
            "digestRecipient": "b@example.com",
        },
        LsSettings: {"siteOrigins": ["https://www.example.com"]},
        UpsrSettings: {
            "storeDomain": "shop.myshopify.com",
            "businessName": "Shop",
            "senderEmail": "a@example.com",
            "ownerEmail": "b@example.com",
            "smsOriginationIdentity": "pool/pool-1",
        },
        RrsSettings: {
            "senderEmail": "a@example.com",
            "ownerEmail": "b@example.com",
            "smsOriginationIdentity": "pool/pool-1",
            "reviewUrl": "https://g.page/r/x/review",
            "feedbackUrl": "https://www.example.com/feedback",
        },
    }
    for settings, given in required.items():
        settings.model_validate(given)


def test_defaults_are_validated_too() -> None:
    class Stale(DmSettings):
        schedule: ScheduleExpression = "rate(1 hours)"

    with pytest.raises(ValidationError, match="singular unit"):
        Stale.model_validate({"senderEmail": "a@example.com", "reviewerEmail": "b@example.com"})


def test_each_system_region_offers_what_the_system_needs() -> None:
    """The documents' regions: dm and ls in us-east-1; ler, upsr and rrs in eu-west-2."""
    for settings in (DmSettings, LerSettings, LsSettings, UpsrSettings, RrsSettings):
        region = settings.model_fields["region"].default
        assert aws_regions.missing(region, settings.services) == [], settings
    assert "SES email receiving" in LerSettings.services
    assert "Amazon Bedrock runtime" in UpsrSettings.services
    assert "Amazon Bedrock runtime" not in DmSettings.services  # dm calls no model


# The grammar itself -----------------------------------------------------------------------

ACCEPTED_EXPRESSIONS = [
    "cron(0 6 ? * MON *)",
    "cron(0 3 * * ? *)",
    "cron(0/15 * * * ? *)",
    "cron(0-30/10 * * * ? *)",
    "cron(0 18 ? * MON-FRI *)",
    "cron(0,30 8-17 ? * MON,WED,FRI *)",
    "cron(0 0 1 JAN,JUL ? *)",
    "cron(0 10 L * ? *)",
    "cron(0 10 LW * ? *)",
    "cron(0 10 3W * ? *)",
    "cron(0 10 ? * L *)",
    "cron(15 10 ? * 6L 2026-2030)",
    "cron(0 10 ? * 3#2 *)",
    "cron(0 6 ? * mon *)",
    "rate(1 minute)",
    "rate(15 minutes)",
    "rate(1 hour)",
    "rate(2 hours)",
    "rate(1 day)",
    "rate(7 days)",
    "at(2026-12-31T23:59:00)",
]

REFUSED_EXPRESSIONS = [
    "cron(0 6 * * MON *)",
    "cron(0 6 ? * MON)",
    "cron(0 6 ? * MON * *)",
    "cron(0 6 ? * ? *)",
    "cron(60 6 ? * MON *)",
    "cron(0 6 32 * ? *)",
    "cron(0 6 ? 13 MON *)",
    "cron(0 6 ? * 8 *)",
    "cron(0 6 ? * MON 1969)",
    "cron(0 6 ? * MON 2200)",
    "cron(0 ? * * ? *)",
    "cron(0 6 ? * MON/2 *)",
    "cron(0 6 ? * 3#6 *)",
    "cron(0 6 L,5 * ? *)",
    "cron(0 6 1W-3 * ? *)",
    "cron(0 6 ? * MONDAY *)",
    "cron(0 6 ,1 * ? *)",
    "cron(0/0 * * * ? *)",
    "cron()",
    "rate(5 minute)",
    "rate(1 hours)",
    "rate(1 minutes)",
    "rate(05 minutes)",
    "rate(-5 minutes)",
    "rate(5 weeks)",
    "rate(5minutes)",
    "at(2026-02-10 10:00:00)",
    "at(2026-13-01T10:00:00)",
    "every 15 minutes",
    "",
]


@pytest.mark.parametrize("expression", ACCEPTED_EXPRESSIONS)
def test_the_grammar_accepts(expression: str) -> None:
    assert check(expression) == expression


@pytest.mark.parametrize("expression", REFUSED_EXPRESSIONS)
def test_the_grammar_refuses(expression: str) -> None:
    with pytest.raises(ScheduleExpressionError):
        check(expression)


def test_regions_come_from_botocore_partitions() -> None:
    assert aws_regions.partition_of("eu-west-2") == "aws"
    assert aws_regions.partition_of("cn-north-1") == "aws-cn"
    assert aws_regions.partition_of("us-gov-west-1") == "aws-us-gov"
    assert aws_regions.partition_of("us-east-9") is None
    assert aws_regions.partition_of("aws-global") is None  # a pseudo-region, not a region
    assert aws_regions.offers("eu-west-2", "scheduler")
    assert aws_regions.offers("eu-west-2", "bedrock-runtime")
    assert not aws_regions.offers("us-west-1", "ses-receiving")
    assert aws_regions.offers("eu-west-2", "ses-receiving")


ISSUE_VALUES = REFUSED[:6]


@pytest.mark.parametrize(("key", "value", "reason"), ISSUE_VALUES, ids=[str(r[1]) for r in ISSUE_VALUES])
def test_make_plan_refuses_the_issue_values_naming_the_key(
    key: str,
    value: str,
    reason: str,
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A stack file carrying the value: `make plan` stops with exit 2 before declaring anything."""
    import yaml

    from components.offline import engine, plan

    data = yaml.safe_load((engine.ROOT / "Pulumi.dev.yaml").read_text())
    top, _, rest = key.partition(".")
    config = data["config"]
    if rest:
        node = config[f"crm-automations:{top}"]
        *parents, leaf = rest.split(".")
        for part in parents:
            node = node[part]
        node[leaf] = value
    else:
        config[f"crm-automations:{top}"] = value
    (tmp_path / "Pulumi.bad.yaml").write_text(yaml.safe_dump(data))
    monkeypatch.setattr(engine, "ROOT", tmp_path)
    assert plan.main(["--stack", "bad"]) == 2
    err = capsys.readouterr().err
    assert f"crm-automations:{key}" in err and reason in err, err


@pytest.mark.parametrize(
    ("key", "field", "model_id"),
    [
        ("systems.ler.normalizeModel", "modelId", "us.anthropic.claude-haiku-4-5-20251001-v1:0"),
        ("systems.upsr.pickerModel", "heavyModelId", "apac.anthropic.claude-sonnet-4-6"),
        ("systems.rrs.composeModel", "modelId", "jp.anthropic.claude-haiku-4-5-20251001-v1:0"),
    ],
)
def test_an_inference_profile_of_another_geography_is_refused(
    key: str, field: str, model_id: str
) -> None:
    with pytest.raises(ConfigError) as err:
        parse(_with(key, {field: model_id}))
    message = str(err.value)
    assert f"crm-automations:{key}: {field}: {model_id}" in message, message
    assert aws_regions.PROFILES_PAGE in message


def test_profiles_of_the_region_geography_or_global_are_accepted() -> None:
    parse(
        _with("systems.rrs.gradeModel", {"modelId": "eu.anthropic.claude-haiku-4-5-20251001-v1:0"})
    )
    parse(_with("systems.ler.dedupeModel", {"modelId": "anthropic.claude-3-haiku-20240307-v1:0"}))
    assert aws_regions.profile_refusal("global.anthropic.claude-sonnet-4-6", "eu-west-2") is None
    assert aws_regions.profile_refusal("global.anthropic.claude-sonnet-4-6", "cn-north-1")
    assert aws_regions.profile_refusal("us.x.y", "ca-central-1") is None
    assert aws_regions.profile_refusal("au.x.y", "ap-southeast-2") is None
    assert aws_regions.profile_refusal("au.x.y", "ap-northeast-1")
