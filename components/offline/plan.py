"""``make plan STACK=dev``: the stack's plan and policy verdict, computed on the mock engine.

Prints, per system and function: triggers, grants (actions on resources), public surface;
then tables with their keys, queues, buckets, schedules; then the external API versions in use
with their support windows (a version outside its window is a warning, not a failure); then
the policy pack's verdict and the two-stack check (every ``Pulumi.<stack>.yaml`` built
together, as the one account holds them: ``components/offline/two_stacks.py``). Exits non-zero
on any violation or collision. ``--json FILE`` also writes every resource (type, logical name,
physical name, parent, region, inputs) for other tools; ``--base FILE`` compares this plan with
such a file and lists what the change replaces, deletes and creates, stateful resources first,
and exits non-zero when a protected stack would lose a table or bucket its ``allowReplacement``
does not name (``components/offline/replacements.py``); the Function URLs it moves, with what
outside AWS holds them, come before everything else (``components/offline/moved_addresses.py``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.config import ConfigError, api_version_warnings, api_version_windows
from components.offline import moved_addresses, replacements
from components.offline.engine import Graph, Resource, gsi_keys, listed, run
from components.offline.policy_view import evaluate_graph
from components.offline.two_stacks import check_project
from handlers.common import api_versions
from handlers.duplicate_merger import capacity

SECRET_TYPES = ("aws:secretsmanager/secret:Secret", "aws:ssm/parameter:Parameter")
"""Where a SecretSlot keeps a secret (the stack's ``secretStore``)."""

def _short(arn: str) -> str:
    """An ARN without the partition/region/account noise, for reading."""
    parts = arn.split(":", 5)
    if len(parts) == 6 and parts[0] == "arn":
        return f"{parts[2]}:{parts[5]}"
    return arn


ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"


def _alarm_line(alarm: Resource) -> str:
    """``errors: Errors Sum > 0 over 1 x 300 s -> sns:dev-alarms``."""
    i = alarm.inputs
    stat = i.get("statistic") or i.get("extendedStatistic")
    op = {
        "GreaterThanThreshold": ">",
        "GreaterThanOrEqualToThreshold": ">=",
        "LessThanThreshold": "<",
        "LessThanOrEqualToThreshold": "<=",
    }.get(i.get("comparisonOperator", ""), "?")
    kind = (i.get("tags") or {}).get("crm:alarm-kind", "?")
    missing = " (missing = breaching)" if i.get("treatMissingData") == "breaching" else ""
    actions = ", ".join(_short(a) for a in i.get("alarmActions") or []) or "NOBODY"
    return (
        f"{kind}: {i.get('metricName')} {stat} {op} {i.get('threshold'):g} over "
        f"{int(i.get('evaluationPeriods') or 1)} x {int(i.get('period') or 0)} s{missing} -> {actions}"
    )


def _alarms_on(graph: Graph, dimension: str, value: str) -> list[Resource]:
    found = [
        a for a in graph.of_type(ALARM) if (a.inputs.get("dimensions") or {}).get(dimension) == value
    ]
    return sorted(found, key=lambda a: str(a.inputs.get("name")))


@dataclass(frozen=True)
class FunctionFacts:
    """What the plan (and the docs' generated tables) say about one function."""

    function: str
    """The seed name (``dm-block``), from the ``crm:function`` tag."""
    name: str
    """The physical name (``dev-dm-block``)."""
    memory_mb: int
    timeout_s: int
    triggers: tuple[str, ...]
    """Function URL, event sources, rules, bucket notifications, schedules: the plan's words."""
    failure: str | None
    """Where an asynchronous invocation goes after Lambda's retries (short ARN)."""
    surface: str
    statements: tuple[dict[str, Any], ...]
    """Every statement of the function's role policy, as declared."""


def function_facts(graph: Graph, function: Resource) -> FunctionFacts:
    """Read one function's size, triggers, failure destination and grants from the graph."""
    name = function.inputs["name"]
    tags = function.inputs.get("tags") or {}
    component = graph.by_urn(function.parent) if function.parent else None
    siblings = sorted(graph.children(component), key=lambda r: r.name) if component else []
    triggers: list[str] = []
    surface = "none"
    for r in siblings:
        if r.type == "aws:lambda/eventSourceMapping:EventSourceMapping":
            source = str(r.inputs.get("eventSourceArn", "?"))
            filters = r.inputs.get("filterCriteria") or {}
            patterns = [f.get("pattern") for f in filters.get("filters", [])] if filters else []
            extra = f" filter {patterns}" if patterns else ""
            triggers.append(
                f"event source {_short(source)} batch {int(r.inputs.get('batchSize') or 0)}{extra}"
            )
        elif r.type == "aws:cloudwatch/eventRule:EventRule":
            triggers.append(
                f"EventBridge rule {r.inputs.get('name')} {r.inputs.get('eventPattern')}"
            )
        elif r.type == "aws:s3/bucketNotification:BucketNotification":
            for fn in r.inputs.get("lambdaFunctions", []):
                triggers.append(
                    f"S3 {r.inputs.get('bucket')}/{fn.get('filterPrefix', '')}* {fn.get('events')}"
                )
        elif r.type == "aws:lambda/functionUrl:FunctionUrl":
            auth = r.inputs.get("authorizationType")
            surface = (
                "PUBLIC Function URL (auth NONE)"
                if auth == "NONE"
                else f"Function URL (auth {auth})"
            )
            triggers.append(surface)
    # By name: the graph lists resources in the order the engine registered them, which varies.
    schedules = sorted(graph.of_type("aws:scheduler/schedule:Schedule"), key=lambda r: str(r.inputs.get("name")))
    for schedule in schedules:
        if (schedule.inputs.get("target") or {}).get("arn", "").endswith(f":function:{name}"):
            triggers.append(
                f"schedule {schedule.inputs.get('name')} {schedule.inputs.get('scheduleExpression')}"
            )
    failure = None
    for config in graph.of_type("aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig"):
        if config.inputs.get("functionName") == name:
            target = ((config.inputs.get("destinationConfig") or {}).get("onFailure") or {}).get(
                "destination", "?"
            )
            failure = _short(target)
    statements = tuple(
        st
        for policy in siblings
        if policy.type == "aws:iam/rolePolicy:RolePolicy"
        for st in policy.policy_statements()
    )
    return FunctionFacts(
        function=tags.get("crm:function", name),
        name=name,
        memory_mb=int(function.inputs.get("memorySize") or 0),
        timeout_s=int(function.inputs.get("timeout") or 0),
        triggers=tuple(triggers),
        failure=failure,
        surface=surface,
        statements=statements,
    )


def _function_lines(graph: Graph, function: Resource) -> Iterable[str]:
    facts = function_facts(graph, function)
    yield (
        f"  function {facts.function}  ({facts.name}, {facts.memory_mb} MB, {facts.timeout_s} s)"
    )
    for t in facts.triggers or ("(none)",):
        yield f"    trigger  {t}"
    if facts.failure is not None:
        yield f"    failure  async invocations, after retries -> {facts.failure}"
    for alarm in _alarms_on(graph, "FunctionName", facts.name):
        yield f"    alarm    {_alarm_line(alarm)}"
    surface = facts.surface if facts.surface != "none" else "none (not reachable from outside AWS)"
    yield f"    surface  {surface}"
    for st in facts.statements:
        actions = ", ".join(listed(st.get("Action")))
        resources = ", ".join(_short(a) for a in listed(st.get("Resource")))
        yield f"    grant    {st.get('Sid', '')}: {actions} on {resources}"


def system_components(graph: Graph) -> list[Resource]:
    """The stack's top-level components: the enabled systems in config order, then the rest
    (alert topics...) by name, so the plan prints the same order on every run."""
    order = list(graph.config.systems.enabled())
    found = [
        r
        for r in graph.resources
        if r.type.startswith("crm:index:")
        and r.parent
        and r.parent.endswith("pulumi:pulumi:Stack::crm-automations-" + graph.stack)
    ]
    # Registration order depends on RPC timing, so the name breaks ties.
    return sorted(
        found, key=lambda r: (order.index(r.name) if r.name in order else len(order), r.name)
    )


def functions_of(graph: Graph, system: Resource) -> list[Resource]:
    """The system's functions, in the plan's (stable) order."""
    return [r for r in _descendants(graph, system) if r.type == "aws:lambda/function:Function"]


def table_summary(table: Resource) -> str:
    """``dev-dm-pairs: PK pair_key; GSI by-review(review, score); TTL ttl``."""
    keys = f"PK {table.inputs.get('hashKey')}"
    if table.inputs.get("rangeKey"):
        keys += f", SK {table.inputs['rangeKey']}"
    extras = []
    for gsi in table.inputs.get("globalSecondaryIndexes") or []:
        extras.append(f"GSI {gsi['name']}({', '.join(k for k in gsi_keys(gsi) if k)})")
    ttl = table.inputs.get("ttl") or {}
    if ttl.get("attributeName"):
        extras.append(f"TTL {ttl['attributeName']}")
    if table.inputs.get("streamEnabled"):
        extras.append(f"stream {table.inputs.get('streamViewType')}")
    return f"{table.inputs['name']}: {keys}{'; ' + '; '.join(extras) if extras else ''}"


def queue_summary(queue: Resource) -> str:
    """``dev-dm-blocks -> DLQ dev-dm-blocks-dlq after 5`` (the name alone for a DLQ)."""
    redrive = queue.inputs.get("redrivePolicy")
    dlq = ""
    if isinstance(redrive, str):
        parsed = json.loads(redrive)
        dlq = f" -> DLQ {parsed['deadLetterTargetArn'].rsplit(':', 1)[-1]} after {parsed['maxReceiveCount']}"
    return f"{queue.inputs['name']}{dlq}"


def render(graph: Graph) -> str:
    """The human-readable plan."""
    lines = [
        f"stack {graph.stack}  prefix {graph.config.prefix}  environment {graph.config.environment}"
    ]
    order = list(graph.config.systems.enabled())
    if {"dm", "ler"} & set(order):
        # The version is config; its support window is HubSpot's (handlers/common/api_versions.py).
        window = api_versions.hubspot_window(graph.config.hubspot_api_version)
        lines.append(f"hubspot  {window.describe(dt.date.today())}")
    systems = system_components(graph)
    if not systems:
        lines.append("(no system enabled)")
    for system in systems:
        lines.append("")
        lines.append(f"system {system.name}  ({system.type.removeprefix('crm:index:')})")
        members = _descendants(graph, system)
        for function in functions_of(graph, system):
            lines.extend(_function_lines(graph, function))
        for table in [r for r in members if r.type == "aws:dynamodb/table:Table"]:
            lines.append(f"  table    {table_summary(table)}")
        for queue in [r for r in members if r.type == "aws:sqs/queue:Queue"]:
            lines.append(f"  queue    {queue_summary(queue)}")
            for alarm in _alarms_on(graph, "QueueName", queue.inputs["name"]):
                lines.append(f"    alarm    {_alarm_line(alarm)}")
        for bucket in [r for r in members if r.type == "aws:s3/bucket:Bucket"]:
            lines.append(f"  bucket   {bucket.inputs['bucket']}")
        for secret in [r for r in members if r.type in SECRET_TYPES]:
            lines.append(f"  secret   {secret.inputs['name']}")
        for schedule in [r for r in members if r.type == "aws:scheduler/schedule:Schedule"]:
            dead = (schedule.inputs["target"].get("deadLetterConfig") or {}).get("arn")
            lines.append(
                f"  schedule {schedule.inputs['name']} {schedule.inputs.get('scheduleExpression')}"
                f" -> {_short(schedule.inputs['target']['arn'])}"
                + (f", undelivered -> {_short(dead)}" if dead else ", NO DLQ")
            )
        for group in [r for r in members if r.type == "aws:scheduler/scheduleGroup:ScheduleGroup"]:
            lines.append(f"  schedule group {group.inputs['name']}")
    alarms = graph.of_type(ALARM)
    kinds: dict[str, int] = {}
    for alarm in alarms:
        kind = (alarm.inputs.get("tags") or {}).get("crm:alarm-kind", "?")
        kinds[kind] = kinds.get(kind, 0) + 1
    lines.append("")
    lines.append(
        f"alarms   {len(alarms)}: "
        + ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items()))
    )
    for board in graph.of_type("aws:cloudwatch/dashboard:Dashboard"):
        lines.append(f"dashboard {board.inputs.get('dashboardName')}")
    return "\n".join(lines)


def _descendants(graph: Graph, root: Resource) -> list[Resource]:
    found: list[Resource] = []
    frontier = [root.urn]
    while frontier:
        urn = frontier.pop(0)
        for r in graph.resources:
            if r.parent == urn:
                found.append(r)
                frontier.append(r.urn)
    # Registration order depends on RPC timing; sorting keeps the plan stable run to run.
    return sorted(found, key=lambda r: (r.physical_name or "", r.name))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="dev")
    parser.add_argument("--json", type=Path, help="write every resource as JSON to this file")
    parser.add_argument(
        "--base", type=Path, help="a plan saved with --json: show what this change replaces"
    )
    options = parser.parse_args(argv)
    try:
        graph = run(options.stack)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return 2
    if options.base:
        # First: what people outside AWS must update, before the ~100 lines of plan.
        print("\n".join(_moved_first(graph, options.base)) + "\n")
    print(render(graph))
    violations = evaluate_graph(graph)
    print()
    print(f"resources: {len(graph.resources)}")
    for line in api_version_windows(graph.config):
        print(f"external API: {line}")
    for warning in api_version_warnings(graph.config, dt.date.today()):
        print(f"warning: {warning}")  # a warning, never a failing exit code
    dm = graph.config.systems.dm
    if dm is not None and dm.enabled:
        lines = capacity.plan_lines(
            dm.portal_contacts, dm.full_read_every_weeks,
            split_above=dm.split_above, partition_contacts=dm.partition_contacts,
        )
        print("\n".join(lines))
    if violations:
        print(f"policy verdict: {len(violations)} violation(s)")
        for v in violations:
            print(
                f"  [{v.policy_name}] {v.message}"
                + (f"  ({v.urn.rsplit('::', 1)[-1]})" if v.urn else "")
            )
    else:
        print("policy verdict: clean (every rule of the pack passed)")
    # The account holds every stack at once: build the others and check the names they share.
    try:
        two_stacks = check_project(built={graph.stack: graph})
    except ConfigError as err:
        print(f"two-stack check: FAILED (another stack's config is invalid)\n{err}")
        return 1
    print("\n".join(two_stacks.lines()))
    if options.json:
        options.json.write_text(json.dumps(graph.to_json(), indent=2, sort_keys=True))
        print(f"wrote {len(graph.resources)} resources to {options.json}")
    allowed = _replacement_check(graph, options.base) if options.base else True
    return 1 if violations or not two_stacks.ok or not allowed else 0


def _moved_first(graph: Graph, base_path: Path) -> list[str]:
    """The addresses this plan moves against ``base_path`` (components/offline/moved_addresses.py);
    nothing when the base is another stack's (the replacement check refuses it)."""
    base = replacements.load(base_path)
    if replacements.stack_of(base) != graph.stack:
        return []
    return moved_addresses.report(replacements.changes(base, graph.to_json()), graph, base)


def _replacement_check(graph: Graph, base_path: Path) -> bool:
    """Print what this plan replaces against ``base_path``; False when the stack refuses it."""
    base = replacements.load(base_path)
    if (base_stack := replacements.stack_of(base)) != graph.stack:
        print(f"REFUSED: {base_path} is a plan of stack {base_stack}, not {graph.stack}")
        return False
    found = replacements.changes(base, graph.to_json())
    lines, ok = replacements.report(
        found,
        stack=graph.stack,
        protected=graph.config.environment == "prod",
        allowed=graph.config.allow_replacement,
    )
    print()
    print("\n".join(lines))
    return ok


if __name__ == "__main__":
    sys.exit(main())
