"""``make plan`` prints the stack's components in one order, whatever the registration order."""

from __future__ import annotations

import itertools

from components.config import from_pulumi_config
from components.offline.engine import Graph, Resource, stack_config_values
from components.offline.plan import system_components

STACK = "urn:pulumi:dev::crm-automations::pulumi:pulumi:Stack::crm-automations-dev"


def _component(kind: str, name: str) -> Resource:
    urn = f"urn:pulumi:dev::crm-automations::crm:index:{kind}::{name}"
    return Resource(f"crm:index:{kind}", name, urn, STACK, False, None, {})


def test_systems_in_config_order_then_the_alert_topics_by_name() -> None:
    config = from_pulumi_config(stack_config_values("dev"))
    parts = [
        _component("AlertTopic", "budget-alerts"),
        _component("AlertTopic", "alarms-us-east-1"),
        _component("ReviewRequests", "rrs"),
        _component("AlertTopic", "alarms-eu-west-2"),
        _component("DuplicateMerger", "dm"),
        _component("LeadEnricher", "ler"),
    ]
    orders = set()
    for registered in itertools.permutations(parts):
        graph = Graph(stack="dev", config=config, resources=list(registered), outputs={})
        orders.add(tuple(r.name for r in system_components(graph)))
    assert orders == {
        ("dm", "ler", "rrs", "alarms-eu-west-2", "alarms-us-east-1", "budget-alerts")
    }
