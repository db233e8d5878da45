"""Every delivery both stacks declare is admitted by the documents they declare; defect 2 and
defect 3 put back into either stack's real graph are found, without starting a sandbox."""

from __future__ import annotations

import pytest

from components.offline.engine import Graph
from sandbox.edits import Scope, with_inputs, with_schedule_trust
from sandbox.graph import Topology
from sandbox.service_audit import audit
from testsupport.graphs import shared

STACKS = ("dev", "prod")
"""Each stack's graph is read when a test needs it (testsupport/graphs.py), not at collection."""


@pytest.mark.parametrize("stack", STACKS)
def test_every_declared_delivery_is_admitted(stack: str) -> None:
    findings = audit(Topology.from_graph(shared().program(stack)))
    assert not findings, [f"{f.refusal.source}: {f.refusal.reason}" for f in findings]


@pytest.mark.parametrize("stack", STACKS)
@pytest.mark.parametrize("scope", ["schedule", "prefix"])
def test_defect_2_back_refuses_every_declared_schedule(stack: str, scope: Scope) -> None:
    topology = Topology.from_graph(with_schedule_trust(shared().program(stack), scope))
    refused = {
        f.refusal.source
        for f in audit(topology)
        if f.refusal.requirement.action == "sts:AssumeRole"
    }
    assert refused == {f"schedule:{s.name}" for s in topology.schedules}
    assert all(f.when == "deliver" for f in audit(topology))


@pytest.mark.parametrize("stack", STACKS)
def test_defect_3_back_refuses_the_budget_alert(stack: str) -> None:
    graph: Graph = shared().program(stack)
    (budget,) = graph.of_type("aws:budgets/budget:Budget")
    # Its own topic in dev, the us-east-1 alarm topic in prod (one key fewer: issue 28).
    topic = budget.inputs["notifications"][0]["subscriberSnsTopicArns"][0].rsplit(":", 1)[-1]
    broken = with_inputs(graph, "aws:sns/topic:Topic", topic, kmsMasterKeyId="alias/aws/sns")
    found = audit(Topology.from_graph(broken))
    # In prod the alarms publishing to the same topic are refused too.
    [finding] = [f for f in found if f.refusal.source.startswith("budget:")]
    assert all(f.refusal.document == "AWS managed key alias/aws/sns" for f in found)
    assert finding.refusal.document == "AWS managed key alias/aws/sns"
    assert finding.refusal.requirement.action == "kms:GenerateDataKey"
