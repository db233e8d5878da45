"""The upsell recommender's graph: exactly its functions, triggers, stores, schedules, grants."""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.offline.engine import ACCOUNT_ID, Graph, Resource, gsi_keys
from components.offline.policy_view import evaluate_graph
from tests.infra.graph_helpers import (
    DOCUMENTS_STORE,
    Statement,
    arns_in,
    functions,
    only_system,
    run,
)

REGION = "eu-west-2"
HAIKU = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
SONNET = "global.anthropic.claude-sonnet-4-6"
PACKAGE = "handlers.upsell_recommender"
POOL = "pool-0123456789abcdef0123456789abcdef"


arn = arns_in(REGION)


def only_upsr(stack: str = "dev", **changes: Any) -> dict[str, Any]:
    return only_system("upsr", stack, **changes)


@pytest.fixture(scope="module")
def graph() -> Graph:
    return run("dev", {**DOCUMENTS_STORE, "systems": only_upsr()})


@pytest.fixture(scope="module")
def prod() -> Graph:
    return run("prod", {**DOCUMENTS_STORE, "systems": only_upsr("prod")})


def grants_of(graph: Graph, function: str) -> set[Statement]:
    policy = graph.named("aws:iam/rolePolicy:RolePolicy", f"dev-{function}-grants")
    statements: list[dict[str, Any]] = json.loads(policy.inputs["policy"])["Statement"]
    assert all(s["Effect"] == "Allow" for s in statements)
    for s in statements:  # the only conditions: mail may leave from the sender address only,
        # and a degradation note or a spend counter touches its own items only (tested below)
        if "Condition" in s and s["Action"] == ["ses:SendEmail"]:
            assert s["Condition"] == {"StringEquals": {"ses:FromAddress": ["crm-bot@example.com"]}}
        elif "Condition" in s and "ForAllValues:StringLike" in s["Condition"]:
            assert s["Action"] == ["dynamodb:UpdateItem"]  # a daily spend counter (#41, below)
            assert set(s["Condition"]) == {"ForAllValues:StringLike"}
        elif "Condition" in s:
            assert set(s["Condition"]) == {"ForAllValues:StringEquals"}
            assert s["Action"] in (["dynamodb:UpdateItem"], ["dynamodb:GetItem"])
    return {(tuple(s["Action"]), tuple(s["Resource"])) for s in statements}


def leading_keys(graph: Graph, function: str) -> dict[str, list[str]]:
    """Action -> the partition keys a conditioned DynamoDB statement limits it to."""
    policy = graph.named("aws:iam/rolePolicy:RolePolicy", f"dev-{function}-grants")
    return {
        s["Action"][0]: s["Condition"]["ForAllValues:StringEquals"]["dynamodb:LeadingKeys"]
        for s in json.loads(policy.inputs["policy"])["Statement"]
        if "ForAllValues:StringEquals" in (s.get("Condition") or {})
    }


def table(name: str) -> str:
    return arn("dynamodb", f"table/dev-{name}")


def secret(name: str) -> str:
    return arn("secretsmanager", f"secret:dev-{name}-??????")


def logs(function: str) -> Statement:
    return (
        ("logs:CreateLogStream", "logs:PutLogEvents"),
        (arn("logs", f"log-group:/aws/lambda/dev-{function}:*"),),
    )


SES_IDENTITY = arn("ses", "identity/example.com")
OFFERS_INDEX = table("upsr-offers") + "/index/state-send_at"

EXPECTED_GRANTS: dict[str, set[Statement]] = {
    "upsr-order": {
        logs("upsr-order"),
        (("secretsmanager:GetSecretValue",), (secret("upsr-webhook-secret"),)),
        (("secretsmanager:GetSecretValue",), (secret("upsr-forget-salt"),)),
        (("dynamodb:PutItem", "dynamodb:UpdateItem"), (table("upsr-orders"),)),
        (("dynamodb:GetItem",), (table("upsr-optout"),)),
        (("dynamodb:GetItem",), (table("upsr-customers"),)),
        (("dynamodb:UpdateItem",), (table("upsr-customers"),)),
        (("sqs:SendMessage",), (arn("sqs", "dev-upsr-jobs"),)),
        (("dynamodb:UpdateItem",), (table("upsr-offers"),)),  # its degradation note only
    },
    "upsr-picker": {
        logs("upsr-picker"),
        (
            ("bedrock:InvokeModel",),
            (
                "arn:aws:bedrock:::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0",
                arn("bedrock", f"inference-profile/{HAIKU}"),
                f"arn:aws:bedrock:{REGION}::foundation-model/anthropic.claude-haiku-4-5-20251001-v1:0",
            ),
        ),
        (("dynamodb:BatchGetItem", "dynamodb:Scan"), (table("upsr-catalogue"),)),
        (("dynamodb:PutItem",), (table("upsr-offers"),)),
        (("dynamodb:UpdateItem",), (table("upsr-offers"),)),  # its degradation note only
        (
            ("sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"),
            (arn("sqs", "dev-upsr-jobs"),),
        ),
    },
    "upsr-sender": {
        logs("upsr-sender"),
        (("dynamodb:Query",), (table("upsr-offers"), OFFERS_INDEX)),
        (("dynamodb:UpdateItem",), (table("upsr-offers"),)),
        (("dynamodb:ConditionCheckItem", "dynamodb:GetItem"), (table("upsr-optout"),)),
        (("dynamodb:GetItem", "dynamodb:UpdateItem"), (table("upsr-customers"),)),
        (("secretsmanager:GetSecretValue",), (secret("upsr-addlink-key"),)),
        (("sms-voice:SendTextMessage",), (arn("sms-voice", f"pool/{POOL}"),)),
        (("ses:SendEmail",), (SES_IDENTITY,)),
    },
    "upsr-addlink": {
        logs("upsr-addlink"),
        (("secretsmanager:GetSecretValue",), (secret("upsr-addlink-key"),)),
        (("dynamodb:UpdateItem",), (table("upsr-offers"),)),
    },
    "upsr-sweep": {
        logs("upsr-sweep"),
        (("dynamodb:Query",), (table("upsr-offers"), OFFERS_INDEX)),
        # GetItem: the roll-up's high-water mark (#40; the index Query reads every offer already).
        (("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"), (table("upsr-offers"),)),
        (("ses:SendEmail",), (SES_IDENTITY,)),
        (("dynamodb:GetItem",), (table("upsr-offers"),)),  # the degradation notes only
    },
    "upsr-catalog-sync": {
        logs("upsr-catalog-sync"),
        (("secretsmanager:GetSecretValue",), (secret("upsr-store-key"),)),
        (("dynamodb:PutItem", "dynamodb:UpdateItem"), (table("upsr-catalogue"),)),
        (("dynamodb:Scan",), (table("upsr-catalogue"),)),  # the content hashes, read first
    },
}
EXPECTED_GRANTS["upsr-compliance"] = {
    logs("upsr-compliance"),
    (("secretsmanager:GetSecretValue",), (secret("upsr-webhook-secret"),)),
    (("secretsmanager:GetSecretValue",), (secret("upsr-forget-salt"),)),
    (("dynamodb:PutItem",), (table("upsr-optout"),)),  # the salted hashes only
    *((("dynamodb:DeleteItem", "dynamodb:Scan"), (table(t),)) for t in ("upsr-orders", "upsr-offers", "upsr-customers", "upsr-optout", "upsr-catalogue")),
    *((("dynamodb:DescribeTable",), (table(t),)) for t in ("upsr-orders", "upsr-offers", "upsr-customers", "upsr-optout", "upsr-catalogue")),
    (("ses:SendEmail",), (SES_IDENTITY,)),
}
"""Shopify's compliance webhooks: the only role that may scan and delete upsr's tables."""

SIZES = {
    "upsr-order": (1024, 10, "order"),  # #41: its first invocation within 1.5 s
    "upsr-picker": (512, 60, "picker"),
    "upsr-sender": (256, 120, "sender"),
    "upsr-addlink": (512, 10, "addlink"),
    "upsr-sweep": (256, 120, "sweep"),
    "upsr-catalog-sync": (256, 300, "catalog_sync"),
    "upsr-compliance": (1769, 30, "compliance"),
}


def test_exactly_the_seven_functions(graph: Graph) -> None:
    found = functions(graph)
    assert set(found) == {f"dev-{name}" for name in SIZES}
    for name, (memory, timeout, module) in SIZES.items():
        fn = found[f"dev-{name}"].inputs
        assert (fn["memorySize"], fn["timeout"]) == (memory, timeout)
        assert (fn["runtime"], fn["architectures"]) == ("python3.14", ["arm64"])
        assert fn["handler"] == f"{PACKAGE}.functions.{module}.handler"
        assert fn["role"] == f"arn:aws:iam::{ACCOUNT_ID}:role/dev-{name}-role"


SCHEDULED = ("upsr-sender", "upsr-sweep", "upsr-catalog-sync")
"""Invoked by schedules, so each sends its failures to its own on-failure queue (issue 14)."""


def test_every_role_holds_exactly_its_grants(graph: Graph) -> None:
    for function, expected in EXPECTED_GRANTS.items():
        if function in SCHEDULED:
            expected = expected | {(("sqs:SendMessage",), (arn("sqs", f"dev-{function}-failures"),))}
        assert grants_of(graph, function) == expected, function


def test_degradation_notes_are_the_only_items_their_grants_reach(graph: Graph) -> None:
    """upsr-order and upsr-picker may update, and upsr-sweep read, exactly the degradation
    items of upsr-offers (dynamodb:LeadingKeys; DynamoDB Developer Guide, "Using IAM policy
    conditions for fine-grained access control":
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html)."""
    assert leading_keys(graph, "upsr-order") == {
        "dynamodb:UpdateItem": ["degraded#CustomerRedacted#upsr-order"]
    }
    assert leading_keys(graph, "upsr-picker") == {
        "dynamodb:UpdateItem": ["degraded#ModelRefused#upsr-picker"]
    }
    assert leading_keys(graph, "upsr-sweep") == {
        "dynamodb:GetItem": [
            "degraded#CustomerRedacted#upsr-order",
            "degraded#ModelRefused#upsr-picker",
        ]
    }


def test_the_daily_spend_counters_are_the_only_items_their_grants_reach(graph: Graph) -> None:
    """Issue #41: upsr-picker counts its model calls and upsr-sender its SMS in upsr-offers,
    UpdateItem on that one table ARN and on the ``spend#<kind>#`` keys only (same page)."""
    for function, kind in (("upsr-picker", "model"), ("upsr-sender", "sms")):
        policy = graph.named("aws:iam/rolePolicy:RolePolicy", f"dev-{function}-grants")
        [counter] = [
            s for s in json.loads(policy.inputs["policy"])["Statement"]
            if "ForAllValues:StringLike" in (s.get("Condition") or {})
        ]
        assert (counter["Action"], counter["Resource"]) == (["dynamodb:UpdateItem"], [table("upsr-offers")])
        assert counter["Condition"] == {
            "ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"spend#{kind}#*"]}
        }


def test_mail_may_leave_from_the_sender_address_only(graph: Graph) -> None:
    for function in ("upsr-sender", "upsr-sweep"):
        policy = graph.named("aws:iam/rolePolicy:RolePolicy", f"dev-{function}-grants")
        statements = json.loads(policy.inputs["policy"])["Statement"]
        [mail] = [s for s in statements if "ses:SendEmail" in s["Action"]]
        assert "Condition" in mail
        assert mail["Resource"] == [SES_IDENTITY]


def test_only_the_picker_may_call_a_model_and_only_the_sender_may_message(graph: Graph) -> None:
    for function in EXPECTED_GRANTS:
        actions = {a for actions, _ in grants_of(graph, function) for a in actions}
        assert ("bedrock:InvokeModel" in actions) == (function == "upsr-picker")
        assert ("sms-voice:SendTextMessage" in actions) == (function == "upsr-sender")
        assert not any(a.startswith("sns:") for a in actions)


def test_each_secret_read_names_one_secret(graph: Graph) -> None:
    for function in EXPECTED_GRANTS:
        for actions, resources in grants_of(graph, function):
            if "secretsmanager:GetSecretValue" in actions:
                assert actions == ("secretsmanager:GetSecretValue",)
                assert len(resources) == 1


def test_the_three_public_surfaces_are_function_urls(graph: Graph) -> None:
    urls = {
        r.inputs["functionName"]: r.inputs
        for r in graph.of_type("aws:lambda/functionUrl:FunctionUrl")
    }
    assert set(urls) == {"dev-upsr-order", "dev-upsr-addlink", "dev-upsr-compliance"}
    assert all(u["authorizationType"] == "NONE" for u in urls.values())
    public = [
        p.inputs
        for p in graph.of_type("aws:lambda/permission:Permission")
        if p.inputs.get("principal") == "*"
    ]
    assert {p["function"] for p in public} == {"dev-upsr-order", "dev-upsr-addlink", "dev-upsr-compliance"}
    assert len(public) == 6  # InvokeFunctionUrl + InvokeFunction via the URL, for each


def test_the_picker_is_fed_by_upsr_jobs_with_partial_batch_failures(graph: Graph) -> None:
    [mapping] = graph.of_type("aws:lambda/eventSourceMapping:EventSourceMapping")
    inputs = mapping.inputs
    assert inputs["functionName"] == "dev-upsr-picker"
    assert inputs["eventSourceArn"] == arn("sqs", "dev-upsr-jobs")
    assert inputs["functionResponseTypes"] == ["ReportBatchItemFailures"]
    assert inputs["batchSize"] == 5
    assert inputs["scalingConfig"] == {"maximumConcurrency": 5}


def test_queue_and_dead_letter_queue(graph: Graph) -> None:
    queues = {r.inputs["name"]: r.inputs for r in graph.of_type("aws:sqs/queue:Queue")}
    assert set(queues) == {
        "dev-upsr-jobs",
        "dev-upsr-jobs-dlq",
        *(f"dev-{name}-failures" for name in SCHEDULED),
        *(f"dev-{name}-schedule-dlq" for name in SCHEDULED),
    }
    redrive = json.loads(queues["dev-upsr-jobs"]["redrivePolicy"])
    assert redrive == {"deadLetterTargetArn": arn("sqs", "dev-upsr-jobs-dlq"), "maxReceiveCount": 5}
    assert queues["dev-upsr-jobs"]["visibilityTimeoutSeconds"] >= 6 * 60


def _keys(resource: Resource) -> dict[str, Any]:
    attributes = {a["name"]: a["type"] for a in resource.inputs["attributes"]}
    return {
        "hash": (resource.inputs["hashKey"], attributes[resource.inputs["hashKey"]]),
        "range": resource.inputs.get("rangeKey"),
        "indexes": [
            (i["name"], *gsi_keys(i), i["projectionType"])
            for i in resource.inputs.get("globalSecondaryIndexes") or []
        ],
        "ttl": (resource.inputs.get("ttl") or {}).get("attributeName"),
        "attributes": attributes,
        "stream": resource.inputs.get("streamEnabled"),
    }


def test_tables_and_key_schemas(graph: Graph) -> None:
    tables = {r.inputs["name"]: _keys(r) for r in graph.of_type("aws:dynamodb/table:Table")}
    assert set(tables) == {
        "dev-upsr-orders",
        "dev-upsr-offers",
        "dev-upsr-catalogue",
        "dev-upsr-customers",
        "dev-upsr-optout",
    }
    assert tables["dev-upsr-offers"] == {
        "hash": ("offer_id", "S"),
        "range": None,
        "indexes": [("state-send_at", "state", "send_at", "ALL")],
        "ttl": "expires_at",
        "attributes": {"offer_id": "S", "state": "S", "send_at": "N"},
        "stream": False,
    }
    for name, key, ttl in (
        ("dev-upsr-orders", "order_id", "expires_at"),  # issue 42: orderDays
        ("dev-upsr-catalogue", "sku", None),
        ("dev-upsr-customers", "customer_id", "expires_at"),  # issue 42: customerDays
        ("dev-upsr-optout", "customer_id", None),  # a suppression list: kept
    ):
        assert tables[name] == {
            "hash": (key, "S"),
            "range": None,
            "indexes": [],
            "ttl": ttl,
            "attributes": {key: "S"},
            "stream": False,
        }, name
    for resource in graph.of_type("aws:dynamodb/table:Table"):
        assert resource.inputs["billingMode"] == "PAY_PER_REQUEST"


def test_three_schedules_from_the_settings(graph: Graph) -> None:
    schedules = {
        r.inputs["name"]: (r.inputs["scheduleExpression"], r.inputs["target"]["arn"])
        for r in graph.of_type("aws:scheduler/schedule:Schedule")
    }
    assert schedules == {
        "dev-upsr-sender": ("rate(5 minutes)", arn("lambda", "function:dev-upsr-sender")),
        "dev-upsr-sweep": ("rate(1 hour)", arn("lambda", "function:dev-upsr-sweep")),
        "dev-upsr-catalog-sync": (
            "rate(15 minutes)",
            arn("lambda", "function:dev-upsr-catalog-sync"),
        ),
    }


def test_four_secrets_each_its_own(graph: Graph) -> None:
    names = {r.inputs["name"] for r in graph.of_type("aws:secretsmanager/secret:Secret")}
    assert names == {"dev-upsr-webhook-secret", "dev-upsr-store-key", "dev-upsr-addlink-key", "dev-upsr-forget-salt"}


def test_environment_carries_names_and_urls_only(graph: Graph) -> None:
    sender = functions(graph)["dev-upsr-sender"].inputs["environment"]["variables"]
    assert sender["ADDLINK_URL"] == "https://dev-upsr-addlink.lambda-url.eu-west-2.on.aws/"
    assert sender["ADDLINK_KEY_SECRET_ID"] == "dev-upsr-addlink-key"
    assert sender["SMS_ORIGINATION_IDENTITY"] == arn("sms-voice", f"pool/{POOL}")
    picker = functions(graph)["dev-upsr-picker"].inputs["environment"]["variables"]
    assert picker["PICKER_MODEL_ID"] == HAIKU
    for fn in functions(graph).values():
        variables = fn.inputs["environment"]["variables"]
        for key, value in variables.items():
            if key.endswith("_SECRET_ID"):
                assert value.startswith("dev-upsr-") and " " not in value


def test_operator_outputs(graph: Graph) -> None:
    outputs = graph.outputs["upsr"]
    assert outputs["order_webhook_url"] == "https://dev-upsr-order.lambda-url.eu-west-2.on.aws/"
    assert outputs["addlink_url"] == "https://dev-upsr-addlink.lambda-url.eu-west-2.on.aws/"
    assert outputs["tables"]["offers"] == "dev-upsr-offers"
    assert outputs["secrets"] == {
        "webhook_signing_secret": "dev-upsr-webhook-secret",
        "store_api_key": "dev-upsr-store-key",
        "addlink_token_key": "dev-upsr-addlink-key",
        "forget_salt": "dev-upsr-forget-salt",
    }


def test_everything_is_parented_to_the_system_in_eu_west_2(graph: Graph) -> None:
    [system] = graph.of_type("crm:index:UpsellRecommender")
    [london] = [p for p in graph.of_type("pulumi:providers:aws") if p.inputs["region"] == REGION]
    by_urn = {r.urn: r for r in graph.resources}
    inside = 0
    for r in graph.resources:
        if not r.custom or r.type.startswith(
            ("pulumi:providers", "aws:budgets", "aws:sns", "aws:kms", "aws:cloudwatch/dashboard")
        ):
            continue
        if r.type == "aws:sesv2/emailIdentity:EmailIdentity":
            continue  # the stack's shared per-region mail identity
        parent = r.parent
        while parent is not None and parent != system.urn:
            parent = by_urn[parent].parent
        assert parent == system.urn, (r.type, r.name)
        assert (r.provider or "").startswith(london.urn), (r.type, r.name)
        inside += 1
    assert inside > 40


def test_settings_drive_models_and_schedules() -> None:
    heavy = {"modelId": HAIKU, "heavyModelId": SONNET, "useHeavy": True}
    changed = run(
        "dev",
        {
            **DOCUMENTS_STORE,
            "systems": only_upsr(pickerModel=heavy, senderSchedule="rate(10 minutes)"),
        },
    )
    [(_, resources)] = [
        g for g in grants_of(changed, "upsr-picker") if g[0] == ("bedrock:InvokeModel",)
    ]
    assert arn("bedrock", f"inference-profile/{SONNET}") in resources
    assert not any(HAIKU in r for r in resources)
    schedule = changed.named("aws:scheduler/schedule:Schedule", "dev-upsr-sender")
    assert schedule.inputs["scheduleExpression"] == "rate(10 minutes)"


def test_prod_protects_the_tables(prod: Graph) -> None:
    tables = prod.of_type("aws:dynamodb/table:Table")
    assert len(tables) == 5
    assert all(t.inputs["deletionProtectionEnabled"] for t in tables)


def test_the_policy_pack_passes(graph: Graph, prod: Graph) -> None:
    assert evaluate_graph(graph) == []
    assert evaluate_graph(prod) == []


def test_each_function_environment_is_exactly_its_settings_record(graph: Graph) -> None:
    from handlers.common.settings import Settings
    from handlers.upsell_recommender import contract

    records: dict[str, type[Settings]] = {
        "dev-upsr-order": contract.OrderSettings,
        "dev-upsr-picker": contract.PickerSettings,
        "dev-upsr-sender": contract.SenderSettings,
        "dev-upsr-addlink": contract.AddlinkSettings,
        "dev-upsr-sweep": contract.SweepSettings,
        "dev-upsr-catalog-sync": contract.CatalogSyncSettings,
        "dev-upsr-compliance": contract.ComplianceSettings,
    }
    envs = {name: f.inputs["environment"]["variables"] for name, f in functions(graph).items()}
    assert set(envs) == set(records)
    for name, record in records.items():
        own = {k for k in envs[name] if not k.startswith(("POWERTOOLS_", "CRM_"))}
        assert own == set(record.variables()), name  # ScopedLambda adds the runtime's own
        assert not [key for key in envs[name] if key.startswith("UPSR_")], name
    assert envs["dev-upsr-sender"]["OFFERS_INDEX"] == contract.OFFERS_INDEX
    assert envs["dev-upsr-order"]["ORDER_TIMEOUT_S"] == "10"  # its own timeout
    assert envs["dev-upsr-picker"]["JOBS_MAX_RECEIVES"] == "5"  # upsr-jobs' maxReceiveCount
    picker = contract.PickerSettings.from_environ(envs["dev-upsr-picker"])
    assert isinstance(picker.max_price_ratio, float)
