"""The two-stack check: dev and prod from their stack files pass; a shared name is caught.

The real stacks are built on the mock engine from ``Pulumi.dev.yaml`` and ``Pulumi.prod.yaml``
(``components/offline/two_stacks.py``); the scoping rules are also checked on small graphs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.config import from_pulumi_config
from components.offline.engine import Graph, Resource, stack_config_values
from components.offline.two_stacks import ATTACHED, NAMES, check, check_project, stack_names
from tests.infra.graph_helpers import run


@pytest.fixture(scope="module")
def stacks() -> dict[str, Graph]:
    return {stack: run(stack) for stack in ("dev", "prod")}


def _systems(stack: str) -> dict[str, Any]:
    systems: dict[str, Any] = json.loads(stack_config_values(stack)["crm-automations:systems"])
    return systems


def test_the_project_has_the_two_stacks() -> None:
    assert stack_names() == ["dev", "prod"]


def test_dev_and_prod_from_their_stack_files_share_no_name(stacks: dict[str, Graph]) -> None:
    verdict = check_project(built=stacks)
    assert verdict.ok, "\n".join(verdict.lines())
    assert verdict.lines()[0].startswith("two-stack check: passed (dev + prod")
    # The kinds the issue names are all present in the graphs, so all were checked.
    assert {
        "SES identity",
        "active receipt rule set",
        "receipt rule set",
        "S3 bucket",
        "IAM role",
        "Lambda function",
        "log group",
        "SQS queue",
        "DynamoDB table",
        "SSM parameter",  # the secrets (secretStore: ssm in both stack files)
        "SNS topic",
        "schedule group",
        "schedule",
        "budget",
        "EventBridge rule",
    } <= verdict.kinds_checked
    assert verdict.references == 2  # example.com in us-east-1 and in eu-west-2


def test_every_resource_type_of_both_stacks_is_classified(stacks: dict[str, Graph]) -> None:
    types = {r.type for g in stacks.values() for r in g.resources if r.custom}
    assert types - set(NAMES) - ATTACHED == set()


def test_defect_1_both_stacks_owning_the_identities_and_the_active_rule_set_is_caught(
    stacks: dict[str, Graph],
) -> None:
    systems = _systems("dev")
    systems["ler"]["activateInboundRuleSet"] = True
    dev = run("dev", {"mailIdentityOwner": True, "systems": systems})
    verdict = check([dev, stacks["prod"]])
    assert not verdict.ok
    collided = {(c.what, c.scoped_name[1:]) for c in verdict.collisions}
    assert collided == {
        ("SES identity", ("us-east-1", "example.com")),
        ("SES identity", ("eu-west-2", "example.com")),
        ("active receipt rule set", ("eu-west-2",)),
    }
    text = "\n".join(verdict.lines())
    assert "two-stack check: FAILED" in text
    assert "dev:dev-eu-west-2-example.com, prod:prod-eu-west-2-example.com" in text
    assert "API_CreateEmailIdentity" in text


def test_one_prefix_for_both_stacks_collides_on_every_kind(stacks: dict[str, Graph]) -> None:
    """prod deployed with dev's prefix: every per-account and per-region name is claimed twice."""
    twin = run("prod", {"prefix": "dev", "mailIdentityOwner": False})
    # dev with alarms, as a developer may turn them on: its alarm topics are prod's names too.
    verdict = check([run("dev", {"alarms": "failures"}), twin])
    kinds = {c.what for c in verdict.collisions}
    assert {
        "S3 bucket",
        "IAM role",
        "IAM inline role policy",
        "Lambda function",
        "log group",
        "SQS queue",
        "DynamoDB table",
        "SSM parameter",  # the secrets (secretStore: ssm in both stack files)
        "SNS topic",
        "schedule group",
        "schedule",
        "budget",
        "EventBridge rule",
        "receipt rule set",
        "receipt rule",
    } <= kinds
    assert "SES identity" not in kinds  # neither declares them ...
    assert any(p.startswith("missing owner: SES identity example.com") for p in verdict.problems)


def test_a_referencing_stack_without_an_owner_is_caught(stacks: dict[str, Graph]) -> None:
    """dev alone: it sends from identities and receives on a lane that only prod provides."""
    problems = check([stacks["dev"]]).problems
    for region in ("eu-west-2", "us-east-1"):
        assert any(
            p.startswith(f"missing owner: SES identity example.com in {region} is ")
            and "sent from by dev-" in p
            for p in problems
        ), problems
    assert any("received for by receipt rule dev-ler-inbound" in p for p in problems)
    assert any(
        p.startswith("no active rule set: receipt rule sets are declared in eu-west-2")
        for p in problems
    )


# Scoping rules on small graphs -----------------------------------------------------------


def _graph(stack: str, *resources: tuple[str, str, dict[str, Any]]) -> Graph:
    """A graph of ``(type, region, inputs)`` resources, each under its region's provider."""
    providers: dict[str, Resource] = {}
    made: list[Resource] = []
    for i, (token, region, inputs) in enumerate(resources):
        if region not in providers:
            urn = f"urn:pulumi:{stack}::crm-automations::pulumi:providers:aws::aws-{region}"
            providers[region] = Resource(
                "pulumi:providers:aws", f"aws-{region}", urn, None, True, None, {"region": region}
            )
        provider = providers[region].urn + "::id"
        made.append(Resource(token, f"r{i}", f"urn:{stack}:{i}", None, True, provider, inputs))
    config = from_pulumi_config(stack_config_values(stack))
    return Graph(stack, config, [*providers.values(), *made], {})


def _kinds(*graphs: Graph) -> list[str]:
    return sorted(c.what for c in check(graphs).collisions)


def test_a_bucket_name_collides_across_regions_and_a_queue_name_does_not() -> None:
    a = _graph(
        "dev",
        ("aws:s3/bucket:Bucket", "us-east-1", {"bucket": "shared"}),
        ("aws:sqs/queue:Queue", "us-east-1", {"name": "q"}),
    )
    b = _graph(
        "prod",
        ("aws:s3/bucket:Bucket", "eu-west-2", {"bucket": "shared"}),
        ("aws:sqs/queue:Queue", "eu-west-2", {"name": "q"}),
    )
    assert _kinds(a, b) == ["S3 bucket"]


def test_iam_and_budget_names_are_account_wide() -> None:
    a = _graph(
        "dev",
        ("aws:iam/role:Role", "us-east-1", {"name": "Runner"}),
        ("aws:budgets/budget:Budget", "us-east-1", {"name": "monthly"}),
        ("aws:cloudwatch/dashboard:Dashboard", "us-east-1", {"dashboardName": "ops"}),
    )
    b = _graph(
        "prod",
        ("aws:iam/role:Role", "eu-west-2", {"name": "runner"}),  # IAM names ignore case
        ("aws:budgets/budget:Budget", "eu-west-2", {"name": "monthly"}),
        ("aws:cloudwatch/dashboard:Dashboard", "eu-west-2", {"dashboardName": "ops"}),
    )
    assert _kinds(a, b) == ["CloudWatch dashboard", "IAM role", "budget"]


def test_schedules_are_unique_per_group_and_rules_per_bus() -> None:
    a = _graph(
        "dev",
        ("aws:scheduler/schedule:Schedule", "eu-west-2", {"name": "tick", "groupName": "a"}),
        ("aws:cloudwatch/eventRule:EventRule", "eu-west-2", {"name": "on", "eventBusName": "x"}),
        ("aws:scheduler/schedule:Schedule", "eu-west-2", {"name": "tock"}),
    )
    b = _graph(
        "prod",
        ("aws:scheduler/schedule:Schedule", "eu-west-2", {"name": "tick", "groupName": "b"}),
        ("aws:cloudwatch/eventRule:EventRule", "eu-west-2", {"name": "on"}),
        ("aws:scheduler/schedule:Schedule", "eu-west-2", {"name": "tock", "groupName": "default"}),
    )
    assert _kinds(a, b) == ["schedule"]  # tock: no group means the default group


def test_a_collision_inside_one_stack_is_caught_too() -> None:
    a = _graph(
        "dev",
        ("aws:kms/alias:Alias", "eu-west-2", {"name": "alias/crm"}),
        ("aws:kms/alias:Alias", "eu-west-2", {"name": "alias/crm"}),
        ("aws:cloudwatch/metricAlarm:MetricAlarm", "eu-west-2", {"name": "dlq"}),
        ("aws:cloudwatch/metricAlarm:MetricAlarm", "us-east-1", {"name": "dlq"}),
    )
    assert _kinds(a) == ["KMS alias"]


def test_an_auto_named_resource_claims_no_name() -> None:
    a = _graph("dev", ("aws:sqs/queue:Queue", "eu-west-2", {"namePrefix": "q-"}))
    b = _graph("prod", ("aws:sqs/queue:Queue", "eu-west-2", {"namePrefix": "q-"}))
    assert _kinds(a, b) == []


def test_an_unclassified_type_fails_the_check() -> None:
    verdict = check([_graph("dev", ("aws:ec2/vpc:Vpc", "eu-west-2", {"cidrBlock": "10/8"}))])
    assert verdict.unclassified == ["aws:ec2/vpc:Vpc"]
    assert not verdict.ok
    assert "unclassified type aws:ec2/vpc:Vpc" in "\n".join(verdict.lines())


def test_ses_v1_and_v2_identities_share_one_namespace() -> None:
    a = _graph("dev", ("aws:ses/domainIdentity:DomainIdentity", "eu-west-2", {"domain": "A.com"}))
    b = _graph(
        "prod", ("aws:sesv2/emailIdentity:EmailIdentity", "eu-west-2", {"emailIdentity": "a.com"})
    )
    assert _kinds(a, b) == ["SES identity"]


def test_make_plan_prints_the_two_stack_verdict(
    stacks: dict[str, Graph], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from components.offline import plan, two_stacks

    monkeypatch.setattr(plan, "run", lambda stack: stacks[stack])
    monkeypatch.setattr(two_stacks, "run", lambda stack: stacks[stack])
    assert plan.main(["--stack", "dev"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == "policy verdict: clean (every rule of the pack passed)"
    assert out[-1].startswith("two-stack check: passed (dev + prod in one account")


def test_make_plan_fails_on_a_collision(
    stacks: dict[str, Graph], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from components.offline import plan, two_stacks

    twin = _graph(
        "prod", ("aws:budgets/budget:Budget", "us-east-1", {"name": "dev-crm-automations-monthly"})
    )
    monkeypatch.setattr(plan, "run", lambda stack: stacks[stack])
    monkeypatch.setattr(two_stacks, "run", lambda stack: twin)
    assert plan.main(["--stack", "dev"]) == 1
    out = capsys.readouterr().out
    assert "two-stack check: FAILED" in out
    assert (
        "collision: budget dev-crm-automations-monthly (account) declared by dev:monthly-budget, prod:r0"
        in out
    )


def test_rules_of_two_stacks_matching_one_source_on_one_bus_are_caught() -> None:
    rule = "aws:cloudwatch/eventRule:EventRule"
    on = json.dumps({"source": ["crm.dev.ler"], "detail-type": ["le.clean"]})
    a = _graph("dev", (rule, "eu-west-2", {"name": "dev-on-clean", "eventPattern": on}))
    same = _graph("prod", (rule, "eu-west-2", {"name": "prod-on-clean", "eventPattern": on}))
    anything = json.dumps({"detail-type": ["le.clean"]})
    open_rule = _graph("prod", (rule, "eu-west-2", {"name": "prod-any", "eventPattern": anything}))
    own = json.dumps({"source": ["crm.prod.ler"]})
    apart = _graph("prod", (rule, "eu-west-2", {"name": "prod-on", "eventPattern": own}))
    elsewhere = _graph("prod", (rule, "us-east-1", {"name": "prod-on-clean", "eventPattern": on}))

    def crosstalk(*graphs: Graph) -> list[str]:
        return [p for p in check(graphs).problems if p.startswith("cross-stack delivery")]

    assert len(crosstalk(a, same)) == 1
    assert "both match crm.dev.ler" in crosstalk(a, same)[0]
    assert "both match any source" in crosstalk(a, open_rule)[0]
    assert crosstalk(a, apart) == []
    assert crosstalk(a, elsewhere) == []


def test_every_classified_type_is_a_real_pulumi_aws_type() -> None:
    """A typo in NAMES or ATTACHED would leave the real type unclassified; none is made."""
    import re
    from pathlib import Path

    import pulumi_aws

    root = Path(pulumi_aws.__file__).parent
    known = {
        m.group(1)
        for f in root.rglob("*.py")
        for m in re.finditer(r"'(aws:[a-z0-9]+/[A-Za-z0-9]+:[A-Za-z0-9]+)'", f.read_text())
    }
    classified = (set(NAMES) | ATTACHED) - {"pulumi:providers:aws"}
    assert classified - known == set()
