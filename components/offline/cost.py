"""``make cost STACK=<stack> [VOLUMES=file]``: a stack's monthly bill, computed from its plan.

The plan (the mock engine's graph, components/offline/engine.py) says what exists: alarms,
dashboards, keys, secrets, functions with their memory, schedules with their rates, event
source mappings, tables, queues, buckets. Prices are data (components/offline/prices.yaml:
USD per unit and region, each with its page and the date it was read). Usage is a usage file
in the manner of Infracost's ``infracost-usage.yml``: ``resource_type_default_usage`` holds
assumptions per resource kind, ``resource_usage`` the volumes per resource by its seed name
(``function:dm-score``, ``queue:dm-blocks``, ``table:ler-identity``, ``bucket:ler-raw``).

Two figures per stack:

- **idle**: what the stack costs with no business at all: everything billed by the month
  (alarm metrics, dashboards, customer-managed keys, secrets, custom metric series that idle
  code still emits), and the work the plan does on its own: every schedule's runs (Scheduler,
  Lambda requests and GB-seconds, logs, X-Ray, secret reads) and the long polls Lambda keeps
  open on every SQS queue an enabled mapping reads (empty receives are billed: AWS Knowledge
  Center, "Why are my Amazon SQS charges higher than expected?",
  https://repost.aws/knowledge-center/sqs-high-charges; the poller count is usage.yaml's
  assumption, with its sources). Only the kinds' default usage applies.
- **at volumes**: idle plus ``resource_usage``, by default the planned volumes
  (components/offline/usage.yaml; ``VOLUMES=file`` replaces it), twice: the **expected** bill
  (model calls at the rate the code makes them, ``model_calls_per_request``, and answers of
  their expected length) and the **worst case**, the budget (every call the code may make,
  ``max_model_calls_per_request``, each answer at the code's own ``max_tokens``, read from the
  handler modules' ``MAX_TOKENS``; a usage figure above that cap is refused).

SMS (End User Messaging) is priced per destination country (prices.yaml ``sms_outbound_<cc>``):
a system's country is its ``phoneRegion``, else its region's. The **cost per unit of work**
(lead, order, review request, 1,000 beacons, 100,000 contacts de-duplicated: ``work:<system>``
in usage.yaml) is each system's expected bill, idle part included, over its units, at 1x, 10x
and 100x the volumes; volumes scale (requests, messages, events, storage, and a scheduled run's
sends and item reads and writes), durations do not (dm-block's read of a larger CRM is
held at 1x, so dm's 10x and 100x understate).

Lambda's INIT phase is billed since 1 August 2025 (components/offline/cold_start.py): each
function's cold starts (requests x ``cold_start_share``, usage.yaml's assumption) times its
handler's import at its memory, from ``cold_starts.yaml`` (written by ``bench_init.py --record``,
not run here), is a line of its own beside the invoke GB-seconds.

No free tier is subtracted (prices.yaml says why). Not counted: data transfer out, SNS email
notifications (a handful a month), CloudWatch API requests (a few thousand a month).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from components.monitoring import schedule_interval_s
from components.offline.cold_start import init_gb_seconds, load_cold_starts
from handlers.common import metrics

HERE = Path(__file__).resolve().parent
PRICES = HERE / "prices.yaml"
USAGE = HERE / "usage.yaml"

HOURS_PER_MONTH = 730
"""AWS prices a month as 730 hours."""
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600
SYSTEMS = ("dm", "ler", "ls", "upsr", "rrs")
STACK_WIDE = "stack"
"""What no system owns: alert topics, the dashboard, the budget."""

FUNCTION = "aws:lambda/function:Function"
ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
DASHBOARD = "aws:cloudwatch/dashboard:Dashboard"
KEY = "aws:kms/key:Key"
SECRET = "aws:secretsmanager/secret:Secret"
PARAMETER = "aws:ssm/parameter:Parameter"
SCHEDULE = "aws:scheduler/schedule:Schedule"
MAPPING = "aws:lambda/eventSourceMapping:EventSourceMapping"
TABLE = "aws:dynamodb/table:Table"
QUEUE = "aws:sqs/queue:Queue"
BUCKET = "aws:s3/bucket:Bucket"
BUDGET = "aws:budgets/budget:Budget"
PROVIDER = "pulumi:providers:aws"
DEFAULT_REGION = "us-east-1"


class CostError(ValueError):
    """A price or usage file that cannot be used (names the file and the key)."""


# Prices -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Price:
    """One list price: USD per ``unit`` in each region, read from ``source`` on ``date``."""

    key: str
    unit: str
    usd: Mapping[str, float]
    source: str
    date: str

    def per_unit(self, region: str) -> float:
        if region not in self.usd:
            raise CostError(f"prices.yaml: price {self.key} has no figure for region {region}")
        return self.usd[region]

    @property
    def scale(self) -> float:
        """How many base units one priced unit holds (``1M requests`` -> 1,000,000)."""
        head = self.unit.split(" ", 1)[0]
        factors = {"1M": 1e6, "10k": 1e4, "1k": 1e3}
        return factors.get(head, 1.0)


def load_prices(path: Path = PRICES) -> dict[str, Price]:
    data = yaml.safe_load(path.read_text()) or {}
    found: dict[str, Price] = {}
    for key, entry in (data.get("prices") or {}).items():
        try:
            found[key] = Price(
                key=key,
                unit=str(entry["unit"]),
                usd={str(r): float(v) for r, v in entry["usd"].items()},
                source=str(entry["source"]),
                date=str(entry["date"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise CostError(f"{path.name}: price {key} needs unit, usd per region, source, date") from err
    return found


# Usage --------------------------------------------------------------------------------------

KIND_DEFAULTS: Mapping[str, Mapping[str, float]] = {
    "function": {
        "monthly_requests": 0,
        "avg_duration_ms": 500,
        "idle_duration_ms": 300,
        "log_bytes_per_request": 1500,
        "dynamodb_reads_per_request": 0,
        "dynamodb_writes_per_request": 0,
        "idle_dynamodb_reads_per_request": 0,
        "emails_sent_per_request": 0,
        "emails_received_per_request": 0,
        "events_published_per_request": 0,
        "model_calls_per_request": 0,
        "max_model_calls_per_request": 0,
        "input_tokens_per_call": 0,
        "output_tokens_per_call": 0,
        "sms_sent_per_request": 0,
        "lookups_per_request": 0,
        "cold_start_share": 1.0,
    },
    "sqs_event_source": {"idle_receive_requests": 0},
    "queue": {"monthly_messages": 0},
    "table": {"storage_gb": 0},
    "bucket": {"storage_gb": 0, "monthly_put_requests": 0, "monthly_get_requests": 0},
    "metric": {"monthly_events": 0},
    "work": {"monthly_units": 0},
}
"""Every usage key the calculator reads, per kind; a key outside this list is refused."""
VOLUME_KEYS = frozenset({
    "monthly_requests", "monthly_messages", "storage_gb", "monthly_put_requests",
    "monthly_get_requests", "monthly_events", "monthly_units",
})
"""The usage keys that grow with the business (``Usage.scaled``)."""
PER_RUN_WORK = frozenset({
    "sms_sent_per_request", "emails_sent_per_request", "dynamodb_reads_per_request",
    "dynamodb_writes_per_request",
})
"""What a scheduled run does more of as the business grows (upsr-sender's nudges); its
duration is held (dm-block's read of a CRM ten times larger is not priced)."""


@dataclass(frozen=True)
class Usage:
    """A usage file: defaults per resource kind and figures per resource (``kind:name``)."""

    defaults: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    resources: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def of(self, kind: str, name: str, *, idle: bool) -> dict[str, float]:
        """The usage of one resource: built-in defaults < the file's kind defaults < its own
        entry (left out when ``idle``)."""
        found = dict(KIND_DEFAULTS[kind])
        found.update(self.defaults.get(kind, {}))
        if not idle:
            found.update(self.resources.get(f"{kind}:{name}", {}))
        return found

    def scaled(self, factor: float) -> Usage:
        """The same usage at ``factor`` times the volumes: per-request figures unchanged, but a
        scheduled function's (no ``monthly_requests``) sends and items grow per run."""

        def grows(key: str, figures: Mapping[str, float]) -> frozenset[str]:
            scheduled = key.startswith("function:") and not figures.get("monthly_requests")
            return VOLUME_KEYS | (PER_RUN_WORK if scheduled else frozenset())

        return Usage(self.defaults, {
            key: {k: v * factor if k in grows(key, figures) else v for k, v in figures.items()}
            for key, figures in self.resources.items()
        })

    def busy(self, kind: str) -> set[str]:
        """Names of the resources of ``kind`` the file gives figures for."""
        return {key.split(":", 1)[1] for key in self.resources if key.split(":", 1)[0] == kind}


def parse_usage(data: Mapping[str, Any], where: str) -> Usage:
    def numbers(section: Any, label: str, kind: str) -> dict[str, float]:
        if not isinstance(section, Mapping):
            raise CostError(f"{where}: {label} must be a mapping of usage keys to numbers")
        allowed = KIND_DEFAULTS[kind]
        out: dict[str, float] = {}
        for key, value in section.items():
            if key not in allowed:
                raise CostError(
                    f"{where}: {label}.{key} is not a usage key of {kind} "
                    f"(known: {', '.join(sorted(allowed))})"
                )
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise CostError(f"{where}: {label}.{key} must be a number >= 0")
            out[str(key)] = float(value)
        return out

    defaults: dict[str, dict[str, float]] = {}
    for kind, section in (data.get("resource_type_default_usage") or {}).items():
        if kind not in KIND_DEFAULTS:
            raise CostError(f"{where}: resource_type_default_usage.{kind} is not a resource kind")
        defaults[kind] = numbers(section, f"resource_type_default_usage.{kind}", kind)
    resources: dict[str, dict[str, float]] = {}
    for key, section in (data.get("resource_usage") or {}).items():
        kind = str(key).split(":", 1)[0]
        if ":" not in str(key) or kind not in KIND_DEFAULTS:
            raise CostError(
                f"{where}: resource_usage.{key} is not <kind>:<name> with kind one of "
                f"{', '.join(KIND_DEFAULTS)}"
            )
        resources[str(key)] = numbers(section, f"resource_usage.{key}", kind)
    return Usage(defaults=defaults, resources=resources)


def load_usage(path: Path = USAGE) -> Usage:
    return parse_usage(yaml.safe_load(path.read_text()) or {}, path.name)


def model_caps() -> dict[str, tuple[int, ...]]:
    """Per function seed, the ``max_tokens`` of each model call it makes (its code's)."""
    # the handlers' model modules load pydantic and their prompts: only when pricing volumes
    from handlers.lead_enricher import dedupe_model, filter_model, normalize_model
    from handlers.review_requests import drafting, grading
    from handlers.upsell_recommender import suggesting

    return {
        "ler-normalize": (normalize_model.MAX_TOKENS,),
        "ler-dedupe": (dedupe_model.MAX_TOKENS,),
        "ler-filter": (filter_model.MAX_TOKENS,),
        "upsr-picker": (suggesting.MAX_TOKENS,),
        "rrs-sender": (grading.MAX_TOKENS, drafting.MAX_TOKENS),
    }


def check_caps(usage: Usage, caps: Mapping[str, tuple[int, ...]]) -> None:
    """A usage figure the code cannot reach is an error: output above the call's cap, or model
    calls from a function whose code makes none."""
    for key, figures in usage.resources.items():
        kind, name = key.split(":", 1)
        if kind != "function":
            continue
        calls = max(figures.get("model_calls_per_request", 0),
                    figures.get("max_model_calls_per_request", 0))
        if calls and name not in caps:
            raise CostError(f"usage: {key} has model calls, but its code makes none")
        out = figures.get("output_tokens_per_call", 0)
        if name in caps and out > max(caps[name]):
            raise CostError(
                f"usage: {key} output_tokens_per_call {out:g} is above the code's max_tokens "
                f"{max(caps[name])}"
            )


# The plan, read for cost ----------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """One line of the bill: ``quantity`` of a price's unit for a month."""

    system: str
    kind: str
    what: str
    region: str
    price: str
    quantity: float
    """In the price's unit (already divided by its scale)."""
    usd: float


class Plan:
    """What the calculator reads of a graph: resources with their system and region."""

    def __init__(self, resources: Sequence[Any]) -> None:
        self.resources = list(resources)
        self._by_urn = {r.urn: r for r in self.resources}
        self._regions = {
            r.urn: str(r.inputs.get("region") or DEFAULT_REGION)
            for r in self.resources
            if r.type == PROVIDER
        }

    def of_type(self, type_token: str) -> list[Any]:
        return [r for r in self.resources if r.type == type_token]

    def region(self, resource: Any) -> str:
        ref = resource.provider or ""
        for urn, region in self._regions.items():
            if ref.startswith(urn):
                return region
        return DEFAULT_REGION

    def system(self, resource: Any) -> str:
        """The system a resource belongs to: its top-level component, else its tag."""
        node = resource
        while node is not None and node.parent in self._by_urn:
            node = self._by_urn[node.parent]
            if node.type.startswith("crm:index:") and node.name in SYSTEMS:
                return str(node.name)
        tag = (resource.inputs.get("tags") or {}).get("crm:system")
        return str(tag) if tag in SYSTEMS else STACK_WIDE


def seed(resource: Any) -> str:
    """A resource's seed name: its ``crm:function`` tag, else its physical name less the
    stack prefix and a bucket's account suffix (``dev-dm-blocks`` -> ``dm-blocks``)."""
    tags = resource.inputs.get("tags") or {}
    if "crm:function" in tags:
        return str(tags["crm:function"])
    name = str(resource.physical_name or resource.name)
    if resource.type == BUCKET:
        name = re.sub(r"-\d{12}$", "", name)  # bucket names end in the account id
    return name.split("-", 1)[1] if "-" in name else name


def monthly_runs(expression: str) -> float:
    """Firings a month of a rate or cron schedule (one-off ``at()``: once, not monthly)."""
    interval = schedule_interval_s(expression)
    if interval is not None:
        return SECONDS_PER_MONTH / interval
    if m := re.match(r"^cron\((\S+) (\S+) ", expression):
        minute, hour = m.groups()
        per_hour = len(minute.split(",")) if minute != "*" else 60
        per_day = len(hour.split(",")) if hour != "*" else 24
        return per_hour * per_day * HOURS_PER_MONTH / 24
    return 0.0


def active_hours(events: float) -> float:
    """Hours of a month in which at least one of ``events`` falls, events spread at random
    (Poisson): a custom metric series is billed for the hours it is emitted in."""
    if events <= 0:
        return 0.0
    return HOURS_PER_MONTH * (1 - math.exp(-events / HOURS_PER_MONTH))


def _env(function: Any) -> Mapping[str, str]:
    return ((function.inputs.get("environment") or {}).get("variables")) or {}


def _metrics_on(function: Any) -> bool:
    return str(_env(function).get("POWERTOOLS_METRICS_DISABLED", "false")).lower() != "true"


def _tracing(function: Any) -> bool:
    return (function.inputs.get("tracingConfig") or {}).get("mode") == "Active"


def _secrets_read(function: Any, plan: Plan, action: str) -> int:
    """Secrets the function's role may read with ``action`` (GetSecretValue or GetParameter):
    each is fetched once per cold start and TTL."""
    count = 0
    for policy in plan.of_type("aws:iam/rolePolicy:RolePolicy"):
        if policy.parent != function.parent:
            continue
        for st in policy.policy_statements():
            actions = st.get("Action")
            actions = actions if isinstance(actions, list) else [actions]
            if action in actions:
                resources = st.get("Resource")
                count += len(resources) if isinstance(resources, list) else 1
    return count


def _scheduled_runs(plan: Plan) -> dict[str, float]:
    """Physical function name -> scheduled invocations a month."""
    runs: dict[str, float] = defaultdict(float)
    for schedule in plan.of_type(SCHEDULE):
        if (schedule.inputs.get("state") or "ENABLED") != "ENABLED":
            continue
        arn = str((schedule.inputs.get("target") or {}).get("arn", ""))
        if ":function:" in arn:
            runs[arn.rsplit(":function:", 1)[1]] += monthly_runs(
                str(schedule.inputs.get("scheduleExpression", ""))
            )
    return runs


class Bill:
    """Line items accumulated with their prices."""

    def __init__(self, prices: Mapping[str, Price]) -> None:
        self.prices = prices
        self.items: list[Item] = []

    def add(self, system: str, kind: str, what: str, region: str, price: str, base: float) -> None:
        """``base`` units of the price's base quantity (requests, GB-s, keys...)."""
        if base <= 0:
            return
        p = self.prices.get(price)
        if p is None:
            raise CostError(f"prices.yaml has no price {price}")
        quantity = base / p.scale
        self.items.append(Item(system, kind, what, region, price, quantity, quantity * p.per_unit(region)))


@dataclass(frozen=True)
class Assumptions:
    """What the plan's resources do not say: each system's SMS destination country, and the
    model calls' caps (``model_caps``); ``budget`` prices every call at its cap."""

    sms_countries: Mapping[str, str] = field(default_factory=dict)
    caps: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    budget: bool = False
    init_cpu_ms: Mapping[str, float] = field(default_factory=dict)
    """Function -> its handler's import CPU at one vCPU (cold_starts.yaml): the INIT phase
    each cold start bills; a function with no figure is priced at the largest one."""

    def init_ms(self, function: str) -> float:
        return self.init_cpu_ms.get(function, max(self.init_cpu_ms.values(), default=0.0))


def estimate(
    resources: Sequence[Any],
    usage: Usage,
    prices: Mapping[str, Price],
    *,
    idle: bool,
    assumptions: Assumptions = Assumptions(),
) -> list[Item]:
    """The bill of one plan, idle or at the usage file's volumes (expected, or the budget)."""
    plan = Plan(resources)
    bill = Bill(prices)
    _monthly_fixed(plan, bill)
    _functions(plan, bill, usage, idle=idle, assumptions=assumptions)
    _queues(plan, bill, usage, idle=idle)
    _storage(plan, bill, usage, idle=idle)
    _business_metrics(plan, bill, usage, idle=idle)
    return bill.items


def _monthly_fixed(plan: Plan, bill: Bill) -> None:
    for alarm in plan.of_type(ALARM):
        queries = alarm.inputs.get("metricQueries") or []
        metrics_read = sum(1 for q in queries if q.get("metric")) if queries else 1
        kind = (alarm.inputs.get("tags") or {}).get("crm:alarm-kind", "other")
        bill.add(plan.system(alarm), "alarms", f"{kind} alarm metrics", plan.region(alarm),
                 "cloudwatch_alarm_metric", metrics_read)
    for board in plan.of_type(DASHBOARD):
        bill.add(plan.system(board), "dashboard", "dashboards", plan.region(board), "cloudwatch_dashboard", 1)
    for key in plan.of_type(KEY):
        bill.add(plan.system(key), "kms", "customer-managed keys", plan.region(key), "kms_key", 1)
    for secret in plan.of_type(SECRET):
        bill.add(plan.system(secret), "secrets", "secrets", plan.region(secret), "secret", 1)
    for parameter in plan.of_type(PARAMETER):
        bill.add(plan.system(parameter), "secrets", "SecureString parameters", plan.region(parameter),
                 "ssm_standard_parameter", 1)


def _model_tokens(seed_name: str, u: Mapping[str, float], a: Assumptions) -> tuple[float, float, float]:
    """(calls, input tokens, output tokens) per request: expected, or at every cap."""
    calls = u["model_calls_per_request"]
    if not a.budget or (not calls and not u["max_model_calls_per_request"]):
        return calls, calls * u["input_tokens_per_call"], calls * u["output_tokens_per_call"]
    calls = max(calls, u["max_model_calls_per_request"])
    caps = a.caps.get(seed_name) or (u["output_tokens_per_call"],)
    # Each of the code's calls at its own cap, in the proportion the function makes them.
    return calls, calls * u["input_tokens_per_call"], calls * sum(caps) / len(caps)


def _functions(plan: Plan, bill: Bill, usage: Usage, *, idle: bool, assumptions: Assumptions) -> None:
    scheduled = _scheduled_runs(plan)
    for schedule in plan.of_type(SCHEDULE):
        arn = str((schedule.inputs.get("target") or {}).get("arn", ""))
        name = arn.rsplit(":function:", 1)[-1]
        runs = monthly_runs(str(schedule.inputs.get("scheduleExpression", "")))
        bill.add(plan.system(schedule), "scheduler", "schedule invocations", plan.region(schedule),
                 "scheduler_invocations", runs if name else 0)
    for fn in plan.of_type(FUNCTION):
        name = str(fn.inputs["name"])
        u = usage.of("function", seed(fn), idle=idle)
        runs = scheduled.get(name, 0.0)
        requests = runs + (0.0 if idle else u["monthly_requests"])
        if requests <= 0:
            continue
        system, region = plan.system(fn), plan.region(fn)
        duration_ms = requests * u["idle_duration_ms" if idle else "avg_duration_ms"]
        memory_mb = float(fn.inputs.get("memorySize") or 128)
        gb_s = duration_ms / 1000 * memory_mb / 1024
        bill.add(system, "lambda", "requests", region, "lambda_requests", requests)
        bill.add(system, "lambda", "GB-seconds", region, "lambda_arm_gb_seconds", gb_s)
        # INIT is billed like the invoke phase since 1 August 2025 (components/offline/
        # cold_start.py): the handler's import once per cold start, at the function's memory.
        cold = min(requests * u["cold_start_share"], requests)
        bill.add(system, "lambda", "INIT GB-seconds (cold starts)", region, "lambda_arm_gb_seconds",
                 init_gb_seconds(assumptions.init_ms(seed(fn)), memory_mb, cold))
        gb = requests * u["log_bytes_per_request"] / 1e9
        bill.add(system, "logs", "log ingestion (GB)", region, "logs_ingestion", gb)
        # Every log group keeps 7 days: about a quarter of a month's ingestion is stored.
        bill.add(system, "logs", "log storage (GB-month)", region, "logs_storage", gb * 7 / 30.4)
        if _tracing(fn):
            bill.add(system, "x-ray", "traces", region, "xray_traces", requests)
        # A secret is fetched once per cold container and again after its 300 s cache.
        fetches = min(requests, HOURS_PER_MONTH * 12)
        secrets = _secrets_read(fn, plan, "secretsmanager:GetSecretValue")
        bill.add(system, "secrets", "GetSecretValue calls", region, "secret_api_calls", fetches * secrets)
        parameters = _secrets_read(fn, plan, "ssm:GetParameter")
        bill.add(system, "secrets", "GetParameter calls", region, "ssm_standard_api_calls",
                 fetches * parameters)
        bill.add(system, "secrets", "KMS decrypts of SecureStrings", region, "kms_requests",
                 fetches * parameters)
        reads = runs * u["idle_dynamodb_reads_per_request"]
        if not idle:
            reads = requests * u["dynamodb_reads_per_request"]
        writes = 0.0 if idle else requests * u["dynamodb_writes_per_request"]
        bill.add(system, "dynamodb", "read request units", region, "dynamodb_read_units", reads)
        bill.add(system, "dynamodb", "write request units", region, "dynamodb_write_units", writes)
        if not idle:
            bill.add(system, "ses", "emails sent", region, "ses_outbound", requests * u["emails_sent_per_request"])
            bill.add(system, "ses", "emails received", region, "ses_inbound", requests * u["emails_received_per_request"])
            bill.add(system, "eventbridge", "custom events", region, "eventbridge_custom_events",
                     requests * u["events_published_per_request"])
            _, tokens_in, tokens_out = _model_tokens(seed(fn), u, assumptions)
            bill.add(system, "bedrock", "model input tokens", region, "bedrock_haiku_input",
                     requests * tokens_in)
            bill.add(system, "bedrock", "model output tokens", region, "bedrock_haiku_output",
                     requests * tokens_out)
            texts = requests * u["sms_sent_per_request"]
            if texts:
                country = assumptions.sms_countries.get(system)
                if country is None:
                    raise CostError(f"usage: function:{seed(fn)} sends SMS, but {system} has no destination country")
                bill.add(system, "sms", f"text messages to {country}", region,
                         f"sms_outbound_{country.lower()}", texts)
        if _metrics_on(fn) and metrics.PER_FUNCTION_SERIES:
            hours = active_hours(cold) * len(metrics.PER_FUNCTION_SERIES)
            bill.add(system, "custom metrics", "per-function series (series-months)", region,
                     "cloudwatch_custom_metric", hours / HOURS_PER_MONTH)


def _queues(plan: Plan, bill: Bill, usage: Usage, *, idle: bool) -> None:
    for mapping in plan.of_type(MAPPING):
        source = str(mapping.inputs.get("eventSourceArn", ""))
        if not source.startswith("arn:aws:sqs:") or mapping.inputs.get("enabled") is False:
            continue
        queue = source.rsplit(":", 1)[1]
        u = usage.of("sqs_event_source", queue.split("-", 1)[-1], idle=idle)
        bill.add(plan.system(mapping), "sqs", "long polls of an idle queue", plan.region(mapping),
                 "sqs_requests", u["idle_receive_requests"])
    if idle:
        return
    for queue in plan.of_type(QUEUE):
        u = usage.of("queue", seed(queue), idle=False)
        # SendMessage, ReceiveMessage and DeleteMessage per message (batched by one to ten).
        bill.add(plan.system(queue), "sqs", "send, receive, delete", plan.region(queue),
                 "sqs_requests", 3 * u["monthly_messages"])


def _storage(plan: Plan, bill: Bill, usage: Usage, *, idle: bool) -> None:
    if idle:
        return
    for table in plan.of_type(TABLE):
        u = usage.of("table", seed(table), idle=False)
        system, region = plan.system(table), plan.region(table)
        bill.add(system, "dynamodb", "storage (GB-month)", region, "dynamodb_storage", u["storage_gb"])
        if (table.inputs.get("pointInTimeRecovery") or {}).get("enabled"):
            bill.add(system, "dynamodb", "point-in-time recovery (GB-month)", region, "dynamodb_pitr",
                     u["storage_gb"])
    for bucket in plan.of_type(BUCKET):
        u = usage.of("bucket", seed(bucket), idle=False)
        system, region = plan.system(bucket), plan.region(bucket)
        bill.add(system, "s3", "storage (GB-month)", region, "s3_storage", u["storage_gb"])
        bill.add(system, "s3", "PUT requests", region, "s3_put_requests", u["monthly_put_requests"])
        bill.add(system, "s3", "GET requests", region, "s3_get_requests", u["monthly_get_requests"])


def _business_metrics(plan: Plan, bill: Bill, usage: Usage, *, idle: bool) -> None:
    """The catalogue's series (handlers/common/metrics.py), billed for the hours they are
    emitted in; a metric's events are shared evenly by its dimension values."""
    if idle:
        return
    emitting: dict[str, str] = {}
    for fn in plan.of_type(FUNCTION):
        if _metrics_on(fn):
            emitting.setdefault(plan.system(fn), plan.region(fn))
    for system, region in emitting.items():
        for metric in metrics.CATALOGUE.get(system, ()):
            events = usage.of("metric", metric.name, idle=False)["monthly_events"]
            per_series = events / len(metric.series)
            series_months = len(metric.series) * active_hours(per_series) / HOURS_PER_MONTH
            bill.add(system, "custom metrics", "business series (series-months)", region,
                     "cloudwatch_custom_metric", series_months)


# Reports ------------------------------------------------------------------------------------


def total(items: Iterable[Item]) -> float:
    return sum(i.usd for i in items)


def by(items: Iterable[Item], key: str) -> dict[str, float]:
    found: dict[str, float] = defaultdict(float)
    for item in items:
        found[getattr(item, key)] += item.usd
    return dict(found)


def matrix(items: Sequence[Item]) -> tuple[list[str], list[str], dict[tuple[str, str], float]]:
    """(kinds, systems, usd per (kind, system)), in a fixed order."""
    cells: dict[tuple[str, str], float] = defaultdict(float)
    for item in items:
        cells[(item.kind, item.system)] += item.usd
    systems = [s for s in (*SYSTEMS, STACK_WIDE) if any(i.system == s for i in items)]
    # Dearest first; cents decide, then the name, so equal rows keep one order run to run.
    kinds = sorted(
        {i.kind for i in items},
        key=lambda k: (-round(sum(v for (kk, _), v in cells.items() if kk == k), 2), k),
    )
    return kinds, systems, dict(cells)


def money(usd: float) -> str:
    return f"${usd:,.2f}"


def render_table(items: Sequence[Item], title: str) -> list[str]:
    """A Markdown table: one row per resource kind, one column per system, and totals."""
    kinds, systems, cells = matrix(items)
    lines = [
        f"**{title}: {money(total(items))} a month**",
        "",
        "| kind | " + " | ".join(systems) + " | total |",
        "|---|" + "---:|" * (len(systems) + 1),
    ]
    for kind in kinds:
        row = [money(cells.get((kind, s), 0.0)) if cells.get((kind, s)) else "" for s in systems]
        lines.append(f"| {kind} | " + " | ".join(row) + f" | {money(sum(cells.get((kind, s), 0.0) for s in systems))} |")
    totals = by(items, "system")
    lines.append("| **total** | " + " | ".join(money(totals.get(s, 0.0)) for s in systems)
                 + f" | **{money(total(items))}** |")
    return lines


def render_items(items: Sequence[Item], prices: Mapping[str, Price]) -> list[str]:
    """Every line item: system, kind, what, region, quantity x unit price = monthly USD."""
    lines = []
    for i in sorted(items, key=lambda i: ((*SYSTEMS, STACK_WIDE)).index(i.system) * 1000 - i.usd):
        p = prices[i.price]
        lines.append(
            f"  {i.system:5} {i.kind:15} {i.what:40} {i.region:10} "
            f"{i.quantity:12,.4f} x {p.per_unit(i.region):<10g} per {p.unit[:40]:40} = {money(i.usd):>8}"
        )
    return lines


SCALES = (1, 10, 100)
UNITS: Mapping[str, str] = {
    "ler": "lead",
    "upsr": "order",
    "rrs": "review request",
    "ls": "1,000 beacons",
    "dm": "100,000 contacts de-duplicated",
}
"""Each system's unit of work; ``work:<system>`` in usage.yaml says how many a month."""
REGION_COUNTRY: Mapping[str, str] = {"us-east-1": "US", "eu-west-2": "GB"}
"""Where a system without ``phoneRegion`` texts: its region's country (upsr's Shopify store)."""


@dataclass(frozen=True)
class StackCost:
    stack: str
    idle: list[Item]
    busy: list[Item]
    """At volumes, expected."""
    budget: list[Item]
    """At volumes, the worst case: every model call the code may make, at its cap."""
    per_unit: dict[str, dict[int, float]] = field(default_factory=dict)
    """System -> scale -> USD per unit of work (``UNITS``), expected."""


def sms_countries(config: Any) -> dict[str, str]:
    """System -> the country its SMS go to."""
    return {
        key: str(getattr(settings, "phone_region", "") or REGION_COUNTRY.get(settings.region, ""))
        for key, settings in config.systems.enabled().items()
    }


def unit_costs(resources: Sequence[Any], usage: Usage, prices: Mapping[str, Price],
               assumptions: Assumptions) -> dict[str, dict[int, float]]:
    """USD per unit of work per system, at each of ``SCALES`` times the volumes."""
    found: dict[str, dict[int, float]] = defaultdict(dict)
    for factor in SCALES:
        scaled = usage.scaled(factor)
        bill = by(estimate(resources, scaled, prices, idle=False, assumptions=assumptions), "system")
        for system in UNITS:
            units = scaled.resources.get(f"work:{system}", {}).get("monthly_units", 0.0)
            if units and system in bill:
                found[system][factor] = bill[system] / units
    return dict(found)


CAP_FACTOR = 3
"""A daily spend cap's default is this many times the expected day (``daily_caps``)."""
DAYS_PER_MONTH = HOURS_PER_MONTH / 24
PAID_CALLS: Mapping[str, str] = {
    "model": "model_calls_per_request",
    "lookup": "lookups_per_request",
    "sms": "sms_sent_per_request",
}
"""Each kind of paid call a daily cap counts (handlers/common/spend.py), by its usage key."""


def paid_calls(resources: Sequence[Any], usage: Usage) -> dict[str, dict[str, float]]:
    """System -> kind -> paid calls a month at the usage file's volumes (expected): each
    function's requests (scheduled runs included) times its per-request figure."""
    plan = Plan(resources)
    scheduled = _scheduled_runs(plan)
    found: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for fn in plan.of_type(FUNCTION):
        u = usage.of("function", seed(fn), idle=False)
        requests = scheduled.get(str(fn.inputs["name"]), 0.0) + u["monthly_requests"]
        for kind, key in PAID_CALLS.items():
            if requests * u[key]:
                found[plan.system(fn)][kind] += requests * u[key]
    return {system: dict(kinds) for system, kinds in found.items()}


def daily_caps(monthly: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, int]]:
    """The default daily caps: ``CAP_FACTOR`` times the expected day, rounded up."""
    return {
        system: {kind: math.ceil(CAP_FACTOR * calls / DAYS_PER_MONTH) for kind, calls in kinds.items()}
        for system, kinds in monthly.items()
    }


def stack_cost(stack: str, usage: Usage, prices: Mapping[str, Price]) -> StackCost:
    # the mock engine loads Pulumi and the program (seconds): only on this path
    from components.offline.engine import run

    return graph_cost(run(stack), usage, prices)


def graph_cost(graph: Any, usage: Usage, prices: Mapping[str, Price]) -> StackCost:
    """Idle, expected, worst case and per unit, of one stack's graph."""
    stack = str(graph.stack)
    caps = model_caps()
    check_caps(usage, caps)
    expected = Assumptions(sms_countries(graph.config), caps, init_cpu_ms=load_cold_starts())
    worst = Assumptions(expected.sms_countries, caps, budget=True, init_cpu_ms=expected.init_cpu_ms)
    return StackCost(
        stack,
        estimate(graph.resources, usage, prices, idle=True, assumptions=expected),
        estimate(graph.resources, usage, prices, idle=False, assumptions=expected),
        estimate(graph.resources, usage, prices, idle=False, assumptions=worst),
        unit_costs(graph.resources, usage, prices, expected),
    )


HIGH_THROUGHPUT_SETTING = "/ssm/parameter-store/high-throughput-enabled"
"""Parameter Store's throughput setting: one per account and region, not a stack resource."""


def higher_throughput(items: Sequence[Item], prices: Mapping[str, Price]) -> float:
    """What this stack's own Parameter Store reads in ``items`` would add a month with the
    account and region's higher throughput on (every other caller there pays it too)."""
    standard, higher = prices["ssm_standard_api_calls"], prices["ssm_higher_throughput_api_calls"]
    calls = [(i.quantity * standard.scale, i.region) for i in items if i.price == standard.key]
    return sum(n / higher.scale * higher.per_unit(region) for n, region in calls)


def throughput_line(c: StackCost, prices: Mapping[str, Price]) -> str:
    """``make cost``'s priced option: Parameter Store's higher throughput."""
    return (f"option, Parameter Store higher throughput (account and region wide, "
            f"{HIGH_THROUGHPUT_SETTING}): {c.stack}'s own reads would add "
            f"{money(higher_throughput(c.idle, prices))} a month idle, "
            f"{money(higher_throughput(c.busy, prices))} at volumes")


def render_units(c: StackCost) -> list[str]:
    """A Markdown table: cost per unit of work at 1x, 10x and 100x the volumes."""
    lines = [
        f"**{c.stack}, cost per unit of work (expected, idle part included)**",
        "",
        "| system | unit | " + " | ".join(f"{k}x" for k in SCALES) + " |",
        "|---|---|" + "---:|" * len(SCALES),
    ]
    for system, unit in UNITS.items():
        if system in c.per_unit:
            row = [f"${c.per_unit[system][k]:,.4f}" for k in SCALES if k in c.per_unit[system]]
            lines.append(f"| {system} | {unit} | " + " | ".join(row) + " |")
    return lines


def sms_usd(items: Sequence[Item]) -> float:
    return sum(i.usd for i in items if i.kind == "sms")


def stack_line(c: StackCost) -> str:
    """``make cost``'s first line for a stack."""
    sms = sms_usd(c.busy)
    return (f"stack {c.stack}: idle {money(total(c.idle))} a month; at volumes expected "
            f"{money(total(c.busy))}, worst case (budget) {money(total(c.budget))}; "
            f"of which SMS {money(sms)}")


def docs_block(costs: Sequence[StackCost], prices: Mapping[str, Price]) -> str:
    """docs/cost.md's tables: each stack idle, at volumes and per unit (``make docs``)."""
    dates = sorted({p.date for p in prices.values()})
    lines = [""]
    for c in costs:
        lines += [*render_table(c.idle, f"{c.stack}, idle"), ""]
        lines += [*render_table(c.busy, f"{c.stack}, at the planned volumes, expected"), ""]
        lines += [f"Worst case at the same volumes (the budget: every model call the code may "
                  f"make, each answer at its max_tokens): **{money(total(c.budget))} a month**.", ""]
        lines += [*render_units(c), ""]
        lines += [throughput_line(c, prices).replace("option, ", "Option: ", 1) + ".", ""]
    lines.append(
        f"List prices of {', '.join(dates)} (components/offline/prices.yaml, each with its "
        "page), no free tier subtracted; volumes and assumptions in components/offline/usage.yaml."
    )
    return "\n".join(lines)


def summary(costs: Sequence[StackCost]) -> str:
    """The README's one line per stack: idle, and at volumes expected and at worst, a month."""
    return "\n".join(
        f"- {c.stack}: {money(total(c.idle))} a month idle; at the planned volumes "
        f"{money(total(c.busy))} expected (SMS {money(sms_usd(c.busy))} of it), "
        f"{money(total(c.budget))} at worst"
        for c in costs
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", action="append", help="a stack (repeatable); default dev and prod")
    parser.add_argument("--volumes", type=Path, help="a usage file replacing usage.yaml's volumes")
    parser.add_argument("--items", action="store_true", help="also print every line item")
    parser.add_argument("--json", type=Path, help="write the line items as JSON to this file")
    options = parser.parse_args(argv)
    prices = load_prices()
    usage = load_usage()
    if options.volumes:
        given = load_usage(options.volumes)
        usage = Usage(defaults={**usage.defaults, **given.defaults}, resources=given.resources)
    stacks = options.stack or ["dev", "prod"]
    costs = [stack_cost(s, usage, prices) for s in stacks]
    for c in costs:
        print(stack_line(c))
        for title, items in (("idle", c.idle), ("at volumes, expected", c.busy),
                             ("at volumes, worst case (budget)", c.budget)):
            print()
            print("\n".join(render_table(items, f"{c.stack}, {title}")))
            if options.items:
                print("\n".join(render_items(items, prices)))
        print()
        print("\n".join(render_units(c)))
        print()
        print(throughput_line(c, prices))
        print()
    if options.json:
        options.json.write_text(json.dumps(
            {c.stack: {"idle": [i.__dict__ for i in c.idle], "busy": [i.__dict__ for i in c.busy],
                       "budget": [i.__dict__ for i in c.budget], "per_unit": c.per_unit}
             for c in costs}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
