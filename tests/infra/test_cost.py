"""The cost calculator on small hand-made plans, against figures computed by hand; the price
table's shape (tests/infra/test_docs.py keeps docs/cost.md's tables current)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from components.offline import cost
from components.offline.engine import Resource
from handlers.common import metrics
from testsupport.graphs import GraphCache

STACK = "urn:pulumi:t::crm-automations::pulumi:pulumi:Stack::crm-automations-t"
PROVIDER = "urn:pulumi:t::crm-automations::pulumi:providers:aws::aws-eu-west-2"
ROUND = {
    # Round prices so every expected figure below can be checked by hand.
    "lambda_requests": ("1M requests", 1.0),
    "lambda_arm_gb_seconds": ("GB-second", 0.001),
    "cloudwatch_alarm_metric": ("alarm metric-month", 0.10),
    "cloudwatch_custom_metric": ("series-month", 0.30),
    "cloudwatch_dashboard": ("dashboard-month", 3.0),
    "logs_ingestion": ("GB", 0.5),
    "logs_storage": ("GB-month", 0.0),
    "kms_key": ("key-month", 1.0),
    "secret": ("secret-month", 0.40),
    "secret_api_calls": ("10k API calls", 0.05),
    "scheduler_invocations": ("1M invocations", 1.0),
    "sqs_requests": ("1M requests", 0.40),
    "dynamodb_read_units": ("1M read units", 0.25),
    "dynamodb_write_units": ("1M write units", 1.0),
    "xray_traces": ("1M traces", 5.0),
}


def prices() -> dict[str, cost.Price]:
    return {
        key: cost.Price(key, unit, {"eu-west-2": usd}, "https://example.com/price", "2026-12-01")
        for key, (unit, usd) in ROUND.items()
    }


def resource(type_: str, logical: str, parent: str | None = None, **inputs: Any) -> Resource:
    return Resource(
        type=type_,
        name=logical,
        urn=f"urn:pulumi:t::crm-automations::{type_}::{logical}",
        parent=parent or STACK,
        custom=not type_.startswith("crm:"),
        provider=None if type_.startswith("crm:") else f"{PROVIDER}::id",
        inputs=inputs,
    )


def small_plan(*, tracing: bool = False, metrics_disabled: bool = False) -> list[Resource]:
    """One system ``rrs`` in eu-west-2: a 512 MB function every 15 minutes reading one secret,
    three alarms, a key, a secret, a dashboard and an SQS event source mapping."""
    provider = Resource("pulumi:providers:aws", "aws-eu-west-2", PROVIDER, STACK, True, None,
                        {"region": "eu-west-2"})
    system = resource("crm:index:ReviewRequests", "rrs")
    env = {"POWERTOOLS_METRICS_DISABLED": "true"} if metrics_disabled else {}
    function = resource(
        cost.FUNCTION, "rrs-sync", system.urn,
        name="t-rrs-sync", memorySize=512, tags={"crm:function": "rrs-sync"},
        environment={"variables": env},
        tracingConfig={"mode": "Active" if tracing else "PassThrough"},
    )
    policy = resource(
        "aws:iam/rolePolicy:RolePolicy", "rrs-sync-grants", system.urn,
        policy=json.dumps({"Statement": [{
            "Effect": "Allow", "Action": ["secretsmanager:GetSecretValue"],
            "Resource": ["arn:aws:secretsmanager:eu-west-2:1:secret:t-rrs-key-AbCdEf"],
        }]}),
    )
    schedule = resource(
        cost.SCHEDULE, "rrs-sync-schedule", system.urn, name="t-rrs-sync",
        scheduleExpression="rate(15 minutes)",
        target={"arn": "arn:aws:lambda:eu-west-2:1:function:t-rrs-sync"},
    )
    alarms = [
        resource(cost.ALARM, f"a{i}", system.urn, metricName="Errors", tags={"crm:alarm-kind": "errors"})
        for i in range(3)
    ]
    mapping = resource(cost.MAPPING, "work", system.urn,
                       eventSourceArn="arn:aws:sqs:eu-west-2:1:t-rrs-work")
    key = resource(cost.KEY, "key")
    secret = resource(cost.SECRET, "secret", system.urn, name="t-rrs-key")
    board = resource(cost.DASHBOARD, "board")
    return [provider, system, function, policy, schedule, *alarms, mapping, key, secret, board]


IDLE = cost.Usage(
    defaults={
        "function": {"idle_duration_ms": 300, "log_bytes_per_request": 1000,
                     "idle_dynamodb_reads_per_request": 1, "cold_start_share": 1.0},
        "sqs_event_source": {"idle_receive_requests": 657000},
    }
)


def kinds(items: list[cost.Item]) -> dict[str, float]:
    return {k: round(v, 6) for k, v in cost.by(items, "kind").items()}


def test_idle_bill_of_a_small_plan_matches_the_hand_computed_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics, "PER_FUNCTION_SERIES", ("ColdStart",))
    items = cost.estimate(small_plan(), IDLE, prices(), idle=True)
    runs = 2_628_000 / 900  # 730 h of rate(15 minutes): 2,920 runs
    assert runs == 2920
    series_months = 1 - math.exp(-2920 / 730)  # ColdStart emitted in 98.2 % of the hours
    expected = {
        "alarms": 0.30,  # 3 alarm metrics x $0.10
        "kms": 1.00,
        "dashboard": 3.00,
        # $0.40 the secret; 2,920 fetches (every run outlives the 300 s cache) x $0.05 / 10k
        "secrets": round(0.40 + 2920 * 0.05 / 10_000, 6),
        # 2,920 requests x $1/M + 2,920 x 0.3 s x 0.5 GB = 438 GB-s x $0.001
        "lambda": round(2920 / 1e6 + 438 * 0.001, 6),
        "scheduler": round(2920 / 1e6, 6),
        "logs": round(2920 * 1000 / 1e9 * 0.5, 6),  # 2.92 MB ingested
        "dynamodb": round(2920 / 1e6 * 0.25, 6),  # one read unit a run
        "sqs": round(657_000 / 1e6 * 0.40, 6),  # five idle long polls, all month
        "custom metrics": round(series_months * 0.30, 6),
    }
    assert kinds(items) == pytest.approx(expected)
    assert {i.system for i in items if i.kind == "lambda"} == {"rrs"}
    assert {i.system for i in items if i.kind == "kms"} == {cost.STACK_WIDE}
    assert {i.region for i in items} == {"eu-west-2"}


def test_tracing_adds_a_trace_per_request_and_disabled_metrics_drop_the_series() -> None:
    items = cost.estimate(small_plan(tracing=True, metrics_disabled=True), IDLE, prices(), idle=True)
    found = kinds(items)
    assert found["x-ray"] == pytest.approx(2920 / 1e6 * 5.0)
    assert "custom metrics" not in found


def test_volumes_add_requests_reads_writes_and_business_series(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metrics, "PER_FUNCTION_SERIES", ())
    busy = cost.Usage(
        defaults=IDLE.defaults,
        resources={
            "function:rrs-sync": {"monthly_requests": 80, "avg_duration_ms": 1000,
                                  "dynamodb_writes_per_request": 300},
            "metric:Escalations": {"monthly_events": 730},
        },
    )
    items = cost.estimate(small_plan(), busy, prices(), idle=False)
    requests = 2920 + 80
    found = kinds(items)
    # 3,000 requests x 1 s x 0.5 GB = 1,500 GB-s
    assert found["lambda"] == pytest.approx(requests / 1e6 + 1500 * 0.001)
    # 3,000 x 300 writes = 900,000 write units x $1/M; no reads given at volume
    assert found["dynamodb"] == pytest.approx(0.9)
    # Escalations: one series, 730 events spread over 730 hours: emitted in 1 - 1/e of them
    assert found["custom metrics"] == pytest.approx((1 - math.exp(-1)) * 0.30)


def test_a_metric_math_alarm_pays_for_every_metric_it_reads() -> None:
    alarm = resource(cost.ALARM, "sum", metricQueries=[
        {"id": "a", "metric": {"metricName": "Errors"}},
        {"id": "b", "metric": {"metricName": "Errors"}},
        {"id": "c", "metric": {"metricName": "Errors"}},
        {"id": "e", "expression": "a+b+c", "returnData": True},
    ])
    provider = Resource("pulumi:providers:aws", "aws-eu-west-2", PROVIDER, STACK, True, None,
                        {"region": "eu-west-2"})
    items = cost.estimate([provider, alarm], cost.Usage(), prices(), idle=True)
    assert cost.total(items) == pytest.approx(0.30)


def test_monthly_runs_of_rates_and_crons() -> None:
    assert cost.monthly_runs("rate(5 minutes)") == 8760
    assert cost.monthly_runs("cron(0 3 * * ? *)") == pytest.approx(730 / 24)
    assert cost.monthly_runs("cron(0 6 ? * MON *)") == pytest.approx(730 / 24 / 7)
    assert cost.monthly_runs("at(2026-12-24T10:00:00)") == 0


def test_a_usage_file_with_an_unknown_key_is_refused_by_name() -> None:
    with pytest.raises(cost.CostError, match=r"resource_usage\.function:dm-score\.requests"):
        cost.parse_usage({"resource_usage": {"function:dm-score": {"requests": 5}}}, "u.yml")
    with pytest.raises(cost.CostError, match=r"resource_usage\.lambda:dm-score"):
        cost.parse_usage({"resource_usage": {"lambda:dm-score": {"monthly_requests": 5}}}, "u.yml")
    with pytest.raises(cost.CostError, match=r"monthly_requests must be a number"):
        cost.parse_usage({"resource_usage": {"function:x": {"monthly_requests": -1}}}, "u.yml")


def test_every_price_has_both_regions_a_page_and_a_date() -> None:
    table = cost.load_prices()
    used = set(ROUND) | {"ses_outbound", "ses_inbound", "eventbridge_custom_events",
                         "bedrock_haiku_input", "bedrock_haiku_output", "dynamodb_storage",
                         "dynamodb_pitr", "s3_storage", "s3_put_requests", "s3_get_requests"}
    assert used <= set(table)
    for price in table.values():
        assert set(price.usd) >= {"us-east-1", "eu-west-2"}, price.key
        assert price.source.startswith("https://aws.amazon.com/"), price.key
        assert len(price.date) == 10, price.key


def test_the_default_usage_file_names_only_resources_the_plan_has(graphs: GraphCache) -> None:
    graph = graphs.run("dev")
    usage = cost.load_usage()
    seeds = {cost.seed(r) for r in graph.resources if r.custom}
    metric_names = {m.name for ms in metrics.CATALOGUE.values() for m in ms}
    for kind in ("function", "queue", "table", "bucket"):
        assert usage.busy(kind) <= seeds, kind
    assert usage.busy("metric") <= metric_names


def parameter_plan() -> tuple[list[Resource], dict[str, cost.Price]]:
    """``small_plan`` with ``secretStore: ssm`` and ``queueTriggers: paused`` (the dev
    profile), and the Parameter Store and KMS prices."""
    plan = []
    for r in small_plan():
        if r.type == cost.SECRET:
            r = resource(cost.PARAMETER, "secret", r.parent, name="/t/rrs-key", type="SecureString")
        elif r.type == "aws:iam/rolePolicy:RolePolicy":
            r = resource(r.type, r.name, r.parent, policy=json.dumps({"Statement": [{
                "Effect": "Allow", "Action": ["ssm:GetParameter"],
                "Resource": ["arn:aws:ssm:eu-west-2:1:parameter/t/rrs-key"],
            }]}))
        elif r.type == cost.MAPPING:
            r = resource(r.type, r.name, r.parent, eventSourceArn=r.inputs["eventSourceArn"], enabled=False)
        plan.append(r)
    rates = {
        **prices(),
        **{key: cost.Price(key, unit, {"eu-west-2": usd}, "https://example.com/p", "2026-12-01")
           for key, unit, usd in (("ssm_standard_parameter", "parameter-month", 0.0),
                                  ("ssm_standard_api_calls", "10k calls", 0.0),
                                  ("ssm_higher_throughput_api_calls", "10k calls", 0.05),
                                  ("kms_requests", "10k requests", 0.03))},
    }
    return plan, rates


def test_a_parameter_store_secret_and_a_paused_queue_trigger_cost_nothing_a_month() -> None:
    # A standard SecureString parameter has no monthly charge and its GetParameter calls none
    # at standard throughput; each read decrypts once under aws/ssm (a KMS request). A
    # disabled mapping polls nothing.
    plan, rates = parameter_plan()
    items = cost.estimate(plan, IDLE, rates, idle=True)
    found = kinds(items)
    assert "sqs" not in found
    assert found["secrets"] == pytest.approx(round(2920 * 0.03 / 10_000, 6))
    whats = {i.what for i in items if i.kind == "secrets"}
    assert whats == {"SecureString parameters", "GetParameter calls", "KMS decrypts of SecureStrings"}


def test_higher_throughput_is_an_option_priced_on_the_stacks_own_parameter_reads() -> None:
    # Not in the bill (an account and region setting); 2,920 reads a month at $0.05 per 10k.
    plan, rates = parameter_plan()
    items = cost.estimate(plan, IDLE, rates, idle=True)
    assert cost.higher_throughput(items, rates) == pytest.approx(2920 * 0.05 / 10_000)
    assert "ssm_higher_throughput_api_calls" not in {i.price for i in items}


def test_dev_pauses_its_queue_triggers_and_prod_does_not(graphs: GraphCache) -> None:
    def sqs_mappings(stack: str) -> list[Resource]:
        return [m for m in graphs.run(stack).of_type(cost.MAPPING)
                if str(m.inputs["eventSourceArn"]).startswith("arn:aws:sqs:")]

    assert len(sqs_mappings("dev")) == len(sqs_mappings("prod")) == 7  # dm-stage: issue 43
    assert {m.inputs.get("enabled") for m in sqs_mappings("dev")} == {False}
    assert {m.inputs.get("enabled") for m in sqs_mappings("prod")} == {True}


# Expected and worst case, SMS, cost per unit -------------------------------------------------


def test_a_usage_figure_above_the_codes_max_tokens_is_refused() -> None:
    caps = cost.model_caps()
    assert caps["ler-normalize"] == (300,) and caps["rrs-sender"] == (400, 600)  # from the code
    over = cost.Usage(resources={"function:ler-dedupe": {"model_calls_per_request": 1,
                                                         "output_tokens_per_call": 300}})
    with pytest.raises(cost.CostError, match="ler-dedupe output_tokens_per_call 300 is above the code's max_tokens 200"):
        cost.check_caps(over, caps)
    none = cost.Usage(resources={"function:ls-capture": {"model_calls_per_request": 1}})
    with pytest.raises(cost.CostError, match="its code makes none"):
        cost.check_caps(none, caps)
    cost.check_caps(cost.load_usage(), caps)  # the shipped usage file is within the caps


def test_expected_prices_the_calls_the_code_makes_and_the_budget_every_call_at_its_cap() -> None:
    plan = small_plan()
    usage = cost.Usage(defaults=IDLE.defaults, resources={"function:rrs-sync": {
        "monthly_requests": 80, "model_calls_per_request": 0.25, "max_model_calls_per_request": 2,
        "input_tokens_per_call": 1000, "output_tokens_per_call": 100}})
    caps = {"rrs-sync": (400, 600)}
    table = {**prices(), **{key: cost.Price(key, "1M tokens", {"eu-west-2": 1.0}, "https://example.com", "2026-12-01")
                            for key in ("bedrock_haiku_input", "bedrock_haiku_output")}}
    expected = cost.estimate(plan, usage, table, idle=False, assumptions=cost.Assumptions(caps=caps))
    budget = cost.estimate(plan, usage, table, idle=False,
                           assumptions=cost.Assumptions(caps=caps, budget=True))
    tokens = {i.what: i.quantity for i in expected if i.kind == "bedrock"}
    worst = {i.what: i.quantity for i in budget if i.kind == "bedrock"}
    requests = 2920 + 80  # the schedule's runs and the volume's
    # A quarter of the requests call the model, with an answer of the expected length...
    assert tokens == {"model input tokens": requests * 0.25 * 1000 / 1e6,
                      "model output tokens": requests * 0.25 * 100 / 1e6}
    # ...and the budget: both calls every time, each answer at its own cap (400 + 600).
    assert worst == {"model input tokens": requests * 2 * 1000 / 1e6,
                     "model output tokens": requests * (400 + 600) / 1e6}


def test_sms_is_a_line_per_destination_country_and_an_unpriced_country_is_an_error() -> None:
    table = {**prices(), "sms_outbound_gb": cost.Price(
        "sms_outbound_gb", "SMS message part", {"eu-west-2": 0.05}, "https://example.com", "2026-12-01")}
    usage = cost.Usage(defaults=IDLE.defaults, resources={"function:rrs-sync": {
        "monthly_requests": 80, "sms_sent_per_request": 0.1}})
    items = cost.estimate(small_plan(), usage, table, idle=False,
                          assumptions=cost.Assumptions(sms_countries={"rrs": "GB"}))
    [sms] = [i for i in items if i.kind == "sms"]
    # (2,920 scheduled runs + 80) x 0.1 = 300 messages at $0.05
    assert sms.what == "text messages to GB"
    assert sms.quantity == pytest.approx(300) and sms.usd == pytest.approx(15.0)
    with pytest.raises(cost.CostError, match=r"prices\.yaml has no price sms_outbound_us"):
        cost.estimate(small_plan(), usage, table, idle=False,
                      assumptions=cost.Assumptions(sms_countries={"rrs": "US"}))


def test_prod_prints_sms_expected_worst_case_and_cost_per_unit(
    graphs: GraphCache, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    prod = graphs.run("prod")
    monkeypatch.setattr(cost, "stack_cost", lambda stack, usage, prices: cost.graph_cost(prod, usage, prices))
    assert cost.main(["--stack", "prod"]) == 0
    out = capsys.readouterr().out
    assert "at volumes expected $" in out and "worst case (budget) $" in out
    assert "| sms |" in out and "of which SMS $" in out
    c = cost.graph_cost(prod, cost.load_usage(), cost.load_prices())
    assert cost.total(c.budget) > cost.total(c.busy) > cost.total(c.idle)
    assert set(c.per_unit) == set(cost.UNITS) and all(set(v) == {1, 10, 100} for v in c.per_unit.values())
    # A unit's cost at 1x is its system's expected bill over its units (500 leads a month).
    assert c.per_unit["ler"][1] == pytest.approx(cost.by(c.busy, "system")["ler"] / 500)
    # ler at the code's rate is far below one call per step for every lead.
    ler_model = sum(i.usd for i in c.busy if i.system == "ler" and i.kind == "bedrock")
    assert ler_model < sum(i.usd for i in c.budget if i.system == "ler" and i.kind == "bedrock") / 3
    for unit in cost.UNITS.values():
        assert f"| {unit} |" in out


def test_init_is_billed_per_cold_start_at_the_functions_memory() -> None:
    """Lambda bills INIT since 1 August 2025 (components/offline/cold_start.py): each cold
    start imports the handler, whose CPU at one vCPU takes 1,769 / 512 times longer at 512 MB
    and is billed at 0.5 GB."""
    figures = cost.Assumptions(init_cpu_ms={"rrs-sync": 100.0, "other": 300.0})
    items = cost.estimate(small_plan(), IDLE, prices(), idle=True, assumptions=figures)
    [init] = [i for i in items if i.what == "INIT GB-seconds (cold starts)"]
    # 2,920 runs, every one cold: 2,920 x 0.1 s x 1769/512 x 0.5 GB = 504.4 GB-s x $0.001
    assert init.kind == "lambda"
    assert init.usd == pytest.approx(2920 * 0.1 * 1769 / 512 * 0.5 * 0.001)
    assert init.usd == pytest.approx(0.5044, abs=1e-4)
    # Half the requests cold: half the INIT; a function with no figure: the largest one.
    half = cost.Usage(defaults={**IDLE.defaults, "function": {**IDLE.defaults["function"], "cold_start_share": 0.5}})
    [halved] = [i for i in cost.estimate(small_plan(), half, prices(), idle=True, assumptions=figures)
                if i.what.startswith("INIT")]
    assert halved.usd == pytest.approx(init.usd / 2)
    unknown = cost.Assumptions(init_cpu_ms={"other": 300.0})
    [largest] = [i for i in cost.estimate(small_plan(), IDLE, prices(), idle=True, assumptions=unknown)
                 if i.what.startswith("INIT")]
    assert largest.usd == pytest.approx(init.usd * 3)
