"""The lead source attributor's graph: exactly its functions, triggers, tables and grants."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from components.offline.engine import ROOT, Graph, Resource
from components.offline.policy_view import evaluate_graph
from tests.infra.graph_helpers import DOCUMENTS_STORE, arns_in, run

REGION = "us-east-1"


arn = arns_in(REGION)


def only_ls(stack: str) -> dict[str, Any]:
    """The stack file's own systems section with only ls enabled."""
    config = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
    systems = config["crm-automations:systems"]
    return {key: {**section, "enabled": key == "ls"} for key, section in systems.items()}


@pytest.fixture(scope="module")
def graph() -> Graph:
    return run("dev", {**DOCUMENTS_STORE, "systems": only_ls("dev")})


def functions(graph: Graph) -> dict[str, Resource]:
    return {r.inputs["name"]: r for r in graph.of_type("aws:lambda/function:Function")}


def grants_of(graph: Graph, function: str) -> set[tuple[tuple[str, ...], tuple[str, ...]]]:
    policy = graph.named("aws:iam/rolePolicy:RolePolicy", f"dev-{function}-grants")
    statements = json.loads(policy.inputs["policy"])["Statement"]
    assert all(s["Effect"] == "Allow" for s in statements)
    return {(tuple(s["Action"]), tuple(s["Resource"])) for s in statements}


def logs(function: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (
        ("logs:CreateLogStream", "logs:PutLogEvents"),
        (arn("logs", f"log-group:/aws/lambda/dev-{function}:*"),),
    )


TOUCHES = arn("dynamodb", "table/dev-ls-touches")
IDENTITIES = arn("dynamodb", "table/dev-ls-identities")
ENQUIRIES = arn("dynamodb", "table/dev-ls-enquiries")
FAILURES = arn("sqs", "dev-ls-stitch-failures")
KEY = arn("secretsmanager", "secret:dev-ls-email-hash-key-??????")
LINK_KEY = arn("secretsmanager", "secret:dev-ls-report-link-key-??????")
REPORTS = arn("dynamodb", "table/dev-ls-reports")


def test_the_documents_three_functions_and_the_report_page(graph: Graph) -> None:
    found = {
        name: (f.inputs["memorySize"], f.inputs["timeout"], f.inputs["handler"])
        for name, f in functions(graph).items()
    }
    assert found == {
        "dev-ls-capture": (512, 5, "handlers.source_attributor.functions.capture.handler"),
        "dev-ls-stitch": (1024, 60, "handlers.source_attributor.functions.stitch.handler"),
        "dev-ls-report": (1024, 120, "handlers.source_attributor.functions.report.handler"),
        "dev-ls-report-page": (1024, 30, "handlers.source_attributor.functions.report_page.handler"),
    }
    for f in functions(graph).values():
        assert f.inputs["runtime"] == "python3.14"
        assert f.inputs["architectures"] == ["arm64"]
        assert f.inputs["tags"]["crm:system"] == "ls"


def test_tables_and_their_keys(graph: Graph) -> None:
    tables = {t.inputs["name"]: t.inputs for t in graph.of_type("aws:dynamodb/table:Table")}
    assert set(tables) == {"dev-ls-touches", "dev-ls-identities", "dev-ls-enquiries", "dev-ls-reports"}
    keys = {name: (t["hashKey"], t.get("rangeKey")) for name, t in tables.items()}
    assert keys == {
        "dev-ls-touches": ("visitor_id", "at"),
        "dev-ls-identities": ("identity_key", "visitor_id"),
        "dev-ls-enquiries": ("month", "enquiry_id"),
        "dev-ls-reports": ("period", "item"),  # the mailed report and its views, per period
    }
    assert tables["dev-ls-touches"]["ttl"] == {"attributeName": "ttl", "enabled": True}
    assert tables["dev-ls-reports"]["ttl"] == {"attributeName": "ttl", "enabled": True}
    # Issue 42: an enquiry and the identity rows it links expire like its touches.
    assert tables["dev-ls-identities"]["ttl"] == {"attributeName": "ttl", "enabled": True}
    assert tables["dev-ls-enquiries"]["ttl"] == {"attributeName": "ttl", "enabled": True}
    assert tables["dev-ls-enquiries"]["streamEnabled"] is True
    assert tables["dev-ls-enquiries"]["streamViewType"] == "NEW_IMAGE"
    assert not tables["dev-ls-touches"].get("streamEnabled")
    for t in tables.values():
        assert t["billingMode"] == "PAY_PER_REQUEST"
        assert {a["type"] for a in t["attributes"]} == {"S"}


def test_failure_queues_and_one_secret(graph: Graph) -> None:
    queues = {q.inputs["name"] for q in graph.of_type("aws:sqs/queue:Queue")}
    # The stitch stream's on-failure queue; ls-report's, because Scheduler invokes it
    # asynchronously, and the schedule's own dead-letter queue.
    assert queues == {
        "dev-ls-stitch-failures",
        "dev-ls-report-failures",
        "dev-ls-report-schedule-dlq",
    }
    secrets = [s.inputs["name"] for s in graph.of_type("aws:secretsmanager/secret:Secret")]
    assert sorted(secrets) == ["dev-ls-email-hash-key", "dev-ls-report-link-key"]
    assert not graph.of_type("aws:s3/bucket:Bucket")


def test_one_weekly_schedule_mails_the_report(graph: Graph) -> None:
    [schedule] = [s.inputs for s in graph.of_type("aws:scheduler/schedule:Schedule")]
    assert schedule["name"] == "dev-ls-report"
    assert schedule["scheduleExpression"] == "cron(0 7 ? * MON *)"
    assert schedule["scheduleExpressionTimezone"] == "Europe/London"
    assert schedule["target"]["arn"] == arn("lambda", "function:dev-ls-report")
    assert json.loads(schedule["target"]["input"]) == {"job": "ls-report"}


def test_without_a_recipient_there_is_no_schedule_no_send_and_no_page() -> None:
    systems = only_ls("dev")
    systems["ls"] = {
        k: v for k, v in systems["ls"].items() if k not in ("senderEmail", "reportRecipient")
    }
    quiet = run("dev", {**DOCUMENTS_STORE, "systems": systems})
    assert not quiet.of_type("aws:scheduler/schedule:Schedule")
    assert grants_of(quiet, "ls-report") == READ_ONLY
    # No mail, no link: the page's public URL and its key exist only for the mail.
    assert set(functions(quiet)) == {"dev-ls-capture", "dev-ls-stitch", "dev-ls-report"}
    secrets = [s.inputs["name"] for s in quiet.of_type("aws:secretsmanager/secret:Secret")]
    assert secrets == ["dev-ls-email-hash-key"]
    env = functions(quiet)["dev-ls-report"].inputs["environment"]["variables"]
    assert "REPORT_PAGE_URL" not in env and "REPORT_LINK_KEY_SECRET" not in env
    assert evaluate_graph(quiet) == []


def test_stitch_is_fed_by_the_enquiries_stream_with_bounded_retries(graph: Graph) -> None:
    mappings = graph.of_type("aws:lambda/eventSourceMapping:EventSourceMapping")
    assert len(mappings) == 1
    m = mappings[0].inputs
    assert m["functionName"] == "dev-ls-stitch"
    assert m["eventSourceArn"].startswith(ENQUIRIES + "/stream/")
    assert m["functionResponseTypes"] == ["ReportBatchItemFailures"]
    assert m["maximumRetryAttempts"] == 3
    assert m["bisectBatchOnFunctionError"] is True
    assert m["startingPosition"] == "TRIM_HORIZON"
    assert m["destinationConfig"]["onFailure"]["destinationArn"] == FAILURES
    patterns = [json.loads(f["pattern"]) for f in m["filterCriteria"]["filters"]]
    assert patterns == [{"eventName": ["INSERT"]}]


def test_public_surfaces_are_capture_with_cors_to_the_site_and_the_report_page(
    graph: Graph,
) -> None:
    urls = {u.inputs["functionName"]: u.inputs for u in graph.of_type(
        "aws:lambda/functionUrl:FunctionUrl")}
    assert set(urls) == {"dev-ls-capture", "dev-ls-report", "dev-ls-report-page"}
    assert urls["dev-ls-capture"]["authorizationType"] == "NONE"
    assert urls["dev-ls-capture"]["cors"]["allowOrigins"] == [
        "https://www.example.com",
        "https://example.com",
    ]
    assert urls["dev-ls-capture"]["cors"]["allowMethods"] == ["POST"]
    assert urls["dev-ls-report"]["authorizationType"] == "AWS_IAM"
    assert "cors" not in urls["dev-ls-report"]
    # The page is opened from a mail, never called from a site's script: no CORS.
    assert urls["dev-ls-report-page"]["authorizationType"] == "NONE"
    assert "cors" not in urls["dev-ls-report-page"]
    public = [p.inputs for p in graph.of_type("aws:lambda/permission:Permission")
              if p.inputs.get("principal") == "*"]
    assert sorted(p["function"] for p in public) == [
        "dev-ls-capture", "dev-ls-capture", "dev-ls-report-page", "dev-ls-report-page"
    ]


def test_capture_may_only_put_touches_and_enquiries_and_read_its_key(graph: Graph) -> None:
    assert grants_of(graph, "ls-capture") == {
        logs("ls-capture"),
        (("dynamodb:PutItem",), (TOUCHES,)),
        (("dynamodb:PutItem",), (ENQUIRIES,)),
        (("secretsmanager:GetSecretValue",), (KEY,)),
    }


def test_stitch_queries_and_updates_identities_and_only_queries_touches(graph: Graph) -> None:
    assert grants_of(graph, "ls-stitch") == {
        logs("ls-stitch"),
        (("dynamodb:Query",), (TOUCHES,)),
        (("dynamodb:Query", "dynamodb:UpdateItem"), (IDENTITIES,)),
        (
            ("dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator"),
            (ENQUIRIES + "/stream/*",),
        ),
        # The fourth action of a stream mapping; it accepts no resource ARN, so "*"
        # (https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html, issue 12 defect 4).
        (("dynamodb:ListStreams",), ("*",)),
        (("sqs:SendMessage",), (FAILURES,)),
    }


READ_ONLY = {
    logs("ls-report"),
    (("dynamodb:Query",), (TOUCHES,)),
    (("dynamodb:Query",), (IDENTITIES,)),
    (("dynamodb:Query",), (ENQUIRIES,)),
}


def test_report_reads_by_query_and_sends_only_as_the_sender(graph: Graph) -> None:
    assert grants_of(graph, "ls-report") == {
        *READ_ONLY,
        (("ses:SendEmail",), (arn("ses", "identity/example.com"),)),
        (("secretsmanager:GetSecretValue",), (LINK_KEY,)),
        (("dynamodb:PutItem",), (REPORTS,)),  # the mailed report, for its page
        (("sqs:SendMessage",), (arn("sqs", "dev-ls-report-failures"),)),
    }
    policy = graph.named("aws:iam/rolePolicy:RolePolicy", "dev-ls-report-grants")
    [send] = [s for s in json.loads(policy.inputs["policy"])["Statement"]
              if s["Action"] == ["ses:SendEmail"]]
    assert send["Condition"] == {"StringEquals": {"ses:FromAddress": ["crm-bot@example.com"]}}


def test_the_report_page_queries_the_three_tables_serves_stored_reports_and_reads_its_link_key(
    graph: Graph,
) -> None:
    assert grants_of(graph, "ls-report-page") == {
        logs("ls-report-page"),
        (("dynamodb:Query",), (TOUCHES,)),
        (("dynamodb:Query",), (IDENTITIES,)),
        (("dynamodb:Query",), (ENQUIRIES,)),
        (("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"), (REPORTS,)),
        (("secretsmanager:GetSecretValue",), (LINK_KEY,)),
    }
    env = functions(graph)["dev-ls-report-page"].inputs["environment"]["variables"]
    assert env["REPORT_LINK_KEY_SECRET"] == "dev-ls-report-link-key"
    assert env["REPORTS_TABLE"] == "dev-ls-reports"
    assert env["REPORT_LINK_VIEWS"] == "100"
    report_env = functions(graph)["dev-ls-report"].inputs["environment"]["variables"]
    # ls-report signs the links to the page's own Function URL, valid 28 days by default.
    assert report_env["REPORT_PAGE_URL"] == "https://dev-ls-report-page.lambda-url.us-east-1.on.aws/"
    assert report_env["REPORT_LINK_KEY_SECRET"] == "dev-ls-report-link-key"
    assert report_env["REPORT_LINK_DAYS"] == "28"


def test_no_model_and_no_secret_value_anywhere(graph: Graph) -> None:
    for policy in graph.of_type("aws:iam/rolePolicy:RolePolicy"):
        for statement in json.loads(policy.inputs["policy"])["Statement"]:
            assert not any(a.startswith("bedrock:") for a in statement["Action"])
    env = functions(graph)["dev-ls-capture"].inputs["environment"]["variables"]
    assert env["EMAIL_HASH_SECRET"] == "dev-ls-email-hash-key"
    assert env["SITE_ORIGINS"] == "https://www.example.com,https://example.com"
    assert env["TOUCH_TTL_DAYS"] == "548"
    report_env = functions(graph)["dev-ls-report"].inputs["environment"]["variables"]
    assert report_env["REPORT_CACHE_SECONDS"] == "86400"
    assert "EMAIL_HASH_SECRET" not in report_env
    stitch_env = functions(graph)["dev-ls-stitch"].inputs["environment"]["variables"]
    assert "EMAIL_HASH_SECRET" not in stitch_env


def test_outputs_name_what_an_operator_needs(graph: Graph) -> None:
    assert graph.outputs["ls"] == {
        "capture_url": "https://dev-ls-capture.lambda-url.us-east-1.on.aws/",
        "report_url": "https://dev-ls-report.lambda-url.us-east-1.on.aws/",
        "report_page_url": "https://dev-ls-report-page.lambda-url.us-east-1.on.aws/",
        "touches_table": "dev-ls-touches",
        "identities_table": "dev-ls-identities",
        "enquiries_table": "dev-ls-enquiries",
        "email_hash_secret": "dev-ls-email-hash-key",
        "stitch_failures_queue": "dev-ls-stitch-failures",
    }


def test_children_are_parented_to_the_system(graph: Graph) -> None:
    (system,) = graph.of_type("crm:index:SourceAttributor")
    direct = {(r.type, r.name) for r in graph.children(system)}
    assert direct == {
        ("crm:index:GuardedTable", "ls-touches"),
        ("crm:index:GuardedTable", "ls-identities"),
        ("crm:index:GuardedTable", "ls-enquiries"),
        ("crm:index:GuardedTable", "ls-reports"),
        ("crm:index:WorkQueue", "ls-stitch-failures"),
        ("crm:index:SecretSlot", "ls-email-hash-key"),
        ("crm:index:SecretSlot", "ls-report-link-key"),
        ("crm:index:ScopedLambda", "ls-report-page"),
        ("crm:index:ScopedLambda", "ls-capture"),
        ("crm:index:ScopedLambda", "ls-stitch"),
        ("crm:index:ScopedLambda", "ls-report"),
        ("aws:scheduler/scheduleGroup:ScheduleGroup", "ls-schedules"),
        ("crm:index:ScheduledJob", "ls-report-schedule"),
    }


def test_policy_pack_passes(graph: Graph) -> None:
    assert evaluate_graph(graph) == []


def test_prod_protects_the_tables_and_passes_the_pack() -> None:
    prod = run("prod", {**DOCUMENTS_STORE, "systems": only_ls("prod")})
    tables = prod.of_type("aws:dynamodb/table:Table")
    assert {t.inputs["name"] for t in tables} == {
        "prod-ls-touches",
        "prod-ls-identities",
        "prod-ls-enquiries",
    }
    assert all(t.inputs["deletionProtectionEnabled"] is True for t in tables)
    assert evaluate_graph(prod) == []


def test_each_function_environment_is_exactly_its_settings_record(graph: Graph) -> None:
    from handlers.common.settings import Settings
    from handlers.source_attributor import contract

    records: dict[str, type[Settings]] = {
        "dev-ls-capture": contract.CaptureSettings,
        "dev-ls-stitch": contract.StitchSettings,
        "dev-ls-report": contract.ReportSettings,
        "dev-ls-report-page": contract.ReportPageSettings,
    }
    envs = {name: f.inputs["environment"]["variables"] for name, f in functions(graph).items()}
    assert set(envs) == set(records)
    for name, record in records.items():
        own = {k for k in envs[name] if not k.startswith(("POWERTOOLS_", "CRM_"))}
        assert own == set(record.variables()), name  # ScopedLambda adds the runtime's own
        assert not [key for key in envs[name] if key.startswith("LS_")], name
    capture = contract.CaptureSettings.from_environ(envs["dev-ls-capture"])
    assert capture.origins() == {"https://www.example.com", "https://example.com"}
    assert capture.touch_ttl_days == 548
    assert contract.ReportSettings.from_environ(envs["dev-ls-report"]).report_cache_seconds == 86400
