"""Issues 14 and 28: every failure path ends in a DLQ or destination on both stacks, and at an
alarm that emails somebody in prod.

Prod (alarm profile ``failures``): every dead-letter and failure queue has its depth alarm,
every work queue its age alarm, every function whose failures nothing keeps (a Function URL)
its Errors alarm, each region one Throttles alarm; each alarm notifies the alert topic of its
own region, which admits CloudWatch and emails the alert address. Dev (profile ``none``): no
alarm, no dashboard, no key, and still every schedule a DLQ and every asynchronously invoked
function an on-failure destination. Tracing follows the stack setting.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pulumi_aws as aws
import pytest

from components.offline.engine import Graph, Resource, run_program, stack_config_values
from components.offline.policy_view import evaluate_graph
from tests.infra.graph_helpers import run

ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
QUEUE = "aws:sqs/queue:Queue"
FUNCTION = "aws:lambda/function:Function"
SCHEDULE = "aws:scheduler/schedule:Schedule"
INVOKE_CONFIG = "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig"


@pytest.fixture(scope="module", params=["dev", "prod"])
def graph(request: pytest.FixtureRequest) -> Graph:
    return run(request.param)


@pytest.fixture(scope="module")
def prod() -> Graph:
    return run("prod")


PUBLIC = {"dm-merge", "ler-intake", "ler-rescue", "ls-capture", "ls-report", "upsr-order", "upsr-addlink", "upsr-compliance", "rrs-webhook"}
"""The functions with a Function URL: their caller gets the error and no queue keeps it."""


def _region(graph: Graph, resource: Resource) -> str:
    providers = {p.urn: p.inputs["region"] for p in graph.of_type("pulumi:providers:aws")}
    ref = resource.provider or ""
    for urn, region in providers.items():
        if ref.startswith(urn):
            return str(region)
    # Children inherit the provider of their component.
    parent = resource.parent
    while parent:
        node = graph.by_urn(parent)
        for urn, region in providers.items():
            if (node.provider or "").startswith(urn):
                return str(region)
        parent = node.parent
    raise AssertionError(f"no provider for {resource.name}")


def _alarms(graph: Graph) -> dict[tuple[str, str], list[Resource]]:
    """(dimension value, metric) -> alarms."""
    found: dict[tuple[str, str], list[Resource]] = defaultdict(list)
    for alarm in graph.of_type(ALARM):
        dims = alarm.inputs.get("dimensions") or {}
        if dims and "FunctionName" not in dims and "QueueName" not in dims:
            continue  # a business-metric alarm: tested in test_every_system_that_can_degrade_has_one_degraded_alarm
        values = list(dims.values()) or [""]
        (value,) = values
        found[(value, alarm.inputs["metricName"])].append(alarm)
    return found


def _arn_name(arn: str) -> str:
    return arn.rsplit(":", 1)[-1]


def test_errors_are_alarmed_where_no_watched_queue_keeps_the_failure(prod: Graph) -> None:
    alarms = _alarms(prod)
    functions = prod.of_type(FUNCTION)
    assert len(functions) == 30  # dm-stage: issue 43
    with_errors = {name for (name, metric) in alarms if metric == "Errors"}
    assert with_errors == {f"prod-{f}" for f in PUBLIC}
    assert not any(metric == "Duration" for _, metric in alarms)  # a timeout is an Error
    throttles = [a for a in prod.of_type(ALARM) if a.inputs["metricName"] == "Throttles"]
    assert sorted(_region(prod, a) for a in throttles) == ["eu-west-2", "us-east-1"]
    assert all(not a.inputs.get("dimensions") for a in throttles)  # the region's functions


def test_dev_declares_no_alarm_dashboard_or_key_and_keeps_every_failure_path() -> None:
    dev = run("dev")
    assert dev.config.alarms == "none"
    assert dev.of_type(ALARM) == []
    assert dev.of_type("aws:cloudwatch/dashboard:Dashboard") == []
    assert dev.of_type("aws:kms/key:Key") == []
    (budget_topic,) = dev.of_type("aws:sns/topic:Topic")  # the budget alarm stays
    assert budget_topic.inputs["name"] == "dev-budget-alerts"
    assert "kmsMasterKeyId" not in budget_topic.inputs
    for fn in dev.of_type(FUNCTION):
        assert fn.inputs["environment"]["variables"]["POWERTOOLS_METRICS_DISABLED"] == "true"
    targets = _failure_targets(dev)
    assert {f"dev-{q}" for q in ("dm-blocks-dlq", "ls-stitch-failures", "rrs-work-dlq")} <= targets
    assert evaluate_graph(dev) == []


def test_prod_shares_its_us_east_1_alarm_topic_with_the_budget(prod: Graph) -> None:
    # One key per region with systems, unless the topics go unencrypted (alertTopicKey: none).
    keyed = prod.config.alert_topic_key == "customer-managed"
    assert len(prod.of_type("aws:kms/key:Key")) == (2 if keyed else 0)
    (budget,) = prod.of_type("aws:budgets/budget:Budget")
    (notification, *_) = budget.inputs["notifications"]
    topic = "arn:aws:sns:us-east-1:123456789012:prod-alarms-us-east-1"
    assert notification["subscriberSnsTopicArns"] == [topic]
    policy = next(
        p for p in prod.of_type("aws:sns/topicPolicy:TopicPolicy") if p.inputs["arn"] == topic
    )
    principals = [s["Principal"] for s in json.loads(policy.inputs["policy"])["Statement"]]
    assert {"Service": "budgets.amazonaws.com"} in principals
    assert {"Service": "cloudwatch.amazonaws.com"} in principals


def _failure_targets(graph: Graph) -> set[str]:
    """Every queue something names as its dead-letter or failure destination."""
    names: set[str] = set()
    for q in graph.of_type(QUEUE):
        if q.inputs.get("redrivePolicy"):
            names.add(_arn_name(json.loads(q.inputs["redrivePolicy"])["deadLetterTargetArn"]))
        if q.inputs.get("tags", {}).get("crm:dead-letter-of"):
            names.add(q.inputs["name"])
    for s in graph.of_type(SCHEDULE):
        names.add(_arn_name(s.inputs["target"]["deadLetterConfig"]["arn"]))
    for c in graph.of_type(INVOKE_CONFIG):
        names.add(_arn_name(c.inputs["destinationConfig"]["onFailure"]["destination"]))
    for m in graph.of_type("aws:lambda/eventSourceMapping:EventSourceMapping"):
        if dest := (m.inputs.get("destinationConfig") or {}).get("onFailure"):
            names.add(_arn_name(dest["destinationArn"]))
    for t in graph.of_type("aws:cloudwatch/eventTarget:EventTarget"):
        if dlq := t.inputs.get("deadLetterConfig"):
            names.add(_arn_name(dlq["arn"]))
    return names


def test_every_dead_letter_and_failure_queue_alarms_on_one_message(prod: Graph) -> None:
    graph = prod
    alarms = _alarms(graph)
    targets = _failure_targets(graph)
    prefix = graph.config.prefix
    # the six unwatched in the issue, now watched, and everything added since
    for seed in (
        "dm-blocks-dlq",
        "dm-merges-dlq",
        "ls-stitch-failures",
        "rrs-work-dlq",
        "rrs-escalations-dlq",
        "upsr-jobs-dlq",
        "ler-dlq",
        "ler-intake-dlq",
    ):
        assert f"{prefix}-{seed}" in targets
    for name in targets:
        (alarm,) = alarms[(name, "ApproximateNumberOfMessagesVisible")]
        assert (alarm.inputs["comparisonOperator"], alarm.inputs["threshold"]) == (
            "GreaterThanThreshold",
            0,
        )
    every_queue = {q.inputs["name"] for q in graph.of_type(QUEUE)}
    work = {q.inputs["name"] for q in graph.of_type(QUEUE) if q.inputs.get("redrivePolicy")}
    assert every_queue == targets | work  # no queue is neither
    for name in work:
        (age,) = alarms[(name, "ApproximateAgeOfOldestMessage")]
        redrive = json.loads(graph.named(QUEUE, name).inputs["redrivePolicy"])
        visibility = graph.named(QUEUE, name).inputs["visibilityTimeoutSeconds"]
        assert age.inputs["threshold"] == redrive["maxReceiveCount"] * visibility


ASYNC = {
    "dm-block",
    "dm-merge",
    "rrs-sweep",
    "rrs-sync",
    "upsr-sender",
    "upsr-sweep",
    "upsr-catalog-sync",
}
"""The seven schedule-invoked functions issue 14 names (ler's had destinations already)."""


def test_every_schedule_has_a_dlq_and_every_async_function_a_destination(graph: Graph) -> None:
    prefix = graph.config.prefix
    configs = {c.inputs["functionName"]: c for c in graph.of_type(INVOKE_CONFIG)}
    for name in ASYNC:
        destination = configs[f"{prefix}-{name}"].inputs["destinationConfig"]["onFailure"]
        assert destination["destination"].endswith(f":{prefix}-{name}-failures")
        role = f"{prefix}-{name}-role"
        policy = next(
            p for p in graph.of_type("aws:iam/rolePolicy:RolePolicy") if p.inputs["role"] == role
        )
        statements = json.loads(policy.inputs["policy"])["Statement"]
        assert {
            "Sid": f"AsyncFailure{''.join(p.capitalize() for p in f'{name}-failures'.split('-'))}",
            "Effect": "Allow",
            "Action": ["sqs:SendMessage"],
            "Resource": [destination["destination"]],
        } in statements
    for schedule in graph.of_type(SCHEDULE):
        target = schedule.inputs["target"]
        function = target["arn"].rsplit(":", 1)[-1]
        assert function in configs, function  # the scheduled function has a destination
        dlq = target["deadLetterConfig"]["arn"]
        role = target["roleArn"].rsplit("/", 1)[-1]
        policy = next(
            p for p in graph.of_type("aws:iam/rolePolicy:RolePolicy") if p.inputs["role"] == role
        )
        sends = [
            s
            for s in json.loads(policy.inputs["policy"])["Statement"]
            if s["Action"] == ["sqs:SendMessage"]
        ]
        assert sends and sends[0]["Resource"] == [dlq]  # Scheduler sends with the schedule's role


def test_the_request_schedules_created_at_run_time_have_their_dlq(graph: Graph) -> None:
    prefix = graph.config.prefix
    webhook = graph.named(FUNCTION, f"{prefix}-rrs-webhook")
    dlq = webhook.inputs["environment"]["variables"]["SCHEDULE_DLQ_ARN"]
    assert dlq.endswith(f":{prefix}-rrs-request-schedules-dlq")
    watched = (_arn_name(dlq), "ApproximateNumberOfMessagesVisible") in _alarms(graph)
    assert watched is (graph.config.alarms == "failures")


def test_not_run_alarms_where_the_window_fits_cloudwatch(prod: Graph) -> None:
    graph = prod
    prefix = graph.config.prefix
    not_run = {
        a.inputs["dimensions"]["FunctionName"]: a.inputs
        for a in graph.of_type(ALARM)
        if a.inputs["metricName"] == "Invocations"
    }
    expected = {
        "ler-retry",
        "ler-backfill",
        "ler-digest",
        "upsr-sender",
        "upsr-sweep",
        "upsr-catalog-sync",
        "rrs-sweep",
        "rrs-sync",
        "dm-merge",  # its dm-sweep schedule (issue 27)
    }
    assert set(not_run) == {f"{prefix}-{n}" for n in expected}  # the weekly dm jobs: 14 days
    for alarm in not_run.values():
        assert alarm["treatMissingData"] == "breaching"
        assert (alarm["comparisonOperator"], alarm["threshold"]) == ("LessThanThreshold", 1)
        total = alarm["period"] * alarm["evaluationPeriods"]
        assert total <= (86400 if alarm["period"] < 3600 else 604800)
    assert not_run[f"{prefix}-rrs-sweep"]["period"] == 1800  # rate(15 minutes), two intervals
    daily = not_run[f"{prefix}-ler-backfill"]
    assert (daily["period"], daily["evaluationPeriods"]) == (86400, 2)


def test_each_alarm_notifies_the_alert_topic_of_its_own_region(prod: Graph) -> None:
    graph = prod
    topics = {
        (t.inputs["name"], _region(graph, t)): t for t in graph.of_type("aws:sns/topic:Topic")
    }
    alarms = graph.of_type(ALARM)
    assert len(alarms) == 63  # 28 dlq-depth, 9 not-run, 9 errors, 7 queue-age,
    # 3 degraded (one per system that can degrade), 3 spend-cap (one per system that pays per
    # call), 2 unconfirmed-send, 2 throttles
    for alarm in alarms:
        region = _region(graph, alarm)
        (action,) = alarm.inputs["alarmActions"]
        assert alarm.inputs["okActions"] == [action]
        _, _, service, topic_region, _, name = action.split(":")
        assert (service, topic_region) == ("sns", region), alarm.inputs["name"]
        assert (name, region) in topics
    emails = {
        s.inputs["topic"]: s.inputs["endpoint"]
        for s in graph.of_type("aws:sns/topicSubscription:TopicSubscription")
    }
    for region in ("us-east-1", "eu-west-2"):
        topic = f"arn:aws:sns:{region}:123456789012:{graph.config.prefix}-alarms-{region}"
        assert emails[topic] == graph.config.alert_email
        policy = next(
            p for p in graph.of_type("aws:sns/topicPolicy:TopicPolicy") if p.inputs["arn"] == topic
        )
        principals = [s["Principal"] for s in json.loads(policy.inputs["policy"])["Statement"]]
        assert {"Service": "cloudwatch.amazonaws.com"} in principals


def test_tracing_follows_the_stack_setting(graph: Graph) -> None:
    on = graph.config.tracing
    assert on is (graph.stack == "prod")
    for fn in graph.of_type(FUNCTION):
        tracing = fn.inputs.get("tracingConfig")
        assert (tracing == {"mode": "Active"}) is on, fn.inputs["name"]
        env = fn.inputs["environment"]["variables"]
        assert env["POWERTOOLS_TRACE_DISABLED"] == ("false" if on else "true")
        assert env["POWERTOOLS_METRICS_NAMESPACE"] == f"crm/{graph.config.prefix}"
    xray = [
        s
        for p in graph.of_type("aws:iam/rolePolicy:RolePolicy")
        for s in json.loads(p.inputs["policy"])["Statement"]
        if s.get("Sid") == "WriteTraces"
    ]
    assert len(xray) == (30 if on else 0)
    assert all(
        s["Action"] == ["xray:PutTelemetryRecords", "xray:PutTraceSegments"]
        and s["Resource"] == ["*"]
        for s in xray
    )


def test_one_dashboard_drawn_from_every_function_and_queue(prod: Graph) -> None:
    graph = prod
    (board,) = graph.of_type("aws:cloudwatch/dashboard:Dashboard")
    assert board.inputs["dashboardName"] == f"{graph.config.prefix}-crm-automations"
    body = json.loads(board.inputs["dashboardBody"])
    drawn: set[str] = set()
    namespaces: set[str] = set()
    for widget in body["widgets"]:
        for line in widget.get("properties", {}).get("metrics", []):
            if line and isinstance(line[0], str):
                namespaces.add(line[0])
                drawn.update(v for v in line if isinstance(v, str))
    for fn in graph.of_type(FUNCTION):
        assert fn.inputs["name"] in drawn
    for q in graph.of_type(QUEUE):
        assert q.inputs["name"] in drawn
    assert namespaces == {"AWS/Lambda", "AWS/SQS", f"crm/{graph.config.prefix}"}
    for metric in ("PairsScored", "LeadsJunked", "Enquiries", "Taps", "Asks"):
        assert metric in drawn
    assert "ColdStart" not in drawn  # a log field, not a billed series per function
    # The fallbacks that must not be silent, per system that can take them (item 4 of #25).
    searches = {
        line[0]["expression"]
        for widget in body["widgets"]
        for line in widget.get("properties", {}).get("metrics", [])
        if line and isinstance(line[0], dict) and "SEARCH(" in line[0].get("expression", "")
    }
    assert "Degraded" in drawn
    for system in ("ler", "upsr", "rrs"):
        for kind in ("ModelRefused", "CustomerRedacted", "CrmRejected"):
            assert any(f'MetricName="{kind}"' in q and f'service="{system}"' in q for q in searches)
    assert not any('service="dm"' in q or 'service="ls"' in q for q in searches)


def _unwatched_function() -> dict[str, Any]:
    """A function declared by hand, outside ScopedLambda: no alarms."""
    aws.lambda_.Function(
        "by-hand",
        name="prod-ls-by-hand",
        role="arn:aws:iam::123456789012:role/prod-ls-by-hand-role",
        runtime="python3.14",
        handler="handlers.source_attributor.functions.report.handler",
    )
    return {}


def test_the_policy_pack_catches_a_function_declared_without_alarms() -> None:
    values = stack_config_values("prod")
    resources, _ = run_program(_unwatched_function, stack="prod", values=values)
    clean = run("prod")
    graph = Graph(
        stack="prod", config=clean.config, resources=clean.resources + resources, outputs={}
    )
    found = [v for v in evaluate_graph(graph) if v.policy_name == "failures-are-watched"]
    assert [v.message for v in found] == [
        "function prod-ls-by-hand has no Errors alarm, and not every way it is invoked keeps a "
        "final failure in a queue whose depth is alarmed"
    ]


def test_the_plan_lists_each_function_with_its_alarms(graph: Graph) -> None:
    from components.offline.plan import render

    text = render(graph)
    prefix = graph.config.prefix
    block = text.split(f"  function dm-block  ({prefix}-dm-block")[1].split("  function ")[0]
    assert f"failure  async invocations, after retries -> sqs:{prefix}-dm-block-failures" in block
    assert "NO DLQ" not in text
    if graph.config.alarms == "none":
        assert "    alarm    " not in text
        return
    order = text.split(f"  function upsr-order  ({prefix}-upsr-order")[1].split("  function ")[0]
    assert "    alarm    errors: Errors Sum > 0 over 1 x 300 s" in order
    sweep = text.split(f"  function rrs-sweep  ({prefix}-rrs-sweep")[1].split("  function ")[0]
    assert "    alarm    not-run: Invocations Sum < 1 over 1 x 1800 s (missing = breaching)" in sweep
    assert "alarms   63: " in text and "NOBODY" not in text


def test_more_subscribers_from_config_are_emailed_by_every_alarm_topic() -> None:
    graph = run("prod", {"alertSubscribers": ["owner@example.org", "ops@example.com"]})
    by_topic: dict[str, set[str]] = defaultdict(set)
    for s in graph.of_type("aws:sns/topicSubscription:TopicSubscription"):
        by_topic[s.inputs["topic"]].add(s.inputs["endpoint"])
    for region in ("us-east-1", "eu-west-2"):
        topic = f"arn:aws:sns:{region}:123456789012:prod-alarms-{region}"
        assert by_topic[topic] == {"ops@example.com", "owner@example.org"}  # no duplicate


def test_every_system_that_can_degrade_has_one_degraded_alarm(graph: Graph) -> None:
    """A fallback that must not be silent (a refused model, a redacted Shopify customer, a
    HubSpot required-property refusal) is counted as ``Degraded`` for its system, and that one
    series is watched once per system: every system holding a model caller, plus upsr (redacted
    customers in upsr-order) and ler (CRM refusals in ler-push)."""
    from handlers.common.metrics import DEGRADED

    def role_actions(fn: Resource) -> set[str]:
        assert fn.parent is not None, fn.name  # a function is its component's child, beside its role
        actions: set[str] = set()
        for policy in graph.children(graph.by_urn(fn.parent)):
            if policy.type == "aws:iam/rolePolicy:RolePolicy":
                for st in policy.policy_statements():
                    action = st.get("Action", [])
                    actions.update([action] if isinstance(action, str) else action)
        return actions

    callers = {
        fn.inputs["name"].removeprefix(f"{graph.config.prefix}-").split("-", 1)[0]
        for fn in graph.of_type(FUNCTION)
        if "bedrock:InvokeModel" in role_actions(fn)
    }
    assert callers == {"ler", "upsr", "rrs"}
    degraded = sorted(
        a.inputs["dimensions"]["service"]
        for a in graph.of_type(ALARM)
        if (a.inputs.get("tags") or {}).get("crm:alarm-kind") == "degraded"
    )
    # A developer's stack without alarms still counts the fallbacks (the metric), alarms none.
    assert degraded == ([] if graph.config.alarms == "none" else sorted(callers | {"ler", "upsr"}))
    for alarm in graph.of_type(ALARM):
        if (alarm.inputs.get("tags") or {}).get("crm:alarm-kind") == "degraded":
            assert alarm.inputs["metricName"] == DEGRADED
            assert alarm.inputs["namespace"] == f"crm/{graph.config.prefix}"
            assert alarm.inputs["alarmActions"] and alarm.inputs["threshold"] == 0




def test_every_system_that_pays_per_call_has_one_spend_cap_alarm(graph: Graph) -> None:
    """Issue #41: ler, upsr and rrs each reserve their paid calls against daily caps
    (handlers/common/spend.py); the day's first refusal of a cap is counted once as
    ``SpendCapReached`` for its system, and that series is alarmed once per system, in five
    minutes, to the region's alert topic."""
    from handlers.common.metrics import SPEND_CAP_REACHED

    capped = {
        a.inputs["dimensions"]["service"]: a
        for a in graph.of_type(ALARM)
        if (a.inputs.get("tags") or {}).get("crm:alarm-kind") == "spend-cap"
    }
    assert sorted(capped) == ([] if graph.config.alarms == "none" else ["ler", "rrs", "upsr"])
    for alarm in capped.values():
        assert alarm.inputs["metricName"] == SPEND_CAP_REACHED
        assert alarm.inputs["namespace"] == f"crm/{graph.config.prefix}"
        assert (alarm.inputs["period"], alarm.inputs["threshold"]) == (300, 0)
        assert alarm.inputs["alarmActions"]
