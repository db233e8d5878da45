"""The pack as a whole: its objects, its entry point, the runner and its speed."""

from __future__ import annotations

import ast
import importlib
import json
import runpy
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc
from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from policies.common.iamdata import (
    arn_fits_format,
    expand_action,
    lookup_action,
    write_level_actions,
)
from policies.common.props import UNKNOWN, plain
from policies.pack import ALL_POLICIES
from policies.runner import Violation, evaluate, policy_configs
from policies.testing import UNKNOWN_STRING, make_resource, make_resources
from tests.policies.pack_builders import (
    ROLE_POLICY,
    allow,
    bucket,
    compliant_stack,
    document,
    function,
    run,
    table,
    table_arn,
    with_alert_topic,
    work_queue,
)

PACK_DIR = Path(__file__).resolve().parents[2] / "policies"
RULE_FILES = sorted(p for p in (PACK_DIR / "rules").glob("*.py") if p.name != "__init__.py")


def test_every_policy_is_mandatory_and_uniquely_named() -> None:
    names = [p.name for p in ALL_POLICIES]
    assert len(names) == len(set(names)) == len(RULE_FILES)
    assert all(p.enforcement_level is EnforcementLevel.MANDATORY for p in ALL_POLICIES)
    assert {
        "no-wildcard-write",
        "one-secret-per-grant",
        "unique-function-role",
        "public-surface-allowlist",
        "model-access-allowlist",
        "nothing-always-on",
        "valid-iam",
        "log-retention",
        "queue-hygiene",
        "table-hygiene",
        "bucket-hygiene",
        "no-secrets-in-env",
    } <= set(names)


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.stem)
def test_each_rule_file_documents_what_why_and_fix(path: Path) -> None:
    module = importlib.import_module(f"policies.rules.{path.stem}")
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    assert doc.startswith(f"{module.NAME}:")
    assert "What" in doc and "Why:" in doc and "Fix:" in doc
    assert module.POLICY in ALL_POLICIES and module.POLICY.name == module.NAME
    assert isinstance(module.POLICY, ResourceValidationPolicy | StackValidationPolicy)
    assert module.POLICY.remediation_steps


def test_main_builds_the_pack_from_all_policies(monkeypatch: pytest.MonkeyPatch) -> None:
    built: dict[str, Any] = {}

    def fake_pack(**kwargs: Any) -> None:
        built.update(kwargs)

    monkeypatch.setattr("pulumi_policy.PolicyPack", fake_pack)
    runpy.run_path(str(PACK_DIR / "__main__.py"), run_name="__main__")
    assert built["name"] == "crm-automations-guard"
    assert built["enforcement_level"] is EnforcementLevel.MANDATORY
    assert [p.name for p in built["policies"]] == [p.name for p in ALL_POLICIES]


def test_pulumi_policy_yaml_uses_a_venv_inside_the_pack() -> None:
    """Published, the folder is all there is: its venv lives inside it (test_pack_standalone)."""
    config = yaml.safe_load((PACK_DIR / "PulumiPolicy.yaml").read_text())
    assert config["runtime"]["name"] == "python"
    assert config["runtime"]["options"]["virtualenv"] == "venv"


def test_config_schemas_are_json_schema_objects() -> None:
    for policy in ALL_POLICIES:
        if policy.config_schema is None:
            continue
        for key, prop in policy.config_schema.properties.items():
            assert prop["type"] in {"array", "string", "integer", "boolean"}, (policy.name, key)
            assert prop["description"], (policy.name, key)


# runner ------------------------------------------------------------------------------------


def test_compliant_stack_has_no_violation_in_dev_and_prod() -> None:
    assert run(compliant_stack()) == []
    prod = [
        (t, n, {**p, "deletionProtectionEnabled": True}) if t.endswith("table:Table") else (t, n, p)
        for t, n, p in compliant_stack()
    ]
    assert run(prod, stack="prod") == []


def test_violation_fields() -> None:
    found = run(
        [
            (
                ROLE_POLICY,
                "p",
                {"name": "p", "role": "r", "policy": document(allow("dynamodb:PutItem", "*"))},
            )
        ]
    )
    assert found == [
        Violation(
            "no-wildcard-write",
            'RolePolicy p, statement #1: Resource "*" with dynamodb:PutItem; only dynamodb:ListStreams, '
            'xray:PutTraceSegments, xray:PutTelemetryRecords may use "*"',
            "urn:pulumi:dev::crm-automations::aws:iam/rolePolicy:RolePolicy::p",
        )
    ]
    assert found[0].policy == "no-wildcard-write"
    assert str(found[0]).startswith("no-wildcard-write: RolePolicy p")


def test_config_is_routed_by_policy_name_and_shared_keys() -> None:
    configs = policy_configs({"environment": "prod", "log-retention": {"retentionDays": 14}})
    assert configs["table-hygiene"] == {"environment": "prod"}
    assert configs["log-retention"] == {"retentionDays": 14}
    assert configs["valid-iam"] == {}
    with pytest.raises(ValueError, match="unknown policy pack config key"):
        policy_configs({"enviroment": "prod"})
    with pytest.raises(ValueError, match="has no config key"):
        policy_configs({"log-retention": {"days": 7}})


def test_a_disabled_policy_is_skipped() -> None:
    specs = [table("x", billingMode="PROVISIONED")]
    assert {v.policy_name for v in run(specs)} == {"nothing-always-on", "table-hygiene"}
    config = {"table-hygiene": {"enforcementLevel": "disabled"}}
    assert {v.policy_name for v in run(specs, config=config)} == {"nothing-always-on"}


def test_stack_policies_may_report_without_urn_and_not_applicable_passes() -> None:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        report("the stack as a whole", None)

    def skip(args: StackValidationArgs, report: ReportViolation) -> None:
        args.not_applicable("nothing to judge")

    policies = [
        StackValidationPolicy("whole", "whole stack", validate),
        StackValidationPolicy("skip", "skip", skip),
    ]
    assert evaluate([], policies=policies) == [Violation("whole", "the stack as a whole", None)]


def test_unknown_values_read_through_the_proxy_are_violations() -> None:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        _ = args.resources[0].props["name"]

    resources = [make_resource("aws:sqs/queue:Queue", "q", {"name": UNKNOWN_STRING})]
    found = evaluate(resources, policies=[StackValidationPolicy("reads", "reads", validate)])
    assert len(found) == 1 and "can't be known during preview" in found[0].message


def test_props_are_proxied_like_crossguard_and_plain_unwraps_them() -> None:
    resource = make_resource(
        "aws:sqs/queue:Queue", "q", {"name": "n", "tags": {"a": UNKNOWN_STRING}}
    )
    assert plain(resource.props) == {"name": "n", "tags": {"a": UNKNOWN}}


def test_a_function_with_an_unknown_policy_is_reported() -> None:
    specs = [
        (t, n, {**p, "policy": UNKNOWN_STRING}) if t == ROLE_POLICY else (t, n, p)
        for t, n, p in function("dm-block")
    ]
    found = run(specs)
    assert {v.policy_name for v in found} == {
        "valid-iam",
        "no-wildcard-write",
        "one-secret-per-grant",
        "model-access-allowlist",
    }
    assert all("unknown at preview: cannot be judged" in v.message for v in found)


def test_pack_finds_nothing_in_a_few_hundred_compliant_resources() -> None:
    """Many functions, queues, buckets and tables at once (how long it takes is
    benchmarks/bench_pack.py's figure, not a test's)."""
    specs = []
    for i in range(26):
        seed = f"ler-fn{i}"
        specs += function(
            seed, allow(["dynamodb:GetItem", "dynamodb:PutItem"], table_arn(f"dev-{seed}"))
        )
        specs += work_queue(f"ler-q{i}")
        specs += bucket(f"ler-b{i}")
        specs.append(table(f"ler-t{i}"))
    resources = make_resources(with_alert_topic(specs))
    assert len(resources) >= 300
    assert evaluate(resources) == []


# policy_sentry helpers ----------------------------------------------------------------------


def test_action_lookups_are_case_insensitive_and_cached() -> None:
    info = lookup_action("DynamoDB:putitem")
    assert info is not None and info.name == "dynamodb:PutItem" and info.access_level == "Write"
    assert lookup_action("dynamodb:PutItems") is None
    assert "s3:PutObject" in expand_action("s3:Put*")
    assert "s3:GetObject" not in write_level_actions("s3:*Object")
    assert lookup_action.cache_info().hits > 0


@pytest.mark.parametrize(
    "granted,fmt,fits",
    [
        (
            "arn:aws:logs:r:1:log-group:/aws/lambda/x:*",
            "arn:${Partition}:logs:${Region}:${Account}:log-group:${LogGroupName}:log-stream:${LogStreamName}",
            True,
        ),
        (
            "arn:aws:logs:r:1:log-group:/aws/lambda/x",
            "arn:${Partition}:logs:${Region}:${Account}:log-group:${LogGroupName}:log-stream:${LogStreamName}",
            False,
        ),
        (
            "arn:aws:bedrock:::foundation-model/m",
            "arn:${Partition}:bedrock:${Region}::foundation-model/${ResourceId}",
            True,
        ),
        (
            "arn:aws:dynamodb::1:table/x",
            "arn:${Partition}:dynamodb:${Region}:${Account}:table/${TableName}",
            False,
        ),
        ("arn:aws:s3:::b", "arn:${Partition}:s3:::${BucketName}/${ObjectName}", False),
        ("arn:aws:s3:::b/*", "arn:${Partition}:s3:::${BucketName}/${ObjectName}", True),
        ("arn:aws:s3:::b/", "arn:${Partition}:s3:::${BucketName}/${ObjectName}", False),
    ],
)
def test_arn_format_matching(granted: str, fmt: str, fits: bool) -> None:
    assert arn_fits_format(granted, fmt) is fits


# the pack served over gRPC, as `pulumi preview --policy-pack policies` starts it -------------


def test_the_served_pack_answers_the_engine() -> None:
    """Start the pack the way the Python language host does and call it like the engine."""
    process = subprocess.Popen(  # the language host runs: python -u -m pulumi.policy <engine> <dir>
        [sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:1", str(PACK_DIR)],
        cwd=PACK_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready, "the pack did not print its port within 60 s"
        port = process.stdout.readline().strip()
        assert port.isdigit(), process.stderr.read() if process.stderr else port
        stub = analyzer_pb2_grpc.AnalyzerStub(grpc.insecure_channel(f"127.0.0.1:{port}"))
        info = stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=30)
        assert info.name == "crm-automations-guard"
        assert [p.name for p in info.policies] == [p.name for p in ALL_POLICIES]
        assert {p.enforcementLevel for p in info.policies} == {analyzer_pb2.MANDATORY}

        policy = json.dumps(
            {"Statement": [{"Effect": "Allow", "Action": "dynamodb:PutItem", "Resource": "*"}]}
        )
        properties = struct_pb2.Struct()
        properties.update({"name": "raw", "role": "r", "policy": policy})
        answer = stub.Analyze(
            analyzer_pb2.AnalyzeRequest(
                type="aws:iam/rolePolicy:RolePolicy",
                properties=properties,
                urn="urn:pulumi:dev::crm-automations::aws:iam/rolePolicy:RolePolicy::raw",
                name="raw",
            ),
            timeout=30,
        )
        assert [d.policyName for d in answer.diagnostics] == ["no-wildcard-write"]
        assert answer.diagnostics[0].enforcementLevel == analyzer_pb2.MANDATORY
    finally:
        process.terminate()
        process.wait(timeout=10)
