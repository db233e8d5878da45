"""Who may do what: unique-function-role, public-surface-allowlist, public-surface-capped,
model-access-allowlist, function-identity."""

from __future__ import annotations

import json
from typing import Any

import pytest

from policies.testing import Spec
from tests.policies.pack_builders import (
    ACCOUNT,
    BUCKET_POLICY,
    FUNCTION,
    HAIKU,
    HAIKU_MODEL,
    PERMISSION,
    QUEUE_POLICY,
    REGION,
    ROLE,
    allow,
    arn,
    compliant_stack,
    document,
    function,
    messages,
    queue_arn,
    queue_mapping,
    run,
    stream_mapping,
)


def replace(specs: list[Spec], resource_type: str, name: str, **props: Any) -> list[Spec]:
    """The specs with one resource's properties updated."""
    out: list[Spec] = []
    for t, n, p in specs:
        if t == resource_type and n == name:
            p = {**p, **props}
        out.append((t, n, p))
    return out


# unique-function-role ----------------------------------------------------------------------


def test_own_roles_pass() -> None:
    assert run(compliant_stack(), "unique-function-role") == []


def test_two_functions_sharing_a_role_are_rejected() -> None:
    specs = function("dm-block") + [
        s for s in function("dm-score", role_name="dev-dm-block-role") if s[0] != ROLE
    ]
    found = messages(run(specs, "unique-function-role"))
    assert found == ["role dev-dm-block-role is shared by functions dev-dm-block, dev-dm-score"]


def test_role_not_in_the_stack_is_rejected() -> None:
    specs = [s for s in function("dm-block") if s[0] != ROLE]
    assert any(
        "not declared in this stack" in m for m in messages(run(specs, "unique-function-role"))
    )


def test_managed_policies_on_a_function_role_are_rejected() -> None:
    basic = "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
    specs = replace(function("dm-block"), ROLE, "dm-block-role", managedPolicyArns=[basic])
    specs += [
        (
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            "att",
            {"role": "dev-dm-block-role", "policyArn": basic},
        ),
        (
            "aws:iam/policyAttachment:PolicyAttachment",
            "patt",
            {"roles": ["dev-dm-block-role"], "policyArn": basic},
        ),
    ]
    found = messages(run(specs, "unique-function-role"))
    assert len(found) == 3
    assert any("has managed policies" in m for m in found)
    assert sum("attaches a managed policy" in m for m in found) == 2


@pytest.mark.parametrize(
    "principal",
    [
        {"Service": ["lambda.amazonaws.com", "scheduler.amazonaws.com"]},
        {"Service": "edgelambda.amazonaws.com"},
        {"AWS": f"arn:aws:iam::{ACCOUNT}:root"},
        "*",
    ],
)
def test_trust_beyond_lambda_is_rejected(principal: object) -> None:
    trust = document({"Effect": "Allow", "Principal": principal, "Action": "sts:AssumeRole"})
    found = messages(run(function("dm-block", trust=trust), "unique-function-role"))
    assert any("admits" in m for m in found), found


def test_trust_with_other_actions_is_rejected() -> None:
    trust = document(
        {
            "Effect": "Allow",
            "Principal": {"Service": "lambda.amazonaws.com"},
            "Action": "sts:AssumeRoleWithWebIdentity",
        }
    )
    assert run(function("dm-block", trust=trust), "unique-function-role") != []


# public-surface-allowlist -------------------------------------------------------------------


def test_declared_public_urls_pass() -> None:
    specs = (
        compliant_stack() + function("rrs-webhook", url="NONE") + function("ler-intake", url="NONE")
    )
    assert run(specs, "public-surface-allowlist") == []


def test_public_url_on_an_undeclared_function_is_rejected() -> None:
    found = run(function("ls-report", url="NONE"), "public-surface-allowlist")
    assert len(found) == 3  # the URL and both permissions
    assert all("ls-report" in m for m in messages(found))


def test_public_surfaces_are_configurable() -> None:
    specs = function("ler-intake", url="NONE")
    config = {"public-surface-allowlist": {"publicFunctions": ["dm-merge"]}}
    assert len(run(specs, "public-surface-allowlist", config=config)) == 3
    config = {"public-surface-allowlist": {"extraPublicFunctions": ["ls-report"]}}
    assert run(function("ls-report", url="NONE"), "public-surface-allowlist", config=config) == []


def test_mis_tagged_function_cannot_borrow_a_public_url() -> None:
    specs = function("dm-block", url="NONE")
    specs = [
        (t, n, {**p, "tags": {"crm:system": "dm", "crm:function": "dm-merge"}})
        if t == FUNCTION
        else (t, n, p)
        for t, n, p in specs
    ]
    found = messages(run(specs, "public-surface-allowlist"))
    assert found and all("cannot be identified" in m for m in found)


@pytest.mark.parametrize(
    "props",
    [
        {"action": "lambda:InvokeFunction", "principal": "*"},
        {"action": "lambda:InvokeFunctionUrl", "principal": "*", "functionUrlAuthType": "AWS_IAM"},
        {"action": "lambda:GetFunction", "principal": "*"},
    ],
)
def test_other_public_permissions_are_rejected(props: dict[str, object]) -> None:
    specs = [
        *function("dm-merge", url="NONE"),
        (PERMISSION, "extra", {"function": "dev-dm-merge", **props}),
    ]
    found = run(specs, "public-surface-allowlist")
    assert [v.urn.rsplit("::", 1)[-1] for v in found if v.urn] == ["extra"]


@pytest.mark.parametrize(
    "props,ok",
    [
        ({"principal": "events.amazonaws.com", "sourceArn": arn("events", "rule/dev-x")}, True),
        ({"principal": "events.amazonaws.com"}, False),
        ({"principal": "events.amazonaws.com", "sourceArn": arn("events", "rule/*")}, False),
        (
            {
                "principal": "s3.amazonaws.com",
                "sourceArn": "arn:aws:s3:::b",
                "sourceAccount": ACCOUNT,
            },
            True,
        ),
        ({"principal": "s3.amazonaws.com", "sourceArn": "arn:aws:s3:::b"}, False),
        ({"principal": ACCOUNT}, True),
    ],
)
def test_service_principals_need_a_source(props: dict[str, object], ok: bool) -> None:
    specs = [
        *function("dm-block"),
        (PERMISSION, "p", {"function": "dev-dm-block", "action": "lambda:InvokeFunction", **props}),
    ]
    assert (run(specs, "public-surface-allowlist") == []) is ok


def test_resource_policies_open_to_everyone_are_rejected() -> None:
    open_queue = document(allow("sqs:SendMessage", queue_arn("dev-q"), Principal="*"))
    service_bucket = document(
        allow(
            "s3:PutObject", "arn:aws:s3:::b/inbound/*", Principal={"Service": "ses.amazonaws.com"}
        )
    )
    specs = [
        (QUEUE_POLICY, "qp", {"queueUrl": "https://x/1/dev-q", "policy": open_queue}),
        (BUCKET_POLICY, "bp", {"bucket": "b", "policy": service_bucket}),
    ]
    found = messages(run(specs, "public-surface-allowlist"))
    assert len(found) == 2 and "everyone (*)" in found[0] and "ses.amazonaws.com" in found[1]


def test_scoped_service_writes_pass() -> None:
    policy = document(
        allow(
            "s3:PutObject",
            "arn:aws:s3:::b/inbound/*",
            Principal={"Service": "ses.amazonaws.com"},
            Condition={"StringEquals": {"aws:SourceAccount": ACCOUNT}},
        )
    )
    assert (
        run([(BUCKET_POLICY, "bp", {"bucket": "b", "policy": policy})], "public-surface-allowlist")
        == []
    )


# public-surface-capped ---------------------------------------------------------------------


def test_public_functions_with_a_concurrency_cap_pass() -> None:
    specs = (
        compliant_stack()
        + function("rrs-webhook", url="NONE", reserved=5)
        + function("ler-intake", url="NONE")
        + function("ls-report", url="AWS_IAM", reserved=None)  # IAM-signed callers only
    )
    assert run(specs, "public-surface-capped") == []


@pytest.mark.parametrize("reserved", [None, 0, -1])
def test_a_public_function_without_a_cap_is_refused(reserved: int | None) -> None:
    specs = function("upsr-order", url="NONE", reserved=None)
    if reserved is not None:
        specs = [
            (kind, name, {**props, "reservedConcurrentExecutions": reserved} if kind == FUNCTION else props)
            for kind, name, props in specs
        ]
    [found] = messages(run(specs, "public-surface-capped"))
    assert "dev-upsr-order answers a public Function URL without a concurrency cap" in found
    # An account that cannot reserve lists it, and says so in the pack config.
    config = {"public-surface-capped": {"uncappedPublicFunctions": ["upsr-order"]}}
    assert run(specs, "public-surface-capped", config=config) == []


# model-access-allowlist --------------------------------------------------------------------

MODEL_ARNS = [
    arn("bedrock", f"inference-profile/{HAIKU}"),
    f"arn:aws:bedrock:{REGION}::foundation-model/{HAIKU_MODEL}",
    f"arn:aws:bedrock:::foundation-model/{HAIKU_MODEL}",
]


def test_declared_callers_on_allowed_models_pass() -> None:
    specs = compliant_stack() + function("rrs-sender", allow("bedrock:InvokeModel", MODEL_ARNS))
    assert run(specs, "model-access-allowlist") == []


@pytest.mark.parametrize("seed", ["dm-merge", "ls-capture", "upsr-order", "rrs-webhook"])
def test_model_access_outside_the_callers_is_rejected(seed: str) -> None:
    found = messages(
        run(function(seed, allow("bedrock:InvokeModel", MODEL_ARNS)), "model-access-allowlist")
    )
    assert found == [
        f"RolePolicy dev-{seed}-grants grants model access to dev-{seed} ({seed}), which is not a "
        "declared model caller (ler-dedupe, ler-filter, ler-normalize, rrs-sender, upsr-picker)"
    ]


@pytest.mark.parametrize(
    "action",
    [
        "bedrock:*",
        "bedrock:Invoke*",
        "*",
        "bedrock:Converse",
        "bedrock:InvokeModelWithResponseStream",
    ],
)
def test_wildcards_and_converse_count_as_model_access(action: str) -> None:
    assert run(function("dm-merge", allow(action, MODEL_ARNS)), "model-access-allowlist") != []


@pytest.mark.parametrize(
    "resource",
    [
        "*",
        arn("bedrock", "inference-profile/*"),
        arn("bedrock", "inference-profile/global.anthropic.claude-opus-4-1"),
        f"arn:aws:bedrock:{REGION}::foundation-model/anthropic.*",
        f"arn:aws:bedrock:*::foundation-model/{HAIKU_MODEL}",
        f"arn:aws:bedrock:{REGION}::foundation-model/{HAIKU}",
    ],
)
def test_model_grants_only_on_allowed_model_arns(resource: str) -> None:
    found = messages(
        run(
            function("upsr-picker", allow("bedrock:InvokeModel", resource)),
            "model-access-allowlist",
        )
    )
    assert len(found) == 1 and "not an ARN of an allowed model" in found[0]


def test_model_ids_and_callers_are_configurable() -> None:
    opus = "anthropic.claude-opus-4-1-20250805-v1:0"
    specs = function(
        "dm-merge",
        allow("bedrock:InvokeModel", f"arn:aws:bedrock:{REGION}::foundation-model/{opus}"),
    )
    config = {
        "model-access-allowlist": {
            "extraModelCallers": ["dm-merge"],
            "extraAllowedModelIds": [opus],
        }
    }
    assert run(specs, "model-access-allowlist") != []
    assert run(specs, "model-access-allowlist", config=config) == []


def test_model_access_in_a_scheduler_role_is_rejected() -> None:
    role = (ROLE, "sched", {"name": "dev-x-schedule-role", "assumeRolePolicy": "{}"})
    policy = (
        "aws:iam/rolePolicy:RolePolicy",
        "sched-policy",
        {
            "name": "p",
            "role": "dev-x-schedule-role",
            "policy": document(allow("bedrock:InvokeModel", MODEL_ARNS)),
        },
    )
    found = messages(run([role, policy], "model-access-allowlist"))
    assert found and "no function's execution role" in found[0]


def test_managed_policy_attached_to_a_non_caller_is_rejected() -> None:
    specs = [
        *function("dm-merge"),
        (
            "aws:iam/policy:Policy",
            "m",
            {"name": "dev-model", "policy": document(allow("bedrock:InvokeModel", MODEL_ARNS))},
        ),
        (
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            "a",
            {"role": "dev-dm-merge-role", "policyArn": f"arn:aws:iam::{ACCOUNT}:policy/dev-model"},
        ),
    ]
    assert any("dm-merge" in m for m in messages(run(specs, "model-access-allowlist")))


# function-identity -------------------------------------------------------------------------


def test_well_named_functions_pass() -> None:
    assert run(compliant_stack(), "function-identity") == []


@pytest.mark.parametrize(
    "name,tags,expected",
    [
        ("dev-dm-block", {"crm:system": "dm"}, "no crm:function tag"),
        ("dev-dm-block", {"crm:function": "dm-block"}, "no crm:system tag"),
        (
            "dev-dm-blocker",
            {"crm:system": "dm", "crm:function": "dm-block"},
            "not <prefix>-dm-block",
        ),
        (
            "dev-ls-block",
            {"crm:system": "ls", "crm:function": "dm-block"},
            "outside its crm:system",
        ),
    ],
)
def test_badly_named_functions_are_rejected(name: str, tags: dict[str, str], expected: str) -> None:
    specs = [(FUNCTION, "f", {"name": name, "role": "arn:aws:iam::1:role/r", "tags": tags})]
    assert any(expected in m for m in messages(run(specs, "function-identity")))


def test_two_functions_claiming_one_seed_are_rejected() -> None:
    specs = function("dm-block") + function("dm-block", prefix="dev2")
    assert len(run(specs, "function-identity")) == 2


def test_tags_all_counts_as_tags() -> None:
    specs = [
        (
            FUNCTION,
            "f",
            {"name": "dev-dm-block", "tagsAll": {"crm:system": "dm", "crm:function": "dm-block"}},
        )
    ]
    assert run(specs, "function-identity") == []


def test_document_text_is_json() -> None:
    assert json.loads(document(allow("sqs:SendMessage", "*")))["Statement"][0]["Effect"] == "Allow"


# queue-consumers-paced ---------------------------------------------------------------------


def test_a_paced_queue_consumer_and_a_stream_consumer_pass() -> None:
    specs = [
        *compliant_stack(),
        queue_mapping("picker-jobs", "upsr-picker", "upsr-jobs", maximum_concurrency=5),
        stream_mapping("stitch-enquiries", "ls-stitch", "ls-enquiries"),  # paced by its shards
    ]
    assert run(specs, "queue-consumers-paced") == []


@pytest.mark.parametrize("cap", [None, 1, 1001])
def test_a_queue_consumer_without_a_valid_maximum_concurrency_is_refused(cap: int | None) -> None:
    specs = [*compliant_stack(), queue_mapping("normalize-intake", "ler-normalize", "ler-intake-queue",
                                               maximum_concurrency=cap)]
    [found] = messages(run(specs, "queue-consumers-paced"))
    assert "normalize-intake of dev-ler-normalize reads an SQS queue without a maximum concurrency" in found
