"""The bootstrap program on the mock engine: provider, trust, session length, the pack's verdict.

Trust, as GitHub and AWS document it (bootstrap/trust.py cites the pages): the provider URL
``https://token.actions.githubusercontent.com`` with audience ``sts.amazonaws.com``
(GitHub, "Configuring OpenID Connect in Amazon Web Services",
https://docs.github.com/en/actions/security-for-github-actions/security-hardening-your-deployments/configuring-openid-connect-in-amazon-web-services),
subjects ``repo:<owner>/<repo>:pull_request`` / ``:ref:refs/heads/<branch>`` /
``:environment:<name>`` (GitHub, "OpenID Connect reference",
https://docs.github.com/en/actions/reference/security/oidc), and a ``Federated`` principal
with ``sts:AssumeRoleWithWebIdentity`` conditioned on ``:aud`` and ``:sub`` (AWS, "Create a
role for OpenID Connect federation",
https://docs.aws.amazon.com/IAM/latest/UserGuide/id_roles_create_for-idp_oidc.html).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pulumi
import pytest

from bootstrap import trust
from bootstrap.program import PROJECT, build
from components import config_source
from components.config import ConfigError
from components.offline.engine import ACCOUNT_ID, GraphMocks, Resource, run_program
from components.offline.policy_view import policy_resources
from policies.common.iamdata import glob_regex
from policies.rules import no_wildcard_write, valid_iam
from policies.runner import evaluate

ROOT = Path(__file__).resolve().parents[2]
REPOSITORY = "example-org/crm-automations"


def stack_values(stack: str, **overrides: Any) -> dict[str, str]:
    raw = config_source.load(ROOT / "bootstrap" / f"Pulumi.{stack}.yaml")
    for key, value in overrides.items():
        raw[f"{PROJECT}:{key}"] = value
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in raw.items() if v is not None}


def run(stack: str, **overrides: Any) -> tuple[list[Resource], dict[str, Any]]:
    return run_program(build, stack=stack, values=stack_values(stack, **overrides))


@pytest.fixture(scope="module", params=["dev", "prod"])
def bootstrapped(request: pytest.FixtureRequest) -> tuple[str, list[Resource], dict[str, Any]]:
    resources, outputs = run(request.param)
    return request.param, resources, outputs


def _role(resources: list[Resource], role: str) -> Resource:
    return next(r for r in resources if r.type == "aws:iam/role:Role" and r.name == f"{role}-role")


def _trust(role: Resource) -> dict[str, Any]:
    statements: list[dict[str, Any]] = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert len(statements) == 1
    return statements[0]


def test_each_role_trusts_one_repository_source_for_sts_only(
    bootstrapped: tuple[str, list[Resource], dict[str, Any]],
) -> None:
    stack, resources, _ = bootstrapped
    provider = f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/token.actions.githubusercontent.com"
    expected = {
        "preview": [f"repo:{REPOSITORY}:pull_request"],
        "deploy": [
            f"repo:{REPOSITORY}:ref:refs/heads/main"
            if stack == "dev"
            else f"repo:{REPOSITORY}:environment:prod"
        ],
    }
    for role, subjects in expected.items():
        st = _trust(_role(resources, role))
        assert st["Effect"] == "Allow"
        assert st["Principal"] == {"Federated": provider}
        assert st["Action"] == "sts:AssumeRoleWithWebIdentity"
        assert st["Condition"] == {
            "StringEquals": {
                "token.actions.githubusercontent.com:aud": "sts.amazonaws.com",
                "token.actions.githubusercontent.com:sub": subjects,
            }
        }
        assert not any("*" in s for s in subjects)


def test_sessions_last_one_hour_at_most(bootstrapped: tuple[str, list[Resource], dict[str, Any]]) -> None:
    _, resources, _ = bootstrapped
    for role in ("preview", "deploy"):
        assert _role(resources, role).inputs["maxSessionDuration"] == 3600


def test_the_provider_is_made_once_per_account(
    bootstrapped: tuple[str, list[Resource], dict[str, Any]],
) -> None:
    stack, resources, _ = bootstrapped
    providers = [r for r in resources if r.type == "aws:iam/openIdConnectProvider:OpenIdConnectProvider"]
    if stack == "prod":  # Pulumi.prod.yaml: the dev bootstrap of the same account made it
        assert providers == []
        return
    (provider,) = providers
    assert provider.inputs["url"] == "https://token.actions.githubusercontent.com"
    assert provider.inputs["clientIdLists"] == ["sts.amazonaws.com"]
    deploy = _role(resources, "deploy")
    assert provider.urn in deploy.dependencies


def test_the_pipeline_roles_sit_outside_what_the_deploy_role_may_touch(
    bootstrapped: tuple[str, list[Resource], dict[str, Any]],
) -> None:
    stack, resources, outputs = bootstrapped
    generated = json.loads((ROOT / "bootstrap" / "generated" / f"{stack}.json").read_text())
    patterns = [
        r.replace("${Account}", ACCOUNT_ID)
        for doc in generated["policies"]["deploy"]
        for st in doc["Statement"]
        if st["Effect"] == "Allow" and any(a.startswith("iam:") for a in st["Action"])
        for r in st["Resource"]
    ]
    own = [outputs["previewRoleArn"], outputs["deployRoleArn"], outputs["boundaryArn"]]
    policies = [
        f"arn:aws:iam::{ACCOUNT_ID}:policy/crm-pipeline/{r.inputs['name']}"
        for r in resources
        if r.type == "aws:iam/policy:Policy"
    ]
    for arn in own + policies:
        assert not any(glob_regex(p).match(arn) for p in patterns), arn


def test_the_policy_pack_judges_the_roles_policies_clean(
    bootstrapped: tuple[str, list[Resource], dict[str, Any]],
) -> None:
    """Every rule of the pack, as ``pulumi preview --policy-pack policies`` runs it, with the
    deployer's scope: the stack's prefix, and the actions that have no resource type."""
    stack, resources, _ = bootstrapped
    generated = json.loads((ROOT / "bootstrap" / "generated" / f"{stack}.json").read_text())
    star = sorted(
        {
            action
            for documents in generated["policies"].values()
            for doc in documents
            for st in doc["Statement"]
            if st["Resource"] == ["*"]
            for action in st["Action"]
        }
        | set(no_wildcard_write.DEFAULT_STAR_ACTIONS)
    )
    config = {
        "environment": stack,
        "no-wildcard-write": {"resourceStarActions": star, "namePrefixes": [generated["prefix"]]},
    }
    boundary = [r for r in resources if r.name == "role-boundary"]
    granted = [r for r in resources if r.name != "role-boundary"]
    assert evaluate(policy_resources(granted), config) == []
    # A boundary grants nothing ("Permissions boundaries for IAM entities",
    # https://docs.aws.amazon.com/IAM/latest/UserGuide/access_policies_boundaries.html): the
    # rules on what a grant may reach (one secret, model callers) do not apply to it; the
    # rules on every IAM document do.
    assert evaluate(
        policy_resources(boundary), config, policies=[valid_iam.POLICY, no_wildcard_write.POLICY]
    ) == []


def test_without_the_deployer_scope_the_pack_refuses_the_prefix_wildcards(
    bootstrapped: tuple[str, list[Resource], dict[str, Any]],
) -> None:
    """namePrefixes is what admits ``table/<prefix>-*``: off by default, as in the app stacks."""
    _, resources, _ = bootstrapped
    found = evaluate(
        policy_resources(resources), {}, policies=[no_wildcard_write.POLICY]
    )
    assert any("whose wildcard spans more than one named resource" in v.message for v in found)


def test_a_state_bucket_lets_preview_take_the_lock_and_deploy_write_the_state() -> None:
    resources, _ = run("dev", stateBucket="example-pulumi-state")
    policies = {
        r.name: json.loads(r.inputs["policy"])["Statement"]
        for r in resources
        if r.type == "aws:iam/rolePolicy:RolePolicy"
    }
    writes = {
        name: [r for st in sts if "s3:PutObject" in st["Action"] for r in st["Resource"]]
        for name, sts in policies.items()
    }
    assert writes == {
        "preview-state": ["arn:aws:s3:::example-pulumi-state/.pulumi/locks/*"],
        "deploy-state": ["arn:aws:s3:::example-pulumi-state/.pulumi/*"],
    }


@pytest.mark.parametrize(
    ("overrides", "key"),
    [
        ({"repository": None}, "repository"),
        ({"repository": "not a repository; rm -rf"}, "repository"),
        ({"deployFrom": ["branch:*"]}, "deployFrom"),
        ({"maxSessionSeconds": 86400}, "maxSessionSeconds"),
    ],
)
def test_a_config_error_names_the_key_and_never_the_value(
    overrides: Mapping[str, Any], key: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        run("dev", **overrides)
    message = str(raised.value)
    assert f"{PROJECT}:{key}" in message
    for value in overrides.values():
        if value is not None:
            assert json.dumps(value).strip('"[]') not in message


def test_a_stack_without_a_generated_policy_is_refused() -> None:
    with pytest.raises(ConfigError, match="make deploy-policy"):
        run_program(build, stack="staging", values=stack_values("dev"))


@pytest.mark.parametrize(
    ("source", "sub"),
    [
        ("pull_request", "repo:o/r:pull_request"),
        ("branch:main", "repo:o/r:ref:refs/heads/main"),
        ("environment:prod", "repo:o/r:environment:prod"),
    ],
)
def test_subjects_follow_githubs_claim_format(source: str, sub: str) -> None:
    assert trust.subject("o/r", source) == sub


@pulumi.runtime.test  # type: ignore[untyped-decorator]
def test_the_deploy_role_output_carries_the_trust_and_session_length() -> pulumi.Output[None]:
    """The same through the resource's own Output, as a program reading it would."""
    import pulumi_aws as aws

    pulumi.runtime.set_mocks(GraphMocks(), project=PROJECT, stack="dev", preview=False)
    role = aws.iam.Role(
        "deploy-role",
        assume_role_policy=trust.trust_policy(
            trust.provider_arn("aws", ACCOUNT_ID), [trust.subject(REPOSITORY, "branch:main")]
        ),
        max_session_duration=3600,
    )

    def check(values: list[Any]) -> None:
        policy, duration = values
        st = json.loads(policy)["Statement"][0]
        assert st["Condition"]["StringEquals"]["token.actions.githubusercontent.com:sub"] == [
            f"repo:{REPOSITORY}:ref:refs/heads/main"
        ]
        assert duration == 3600

    return pulumi.Output.all(role.assume_role_policy, role.max_session_duration).apply(check)
