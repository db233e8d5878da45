"""Each system's table of functions, sizes, triggers and grants, generated from the plan.

``make docs`` (components/offline/docs.py) runs the dev stack on the mock engine and writes,
into each system's page (docs/systems/<system>.md), a table read from the graph by the same
code as ``make plan`` (``components/offline/plan.py::function_facts``). A test fails when a
page differs, so the docs cannot restate a trigger, a size or a grant that the program no
longer declares.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from components.offline.engine import ACCOUNT_ID, Graph, Resource, listed, run
from components.offline.plan import (
    _descendants,
    _short,
    function_facts,
    functions_of,
    queue_summary,
    system_components,
    table_summary,
)

STACK = "dev"
"""The stack the tables show (prod has the same shape under the ``prod-`` prefix)."""

def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell; the account id reads as ``<account>``."""
    return text.replace(ACCOUNT_ID, "<account>").replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{_cell(text)}`"


def _actions(actions: list[str]) -> str:
    """``dynamodb:GetItem, PutItem; sqs:SendMessage``: each service named once."""
    by_service: dict[str, list[str]] = {}
    for action in actions:
        service, _, name = action.partition(":")
        by_service.setdefault(service, []).append(name)
    return "; ".join(f"{service}:{', '.join(names)}" for service, names in by_service.items())


def _conditions(statement: Mapping[str, Any]) -> str:
    keys = sorted({key for test in (statement.get("Condition") or {}).values() for key in test})
    return f" if {', '.join(keys)}" if keys else ""


def _resources(statement: Mapping[str, Any], services: set[str]) -> str:
    """Short ARNs (no partition, region, account), without the service when the actions name it."""
    shown: list[str] = []
    for arn in listed(statement.get("Resource")):
        short = _short(str(arn))
        service, _, rest = short.partition(":")
        if services == {service} and rest:
            short = rest
        if short not in shown:  # one model ARN per region reads the same without the region
            shown.append(short)
    return ", ".join(_code(r) for r in shown)


def _grant(statement: Mapping[str, Any]) -> str:
    actions = [str(a) for a in listed(statement.get("Action"))]
    services = {a.partition(":")[0] for a in actions}
    effect = "" if statement.get("Effect", "Allow") == "Allow" else "DENY "
    return (
        f"{effect}{statement.get('Sid', '')}: {_actions(actions)}"
        f" on {_resources(statement, services)}{_conditions(statement)}"
    )


# Every function's first statement writes its own log group: said once above the table.
_OWN_LOGS = "WriteOwnLogs"


def _trigger(text: str) -> str:
    """The plan's trigger line, names in code."""
    kind, _, rest = text.partition(" ")
    if text.startswith(("PUBLIC Function URL", "Function URL")):
        return _cell(text)
    if text.startswith("event source "):
        return f"event source {_code(text.removeprefix('event source '))}"
    if text.startswith("EventBridge rule "):
        name, _, pattern = text.removeprefix("EventBridge rule ").partition(" ")
        return f"EventBridge rule {_code(name)} {_code(pattern)}"
    if kind in ("schedule", "S3"):
        name, _, detail = rest.partition(" ")
        return f"{kind} {_code(name)} {_code(detail)}"
    return _cell(text)


def function_rows(graph: Graph, system: Resource) -> list[str]:
    rows = [
        "| function | memory / timeout | triggers | grants |",
        "|---|---|---|---|",
    ]
    for function in functions_of(graph, system):
        facts = function_facts(graph, function)
        triggers = [_trigger(t) for t in facts.triggers] or ["none (invoked by another function)"]
        if facts.failure is not None:
            triggers.append(f"async failures to {_code(facts.failure)}")
        grants = [_grant(st) for st in facts.statements if st.get("Sid") != _OWN_LOGS]
        rows.append(
            f"| `{facts.function}` | {facts.memory_mb} MB / {facts.timeout_s} s "
            f"| {'<br>'.join(triggers)} | {'<br>'.join(grants) or 'none'} |"
        )
    return rows


def _of(members: list[Resource], token: str) -> list[Resource]:
    return [r for r in members if r.type == token]


def resource_lines(graph: Graph, system: Resource) -> list[str]:
    members = _descendants(graph, system)
    lines: list[str] = []
    tables = _of(members, "aws:dynamodb/table:Table")
    if tables:
        lines.append("- tables: " + "; ".join(_code(table_summary(t)) for t in tables))
    queues = [q for q in _of(members, "aws:sqs/queue:Queue") if q.inputs.get("redrivePolicy")]
    if queues:
        lines.append("- work queues: " + "; ".join(_code(queue_summary(q)) for q in queues))
    for token, label, key in (
        ("aws:s3/bucket:Bucket", "buckets", "bucket"),
        ("aws:secretsmanager/secret:Secret", "secrets (created empty)", "name"),
        ("aws:ssm/parameter:Parameter", "secrets (SecureString parameters, set by make secrets)", "name"),
    ):
        found = _of(members, token)
        if found:
            lines.append(f"- {label}: " + ", ".join(_code(str(r.inputs[key])) for r in found))
    return lines


def render_system(graph: Graph, system: Resource) -> str:
    lines = [
        f"Read from the `{graph.stack}` stack's plan (`make plan STACK={graph.stack}`; prod has the"
        " same shape under `prod-`). Every function also writes its own log group.",
        "",
        *function_rows(graph, system),
        "",
        *resource_lines(graph, system),
    ]
    return "\n".join(lines)


def render(graph: Graph) -> dict[str, str]:
    """One block per enabled system, keyed by the system's key (``dm``...)."""
    enabled = set(graph.config.systems.enabled())
    return {
        system.name: render_system(graph, system)
        for system in system_components(graph)
        if system.name in enabled
    }


def main() -> int:
    print("\n\n".join(render(run(STACK)).values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
