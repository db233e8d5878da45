"""The lead enricher's graph: exactly its functions, triggers, stores, schedules and grants."""

from __future__ import annotations

import json
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
SOURCE = "crm.dev.ler"


arn = arns_in(REGION)


def only_ler(stack: str = "dev", **changes: Any) -> dict[str, Any]:
    return only_system("ler", stack, **changes)


@pytest.fixture(scope="module")
def graph() -> Graph:
    return run("dev", {**DOCUMENTS_STORE, "systems": only_ler()})


@pytest.fixture(scope="module")
def iam_graph() -> Graph:
    heavy = {"modelId": HAIKU, "heavyModelId": SONNET, "useHeavy": True}
    return run("dev", {**DOCUMENTS_STORE, "systems": only_ler(intakeAuth="iam", dedupeModel=heavy)})


def logs(function: str) -> Statement:
    return (
        ("logs:CreateLogStream", "logs:PutLogEvents"),
        (arn("logs", f"log-group:/aws/lambda/dev-{function}:*"),),
    )


RAW = f"arn:aws:s3:::dev-ler-raw-{ACCOUNT_ID}"
RECORDS = f"arn:aws:s3:::dev-ler-records-{ACCOUNT_ID}"
JUNK = f"arn:aws:s3:::dev-ler-junk-{ACCOUNT_ID}"
IDENTITY = arn("dynamodb", "table/dev-ler-identity")
BY_CRM_ID = arn("dynamodb", "table/dev-ler-identity/index/by-crm-id")
CACHE = arn("dynamodb", "table/dev-ler-enrich-cache")
INTAKE_QUEUE = arn("sqs", "dev-ler-intake-queue")
INTAKE_DLQ = arn("sqs", "dev-ler-intake-dlq")
DLQ = arn("sqs", "dev-ler-dlq")
BUS = arn("events", "event-bus/default")
IDENTITY_SES = arn("ses", "identity/example.com")
SEND = ("sqs:SendMessage",)
CONSUME = (
    "sqs:ChangeMessageVisibility",
    "sqs:DeleteMessage",
    "sqs:GetQueueAttributes",
    "sqs:ReceiveMessage",
)
EVENT_SOURCE = ("sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage")
"""What an SQS event source mapping needs: https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html"""


def secret(name: str) -> str:
    return arn("secretsmanager", f"secret:dev-{name}-??????")


def function_arn(name: str) -> str:
    return arn("lambda", f"function:dev-{name}")


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


def test_exactly_the_documents_functions_with_their_sizes(graph: Graph) -> None:
    found = {
        name: (f.inputs["memorySize"], f.inputs["timeout"], f.inputs["handler"])
        for name, f in functions(graph).items()
    }
    package = "handlers.lead_enricher.functions"
    assert found == {
        "dev-ler-intake": (512, 60, f"{package}.intake.handler"),
        "dev-ler-normalize": (512, 60, f"{package}.normalize.handler"),
        "dev-ler-enrich": (256, 30, f"{package}.enrich.handler"),
        "dev-ler-dedupe": (256, 30, f"{package}.dedupe.handler"),
        "dev-ler-filter": (256, 30, f"{package}.filter.handler"),
        "dev-ler-push": (256, 30, f"{package}.push.handler"),
        "dev-ler-junk-writer": (128, 10, f"{package}.junk_writer.handler"),
        "dev-ler-retry": (256, 120, f"{package}.retry.handler"),
        "dev-ler-backfill": (256, 900, f"{package}.backfill.handler"),
        "dev-ler-digest": (256, 60, f"{package}.digest.handler"),
        "dev-ler-rescue": (1024, 10, f"{package}.rescue.handler"),  # #41: first page within 1.5 s
    }
    for f in functions(graph).values():
        assert f.inputs["runtime"] == "python3.14"
        assert f.inputs["architectures"] == ["arm64"]
        assert f.inputs["tags"]["crm:system"] == "ler"
    roles = {r.inputs["name"] for r in graph.of_type("aws:iam/role:Role")}
    assert {f"{name}-role" for name in functions(graph)} <= roles


def test_phonenumbers_is_in_the_archives_that_import_it(graph: Graph) -> None:
    import zipfile

    for name, f in functions(graph).items():
        entries = zipfile.ZipFile(f.inputs["code"]["archive"]).namelist()
        vendored = any(e.startswith("phonenumbers/") for e in entries)
        # ler-backfill: the erasure engine's phone rule (a contact HubSpot deleted for good)
        assert vendored == (name in {"dev-ler-normalize", "dev-ler-push", "dev-ler-backfill"}), name
        assert "handlers/lead_enricher/lead.py" in entries
        assert not any(e.startswith(("tests/", "components/", "testsupport/")) for e in entries)


def test_tables_keys_index_and_ttl(graph: Graph) -> None:
    tables = {t.inputs["name"]: t.inputs for t in graph.of_type("aws:dynamodb/table:Table")}
    assert set(tables) == {"dev-ler-identity", "dev-ler-enrich-cache"}
    identity, cache = tables["dev-ler-identity"], tables["dev-ler-enrich-cache"]
    assert (identity["hashKey"], identity.get("rangeKey")) == ("id_key", None)
    assert [
        (i["name"], gsi_keys(i)[0], i["projectionType"]) for i in identity["globalSecondaryIndexes"]
    ] == [("by-crm-id", "crm_id", "ALL")]
    assert sorted((a["name"], a["type"]) for a in identity["attributes"]) == [
        ("crm_id", "S"),
        ("id_key", "S"),
    ]
    assert (cache["hashKey"], cache.get("rangeKey")) == ("domain", None)
    assert cache["ttl"] == {"attributeName": "ttl", "enabled": True}
    assert identity["ttl"] == {"attributeName": "expires_at", "enabled": True}  # identityDays
    for table in tables.values():
        assert table["billingMode"] == "PAY_PER_REQUEST"


def test_buckets_raw_is_versioned_and_only_ses_writes_mail(graph: Graph) -> None:
    buckets = {b.inputs["bucket"] for b in graph.of_type("aws:s3/bucket:Bucket")}
    assert buckets == {f"dev-ler-{n}-{ACCOUNT_ID}" for n in ("raw", "records", "junk")}
    versioning = graph.of_type("aws:s3/bucketVersioning:BucketVersioning")
    assert [v.inputs["bucket"] for v in versioning] == [f"dev-ler-raw-{ACCOUNT_ID}"]
    policy = graph.named("aws:s3/bucketPolicy:BucketPolicy", f"dev-ler-raw-{ACCOUNT_ID}")
    allows = [s for s in json.loads(policy.inputs["policy"])["Statement"] if s["Effect"] == "Allow"]
    assert [(s["Principal"], s["Resource"]) for s in allows] == [
        ({"Service": "ses.amazonaws.com"}, f"{RAW}/inbound/*")
    ]
    rule = graph.of_type("aws:ses/receiptRule:ReceiptRule")[0].inputs
    assert rule["recipients"] == ["hello@example.com"]
    assert rule["s3Actions"] == [
        {"bucketName": f"dev-ler-raw-{ACCOUNT_ID}", "objectKeyPrefix": "inbound/", "position": 1}
    ]
    # dev and prod share the account: only the stack that activates it owns the active set.
    assert graph.of_type("aws:ses/activeReceiptRuleSet:ActiveReceiptRuleSet") == []


def test_intake_is_triggered_only_by_the_mail_and_upload_prefixes(graph: Graph) -> None:
    notification = graph.of_type("aws:s3/bucketNotification:BucketNotification")
    assert len(notification) == 1
    assert notification[0].inputs["bucket"] == f"dev-ler-raw-{ACCOUNT_ID}"
    lanes = notification[0].inputs["lambdaFunctions"]
    assert sorted(f["filterPrefix"] for f in lanes) == ["inbound/", "upload/"]
    assert {f["lambdaFunctionArn"] for f in lanes} == {function_arn("ler-intake")}


def test_no_role_can_write_where_intake_is_triggered(graph: Graph) -> None:
    """Intake's own writes to ler-raw go under form/, which triggers nothing: no loop."""
    for name in functions(graph):
        for statement in statements_of(graph, name.removeprefix("dev-")):
            writes = [a for a in statement["Action"] if a.startswith("s3:Put")]
            for resource in statement["Resource"] if writes else ():
                if resource.startswith(RAW):
                    assert resource in (f"{RAW}/form/*", f"{RAW}/reports/*"), (name, resource)


def test_the_chain_runs_on_the_default_bus_with_ler_dlq(graph: Graph) -> None:
    rules = {
        r.inputs["name"]: r.inputs for r in graph.of_type("aws:cloudwatch/eventRule:EventRule")
    }
    wanted = {
        "dev-ler-on-normalized": ("le.normalized", "ler-enrich"),
        "dev-ler-on-enriched": ("le.enriched", "ler-dedupe"),
        "dev-ler-on-deduped": ("le.deduped", "ler-filter"),
        "dev-ler-on-clean": ("le.clean", "ler-push"),
        "dev-ler-on-junk": ("le.junk", "ler-junk-writer"),
    }
    assert set(rules) == set(wanted)
    targets = {
        t.inputs["rule"]: t.inputs for t in graph.of_type("aws:cloudwatch/eventTarget:EventTarget")
    }
    for rule, (detail_type, function) in wanted.items():
        assert rules[rule]["eventBusName"] == "default"
        assert json.loads(rules[rule]["eventPattern"]) == {
            "detail-type": [detail_type],
            "source": [SOURCE],
        }
        assert targets[rule]["arn"] == function_arn(function)
        assert targets[rule]["deadLetterConfig"] == {"arn": DLQ}
    dlq_policy = next(
        p
        for p in graph.of_type("aws:sqs/queuePolicy:QueuePolicy")
        if p.inputs["queueUrl"].endswith("/dev-ler-dlq")
    )
    senders = {
        s["Condition"]["ArnEquals"]["aws:SourceArn"]
        for s in json.loads(dlq_policy.inputs["policy"])["Statement"]
        if s["Effect"] == "Allow"
    }
    assert senders == {arn("events", f"rule/{rule}") for rule in wanted}


def test_every_async_function_fails_into_ler_dlq(graph: Graph) -> None:
    configs = {
        c.inputs["functionName"]: c.inputs
        for c in graph.of_type("aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig")
    }
    # normalize is polled from SQS; rescue answers Function URL requests (synchronous).
    asynchronous = set(functions(graph)) - {"dev-ler-normalize", "dev-ler-rescue"}
    assert set(configs) == asynchronous
    for config in configs.values():
        assert config["destinationConfig"]["onFailure"]["destination"] == DLQ
        assert config["maximumRetryAttempts"] == 1


def test_intake_queue_feeds_normalize_one_at_a_time(graph: Graph) -> None:
    mappings = graph.of_type("aws:lambda/eventSourceMapping:EventSourceMapping")
    assert [
        (m.inputs["eventSourceArn"], m.inputs["functionName"], m.inputs["batchSize"])
        for m in mappings
    ] == [(INTAKE_QUEUE, "dev-ler-normalize", 1)]
    queue = graph.named("aws:sqs/queue:Queue", "dev-ler-intake-queue").inputs
    assert json.loads(queue["redrivePolicy"]) == {
        "deadLetterTargetArn": INTAKE_DLQ,
        "maxReceiveCount": 2,
    }
    assert queue["visibilityTimeoutSeconds"] >= 6 * 60
    names = {q.inputs["name"] for q in graph.of_type("aws:sqs/queue:Queue")}
    schedule_dlqs = {f"dev-ler-{job}-schedule-dlq" for job in ("retry", "backfill", "digest")}
    assert names == {"dev-ler-intake-queue", "dev-ler-intake-dlq", "dev-ler-dlq", *schedule_dlqs}


def test_three_schedules_each_invoking_its_own_function(graph: Graph) -> None:
    schedules = {
        s.inputs["name"]: s.inputs for s in graph.of_type("aws:scheduler/schedule:Schedule")
    }
    assert {
        name: (s["scheduleExpression"], s["scheduleExpressionTimezone"], s["target"]["arn"])
        for name, s in schedules.items()
    } == {
        "dev-ler-retry": ("rate(15 minutes)", "Europe/London", function_arn("ler-retry")),
        "dev-ler-backfill": ("cron(0 3 * * ? *)", "Europe/London", function_arn("ler-backfill")),
        "dev-ler-digest": ("cron(0 8 * * ? *)", "Europe/London", function_arn("ler-digest")),
    }
    roles = {s["target"]["roleArn"] for s in schedules.values()}
    assert len(roles) == 3


def test_intake_url_is_public_with_the_shared_secret(graph: Graph) -> None:
    urls = {
        u.inputs["functionName"]: u.inputs["authorizationType"]
        for u in graph.of_type("aws:lambda/functionUrl:FunctionUrl")
    }
    assert urls == {"dev-ler-intake": "NONE", "dev-ler-rescue": "NONE"}
    public = {
        p.inputs["function"]
        for p in graph.of_type("aws:lambda/permission:Permission")
        if p.inputs.get("principal") == "*"
    }
    assert public == {"dev-ler-intake", "dev-ler-rescue"}
    secrets = {s.inputs["name"] for s in graph.of_type("aws:secretsmanager/secret:Secret")}
    assert secrets == {
        "dev-ler-enrichment-key", "dev-ler-crm-key", "dev-ler-intake-secret", "dev-ler-rescue-link-key",
        "dev-ler-forget-salt",
    }
    assert graph.outputs["ler"]["intake_url"].startswith("https://dev-ler-intake.")


def test_iam_mode_signs_instead_and_holds_no_secret(iam_graph: Graph) -> None:
    urls = {
        u.inputs["functionName"]: u.inputs["authorizationType"]
        for u in iam_graph.of_type("aws:lambda/functionUrl:FunctionUrl")
    }
    # The rescue links stay public: a person taps them in a mail, signed tokens guard them.
    assert urls == {"dev-ler-intake": "AWS_IAM", "dev-ler-rescue": "NONE"}
    assert {
        p.inputs["function"]
        for p in iam_graph.of_type("aws:lambda/permission:Permission")
        if p.inputs.get("principal") == "*"
    } == {"dev-ler-rescue"}
    secrets = {s.inputs["name"] for s in iam_graph.of_type("aws:secretsmanager/secret:Secret")}
    assert secrets == {
        "dev-ler-enrichment-key", "dev-ler-crm-key", "dev-ler-rescue-link-key", "dev-ler-forget-salt"
    }
    assert not any(
        "secretsmanager:GetSecretValue" in actions
        for actions, _ in grants_of(iam_graph, "ler-intake")
    )
    env = functions(iam_graph)["dev-ler-intake"].inputs["environment"]["variables"]
    assert env["INTAKE_AUTH"] == "iam" and "INTAKE_SECRET_ID" not in env


def put_events(*detail_types: str) -> dict[str, Any]:
    return {
        "Action": ["events:PutEvents"],
        "Resource": [BUS],
        "Condition": {
            "StringEquals": {"events:detail-type": sorted(detail_types), "events:source": [SOURCE]}
        },
    }


def test_each_role_holds_exactly_its_grants(graph: Graph) -> None:
    expected: dict[str, set[Statement]] = {
        "ler-intake": {
            (("s3:PutObject",), (f"{RAW}/form/*",)),
            (("s3:GetObject",), (f"{RAW}/inbound/*", f"{RAW}/upload/*")),
            (("s3:GetObject", "s3:PutObject"), (f"{RAW}/reports/*",)),
            (("lambda:InvokeFunction",), (function_arn("ler-intake"),)),
            (("s3:PutObject",), (f"{JUNK}/junk/*",)),
            (SEND, (INTAKE_QUEUE,)),
            (("secretsmanager:GetSecretValue",), (secret("ler-intake-secret"),)),
            (SEND, (DLQ,)),
        },
        "ler-normalize": {
            (("s3:PutObject",), (f"{RECORDS}/normalized/*",)),
            (("bedrock:InvokeModel",), models(HAIKU)),
            (("dynamodb:UpdateItem",), (CACHE,)),  # its refused-model note only (below)
            (("events:PutEvents",), (BUS,)),
            (EVENT_SOURCE, (INTAKE_QUEUE,)),
            # A lead of a person make forget erased, from before it: the salt and forgotten# rows.
            (("secretsmanager:GetSecretValue",), (secret("ler-forget-salt"),)),
            (("dynamodb:GetItem",), (IDENTITY,)),  # forgotten# rows only (below)
        },
        "ler-enrich": {
            (("dynamodb:GetItem", "dynamodb:PutItem"), (CACHE,)),
            (("dynamodb:UpdateItem",), (CACHE,)),  # its daily lookup counters only (below)
            (("secretsmanager:GetSecretValue",), (secret("ler-enrichment-key"),)),
            (("events:PutEvents",), (BUS,)),
            (SEND, (DLQ,)),
        },
        "ler-dedupe": {
            (("dynamodb:GetItem",), (IDENTITY,)),
            (("dynamodb:Query",), (BY_CRM_ID,)),
            (("bedrock:InvokeModel",), models(HAIKU)),
            (("dynamodb:UpdateItem",), (CACHE,)),  # its refused-model note only (below)
            (("events:PutEvents",), (BUS,)),
            (SEND, (DLQ,)),
        },
        "ler-filter": {
            (("bedrock:InvokeModel",), models(HAIKU)),
            (("dynamodb:UpdateItem",), (CACHE,)),  # its refused-model note only (below)
            (("events:PutEvents",), (BUS,)),
            (SEND, (DLQ,)),
        },
        "ler-push": {
            (("secretsmanager:GetSecretValue",), (secret("ler-crm-key"),)),
            (("dynamodb:PutItem", "dynamodb:UpdateItem"), (IDENTITY,)),
            (("dynamodb:Query",), (BY_CRM_ID,)),
            (("s3:PutObject",), (f"{RECORDS}/records/*",)),
            (SEND, (DLQ,)),
            (("dynamodb:UpdateItem",), (CACHE,)),  # its degradation note only (below)
            (("dynamodb:PutItem",), (CACHE,)),  # make verify's check# arrivals only (below)
            # A contact HubSpot deleted for good: its key rows dropped, the rest handed to
            # ler-backfill (crm_deletions.py).
            (("dynamodb:DeleteItem",), (IDENTITY,)),
            (("lambda:InvokeFunction",), (function_arn("ler-backfill"),)),
            (("secretsmanager:GetSecretValue",), (secret("ler-forget-salt"),)),
            (("dynamodb:GetItem",), (IDENTITY,)),  # forgotten# rows only (below)
        },
        "ler-junk-writer": {
            (("s3:PutObject",), (f"{JUNK}/junk/*",)),
            (SEND, (DLQ,)),
            (("secretsmanager:GetSecretValue",), (secret("ler-forget-salt"),)),
            (("dynamodb:GetItem",), (IDENTITY,)),  # forgotten# rows only
        },
        "ler-retry": {
            (CONSUME, (DLQ,)),
            (CONSUME, (INTAKE_DLQ,)),
            (SEND, (INTAKE_QUEUE,)),
            (("events:PutEvents",), (BUS,)),
            (("lambda:InvokeFunction",), (function_arn("ler-intake"),)),
            (("dynamodb:Scan",), (CACHE,)),
            (("ses:SendEmail",), (IDENTITY_SES,)),
            (SEND, (DLQ,)),
        },
        "ler-backfill": {
            (("dynamodb:Scan",), (CACHE,)),
            (("events:PutEvents",), (BUS,)),
            (("lambda:InvokeFunction",), (function_arn("ler-push"),)),
            (SEND, (DLQ,)),
            # A contact HubSpot deleted for good: erased from every store (crm_deletions.py).
            (("dynamodb:DeleteItem", "dynamodb:Scan"), (IDENTITY,)),
            *(
                grant
                for bucket in (RAW, RECORDS, JUNK)
                for grant in (
                    (("s3:ListBucketVersions",), (bucket,)),
                    (("s3:DeleteObjectVersion", "s3:GetObjectVersion"), (f"{bucket}/*",)),
                )
            ),
            (("s3:PutObject",), (f"{RAW}/reports/*",)),  # an upload's report, without its rows
        },
        "ler-digest": {
            (("s3:ListBucket",), (JUNK,)),
            (("s3:GetObject",), (f"{JUNK}/junk/*",)),
            (("secretsmanager:GetSecretValue",), (secret("ler-rescue-link-key"),)),
            (("ses:SendEmail",), (IDENTITY_SES,)),
            (SEND, (DLQ,)),
            (("dynamodb:GetItem",), (CACHE,)),  # the degradation notes only (below)
        },
        "ler-rescue": {
            (("secretsmanager:GetSecretValue",), (secret("ler-rescue-link-key"),)),
            (("s3:GetObject",), (f"{JUNK}/junk/*",)),
            (("s3:PutObject",), (f"{JUNK}/junk/*",)),
            (SEND, (INTAKE_QUEUE,)),
        },
    }
    for function, grants in expected.items():
        assert grants_of(graph, function) == grants | {logs(function)}, function


def test_degradation_notes_are_the_only_cache_items_their_grants_reach(graph: Graph) -> None:
    """ler-push and the three model callers may update, and ler-digest read, exactly the
    degradation items (and ler-push put its check arrivals, under ``check#`` only) of
    ler-enrich-cache (dynamodb:LeadingKeys; DynamoDB Developer Guide, "Using IAM policy
    conditions for fine-grained access control":
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html)."""
    from handlers.common.degradations import key
    from handlers.lead_enricher.contract import DEGRADABLE

    def conditioned(function: str) -> dict[str, Any]:
        return {
            s["Action"][0]: s["Condition"]
            for s in statements_of(graph, function)
            if s["Action"][0].startswith("dynamodb:") and "Condition" in s
            and s.get("Sid") not in ("CountModelCalls", "CountLookups")  # the spend counters: below
        }

    forgotten = {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["forgotten#*"]}}
    for function in ("ler-normalize", "ler-dedupe", "ler-filter"):
        assert conditioned(function) == {
            "dynamodb:UpdateItem": {
                "ForAllValues:StringEquals": {
                    "dynamodb:LeadingKeys": [f"degraded#ModelRefused#{function}"]
                }
            },
            # ler-identity's rows of erased people (handlers/lead_enricher/forgotten_leads.py)
            **({"dynamodb:GetItem": forgotten} if function == "ler-normalize" else {}),
        }
    assert conditioned("ler-push") == {
        "dynamodb:UpdateItem": {
            "ForAllValues:StringEquals": {"dynamodb:LeadingKeys": ["degraded#CrmRejected#ler-push"]}
        },
        # make verify's check lead: its arrival note (handlers/lead_enricher/check_arrivals.py)
        "dynamodb:PutItem": {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["check#*"]}},
        "dynamodb:GetItem": forgotten,
    }
    assert conditioned("ler-digest") == {
        "dynamodb:GetItem": {
            "ForAllValues:StringEquals": {
                "dynamodb:LeadingKeys": sorted(key(kind, fn) for kind, fn in DEGRADABLE)
            }
        }
    }


def test_the_daily_spend_counters_are_the_only_cache_items_their_grants_reach(graph: Graph) -> None:
    """Issue #41: the three model callers count their model calls and ler-enrich its lookups in
    ler-enrich-cache: UpdateItem on that one table ARN and on ``spend#<kind>#`` keys only
    (dynamodb:LeadingKeys, the page above); no other function may touch a counter."""
    spenders = {
        "ler-normalize": ("CountModelCalls", "model"),
        "ler-dedupe": ("CountModelCalls", "model"),
        "ler-filter": ("CountModelCalls", "model"),
        "ler-enrich": ("CountLookups", "lookup"),
    }
    for function in (name.removeprefix("dev-") for name in functions(graph)):
        counters = [s for s in statements_of(graph, function) if "spend#" in json.dumps(s)]
        if function not in spenders:
            assert counters == [], function
            continue
        sid, kind = spenders[function]
        assert counters == [{
            "Sid": sid,
            "Effect": "Allow",
            "Action": ["dynamodb:UpdateItem"],
            "Resource": [CACHE],
            "Condition": {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": [f"spend#{kind}#*"]}},
        }], function


def test_events_and_mail_grants_are_conditioned(graph: Graph) -> None:
    emitted = {
        "ler-normalize": ("le.normalized",),
        "ler-enrich": ("le.enriched",),
        "ler-dedupe": ("le.deduped",),
        "ler-filter": ("le.clean", "le.junk"),
        "ler-retry": ("le.normalized", "le.enriched", "le.deduped", "le.clean", "le.junk"),
        "ler-backfill": ("le.normalized",),
    }
    for function, types in emitted.items():
        found = [
            {k: s[k] for k in ("Action", "Resource", "Condition")}
            for s in statements_of(graph, function)
            if s["Action"] == ["events:PutEvents"]
        ]
        assert found == [put_events(*types)], function
    for function in ("ler-retry", "ler-digest"):
        mail = [s for s in statements_of(graph, function) if s["Action"] == ["ses:SendEmail"]]
        assert mail[0]["Condition"] == {
            "StringEquals": {"ses:FromAddress": ["crm-bot@example.com"]}
        }
    listing = [s for s in statements_of(graph, "ler-digest") if s["Action"] == ["s3:ListBucket"]]
    assert listing[0]["Condition"] == {"StringLike": {"s3:prefix": ["junk/*"]}}
    # ler-rescue overwrites a junk record only with If-Match (the version it read): the
    # s3:if-match condition key, "Enforce conditional writes on Amazon S3 buckets",
    # https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes-enforce.html
    [put] = [s for s in statements_of(graph, "ler-rescue") if s["Action"] == ["s3:PutObject"]]
    assert put["Condition"] == {"Null": {"s3:if-match": "false"}}


def test_only_push_talks_to_the_crm_or_writes_the_identity_index(graph: Graph) -> None:
    for name in functions(graph):
        function = name.removeprefix("dev-")
        for actions, resources in grants_of(graph, function):
            writes_identity = IDENTITY in resources and any(
                a in actions for a in ("dynamodb:PutItem", "dynamodb:UpdateItem")
            )
            reads_crm_key = secret("ler-crm-key") in resources
            assert not (writes_identity or reads_crm_key) or function == "ler-push", function


def test_models_only_for_normalize_dedupe_and_filter_heavy_per_callsite(iam_graph: Graph) -> None:
    callers = {
        name.removeprefix("dev-"): resources
        for name in functions(iam_graph)
        for actions, resources in grants_of(iam_graph, name.removeprefix("dev-"))
        if "bedrock:InvokeModel" in actions
    }
    assert callers == {
        "ler-normalize": models(HAIKU),
        "ler-dedupe": models(SONNET),
        "ler-filter": models(HAIKU),
    }
    env = functions(iam_graph)["dev-ler-dedupe"].inputs["environment"]["variables"]
    assert env["DEDUPE_MODEL_ID"] == SONNET


def test_environments_hold_names_not_secrets(graph: Graph) -> None:
    for f in functions(graph).values():
        env = f.inputs["environment"]["variables"]
        for key, value in env.items():
            if key.endswith("SECRET_ID"):
                assert value.startswith("dev-ler-") and value.endswith(("-key", "-secret", "-salt"))
        if "EVENT_SOURCE" in env:
            assert env["EVENT_SOURCE"] == SOURCE


PLATFORM_VARIABLES = {
    "CRM_ENVIRONMENT",
    "CRM_STACK",
    "POWERTOOLS_LOG_LEVEL",
    "POWERTOOLS_METRICS_DISABLED",  # in a stack with businessMetrics: false (dev)
    "POWERTOOLS_METRICS_NAMESPACE",
    "POWERTOOLS_SERVICE_NAME",
    "POWERTOOLS_TRACER_CAPTURE_RESPONSE",
    "POWERTOOLS_TRACE_DISABLED",
}


@pytest.mark.parametrize("auth", ["shared_secret", "iam"])
def test_each_function_gets_exactly_its_settings_record(
    auth: str, graph: Graph, iam_graph: Graph
) -> None:
    """The environment is the contract's record, so a handler reads what the infra sets."""
    from handlers.common.settings import Settings
    from handlers.lead_enricher import contract

    records: dict[str, type[Settings]] = {
        contract.INTAKE_FUNCTION: contract.IntakeSettings,
        contract.NORMALIZE_FUNCTION: contract.NormalizeSettings,
        contract.ENRICH_FUNCTION: contract.EnrichSettings,
        contract.DEDUPE_FUNCTION: contract.DedupeSettings,
        contract.FILTER_FUNCTION: contract.FilterSettings,
        contract.PUSH_FUNCTION: contract.PushSettings,
        contract.JUNK_WRITER_FUNCTION: contract.JunkWriterSettings,
        contract.RETRY_FUNCTION: contract.RetrySettings,
        contract.BACKFILL_FUNCTION: contract.BackfillSettings,
        contract.DIGEST_FUNCTION: contract.DigestSettings,
        contract.RESCUE_FUNCTION: contract.RescueSettings,
    }
    found = functions(graph if auth == "shared_secret" else iam_graph)
    assert set(found) == {f"dev-{name}" for name in records}
    for name, record in records.items():
        env = dict(found[f"dev-{name}"].inputs["environment"]["variables"])
        declared = set(env) - PLATFORM_VARIABLES
        wanted = set(record.variables())
        if auth == "iam" and name == contract.INTAKE_FUNCTION:
            wanted -= {"INTAKE_SECRET_ID"}  # optional: no secret in iam mode
        assert declared == wanted, name
        read = record.from_environ(env)  # every value converts (ints, floats)
        assert isinstance(read, record)
    intake_env = found["dev-ler-intake"].inputs["environment"]["variables"]
    assert intake_env["INTAKE_AUTH"] == auth


def test_policy_pack_finds_nothing(graph: Graph, iam_graph: Graph) -> None:
    assert evaluate_graph(graph) == []
    assert evaluate_graph(iam_graph) == []


def test_ler_push_calls_the_stacks_hubspot_version(graph: Graph) -> None:
    env = functions(graph)["dev-ler-push"].inputs["environment"]["variables"]
    assert env["HUBSPOT_API_VERSION"] == "2026-09"
    assert env["CRM_BASE_URL"] == "https://api.hubapi.com"


def test_jellyfish_is_in_the_archives_that_score_names(graph: Graph) -> None:
    import zipfile

    for name, f in functions(graph).items():
        entries = zipfile.ZipFile(f.inputs["code"]["archive"]).namelist()
        vendored = "jellyfish/__init__.py" in entries
        assert vendored == (name in {"dev-ler-dedupe", "dev-ler-push"}), name


def test_each_bucket_expires_its_objects_and_the_raw_one_its_old_versions(graph: Graph) -> None:
    """Issue 42: the three buckets kept every lead, and ler-raw every version, without an end.
    Each expires its objects after its setting's days (rawDays 30, recordsDays 90, junkDays 30
    by default); ler-raw, versioned, also deletes an old version 7 days after it is replaced."""
    rules = {
        r.inputs["bucket"].rsplit("-", 1)[0]: r.inputs["rules"]
        for r in graph.of_type("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")
    }
    expected = {"dev-ler-raw": (30, 7), "dev-ler-records": (90, None), "dev-ler-junk": (30, None)}
    assert set(rules) == set(expected)
    for bucket, (days, noncurrent) in expected.items():
        [rule] = rules[bucket]
        assert rule["status"] == "Enabled" and rule["filter"] == {"prefix": ""}
        assert rule["expiration"]["days"] == days
        assert (rule.get("noncurrentVersionExpiration") or {}).get("noncurrentDays") == noncurrent
