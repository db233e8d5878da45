"""Stack configuration: one pydantic schema, validated before any resource is declared.

Every key lives under the project namespace ``crm-automations:`` in ``Pulumi.<stack>.yaml``.
A wrong value stops the program with one message that names the key, what was given and what
is allowed; an unknown key is refused the same way, so a typo never silently falls back to a
default. Per-system sections carry their own settings classes below.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic.alias_generators import to_camel

PROJECT = "crm-automations"

HAIKU_GLOBAL = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
SONNET_GLOBAL = "global.anthropic.claude-sonnet-4-6"

_REGION = re.compile(r"^[a-z]{2}(-gov)?-[a-z]+-\d$")
_EMAIL = re.compile(r"^[^@\s]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$")
_SCHEDULE = re.compile(r"^(rate\(\d+ (minute|minutes|hour|hours|day|days)\)|cron\(.+\)|at\(.+\))$")
_MODEL_ID = re.compile(r"^((global|us|eu|apac|jp|au)\.)?[a-z0-9-]+\.[A-Za-z0-9.:-]+$")
_ORIGIN = re.compile(r"^https?://[A-Za-z0-9.-]+(:\d+)?$")
_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


class ConfigError(ValueError):
    """A stack configuration problem, naming the key."""


def _matches(pattern: re.Pattern[str], what: str) -> Any:
    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(f"{value!r} is not {what}")
        return value

    return AfterValidator(check)


Region = Annotated[str, _matches(_REGION, "an AWS region such as eu-west-2")]
Email = Annotated[str, _matches(_EMAIL, "an email address")]
ScheduleExpression = Annotated[
    str, _matches(_SCHEDULE, "a Scheduler expression: rate(...), cron(...) or at(...)")
]
ModelId = Annotated[
    str, _matches(_MODEL_ID, "a Bedrock model or inference profile id such as " + HAIKU_GLOBAL)
]
Origin = Annotated[str, _matches(_ORIGIN, "an origin such as https://www.example.com")]
ClockTime = Annotated[str, _matches(_HHMM, "a 24-hour time HH:MM")]


class _Section(BaseModel):
    """camelCase keys in YAML, snake_case in Python; unknown keys refused; immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        use_attribute_docstrings=True,
    )


class ModelChoice(_Section):
    """The model one callsite uses: Haiku by default, the heavier model behind a flag."""

    model_id: ModelId = HAIKU_GLOBAL
    """Model or inference profile id the callsite calls by default."""
    heavy_model_id: ModelId = SONNET_GLOBAL
    """The heavier model, configured but off unless ``useHeavy`` is set."""
    use_heavy: bool = False
    """Call (and grant) the heavier model instead of the default one."""

    @property
    def active(self) -> str:
        """The model id this callsite calls."""
        return self.heavy_model_id if self.use_heavy else self.model_id

    @property
    def granted(self) -> tuple[str, ...]:
        """Model ids the callsite's role may invoke: only the active one."""
        return (self.active,)


class SystemSettings(_Section):
    """Settings every system has."""

    enabled: bool = True
    """Deploy this system in this stack."""
    region: Region
    """AWS region of every resource of the system (the document's region by default)."""


class DmThresholds(_Section):
    """Score bands: at or above ``automatic`` merges without a person; at or above
    ``propose`` goes to the weekly review; below is only recorded."""

    automatic: float = 14.0
    """Score at or above which a pair is merged without a person."""
    propose: float = 6.0
    """Score at or above which a pair is proposed in the weekly review."""

    @model_validator(mode="after")
    def _ordered(self) -> DmThresholds:
        if self.propose >= self.automatic:
            raise ValueError("propose must be below automatic")
        return self


class DmSettings(SystemSettings):
    """Duplicate contact merger (document 000)."""

    region: Region = "us-east-1"
    schedule: ScheduleExpression = "cron(0 6 ? * MON *)"
    schedule_timezone: str = "UTC"
    thresholds: DmThresholds = DmThresholds()
    block_cap: int = Field(default=50, ge=2, le=1000)
    sender_email: Email
    reviewer_email: Email
    link_ttl_days: int = Field(default=30, ge=1, le=30)
    crm_base_url: str = "https://api.hubapi.com"


class LerSettings(SystemSettings):
    """Lead enricher (document 001)."""

    region: Region = "eu-west-2"
    intake_auth: Literal["shared_secret", "iam"] = "shared_secret"
    inbound_address: Email
    sender_email: Email
    digest_recipient: Email
    normalize_model: ModelChoice = ModelChoice()
    dedupe_model: ModelChoice = ModelChoice()
    filter_model: ModelChoice = ModelChoice()
    retry_schedule: ScheduleExpression = "rate(15 minutes)"
    backfill_schedule: ScheduleExpression = "cron(0 3 * * ? *)"
    digest_schedule: ScheduleExpression = "cron(0 8 * * ? *)"
    schedule_timezone: str = "Europe/London"
    enrich_cache_days: int = Field(default=90, ge=1, le=365)
    crm_base_url: str = "https://api.hubapi.com"
    enrichment_base_url: str = "https://company.clearbit.com"


class LsSettings(SystemSettings):
    """Lead source attributor (document 002)."""

    region: Region = "us-east-1"
    site_origins: tuple[Origin, ...] = Field(min_length=1)
    report_cache_seconds: int = Field(default=86400, ge=0, le=86400)
    touch_ttl_days: int = Field(default=548, ge=30, le=1100)


class UpsrSettings(SystemSettings):
    """Upsell recommender (document 003)."""

    region: Region = "eu-west-2"
    picker_model: ModelChoice = ModelChoice()
    store_domain: str = Field(pattern=r"^[a-z0-9-]+\.myshopify\.com$")
    sender_email: Email
    owner_email: Email
    sms_origination_identity: str = Field(
        pattern=r"^(phone-number|pool|sender-id)/[A-Za-z0-9_/-]+$",
        description="AWS End User Messaging SMS identity the nudge is sent from",
    )
    nudge_delay_minutes: int = Field(default=120, ge=0, le=10080)
    attribution_window_hours: int = Field(default=72, ge=1, le=720)
    max_nudges_per_30_days: int = Field(default=2, ge=1, le=30)
    sender_schedule: ScheduleExpression = "rate(5 minutes)"
    sweep_schedule: ScheduleExpression = "rate(1 hour)"
    catalog_sync_schedule: ScheduleExpression = "rate(15 minutes)"


class OpeningHours(_Section):
    """When the sweep may act and when a message may be sent, in ``timezone``."""

    start: ClockTime = "09:00"
    """Opening time, HH:MM."""
    end: ClockTime = "18:00"
    """Closing time, HH:MM."""
    timezone: str = "Europe/London"
    """IANA time zone the hours are read in."""


class RrsSettings(SystemSettings):
    """Review request sender (document 004)."""

    region: Region = "eu-west-2"
    grade_model: ModelChoice = ModelChoice()
    compose_model: ModelChoice = ModelChoice()
    sender_email: Email
    owner_email: Email
    sms_origination_identity: str = Field(
        pattern=r"^(phone-number|pool|sender-id)/[A-Za-z0-9_/-]+$",
        description="AWS End User Messaging SMS identity the ask is sent from",
    )
    review_url: str = Field(pattern=r"^https://")
    feedback_url: str = Field(pattern=r"^https://")
    request_delay_hours: int = Field(default=2, ge=0, le=336)
    opening_hours: OpeningHours = OpeningHours()
    sweep_schedule: ScheduleExpression = "rate(15 minutes)"
    sync_schedule: ScheduleExpression = "rate(15 minutes)"
    sheet_source: str = Field(
        default="",
        description="CSV export URL (https://...) or s3://bucket/key of the customer sheet",
    )
    retention_days: int = Field(default=400, ge=30, le=3650)


class Systems(_Section):
    """One section per system; a missing section means the system is not deployed."""

    dm: DmSettings | None = None
    ler: LerSettings | None = None
    ls: LsSettings | None = None
    upsr: UpsrSettings | None = None
    rrs: RrsSettings | None = None

    def enabled(self) -> dict[str, SystemSettings]:
        """The enabled systems' settings by system key, in a stable order."""
        return {
            key: settings
            for key in ("dm", "ler", "ls", "upsr", "rrs")
            if (settings := getattr(self, key)) is not None and settings.enabled
        }


class StackConfig(_Section):
    """The whole stack's configuration."""

    prefix: str = Field(pattern=r"^[a-z][a-z0-9]{1,9}$")
    """First part of every physical name (``dev`` -> ``dev-dm-block``); 2-10 lowercase characters."""
    environment: Literal["dev", "prod"]
    """``prod`` turns on deletion protection, ``protect`` and secret recovery windows."""
    alert_email: Email
    """Receives the monthly budget alarm."""
    monthly_budget_usd: float = Field(gt=0, le=100000)
    """Monthly cost budget of the account; alarms at 80 % and 100 % actual, 100 % forecast."""
    powertools_layer_arns: Mapping[Region, str] = Field(default_factory=dict)
    """Powertools layer ARN pinned per region; otherwise the latest from AWS's public SSM parameter."""
    systems: Systems = Systems()
    """One section per system."""

    @property
    def protect_data(self) -> bool:
        """Prod keeps deletion protection on tables and retains buckets."""
        return self.environment == "prod"


def _key_of(loc: tuple[int | str, ...]) -> str:
    return f"{PROJECT}:" + ".".join(str(part) for part in loc)


def parse(raw: Mapping[str, Any]) -> StackConfig:
    """Validate raw config (keys without the namespace, values decoded from YAML/JSON).

    Raises ConfigError with one line per problem, each naming the full config key.
    """
    try:
        return StackConfig.model_validate(dict(raw))
    except ValidationError as err:
        lines = []
        for problem in err.errors():
            key = _key_of(tuple(problem["loc"]))
            message = problem["msg"].removeprefix("Value error, ")
            given = problem.get("input")
            shown = "" if isinstance(given, dict) else f" (given: {given!r})"
            lines.append(f"{key}: {message}{shown}")
        raise ConfigError("invalid stack configuration:\n  " + "\n  ".join(lines)) from None


def from_pulumi_config(values: Mapping[str, str]) -> StackConfig:
    """Validate the engine's config map (``crm-automations:key`` -> string, objects as JSON)."""
    raw: dict[str, Any] = {}
    for full_key, text in values.items():
        namespace, _, key = full_key.partition(":")
        if namespace != PROJECT:
            continue
        try:
            raw[key] = json.loads(text)
        except (json.JSONDecodeError, TypeError):
            raw[key] = text
    return parse(raw)
