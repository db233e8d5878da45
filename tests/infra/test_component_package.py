"""The blocks as a component package: the SDK's own analyzer infers the schema other languages
get (``pulumi package add``), and the package's blocks build what the Python blocks build.

Schema inference: ``pulumi.provider.experimental`` (the analyzer ``component_provider_host``
runs), https://www.pulumi.com/docs/iac/guides/building-extending/components/packaging-components/
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import grpc
import pytest
import yaml
from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.schema import generate_schema
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc

from components.offline.engine import ACCOUNT_ID, run_program, stack_config_values
from components.package.blocks import COMPONENTS, PACKAGE, GuardedTable, GuardedTableArgs, WorkQueue

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "components" / "package"


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    result = Analyzer(PACKAGE).analyze(COMPONENTS)
    dependencies = sorted(result["dependencies"], key=lambda d: d.name)
    built = generate_schema(
        PACKAGE,
        "0.1.0",
        None,
        result["component_definitions"],
        result["type_definitions"],
        dependencies,
    )
    return dict(built.to_json())


def test_the_package_hosts_the_blocks_under_their_own_tokens(schema: dict[str, Any]) -> None:
    assert set(schema["resources"]) == {"crm:index:GuardedTable", "crm:index:WorkQueue"}
    assert all(r["isComponent"] for r in schema["resources"].values())
    plugin = yaml.safe_load((PACKAGE_DIR / "PulumiPlugin.yaml").read_text())
    assert plugin["runtime"]["name"] == "python"
    ComponentProvider(COMPONENTS, PACKAGE)  # what the host builds: the schema must infer


def test_the_plugin_serves_that_schema(schema: dict[str, Any], tmp_path: Path) -> None:
    """The plugin as the engine starts it (its folder's __main__.py, from elsewhere): it prints
    its port and answers GetSchema with the analyzer's schema."""
    process = subprocess.Popen(
        [sys.executable, str(PACKAGE_DIR / "__main__.py"), "127.0.0.1:1"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        port = process.stdout.readline().decode().strip()
        assert port.isdigit(), process.stderr.read().decode()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = provider_pb2_grpc.ResourceProviderStub(channel)
            served = json.loads(stub.GetSchema(provider_pb2.GetSchemaRequest(), timeout=30).schema)
    finally:
        process.kill()
        process.wait()
    assert served["name"] == PACKAGE
    assert served["resources"] == schema["resources"]


def test_every_type_has_properties_or_values(schema: dict[str, Any]) -> None:
    """The analyzer turns a type it cannot read (a callable) into an empty object type named
    after it, silently; an empty type in the schema is that mistake."""
    for token, spec in schema["types"].items():
        assert spec.get("properties") or spec.get("enum"), token


def test_guarded_table_schema(schema: dict[str, Any]) -> None:
    table = schema["resources"]["crm:index:GuardedTable"]
    assert sorted(table["requiredInputs"]) == ["name", "partitionKey", "prefix"]
    inputs = table["inputProperties"]
    assert set(inputs) == {
        "prefix",
        "name",
        "partitionKey",
        "sortKey",
        "indexes",
        "ttlAttribute",
        "stream",
        "protectData",
        "system",
    }
    assert inputs["partitionKey"]["$ref"] == "#/types/crm:index:TableKey"
    assert inputs["indexes"]["type"] == "array"
    assert inputs["indexes"]["items"]["$ref"] == "#/types/crm:index:TableIndex"
    assert inputs["stream"]["$ref"] == "#/types/crm:index:StreamViewType"
    assert inputs["protectData"]["type"] == "boolean"
    # Names build ARNs known at preview (the policy pack judges them there): plain values.
    assert inputs["prefix"]["plain"] and inputs["name"]["plain"]
    outputs = table["properties"]
    assert outputs["table"]["$ref"].endswith("/schema.json#/resources/aws:dynamodb%2Ftable:Table")
    for name in ("tableName", "tableArn", "readPolicyJson", "writePolicyJson", "streamPolicyJson"):
        assert outputs[name]["type"] == "string", name
        assert outputs[name]["description"], name
    assert set(table["required"]) >= {"tableName", "tableArn", "readPolicyJson"}
    types = schema["types"]
    assert types["crm:index:TableKey"]["required"] == ["name"]
    assert [e["value"] for e in types["crm:index:AttributeType"]["enum"]] == ["S", "N", "B"]
    assert sorted(types["crm:index:TableIndex"]["required"]) == ["name", "partitionKey"]


def test_work_queue_schema(schema: dict[str, Any]) -> None:
    queue = schema["resources"]["crm:index:WorkQueue"]
    assert sorted(queue["requiredInputs"]) == ["name", "prefix"]
    inputs = queue["inputProperties"]
    assert inputs["maxReceiveCount"]["type"] == "integer"
    assert inputs["serviceSenders"]["items"]["$ref"] == "#/types/crm:index:ServiceSenderArgs"
    outputs = queue["properties"]
    assert outputs["queue"]["$ref"].endswith("#/resources/aws:sqs%2Fqueue:Queue")
    assert "dlq" in outputs and "dlq" not in queue["required"]  # none for a dead-letter queue
    assert {"queueUrl", "queueArn", "sendPolicyJson", "consumePolicyJson"} <= set(queue["required"])
    sender = schema["types"]["crm:index:ServiceSenderArgs"]
    assert sorted(sender["required"]) == ["service", "sourceArn"]


def _build(program: Any) -> list[Any]:
    resources, _ = run_program(program, stack="dev", values=stack_config_values("dev"))
    return resources


def test_the_package_table_is_the_block_with_policies_scoped_to_it() -> None:
    made: dict[str, GuardedTable] = {}

    def program() -> dict[str, Any]:
        # as a YAML program's Construct call delivers them: the enums' values, as strings
        wire: dict[str, Any] = {
            "prefix": "dev",
            "name": "rrs-optout",
            "partition_key": {"name": "phone"},
            "indexes": [{"name": "by-day", "partition_key": {"name": "day", "type": "N"}}],
            "stream": "NEW_IMAGE",
        }
        made["t"] = GuardedTable("optout", cast(GuardedTableArgs, wire))
        return {
            "read": made["t"].read_policy_json,
            "stream": made["t"].stream_policy_json,
        }

    resources, outputs = run_program(program, stack="dev", values=stack_config_values("dev"))
    tables = [r for r in resources if r.type == "aws:dynamodb/table:Table"]
    assert len(tables) == 1 and tables[0].inputs["name"] == "dev-rrs-optout"
    assert tables[0].inputs["pointInTimeRecovery"] == {"enabled": True}
    assert tables[0].inputs["streamViewType"] == "NEW_IMAGE"
    assert [r.type for r in resources if r.urn == tables[0].parent] == ["crm:index:GuardedTable"]
    read = json.loads(outputs["read"])["Statement"][0]
    arn = f"arn:aws:dynamodb:us-east-1:{ACCOUNT_ID}:table/dev-rrs-optout"
    assert read["Resource"] == [arn, f"{arn}/index/by-day"]
    assert sorted(read["Action"]) == ["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:Query"]
    stream = json.loads(outputs["stream"])["Statement"]
    assert stream[0]["Resource"] == [f"{arn}/stream/*"]


def test_the_package_queue_is_the_block() -> None:
    def program() -> dict[str, Any]:
        queue = WorkQueue("work", {"prefix": "dev", "name": "rrs-work", "max_receive_count": 3})
        return {"send": queue.send_policy_json}

    resources, outputs = run_program(program, stack="dev", values=stack_config_values("dev"))
    queues = {r.inputs["name"]: r.inputs for r in resources if r.type == "aws:sqs/queue:Queue"}
    assert set(queues) == {"dev-rrs-work", "dev-rrs-work-dlq"}
    assert json.loads(queues["dev-rrs-work"]["redrivePolicy"])["maxReceiveCount"] == 3
    send = json.loads(outputs["send"])["Statement"][0]
    assert send["Action"] == ["sqs:SendMessage"]
    assert send["Resource"] == [f"arn:aws:sqs:us-east-1:{ACCOUNT_ID}:dev-rrs-work"]
