"""Edited copies of a graph: how a test puts a deploy defect back into the real program's graph
(or takes it out) and watches the sandbox refuse (or admit) the delivery, without editing the
program. ``sandbox.graph.without_grant`` is the same idea for a role policy's grant."""

from __future__ import annotations

import copy
import json
from typing import Any, Literal

from components.offline.engine import ACCOUNT_ID, Graph
from sandbox.account import arns
from sandbox.graph import Topology
from sandbox.service_requests import SCHEDULER, schedule_group_arn


def with_inputs(graph: Graph, type_token: str, physical_name: str, **inputs: Any) -> Graph:
    """A copy of ``graph`` where one resource's inputs are changed (a dict or list is stored as
    the JSON string the program would have passed; None removes the input)."""
    edited = copy.deepcopy(graph)
    resource = edited.named(type_token, physical_name)
    for key, value in inputs.items():
        if value is None:
            resource.inputs.pop(key, None)
        else:
            resource.inputs[key] = (
                json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else value
            )
    return edited


Scope = Literal["group", "schedule", "prefix"]


def schedule_roles(graph: Graph) -> dict[str, tuple[str, str, str | None]]:
    """Every role that trusts Scheduler -> (region, schedule group, schedule name or None).

    Region and group come from the declared schedule that uses the role; for a role only
    handlers use (one-off schedules created at run time), from the ``aws:SourceArn`` its trust
    policy already names (``...:schedule/<group>/...`` or ``...:schedule-group/<group>``)."""
    t = Topology.from_graph(graph)
    found: dict[str, tuple[str, str, str | None]] = {}
    for s in t.schedules:
        found[s.role_arn.rsplit("/", 1)[-1]] = (s.region, s.group, s.name)
    for role, statements in t.trust_policies.items():
        if role in found or not any(_trusts_scheduler(st) for st in statements):
            continue
        for st in statements:
            for entries in (st.get("Condition") or {}).values():
                for key, value in entries.items():
                    if key.lower() != "aws:sourcearn":
                        continue
                    arn = str(value[0] if isinstance(value, list) else value)
                    region = arn.split(":")[3]
                    path = arn.split(":", 5)[5]
                    group = path.split("/")[1]
                    found[role] = (region, group, None)
    return found


def _trusts_scheduler(statement: dict[str, Any]) -> bool:
    services = (statement.get("Principal") or {}).get("Service") or []
    return SCHEDULER in ([services] if isinstance(services, str) else services)


def with_schedule_trust(graph: Graph, scope: Scope) -> Graph:
    """A copy of ``graph`` where every schedule role trusts Scheduler with ``aws:SourceArn``
    scoped to its schedule **group** (what Scheduler sends, so firings are admitted), or, as
    issue 12's defect 2 had it, to one **schedule**'s ARN or a schedule-name **prefix**
    (refused: "Do not scope the aws:SourceArn statement to a specific schedule or a schedule
    name prefix", EventBridge Scheduler User Guide, "Confused deputy prevention")."""
    edited = copy.deepcopy(graph)
    roles = schedule_roles(graph)
    for r in edited.of_type("aws:iam/role:Role"):
        name = str(r.inputs.get("name"))
        if name not in roles:
            continue
        region, group, schedule = roles[name]
        if scope == "group":
            condition = {"ArnEquals": {"aws:SourceArn": schedule_group_arn(region, group)}}
        elif scope == "schedule" and schedule is not None:
            arn = arns(region).schedule(group, schedule)
            condition = {"ArnEquals": {"aws:SourceArn": arn}}
        else:
            arn = arns(region).schedules_in_group(group)
            condition = {"ArnLike": {"aws:SourceArn": arn}}
        condition["StringEquals"] = {"aws:SourceAccount": ACCOUNT_ID}
        r.inputs["assumeRolePolicy"] = json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": SCHEDULER},
                        "Action": "sts:AssumeRole",
                        "Condition": condition,
                    }
                ],
            },
            sort_keys=True,
        )
    return edited
