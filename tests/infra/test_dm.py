"""The duplicate merger's graph: exactly its functions, triggers, tables, queues and grants."""

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

REGION = "us-east-1"

arn = arns_in(REGION)


def only_dm(stack: str = "dev") -> dict[str, Any]:
    return only_system("dm", stack)


@pytest.fixture(scope="module")
def graph() -> Graph:
    return run("dev", {**DOCUMENTS_STORE, "systems": only_dm()})


def logs(function: str) -> Statement:
    return (
        ("logs:CreateLogStream", "logs:PutLogEvents"),
        (arn("logs", f"log-group:/aws/lambda/dev-{function}:*"),),
    )


PAIRS = arn("dynamodb", "table/dev-dm-pairs")
DECISIONS = arn("dynamodb", "table/dev-dm-decisions")
MERGES = arn("dynamodb", "table/dev-dm-merges")
BLOCKS_Q = arn("sqs", "dev-dm-blocks")
MERGES_Q = arn("sqs", "dev-dm-merges")
EVENT_SOURCE = ("sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage")
"""What an SQS event source mapping needs: https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html"""


def secret(name: str) -> str:
    return arn("secretsmanager", f"secret:dev-{name}-??????")


def test_exactly_the_documents_functions_with_their_sizes(graph: Graph) -> None:
    found = {
        name: (f.inputs["memorySize"], f.inputs["timeout"], f.inputs["handler"])
        for name, f in functions(graph).items()
    }
    assert found == {
        "dev-dm-block": (3008, 300, "handlers.duplicate_merger.functions.block.handler"),
        "dev-dm-score": (1024, 60, "handlers.duplicate_merger.functions.score.handler"),
        "dev-dm-merge": (1024, 60, "handlers.duplicate_merger.functions.merge.handler"),
        # issue 43: the split weekly run's stages (tests/infra/test_dm_split.py)
        "dev-dm-stage": (512, 120, "handlers.duplicate_merger.functions.stage.handler"),
    }
    for f in functions(graph).values():
        assert f.inputs["runtime"] == "python3.14"
        assert f.inputs["architectures"] == ["arm64"]
        assert f.inputs["tags"]["crm:system"] == "dm"


def test_tables_keys_ttl_and_the_review_index(graph: Graph) -> None:
    tables = {t.inputs["name"]: t.inputs for t in graph.of_type("aws:dynamodb/table:Table")}
    assert set(tables) == {"dev-dm-pairs", "dev-dm-decisions", "dev-dm-merges"}
    assert {n: t["hashKey"] for n, t in tables.items()} == {
        "dev-dm-pairs": "pair_key",
        "dev-dm-decisions": "pair_key",
        "dev-dm-merges": "merge_id",
    }
    assert all(t.get("rangeKey") is None for t in tables.values())
    assert tables["dev-dm-pairs"]["ttl"] == {"attributeName": "ttl", "enabled": True}
    # A decision never expires; only the weekly notes beside them carry the attribute.
    assert tables["dev-dm-decisions"]["ttl"] == {"attributeName": "expires_at", "enabled": True}
    assert tables["dev-dm-merges"]["ttl"] == {"attributeName": "expires_at", "enabled": True}
    (index,) = tables["dev-dm-pairs"]["globalSecondaryIndexes"]
    assert (index["name"], *gsi_keys(index)) == ("by-review", "review", "score")


def test_queues_with_dead_letter_queues_and_triggers(graph: Graph) -> None:
    queues = {q.inputs["name"]: q.inputs for q in graph.of_type("aws:sqs/queue:Queue")}
    assert set(queues) == {
        "dev-dm-blocks",
        "dev-dm-blocks-dlq",
        "dev-dm-merges",
        "dev-dm-merges-dlq",
        "dev-dm-stages",
        "dev-dm-stages-dlq",
        # issue 14: the on-failure destinations of the scheduled functions, the schedules' DLQs
        "dev-dm-block-failures",
        "dev-dm-merge-failures",
        "dev-dm-block-weekly-schedule-dlq",
        "dev-dm-digest-weekly-schedule-dlq",
        "dev-dm-sweep-schedule-dlq",
    }
    for name in ("dev-dm-blocks", "dev-dm-merges", "dev-dm-stages"):
        redrive = json.loads(queues[name]["redrivePolicy"])
        assert redrive["deadLetterTargetArn"] == arn("sqs", f"{name}-dlq")
        assert queues[name]["visibilityTimeoutSeconds"] >= 60
    sources = {
        m.inputs["eventSourceArn"]: m.inputs["functionName"]
        for m in graph.of_type("aws:lambda/eventSourceMapping:EventSourceMapping")
    }
    assert sources == {
        BLOCKS_Q: "dev-dm-score", MERGES_Q: "dev-dm-merge", arn("sqs", "dev-dm-stages"): "dev-dm-stage"
    }
    for m in graph.of_type("aws:lambda/eventSourceMapping:EventSourceMapping"):
        assert m.inputs["functionResponseTypes"] == ["ReportBatchItemFailures"]


def test_two_weekly_schedules_and_the_sweep_each_invoking_one_function(graph: Graph) -> None:
    schedules = {s.inputs["name"]: s.inputs for s in graph.of_type("aws:scheduler/schedule:Schedule")}
    assert set(schedules) == {"dev-dm-block-weekly", "dev-dm-digest-weekly", "dev-dm-sweep"}
    block = schedules["dev-dm-block-weekly"]
    assert block["scheduleExpression"] == graph.config.systems.dm.schedule  # type: ignore[union-attr]
    assert block["target"]["arn"] == arn("lambda", "function:dev-dm-block")
    digest = schedules["dev-dm-digest-weekly"]
    assert digest["target"]["arn"] == arn("lambda", "function:dev-dm-merge")
    assert json.loads(digest["target"]["input"]) == {"action": "digest"}
    # issue 27: claims whose lease ran out are resumed without a click.
    sweep = schedules["dev-dm-sweep"]
    assert sweep["scheduleExpression"] == "rate(15 minutes)"
    assert sweep["target"]["arn"] == arn("lambda", "function:dev-dm-merge")
    assert json.loads(sweep["target"]["input"]) == {"action": "sweep"}


def test_the_sweep_finds_claims_on_a_sparse_index_it_alone_may_query(graph: Graph) -> None:
    """dm-merge may Query dm-decisions' by-claim index (and the table), nothing broader."""
    (table,) = [t for t in graph.of_type("aws:dynamodb/table:Table") if t.inputs["name"] == "dev-dm-decisions"]
    (index,) = table.inputs["globalSecondaryIndexes"]
    assert index["name"] == "by-claim" and gsi_keys(index) == ("decision", "lease_until")
    found = [s for s in statements_of(graph, "dm-merge") if s.get("Sid") == "FindExpiredClaims"]
    assert [(s["Action"], s["Resource"]) for s in found] == [(
        ["dynamodb:Query"],
        [arn("dynamodb", "table/dev-dm-decisions"), arn("dynamodb", "table/dev-dm-decisions/index/by-claim")],
    )]


def test_undo_bucket_is_versioned_and_secrets_are_three(graph: Graph) -> None:
    buckets = {b.inputs["bucket"] for b in graph.of_type("aws:s3/bucket:Bucket")}
    assert buckets == {f"dev-dm-undo-{ACCOUNT_ID}", f"dev-dm-shards-{ACCOUNT_ID}"}
    (versioning,) = graph.of_type("aws:s3/bucketVersioning:BucketVersioning")
    assert versioning.inputs["bucket"] == f"dev-dm-undo-{ACCOUNT_ID}"
    assert versioning.inputs["versioningConfiguration"]["status"] == "Enabled"
    names = {s.inputs["name"] for s in graph.of_type("aws:secretsmanager/secret:Secret")}
    assert names == {"dev-dm-crm-read", "dev-dm-crm-write", "dev-dm-link-key"}


def test_only_dm_merge_is_public_and_only_through_its_url(graph: Graph) -> None:
    (url,) = graph.of_type("aws:lambda/functionUrl:FunctionUrl")
    assert url.inputs["functionName"] == "dev-dm-merge"
    assert url.inputs["authorizationType"] == "NONE"
    public = [
        p for p in graph.of_type("aws:lambda/permission:Permission") if p.inputs["principal"] == "*"
    ]
    assert {p.inputs["function"] for p in public} == {"dev-dm-merge"}


def test_each_role_holds_exactly_its_grants(graph: Graph) -> None:
    undo_objects = f"arn:aws:s3:::dev-dm-undo-{ACCOUNT_ID}/undo/*"
    assert grants_of(graph, "dm-block") == {
        logs("dm-block"),
        (("secretsmanager:GetSecretValue",), (secret("dm-crm-read"),)),
        (("dynamodb:GetItem", "dynamodb:PutItem"), (PAIRS,)),
        (("sqs:SendMessage",), (BLOCKS_Q,)),
        (("sqs:SendMessage",), (arn("sqs", "dev-dm-stages"),)),  # a split run's first stage
        # The checkpointed read of a large portal continues in a new invocation of itself.
        (("lambda:InvokeFunction",), (arn("lambda", "function:dev-dm-block"),)),
        (("sqs:SendMessage",), (arn("sqs", "dev-dm-block-failures"),)),
        # Contacts HubSpot deleted: scanned for and erased (deletions.py), with every version
        # of their undo bundles.
        (("dynamodb:DeleteItem", "dynamodb:Scan"), (PAIRS,)),
        (("dynamodb:DeleteItem", "dynamodb:Scan"), (DECISIONS,)),
        (("dynamodb:DeleteItem", "dynamodb:Scan"), (MERGES,)),
        (("s3:ListBucketVersions",), (f"arn:aws:s3:::dev-dm-undo-{ACCOUNT_ID}",)),
        (("s3:DeleteObjectVersion", "s3:GetObjectVersion"), (undo_objects,)),
    }
    assert grants_of(graph, "dm-score") == {
        logs("dm-score"),
        (("dynamodb:Query", "dynamodb:UpdateItem"), (PAIRS,)),
        (("dynamodb:Query", "dynamodb:UpdateItem"), (DECISIONS,)),
        (("sqs:SendMessage",), (MERGES_Q,)),
        (EVENT_SOURCE, (BLOCKS_Q,)),
    }
    assert grants_of(graph, "dm-merge") == {
        logs("dm-merge"),
        (("s3:GetObject", "s3:PutObject"), (undo_objects,)),
        (("secretsmanager:GetSecretValue",), (secret("dm-crm-write"),)),
        (("secretsmanager:GetSecretValue",), (secret("dm-link-key"),)),
        (
            ("dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"),
            (MERGES,),
        ),
        (
            ("dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"),
            (DECISIONS,),
        ),
        (("dynamodb:Query",), (DECISIONS, f"{DECISIONS}/index/by-claim")),
        (("dynamodb:GetItem",), (PAIRS,)),
        (("dynamodb:Query",), (PAIRS, f"{PAIRS}/index/by-review")),
        (("ses:SendEmail",), (arn("ses", "identity/example.com"),)),
        (("lambda:GetFunctionUrlConfig",), (arn("lambda", "function:dev-dm-merge"),)),
        (EVENT_SOURCE, (MERGES_Q,)),
        # #41: a reviewer's click is claimed, then finished from dm-merge's own queue.
        (("sqs:SendMessage",), (MERGES_Q,)),
        (("sqs:SendMessage",), (arn("sqs", "dev-dm-merge-failures"),)),
    }


def test_the_write_credential_is_readable_by_dm_merge_alone(graph: Graph) -> None:
    holders = {
        name
        for name in ("dm-block", "dm-score", "dm-merge", "dm-stage")
        for actions, resources in grants_of(graph, name)
        if secret("dm-crm-write") in resources
    }
    assert holders == {"dm-merge"}


def test_mail_is_sent_only_as_the_sender_address(graph: Graph) -> None:
    (mail,) = [s for s in statements_of(graph, "dm-merge") if s["Action"] == ["ses:SendEmail"]]
    assert mail["Condition"] == {"StringEquals": {"ses:FromAddress": ["crm-bot@example.com"]}}


def test_no_model_anywhere_and_no_wildcard_resource(graph: Graph) -> None:
    for name in ("dm-block", "dm-score", "dm-merge", "dm-stage"):
        for statement in statements_of(graph, name):
            assert not any(a.startswith("bedrock:") for a in statement["Action"])
            assert "*" not in statement["Resource"]


def test_environments_hold_names_not_secrets(graph: Graph) -> None:
    env = functions(graph)["dev-dm-merge"].inputs["environment"]["variables"]
    assert env["CRM_WRITE_SECRET"] == "dev-dm-crm-write"
    assert env["LINK_KEY_SECRET"] == "dev-dm-link-key"
    block_env = functions(graph)["dev-dm-block"].inputs["environment"]["variables"]
    assert block_env["CRM_READ_SECRET"] == "dev-dm-crm-read"
    assert "CRM_WRITE_SECRET" not in block_env
    assert block_env["HUBSPOT_API_VERSION"] == env["HUBSPOT_API_VERSION"] == "2026-09"


def test_each_environment_is_its_functions_settings_record(graph: Graph) -> None:
    """The handler reads exactly what the infra sets (handlers/duplicate_merger/contract.py);
    beside it only what every ScopedLambda sets (stack, Powertools)."""
    from handlers.duplicate_merger import contract

    platform = {"CRM_ENVIRONMENT", "CRM_STACK"}
    found = {
        name: {v for v in f.inputs["environment"]["variables"]
               if v not in platform and not v.startswith("POWERTOOLS_")}
        for name, f in functions(graph).items()
    }
    assert found == {
        "dev-dm-block": set(contract.BlockSettings.variables()),
        "dev-dm-score": set(contract.ScoreSettings.variables()),
        # PUBLIC_URL is optional and unset in a stack: the digest asks Lambda for the URL.
        "dev-dm-merge": set(contract.MergeSettings.variables()) - {"PUBLIC_URL"},
        "dev-dm-stage": set(contract.StageSettings.variables()),
    }
    score_env = functions(graph)["dev-dm-score"].inputs["environment"]["variables"]
    assert score_env["RECORD_FLOOR"] == "-10.0" and score_env["PAIR_TTL_DAYS"] == "30"
    merge_env = functions(graph)["dev-dm-merge"].inputs["environment"]["variables"]
    assert merge_env["REVIEW_INDEX"] == contract.REVIEW_INDEX == "by-review"


def test_outputs_name_what_an_operator_needs(graph: Graph) -> None:
    outputs = graph.outputs["dm"]
    assert outputs["review_url"].startswith("https://")
    assert outputs["pairs_table"] == "dev-dm-pairs"
    assert outputs["secrets"]["crm_write"] == "dev-dm-crm-write"


def test_policy_pack_finds_nothing(graph: Graph) -> None:
    assert evaluate_graph(graph) == []


def test_the_plan_shows_the_hubspot_versions_support_window(graph: Graph) -> None:
    from components.offline.plan import render

    (line,) = [ln for ln in render(graph).splitlines() if ln.startswith("hubspot ")]
    assert "HubSpot API 2026-09" in line and "unsupported from 2028-03-08" in line


def test_an_old_hubspot_version_is_flagged_in_the_plan() -> None:
    from components.offline.plan import render

    old = run("dev", {**DOCUMENTS_STORE, "systems": only_dm(), "hubspotApiVersion": "2026-03"})
    (line,) = [ln for ln in render(old).splitlines() if ln.startswith("hubspot ")]
    assert ("2026-03" in line and "2026-09 is current" in line) or line.startswith("hubspot  WARNING")
    env = functions(old)["dev-dm-block"].inputs["environment"]["variables"]
    assert env["HUBSPOT_API_VERSION"] == "2026-03"


def test_every_dm_archive_carries_jellyfish(graph: Graph) -> None:
    """NYSIIS and Jaro-Winkler come from jellyfish (compiled): each dm function vendors it."""
    import zipfile

    for name, f in functions(graph).items():
        entries = zipfile.ZipFile(f.inputs["code"]["archive"]).namelist()
        assert "jellyfish/__init__.py" in entries, name
        assert "handlers/common/strings.py" in entries, name
        assert any(e.startswith("jellyfish-") and e.endswith(".dist-info/WHEEL") for e in entries)


def test_the_undo_bucket_expires_bundles_after_the_undo_window(graph: Graph) -> None:
    """Issue 42: every undo bundle (two whole contact records) and every old version of it was
    kept without an end. A bundle goes a day after its undo window (undoDays 90), an old
    version 7 days after it was replaced."""
    [lifecycle] = [
        c for c in graph.of_type("aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")
        if c.inputs["bucket"] == "dev-dm-undo-123456789012"
    ]
    [rule] = lifecycle.inputs["rules"]
    assert rule["expiration"] == {"days": 91}
    assert rule["noncurrentVersionExpiration"] == {"noncurrentDays": 7}


@pytest.mark.parametrize(
    ("contacts", "expected"),
    [
        (None, "set systems.dm.portalContacts"),
        (1_000_000, "dm at 1,000,000 contacts: full read 10,000 HubSpot list calls"),
        (2_000_000, "blocking split (above splitAbove): 400 partitions"),  # issue 43
        (10_000_000, "warning: dm at 10,000,000 contacts"),  # a read past 60 invocations
    ],
)
def test_the_plan_says_what_dms_weekly_run_does_at_the_portals_size(
    contacts: int | None, expected: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from components.config import parse
    from components.offline import plan
    from tests.infra.test_api_versions import _raw

    dm: dict[str, object] = {} if contacts is None else {"portalContacts": contacts}
    config = parse(_raw(dm=dm))
    empty = Graph(stack="dev", config=config, resources=[], outputs={})
    monkeypatch.setattr(plan, "run", lambda stack: empty)

    class Clean:  # the two-stack check has its own tests
        ok = True

        def lines(self) -> list[str]:
            return []

    monkeypatch.setattr(plan, "check_project", lambda built: Clean())
    assert plan.main(["--stack", "dev"]) == 0  # a warning, never a failing exit code
    assert expected in capsys.readouterr().out
