"""Run the Pulumi program on the mock engine and capture the resource graph.

No Pulumi CLI, no credentials, no network: ``pulumi.runtime.set_mocks`` stands in for the
engine, a recording monitor keeps every registration (type, name, parent, provider, inputs),
and the mocks answer the few invokes the program makes (caller identity, partition, the
Powertools layer parameter) with fixed values. The same graph feeds the offline plan, the
policy pack in CI, the infra tests and the local sandbox.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
from pulumi.runtime import mocks, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from components import config_source
from components.config import PROJECT, StackConfig, from_pulumi_config

ROOT = Path(__file__).resolve().parents[2]
ACCOUNT_ID = "123456789012"
POWERTOOLS_LAYER = (
    "arn:aws:lambda:{region}:017000801446:layer:AWSLambdaPowertoolsPythonV3-python314-arm64:27"
)


@dataclass
class Resource:
    """One registered resource as the engine saw it."""

    type: str
    name: str
    urn: str
    parent: str | None
    custom: bool
    provider: str | None
    inputs: dict[str, Any]
    outputs: dict[str, Any] = field(default_factory=dict)
    dependencies: list[str] = field(default_factory=list)
    """URNs it waits for (explicit ``depends_on`` and inputs from other resources' outputs)."""
    ignore_changes: list[str] = field(default_factory=list)
    """Inputs an update keeps from state (``ignore_changes``, engine names: ``valueWoVersion``)."""

    def policy_statements(self) -> list[dict[str, Any]]:
        """The statements of its ``policy`` input (topic, queue, bucket, role policies)."""
        policy = self.inputs.get("policy")
        if not isinstance(policy, str):
            return []
        loaded = json.loads(policy).get("Statement", [])
        return loaded if isinstance(loaded, list) else [loaded]

    @property
    def physical_name(self) -> str | None:
        for key in ("name", "bucket", "ruleSetName", "emailIdentity"):
            value = self.inputs.get(key)
            if isinstance(value, str):
                return value
        return None


@dataclass
class Graph:
    """Every resource of one program run, in registration order."""

    stack: str
    config: StackConfig
    resources: list[Resource]
    outputs: dict[str, Any]

    def of_type(self, type_token: str) -> list[Resource]:
        return [r for r in self.resources if r.type == type_token]

    def by_urn(self, urn: str) -> Resource:
        for r in self.resources:
            if r.urn == urn:
                return r
        raise KeyError(urn)

    def children(self, parent: Resource) -> list[Resource]:
        return [r for r in self.resources if r.parent == parent.urn]

    def named(self, type_token: str, physical_name: str) -> Resource:
        found = [r for r in self.of_type(type_token) if r.physical_name == physical_name]
        if len(found) != 1:
            raise KeyError(f"{len(found)} resources of {type_token} named {physical_name}")
        return found[0]

    def region_of(self, resource: Resource) -> str | None:
        """The region of the explicit provider ``resource`` names (``<urn>::<id>``)."""
        if not resource.provider:
            return None
        urn = resource.provider.rsplit("::", 1)[0]
        for r in self.resources:
            if r.urn == urn and r.type == "pulumi:providers:aws":
                region = r.inputs.get("region")
                return region if isinstance(region, str) else None
        return None

    def to_json(self) -> list[dict[str, Any]]:
        return [
            {
                "type": r.type,
                "name": r.name,
                "urn": r.urn,
                "physical_name": r.physical_name,
                "parent": r.parent,
                "custom": r.custom,
                "region": self.region_of(r),
                "inputs": r.inputs,
            }
            for r in sorted(self.resources, key=lambda r: r.urn)
        ]


def listed(value: Any) -> list[Any]:
    """A policy field that may be one value or a list, as a list."""
    return value if isinstance(value, list) else [value]


def gsi_keys(index: Mapping[str, Any]) -> tuple[str, str | None]:
    """(partition key, sort key) of a table's global secondary index as the graph holds it."""
    schema = {k["keyType"]: k["attributeName"] for k in index.get("keySchemas") or []}
    return schema["HASH"], schema.get("RANGE")


def _arn_for(type_token: str, inputs: Mapping[str, Any], region: str) -> str | None:
    name = inputs.get("name")
    service = type_token.split(":")[1].split("/")[0]
    if type_token == "aws:sqs/queue:Queue":
        return f"arn:aws:sqs:{region}:{ACCOUNT_ID}:{name}"
    if type_token == "aws:dynamodb/table:Table":
        return f"arn:aws:dynamodb:{region}:{ACCOUNT_ID}:table/{name}"
    if type_token == "aws:lambda/function:Function":
        return f"arn:aws:lambda:{region}:{ACCOUNT_ID}:function:{name}"
    if type_token == "aws:iam/role:Role":
        return f"arn:aws:iam::{ACCOUNT_ID}:role/{name}"
    if type_token == "aws:s3/bucket:Bucket":
        return f"arn:aws:s3:::{inputs.get('bucket')}"
    if type_token == "aws:sns/topic:Topic":
        return f"arn:aws:sns:{region}:{ACCOUNT_ID}:{name}"
    if type_token == "aws:secretsmanager/secret:Secret":
        return f"arn:aws:secretsmanager:{region}:{ACCOUNT_ID}:secret:{name}-AbCdEf"
    if type_token == "aws:ssm/parameter:Parameter":
        return f"arn:aws:ssm:{region}:{ACCOUNT_ID}:parameter/{str(name).lstrip('/')}"
    if isinstance(name, str):
        return f"arn:aws:{service}:{region}:{ACCOUNT_ID}:{name}"
    return None


class GraphMocks(pulumi.runtime.Mocks):
    """Mocks that give every resource plausible outputs derived from its inputs."""

    def __init__(self) -> None:
        self.providers: dict[str, str] = {}

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        inputs = dict(args.inputs)
        if args.typ == "pulumi:providers:aws":
            return f"{args.name}-id", inputs
        region = self._region(args.provider)
        outputs = dict(inputs)
        arn = _arn_for(args.typ, inputs, region)
        if arn:
            outputs.setdefault("arn", arn)
        if args.typ == "aws:sqs/queue:Queue":
            outputs["url"] = f"https://sqs.{region}.amazonaws.com/{ACCOUNT_ID}/{inputs['name']}"
        if args.typ == "aws:dynamodb/table:Table" and inputs.get("streamEnabled"):
            outputs["streamArn"] = f"{arn}/stream/2026-01-01T00:00:00.000"
        if args.typ == "aws:lambda/functionUrl:FunctionUrl":
            outputs["functionUrl"] = f"https://{inputs['functionName']}.lambda-url.{region}.on.aws/"
        physical = inputs.get("name") or inputs.get("bucket") or args.name
        return f"{physical}-id", outputs

    def call(
        self, args: pulumi.runtime.MockCallArgs
    ) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        region = self._region(args.provider)
        if args.token == "aws:index/getCallerIdentity:getCallerIdentity":
            return {
                "accountId": ACCOUNT_ID,
                "arn": f"arn:aws:iam::{ACCOUNT_ID}:user/offline",
                "userId": "offline",
                "id": ACCOUNT_ID,
            }, []
        if args.token == "aws:index/getPartition:getPartition":
            return {"partition": "aws", "dnsSuffix": "amazonaws.com", "id": "aws"}, []
        if args.token == "aws:index/getRegion:getRegion":
            return {"name": region, "region": region, "id": region}, []
        if args.token == "aws:ssm/getParameter:getParameter":
            value = POWERTOOLS_LAYER.format(region=region)
            return {"name": args.args.get("name"), "value": value, "id": value}, []
        raise NotImplementedError(f"the offline engine has no answer for invoke {args.token}")

    def _region(self, provider_ref: str | None) -> str:
        if provider_ref:
            urn = provider_ref.split("::")
            for known_urn, region in self.providers.items():
                if provider_ref.startswith(known_urn):
                    return region
            _ = urn
        return "us-east-1"


class RecordingMonitor(mocks.MockMonitor):
    """The mock monitor, also keeping parent and provider of every registration."""

    def __init__(self, graph_mocks: GraphMocks) -> None:
        super().__init__(graph_mocks)
        self.graph_mocks = graph_mocks
        self.registered: list[Resource] = []

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)  # type: ignore[no-untyped-call]
        if request.type == "pulumi:pulumi:Stack":
            return response
        registration = self.resources[response.urn]
        inputs = pulumi.runtime.rpc.deserialize_properties(request.object)
        if request.type == "pulumi:providers:aws":
            self.graph_mocks.providers[response.urn] = inputs.get("region", "us-east-1")
        self.registered.append(
            Resource(
                type=request.type,
                name=request.name,
                urn=response.urn,
                parent=request.parent or None,
                custom=bool(request.custom),
                provider=request.provider or None,
                inputs=_plain(inputs),
                outputs=_plain(dict(registration.state)),
                dependencies=list(request.dependencies),
                ignore_changes=list(request.ignoreChanges),
            )
        )
        return response


def _plain(value: Any) -> Any:
    """Inputs as plain JSON-able values (unknowns and secrets unwrapped or marked)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, pulumi.FileArchive | pulumi.FileAsset):
        return {"archive": value.path}
    return repr(value)


def stack_file(stack: str) -> Path:
    """``Pulumi.<stack>.yaml`` beside Pulumi.yaml."""
    return ROOT / f"Pulumi.{stack}.yaml"


def stack_config_values(stack: str, overrides: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The engine's config map for ``Pulumi.<stack>.yaml`` (objects as JSON strings)."""
    raw = config_source.load(stack_file(stack))  # a YAML error or a missing file: one line
    for key, value in (overrides or {}).items():
        raw[key if ":" in key else f"{PROJECT}:{key}"] = value
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in raw.items()}


def run_program(
    program: Callable[[], Mapping[str, Any]], *, stack: str, values: Mapping[str, str]
) -> tuple[list[Resource], dict[str, Any]]:
    """Run any program function on the mock engine; return its registrations and outputs."""
    graph_mocks = GraphMocks()
    monitor = RecordingMonitor(graph_mocks)
    settings.reset_options(project=PROJECT, stack=stack, preview=False)
    pulumi.runtime.config.set_all_config(dict(values))
    mocks.set_mocks(graph_mocks, project=PROJECT, stack=stack, preview=False, monitor=monitor)
    resolved: dict[str, Any] = {}

    def body() -> None:
        outputs = pulumi.Output.from_input(dict(program()))
        values: dict[str, Any] | None = _sync_await(outputs.future())
        resolved.update(values or {})

    _sync_await(run_pulumi_func(body))
    return monitor.registered, resolved


def run(stack: str, overrides: Mapping[str, Any] | None = None) -> Graph:
    """Run the program for ``stack`` on the mock engine and return its graph.

    ``overrides`` replaces top-level config keys (``systems`` etc.), for tests.
    """
    # the mock engine loads Pulumi and the program (seconds): only on this path
    from components.stack import build  # imported late: the mocks must be set first

    values = stack_config_values(stack, overrides)
    config = from_pulumi_config(values, stack_file(stack))
    resources, outputs = run_program(lambda: build(config), stack=stack, values=values)
    return Graph(stack=stack, config=config, resources=resources, outputs=outputs)
