"""The review request sender's graph: exactly its functions, triggers, stores, schedules, grants."""

from __future__ import annotations

import json
import zipfile
from typing import Any

import pytest

from components.offline.engine import ACCOUNT_ID, Graph, gsi_keys
from components.offline.policy_view import evaluate_graph
from tests.infra.graph_helpers import (
    DOCUMENTS_STORE,
    Statement,
    arns_in,
    functions,
    grants_of,
    only_system,
    run,
    statements_of,
)

REGION = "eu-west-2"
HAIKU = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
SONNET = "global.anthropic.claude-sonnet-4-6"
PACKAGE = "handlers.review_requests"


arn = arns_in(REGION)


def only_rrs(stack: str = "dev", **changes: Any) -> dict[str, Any]:
    return only_system("rrs", stack, **changes)


@pytest.fixture(scope="module")
def graph() -> Graph:
    return run("dev", {**DOCUMENTS_STORE, "systems": only_rrs()})


@pytest.fixture(scope="module")
def s3_sheet_graph() -> Graph:
    heavy = {"modelId": HAIKU, "heavyModelId": SONNET, "useHeavy": True}
    return run(
        "dev",
        {
            **DOCUMENTS_STORE,
            "systems": only_rrs(
                sheetSource="s3://crm-sheets/customers/latest.csv", composeModel=heavy
            ),
        },
    )


def table(name: str) -> str:
    return arn("dynamodb", f"table/dev-{name}")


def secret(name: str) -> str:
    return arn("secretsmanager", f"secret:dev-{name}-??????")


def logs(function: str) -> Statement:
    return (
        ("logs:CreateLogStream", "logs:PutLogEvents"),
        (arn("logs", f"log-group:/aws/lambda/dev-{function}:*"),),
    )


def models(model_id: str) -> tuple[str, ...]:
    base = model_id.removeprefix("global.")
    return tuple(
        sorted(
            (
                arn("bedrock", f"inference-profile/{model_id}"),
                f"arn:aws:bedrock:{REGION}::foundation-model/{base}",
                f"arn:aws:bedrock:::foundation-model/{base}",
            )
        )
    )


WORK = arn("sqs", "dev-rrs-work")
ESCALATIONS = arn("sqs", "dev-rrs-escalations")
SEND = ("sqs:SendMessage",)
EVENT_SOURCE = ("sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage")
"""What an SQS event source mapping needs: https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html"""
SES_IDENTITY = arn("ses", "identity/example.com")
SMS_POOL = arn("sms-voice", "pool/pool-0123456789abcdef0123456789abcdef")
GROUP = "dev-rrs-requests"
SCHEDULE_ROLE = f"arn:aws:iam::{ACCOUNT_ID}:role/dev-rrs-request-schedules-role"


def test_exactly_the_documents_functions_with_their_sizes(graph: Graph) -> None:
    found = {
        name: (f.inputs["memorySize"], f.inputs["timeout"], f.inputs["handler"])
        for name, f in functions(graph).items()
    }
    assert found == {
        "dev-rrs-webhook": (1024, 10, f"{PACKAGE}.functions.webhook.handler"),  # #41: first call within 1.5 s
        "dev-rrs-sender": (512, 90, f"{PACKAGE}.functions.sender.handler"),
        "dev-rrs-escalator": (256, 30, f"{PACKAGE}.functions.escalator.handler"),
        "dev-rrs-sync": (512, 120, f"{PACKAGE}.functions.sync.handler"),
        "dev-rrs-sweep": (256, 60, f"{PACKAGE}.functions.sweep.handler"),
    }
    for f in functions(graph).values():
        assert f.inputs["runtime"] == "python3.14" and f.inputs["architectures"] == ["arm64"]
    for group in graph.of_type("aws:cloudwatch/logGroup:LogGroup"):
        assert group.inputs["retentionInDays"] == 7


def test_every_archive_vendors_tzdata_and_only_webhook_and_sync_phonenumbers(
    graph: Graph,
) -> None:
    """All five import timing (zoneinfo): without a system zone database, tzdata answers."""
    for name, f in functions(graph).items():
        entries = zipfile.ZipFile(f.inputs["code"]["archive"]).namelist()
        assert "tzdata/zoneinfo/Europe/London" in entries, name
        assert "handlers/review_requests/timing.py" in entries, name
        phonenumbers = any(e.startswith("phonenumbers/") for e in entries)
        assert phonenumbers == (name in {"dev-rrs-webhook", "dev-rrs-sync"}), name


def test_tables_keys_index_and_ttl(graph: Graph) -> None:
    tables = {t.inputs["name"]: t.inputs for t in graph.of_type("aws:dynamodb/table:Table")}
    keys = {name: (t["hashKey"], t.get("rangeKey")) for name, t in tables.items()}
    assert keys == {
        "dev-rrs-jobs": ("customer_id", "job_ts"),
        "dev-rrs-requests": ("request_id", None),
        "dev-rrs-customers": ("customer_id", None),
        "dev-rrs-optout": ("contact", None),
        "dev-rrs-audit": ("request_id", "ts"),
    }
    requests = tables["dev-rrs-requests"]
    [index] = requests["globalSecondaryIndexes"]
    assert (index["name"], *gsi_keys(index)) == ("state-due", "state", "due")
    assert requests["ttl"] == {"attributeName": "expires_at", "enabled": True}
    # Issue 42: the job, the audit trail and the mirrored customer expire too; opt-outs stay.
    for name in ("dev-rrs-jobs", "dev-rrs-audit", "dev-rrs-customers"):
        assert tables[name]["ttl"] == {"attributeName": "expires_at", "enabled": True}, name
    assert "ttl" not in tables["dev-rrs-optout"]
    for t in tables.values():
        assert t["billingMode"] == "PAY_PER_REQUEST"
        assert t["pointInTimeRecovery"] == {"enabled": True}


def test_a_queue_per_message_kind_each_with_its_dlq_after_five(graph: Graph) -> None:
    queues = {q.inputs["name"]: q.inputs for q in graph.of_type("aws:sqs/queue:Queue")}
    assert set(queues) == {
        "dev-rrs-work",
        "dev-rrs-work-dlq",
        "dev-rrs-escalations",
        "dev-rrs-escalations-dlq",
        # issue 14: on-failure queues of the scheduled functions, and the schedules' DLQs
        "dev-rrs-sweep-failures",
        "dev-rrs-sync-failures",
        "dev-rrs-sweep-schedule-dlq",
        "dev-rrs-sync-schedule-dlq",
        "dev-rrs-request-schedules-dlq",
    }
    for name, consumer_timeout in (("dev-rrs-work", 90), ("dev-rrs-escalations", 30)):
        redrive = json.loads(queues[name]["redrivePolicy"])
        assert redrive == {"deadLetterTargetArn": arn("sqs", f"{name}-dlq"), "maxReceiveCount": 5}
        assert queues[name]["visibilityTimeoutSeconds"] == 6 * consumer_timeout


def test_each_queue_has_one_unfiltered_consumer(graph: Graph) -> None:
    """Lambda deletes an SQS message none of its mapping's filters match: so no filters."""
    mappings = graph.of_type("aws:lambda/eventSourceMapping:EventSourceMapping")
    found = {
        m.inputs["functionName"]: (
            m.inputs["eventSourceArn"],
            m.inputs.get("filterCriteria"),
            m.inputs["functionResponseTypes"],
            m.inputs["batchSize"],
        )
        for m in mappings
    }
    assert found == {
        "dev-rrs-sender": (WORK, None, ["ReportBatchItemFailures"], 5),
        "dev-rrs-escalator": (ESCALATIONS, None, ["ReportBatchItemFailures"], 5),
    }
    sender = next(m for m in mappings if m.inputs["functionName"] == "dev-rrs-sender")
    assert sender.inputs["scalingConfig"] == {"maximumConcurrency": 5}


def test_only_the_webhook_is_public(graph: Graph) -> None:
    [url] = graph.of_type("aws:lambda/functionUrl:FunctionUrl")
    assert (url.inputs["functionName"], url.inputs["authorizationType"]) == (
        "dev-rrs-webhook",
        "NONE",
    )
    public = graph.of_type("aws:lambda/permission:Permission")
    assert {(p.inputs["function"], p.inputs["principal"]) for p in public} == {
        ("dev-rrs-webhook", "*")
    }
    assert graph.outputs["rrs"]["webhook_url"].startswith("https://dev-rrs-webhook.lambda-url.")


def test_sweep_and_sync_run_every_fifteen_minutes_on_their_own_functions(graph: Graph) -> None:
    schedules = {
        s.inputs["name"]: s.inputs for s in graph.of_type("aws:scheduler/schedule:Schedule")
    }
    assert {
        name: (s["scheduleExpression"], s["target"]["arn"]) for name, s in schedules.items()
    } == {
        "dev-rrs-sweep": ("rate(15 minutes)", arn("lambda", "function:dev-rrs-sweep")),
        "dev-rrs-sync": ("rate(15 minutes)", arn("lambda", "function:dev-rrs-sync")),
    }


def test_request_schedules_have_a_group_and_a_role_that_may_only_send_to_rrs_work(
    graph: Graph,
) -> None:
    groups = {g.inputs["name"] for g in graph.of_type("aws:scheduler/scheduleGroup:ScheduleGroup")}
    assert groups == {GROUP, "dev-rrs"}
    role = graph.named("aws:iam/role:Role", "dev-rrs-request-schedules-role")
    [trust] = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert trust["Principal"] == {"Service": "scheduler.amazonaws.com"}
    assert trust["Condition"] == {
        "StringEquals": {"aws:SourceAccount": ACCOUNT_ID},
        "ArnEquals": {"aws:SourceArn": arn("scheduler", f"schedule-group/{GROUP}")},
    }
    policy = graph.named("aws:iam/rolePolicy:RolePolicy", "dev-rrs-request-schedules-role-send")
    assert json.loads(policy.inputs["policy"])["Statement"] == [
        {
            "Sid": "SendToRrsWorkOnly",
            "Effect": "Allow",
            "Action": ["sqs:SendMessage"],
            "Resource": [WORK],
        },
        {
            # Scheduler delivers undeliverable asks to the DLQ with the same role.
            "Sid": "SendUndeliveredToDlq",
            "Effect": "Allow",
            "Action": ["sqs:SendMessage"],
            "Resource": [arn("sqs", "dev-rrs-request-schedules-dlq")],
        },
    ]
    # The scheduler uses the role's identity permissions: no service sender on the queue.
    queue_policy = next(
        p
        for p in graph.of_type("aws:sqs/queuePolicy:QueuePolicy")
        if p.inputs["queueUrl"].endswith("/dev-rrs-work")
    )
    assert [s["Effect"] for s in json.loads(queue_policy.inputs["policy"])["Statement"]] == ["Deny"]


def test_each_role_holds_exactly_its_grants(graph: Graph) -> None:
    assert grants_of(graph, "rrs-webhook") == {
        logs("rrs-webhook"),
        (("secretsmanager:GetSecretValue",), (secret("rrs-webhook-secret"),)),
        (("secretsmanager:GetSecretValue",), (secret("rrs-messaging-key"),)),
        (("secretsmanager:GetSecretValue",), (secret("rrs-forget-salt"),)),
        (("dynamodb:GetItem",), (table("rrs-customers"),)),
        (("dynamodb:GetItem",), (table("rrs-optout"),)),
        (("dynamodb:PutItem",), (table("rrs-optout"),)),
        (("dynamodb:PutItem",), (table("rrs-requests"),)),
        (("dynamodb:GetItem",), (table("rrs-requests"),)),
        (("dynamodb:PutItem",), (table("rrs-jobs"),)),
        (("dynamodb:PutItem",), (table("rrs-audit"),)),
        (SEND, (ESCALATIONS,)),
        (("scheduler:CreateSchedule",), (arn("scheduler", f"schedule/{GROUP}/*"),)),
        (("iam:PassRole",), (SCHEDULE_ROLE,)),
    }
    assert grants_of(graph, "rrs-sender") == {
        logs("rrs-sender"),
        (("bedrock:InvokeModel",), models(HAIKU)),
        (("dynamodb:GetItem", "dynamodb:UpdateItem"), (table("rrs-requests"),)),
        (("dynamodb:ConditionCheckItem", "dynamodb:GetItem"), (table("rrs-optout"),)),
        (("dynamodb:PutItem",), (table("rrs-audit"),)),
        (("dynamodb:UpdateItem",), (table("rrs-requests"),)),  # its degradation note (below)
        (("secretsmanager:GetSecretValue",), (secret("rrs-messaging-key"),)),
        (SEND, (ESCALATIONS,)),
        (("ses:SendEmail",), (SES_IDENTITY,)),
        (("sms-voice:SendTextMessage",), (SMS_POOL,)),
        (EVENT_SOURCE, (WORK,)),
    }
    assert grants_of(graph, "rrs-escalator") == {
        logs("rrs-escalator"),
        (("dynamodb:GetItem",), (table("rrs-requests"),)),
        (("dynamodb:GetItem",), (table("rrs-customers"),)),
        (("dynamodb:GetItem",), (table("rrs-jobs"),)),
        (("dynamodb:Query",), (table("rrs-audit"),)),
        (("dynamodb:PutItem",), (table("rrs-audit"),)),
        (("ses:SendEmail",), (SES_IDENTITY,)),
        (EVENT_SOURCE, (ESCALATIONS,)),
    }
    assert grants_of(graph, "rrs-sync") == {
        logs("rrs-sync"),
        (("dynamodb:UpdateItem",), (table("rrs-customers"),)),
        (("dynamodb:Scan",), (table("rrs-customers"),)),  # the row hashes, read first
        (SEND, (arn("sqs", "dev-rrs-sync-failures"),)),
    }
    assert grants_of(graph, "rrs-sweep") == {
        logs("rrs-sweep"),
        (("dynamodb:Query",), (table("rrs-requests") + "/index/state-due",)),
        (("dynamodb:UpdateItem",), (table("rrs-requests"),)),
        (("dynamodb:GetItem",), (table("rrs-requests"),)),  # the degradation notes only (below)
        (SEND, (WORK,)),
        (SEND, (ESCALATIONS,)),
        (SEND, (arn("sqs", "dev-rrs-sweep-failures"),)),
    }


def test_degradation_notes_are_the_only_items_their_grants_reach(graph: Graph) -> None:
    """rrs-sender may update its refused-model note and its daily model and SMS counters (and
    nothing else of rrs-requests through these), rrs-sweep read the note and mark it notified,
    rrs-escalator read it: each statement limited to that one partition key of rrs-requests
    (dynamodb:LeadingKeys; DynamoDB Developer Guide, "Using IAM policy conditions for
    fine-grained access control":
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html).
    The statements are listed with their Sid, so a duplicate of a table-wide grant cannot
    hide in the sets above."""
    note = ["degraded#ModelRefused#rrs-sender"]

    def conditioned(function: str) -> dict[str, tuple[tuple[str, ...], tuple[str, ...], Any]]:
        return {
            s["Sid"]: (tuple(s["Action"]), tuple(s["Resource"]), s["Condition"])
            for s in statements_of(graph, function)
            if "dynamodb:LeadingKeys" in json.dumps(s.get("Condition") or {})
        }

    only_note = {"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": note}}
    requests = (table("rrs-requests"),)
    def counters(kind: str) -> dict[str, Any]:  # the day's spend counters of one kind (#41)
        return {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"spend#{kind}#*"]}}

    assert conditioned("rrs-sender") == {
        "NoteRefusedModel": (("dynamodb:UpdateItem",), requests, only_note),
        "CountModelCalls": (("dynamodb:UpdateItem",), requests, counters("model")),
        "CountSms": (("dynamodb:UpdateItem",), requests, counters("sms")),
    }
    assert conditioned("rrs-sweep") == {
        "ReadDegradationNotes": (("dynamodb:GetItem",), requests, only_note),
        "MarkNotesNotified": (("dynamodb:UpdateItem",), requests, only_note),
    }
    assert conditioned("rrs-escalator") == {
        "ReadDegradationNotes": (("dynamodb:GetItem",), requests, only_note)
    }
    for function in ("rrs-webhook", "rrs-sync"):
        assert conditioned(function) == {}


def test_pass_role_is_only_to_the_scheduler(graph: Graph) -> None:
    [statement] = [
        s for s in statements_of(graph, "rrs-webhook") if s["Action"] == ["iam:PassRole"]
    ]
    assert statement["Condition"] == {
        "StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}
    }


def test_mail_goes_only_from_the_configured_sender(graph: Graph) -> None:
    for function in ("rrs-sender", "rrs-escalator"):
        [statement] = [
            s for s in statements_of(graph, function) if s["Action"] == ["ses:SendEmail"]
        ]
        assert statement["Condition"] == {
            "StringEquals": {"ses:FromAddress": ["crm-bot@example.com"]}
        }


def test_the_audit_is_append_only_and_nobody_deletes(graph: Graph) -> None:
    every = [
        s
        for policy in graph.of_type("aws:iam/rolePolicy:RolePolicy")
        for s in json.loads(policy.inputs["policy"])["Statement"]
    ]
    for statement in every:
        actions = set(statement["Action"])
        assert "dynamodb:DeleteItem" not in actions and "dynamodb:BatchWriteItem" not in actions
        if table("rrs-audit") in statement["Resource"]:
            assert actions <= {"dynamodb:PutItem", "dynamodb:Query"}, statement


def test_only_the_sender_may_call_a_model(graph: Graph) -> None:
    callers = {
        policy.inputs["name"]
        for policy in graph.of_type("aws:iam/rolePolicy:RolePolicy")
        if "bedrock:" in policy.inputs["policy"]
    }
    assert callers == {"dev-rrs-sender-grants"}


def test_environment_names_things_and_never_holds_a_secret(graph: Graph) -> None:
    envs = {name: f.inputs["environment"]["variables"] for name, f in functions(graph).items()}
    webhook = envs["dev-rrs-webhook"]
    assert webhook["WEBHOOK_SECRET_ID"] == "dev-rrs-webhook-secret"
    assert (
        webhook["SCHEDULE_GROUP"] == GROUP and webhook["SCHEDULE_ROLE_ARN"] == SCHEDULE_ROLE
    )
    assert webhook["WORK_QUEUE_ARN"] == WORK  # the schedules' target
    queue_url = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT_ID}/dev-rrs-"
    queue_envs = {
        name: {k: v for k, v in env.items() if k.endswith("_QUEUE_URL")}
        for name, env in envs.items()
    }
    assert queue_envs == {
        "dev-rrs-webhook": {"ESCALATIONS_QUEUE_URL": queue_url + "escalations"},
        "dev-rrs-sender": {"ESCALATIONS_QUEUE_URL": queue_url + "escalations"},
        "dev-rrs-escalator": {},
        "dev-rrs-sync": {},
        "dev-rrs-sweep": {
            "WORK_QUEUE_URL": queue_url + "work",
            "ESCALATIONS_QUEUE_URL": queue_url + "escalations",
        },
    }
    sender = envs["dev-rrs-sender"]
    assert sender["GRADE_MODEL_ID"] == sender["COMPOSE_MODEL_ID"] == HAIKU
    assert sender["SMS_ORIGINATION_IDENTITY"] == SMS_POOL
    assert sender["MESSAGING_KEY_SECRET_ID"] == "dev-rrs-messaging-key"
    assert "WEBHOOK_SECRET_ID" not in sender
    assert envs["dev-rrs-sync"]["SHEET_SOURCE"] == ""


def test_each_function_environment_is_exactly_its_settings_record(graph: Graph) -> None:
    from handlers.common.settings import Settings
    from handlers.review_requests import contract

    records: dict[str, type[Settings]] = {
        "dev-rrs-webhook": contract.WebhookSettings,
        "dev-rrs-sender": contract.SenderSettings,
        "dev-rrs-escalator": contract.EscalatorSettings,
        "dev-rrs-sync": contract.SyncSettings,
        "dev-rrs-sweep": contract.SweepSettings,
    }
    envs = {name: f.inputs["environment"]["variables"] for name, f in functions(graph).items()}
    assert set(envs) == set(records)
    for name, record in records.items():
        own = {k for k in envs[name] if not k.startswith(("POWERTOOLS_", "CRM_"))}
        assert own == set(record.variables()), name  # ScopedLambda adds the runtime's own
        assert not [key for key in envs[name] if key.startswith("RRS_")], name
    assert envs["dev-rrs-sweep"]["REQUESTS_INDEX"] == contract.REQUESTS_INDEX
    assert envs["dev-rrs-escalator"]["CLAIM_LEASE_SECONDS"] == "60"  # twice its 30 s timeout


def test_an_s3_sheet_is_readable_as_that_one_object_only(s3_sheet_graph: Graph) -> None:
    assert grants_of(s3_sheet_graph, "rrs-sync") == {
        logs("rrs-sync"),
        (("dynamodb:UpdateItem",), (table("rrs-customers"),)),
        (("dynamodb:Scan",), (table("rrs-customers"),)),  # the row hashes, read first
        (("s3:GetObject",), ("arn:aws:s3:::crm-sheets/customers/latest.csv",)),
        (("sqs:SendMessage",), (arn("sqs", "dev-rrs-sync-failures"),)),
    }
    sender = grants_of(s3_sheet_graph, "rrs-sender")
    assert (("bedrock:InvokeModel",), models(HAIKU)) in sender
    assert (("bedrock:InvokeModel",), models(SONNET)) in sender
    env = functions(s3_sheet_graph)["dev-rrs-sender"].inputs["environment"]["variables"]
    assert (env["GRADE_MODEL_ID"], env["COMPOSE_MODEL_ID"]) == (HAIKU, SONNET)


def test_the_policy_pack_finds_nothing(graph: Graph, s3_sheet_graph: Graph) -> None:
    assert evaluate_graph(graph) == []
    assert evaluate_graph(s3_sheet_graph) == []


def test_prod_protects_the_tables() -> None:
    prod = run("prod", {**DOCUMENTS_STORE, "systems": only_rrs("prod")})
    tables = prod.of_type("aws:dynamodb/table:Table")
    assert len(tables) == 5 and all(t.inputs["deletionProtectionEnabled"] for t in tables)
    assert evaluate_graph(prod) == []


def test_operator_outputs(graph: Graph) -> None:
    outputs = graph.outputs["rrs"]
    assert outputs["schedule_group"] == GROUP
    assert outputs["work_queue_url"].endswith("/dev-rrs-work")
    assert outputs["escalations_queue_url"].endswith("/dev-rrs-escalations")
    assert outputs["tables"] == {
        "jobs": "dev-rrs-jobs",
        "requests": "dev-rrs-requests",
        "customers": "dev-rrs-customers",
        "optout": "dev-rrs-optout",
        "audit": "dev-rrs-audit",
    }
    assert outputs["secrets"] == {
        "webhook_signing_secret": "dev-rrs-webhook-secret",
        "messaging_key": "dev-rrs-messaging-key",
        "forget_salt": "dev-rrs-forget-salt",
    }
