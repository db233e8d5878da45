"""Read the Pulumi program's graph: what the sandbox deploys and wires comes from here only.

The mock engine (``components.offline.engine``) runs the real program and records every
resource with its inputs, parent and provider. ``Topology.from_graph`` turns that record into
plain specs (tables, queues, functions, triggers, policies...), each placed in the region of
the explicit provider it was declared with. Nothing here is a second hand-written list: a
resource the program does not declare does not exist in the sandbox.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from components.offline.engine import Graph, Resource
from sandbox.account import arns

DEFAULT_REGION = "us-east-1"


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


@dataclass(frozen=True)
class TableSpec:
    """A DynamoDB table as declared."""

    name: str
    region: str
    hash_key: str
    range_key: str | None
    attributes: dict[str, str]
    indexes: tuple[dict[str, Any], ...]
    ttl_attribute: str | None
    stream_view: str | None


@dataclass(frozen=True)
class QueueSpec:
    """An SQS queue as declared (redrive to its DLQ after ``max_receive_count``)."""

    name: str
    region: str
    visibility_timeout_s: int
    dead_letter_arn: str | None
    max_receive_count: int | None
    fifo: bool

    @property
    def arn(self) -> str:
        return arns(self.region).queue(self.name)


@dataclass(frozen=True)
class BucketSpec:
    """An S3 bucket as declared."""

    name: str
    region: str
    versioned: bool


@dataclass(frozen=True)
class FunctionSpec:
    """A Lambda function: handler, environment, role and its Function URL if any."""

    name: str
    region: str
    handler: str
    role_name: str
    environment: dict[str, str]
    memory_mb: int
    timeout_s: int
    url_auth: str | None = None
    cors_origins: tuple[str, ...] = ()

    @property
    def arn(self) -> str:
        return arns(self.region).lambda_function(self.name)


@dataclass(frozen=True)
class QueueMapping:
    """An SQS event source mapping."""

    function: str
    queue_arn: str
    batch_size: int
    filters: tuple[Any, ...]
    report_failures: bool


@dataclass(frozen=True)
class StreamMapping:
    """A DynamoDB-stream event source mapping."""

    function: str
    table: str
    region: str
    batch_size: int
    max_retries: int
    bisect: bool
    starting_position: str
    filters: tuple[Any, ...]
    on_failure_arn: str | None
    report_failures: bool


@dataclass(frozen=True)
class RuleSpec:
    """An EventBridge rule with its targets (function ARNs) and their dead-letter queues."""

    name: str
    region: str
    bus: str
    pattern: Any
    targets: tuple[tuple[str, str | None, int], ...]  # (target arn, dlq arn, retries)


@dataclass(frozen=True)
class ScheduleSpec:
    """A recurring (or declared one-off) Scheduler schedule."""

    name: str
    region: str
    group: str
    expression: str
    timezone: str
    target_arn: str
    role_arn: str
    input: str


@dataclass(frozen=True)
class BucketNotificationSpec:
    """S3 object notifications from one bucket to one function, for one prefix."""

    bucket: str
    function_arn: str
    events: tuple[str, ...]
    prefix: str
    suffix: str


@dataclass(frozen=True)
class ReceiptRuleSpec:
    """An SES receipt rule: recipients and the S3 actions that store the mail."""

    rule_set: str
    name: str
    region: str
    recipients: tuple[str, ...]
    s3_actions: tuple[tuple[str, str], ...]  # (bucket, prefix)
    active: bool
    lambda_actions: tuple[tuple[str, str], ...] = ()  # (function arn, invocation type)


@dataclass(frozen=True)
class KeySpec:
    """A customer-managed KMS key: every name it can be referred by, and its key policy."""

    refs: frozenset[str]
    region: str
    statements: tuple[dict[str, Any], ...]

    @property
    def arn(self) -> str:
        key_id = min(r for r in self.refs if not r.startswith(("arn:", "alias/", "parent:")))
        return arns(self.region).kms(f"key/{key_id}")


@dataclass(frozen=True)
class BudgetSpec:
    """A budget and the SNS topics its notifications publish to."""

    name: str
    topic_arns: tuple[str, ...]


@dataclass(frozen=True)
class AlarmSpec:
    """A CloudWatch alarm and the SNS topics its actions publish to."""

    name: str
    region: str
    topic_arns: tuple[str, ...]


@dataclass(frozen=True)
class AsyncConfig:
    """What happens to a failed asynchronous invocation."""

    function: str
    max_retries: int
    on_failure_arn: str | None


@dataclass
class Topology:
    """Everything the sandbox deploys and wires, read from one graph."""

    graph: Graph
    tables: list[TableSpec] = field(default_factory=list)
    queues: list[QueueSpec] = field(default_factory=list)
    buckets: list[BucketSpec] = field(default_factory=list)
    topics: list[tuple[str, str]] = field(default_factory=list)  # (name, region)
    secrets: list[tuple[str, str, str]] = field(default_factory=list)  # (name, region, doc)
    parameters: set[str] = field(default_factory=set)
    """Names in ``secrets`` that are Parameter Store SecureStrings (``secretStore: ssm``)."""
    identities: list[tuple[str, str]] = field(default_factory=list)  # (identity, region)
    schedule_groups: list[tuple[str, str]] = field(default_factory=list)
    functions: dict[str, FunctionSpec] = field(default_factory=dict)
    policies: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # role -> stmts
    queue_mappings: list[QueueMapping] = field(default_factory=list)
    stream_mappings: list[StreamMapping] = field(default_factory=list)
    rules: list[RuleSpec] = field(default_factory=list)
    schedules: list[ScheduleSpec] = field(default_factory=list)
    notifications: list[BucketNotificationSpec] = field(default_factory=list)
    receipt_rules: list[ReceiptRuleSpec] = field(default_factory=list)
    async_configs: dict[str, AsyncConfig] = field(default_factory=dict)
    regions: dict[str, str] = field(default_factory=dict)  # provider urn -> region
    trust_policies: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # role -> stmts
    resource_policies: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Resource ARN -> statements of its resource-based policy: function (its
    ``lambda:Permission`` statements), bucket, queue and topic policies."""
    topic_keys: dict[str, str] = field(default_factory=dict)  # topic arn -> kmsMasterKeyId
    keys: list[KeySpec] = field(default_factory=list)
    key_aliases: dict[str, str] = field(default_factory=dict)  # alias/name -> target key ref
    budgets: list[BudgetSpec] = field(default_factory=list)
    alarms: list[AlarmSpec] = field(default_factory=list)

    # Reading ------------------------------------------------------------------------------

    def region_of(self, r: Resource) -> str:
        """The region of the explicit provider ``r`` (or its nearest ancestor) was given."""
        seen: Resource | None = r
        while seen is not None:
            if seen.provider:
                urn = seen.provider.split("::")
                for known, region in self.regions.items():
                    if seen.provider.startswith(known + "::") or seen.provider == known:
                        return region
                _ = urn
            if not seen.parent:
                break
            try:
                seen = self.graph.by_urn(seen.parent)
            except KeyError:
                break
        return DEFAULT_REGION

    @classmethod
    def from_graph(cls, graph: Graph) -> Topology:
        """Read every resource the sandbox understands out of ``graph``."""
        t = cls(graph)
        for r in graph.of_type("pulumi:providers:aws"):
            t.regions[r.urn] = str(r.inputs.get("region") or DEFAULT_REGION)
        versioned = {
            str(r.inputs.get("bucket"))
            for r in graph.of_type("aws:s3/bucketVersioning:BucketVersioning")
            if (r.inputs.get("versioningConfiguration") or {}).get("status") == "Enabled"
        }
        active_sets = {
            str(r.inputs.get("ruleSetName"))
            for r in graph.of_type("aws:ses/activeReceiptRuleSet:ActiveReceiptRuleSet")
        }
        for r in graph.resources:
            reader = _READERS.get(r.type)
            if reader is not None:
                reader(t, r, t.region_of(r), versioned, active_sets)
        # Identities the account's other stack owns (mailIdentityOwner) exist there already.
        for region, domains in (graph.outputs.get("sesIdentitiesReferenced") or {}).items():
            t.identities.extend((str(domain), str(region)) for domain in domains)
        return t

    def function_by_arn(self, arn: str) -> FunctionSpec | None:
        name = arn.split(":function:", 1)[-1].split(":", 1)[0]
        return self.functions.get(name)

    def queue_by_arn(self, arn: str) -> QueueSpec | None:
        return next((q for q in self.queues if q.arn == arn), None)

    def table(self, name: str) -> TableSpec | None:
        return next((x for x in self.tables if x.name == name), None)

    def key(self, ref: str) -> KeySpec | None:
        """The customer-managed key a ``kmsMasterKeyId``-style reference names (key ID, key ARN,
        alias name or alias ARN), or None when the graph declares no such key."""
        if ref.startswith("arn:aws:kms:") and ":alias/" in ref:
            ref = "alias/" + ref.split(":alias/", 1)[1]
        ref = self.key_aliases.get(ref, ref)
        if ref.startswith("arn:aws:kms:") and ":key/" in ref:
            ref = ref.split(":key/", 1)[1]
        found = [k for k in self.keys if ref in k.refs]
        return found[0] if len(found) == 1 else None


def _table(t: Topology, r: Resource, region: str, *_: Any) -> None:
    i = r.inputs
    attributes = {a["name"]: a["type"] for a in i.get("attributes") or []}
    ttl = i.get("ttl") or {}
    t.tables.append(
        TableSpec(
            name=i["name"],
            region=region,
            hash_key=i["hashKey"],
            range_key=i.get("rangeKey"),
            attributes=attributes,
            indexes=tuple(i.get("globalSecondaryIndexes") or ()),
            ttl_attribute=ttl.get("attributeName") if ttl.get("enabled") else None,
            stream_view=i.get("streamViewType") if i.get("streamEnabled") else None,
        )
    )


def _queue(t: Topology, r: Resource, region: str, *_: Any) -> None:
    i = r.inputs
    redrive = _json(i.get("redrivePolicy")) or {}
    t.queues.append(
        QueueSpec(
            name=i["name"],
            region=region,
            visibility_timeout_s=int(i.get("visibilityTimeoutSeconds") or 30),
            dead_letter_arn=redrive.get("deadLetterTargetArn"),
            max_receive_count=redrive.get("maxReceiveCount"),
            fifo=bool(i.get("fifoQueue")),
        )
    )


def _bucket(t: Topology, r: Resource, region: str, versioned: set[str], *_: Any) -> None:
    name = str(r.inputs["bucket"])
    t.buckets.append(BucketSpec(name, region, name in versioned))


def _topic(t: Topology, r: Resource, region: str, *_: Any) -> None:
    name = str(r.inputs["name"])
    t.topics.append((name, region))
    key = r.inputs.get("kmsMasterKeyId")
    if key:
        t.topic_keys[arns(region).topic(name)] = str(key)


def _statements(document: Any) -> list[dict[str, Any]]:
    statements = (_json(document) or {}).get("Statement") or []
    return [statements] if isinstance(statements, dict) else list(statements)


def _role(t: Topology, r: Resource, *_: Any) -> None:
    name = str(r.inputs.get("name") or r.name)  # an unnamed role would get a generated name
    t.trust_policies[name] = _statements(r.inputs.get("assumeRolePolicy"))


def _permission(t: Topology, r: Resource, region: str, *_: Any) -> None:
    """A ``lambda:Permission`` as the statement Lambda adds to the function's resource-based
    policy ("AddPermission", Lambda API reference,
    https://docs.aws.amazon.com/lambda/latest/api/API_AddPermission.html; the statement shape
    as ``GetPolicy`` returns it: the source ARN as ``ArnLike AWS:SourceArn``, the source account
    as ``StringEquals AWS:SourceAccount``)."""
    i = r.inputs
    function = str(i["function"]).rsplit(":function:", 1)[-1].split(":", 1)[0]
    arn = arns(region).lambda_function(function)
    principal = str(i["principal"])
    who: Any = (
        "*"
        if principal == "*"
        else {"Service": principal}
        if principal.endswith(".amazonaws.com")
        else {"AWS": principal}
    )
    condition: dict[str, dict[str, Any]] = {}
    if i.get("sourceArn"):
        condition.setdefault("ArnLike", {})["AWS:SourceArn"] = str(i["sourceArn"])
    if i.get("sourceAccount"):
        condition.setdefault("StringEquals", {})["AWS:SourceAccount"] = str(i["sourceAccount"])
    if i.get("functionUrlAuthType"):
        condition.setdefault("StringEquals", {})["lambda:FunctionUrlAuthType"] = str(
            i["functionUrlAuthType"]
        )
    if i.get("invokedViaFunctionUrl"):
        condition.setdefault("Bool", {})["lambda:InvokedViaFunctionUrl"] = "true"
    statement: dict[str, Any] = {
        "Sid": str(i.get("statementId") or r.name),
        "Effect": "Allow",
        "Principal": who,
        "Action": str(i["action"]),
        "Resource": arn,
    }
    if condition:
        statement["Condition"] = condition
    t.resource_policies.setdefault(arn, []).append(statement)


def _bucket_policy(t: Topology, r: Resource, *_: Any) -> None:
    arn = arns("").bucket(str(r.inputs["bucket"]))
    t.resource_policies.setdefault(arn, []).extend(_statements(r.inputs.get("policy")))


def _queue_policy(t: Topology, r: Resource, *_: Any) -> None:
    # https://sqs.<region>.amazonaws.com/<account>/<name>
    url = str(r.inputs.get("queueUrl") or "")
    if not url.startswith("https://sqs."):
        return  # not known at preview: the policy cannot be placed on a queue
    host, account, name = url.removeprefix("https://").split("/")[:3]
    arn = arns(host.split(".")[1], account).queue(name)
    t.resource_policies.setdefault(arn, []).extend(_statements(r.inputs.get("policy")))


def _topic_policy(t: Topology, r: Resource, *_: Any) -> None:
    arn = str(r.inputs["arn"])
    t.resource_policies.setdefault(arn, []).extend(_statements(r.inputs.get("policy")))


def _kms_key(t: Topology, r: Resource, region: str, *_: Any) -> None:
    # The mock engine knows no key ID: an alias declared next to the key (same parent
    # component) with an unknown ``targetKeyId`` is joined to it through that parent.
    refs = {f"{r.name}-id", f"parent:{r.parent}"} | {
        str(v) for k, v in r.outputs.items() if k in ("arn", "keyId", "id") and isinstance(v, str)
    }
    t.keys.append(KeySpec(frozenset(refs), region, tuple(_statements(r.inputs.get("policy")))))


def _kms_alias(t: Topology, r: Resource, *_: Any) -> None:
    target = r.inputs.get("targetKeyId")
    t.key_aliases[str(r.inputs["name"])] = str(target) if target else f"parent:{r.parent}"


def _budget(t: Topology, r: Resource, *_: Any) -> None:
    topics = tuple(
        dict.fromkeys(
            str(arn)
            for n in r.inputs.get("notifications") or []
            for arn in n.get("subscriberSnsTopicArns") or []
        )
    )
    t.budgets.append(BudgetSpec(str(r.inputs.get("name") or r.name), topics))


def _secret(t: Topology, r: Resource, region: str, *_: Any) -> None:
    t.secrets.append((str(r.inputs["name"]), region, str(r.inputs.get("description") or "")))


def _parameter(t: Topology, r: Resource, region: str, *_: Any) -> None:
    _secret(t, r, region)
    t.parameters.add(str(r.inputs["name"]))


def _identity(t: Topology, r: Resource, region: str, *_: Any) -> None:
    t.identities.append((str(r.inputs["emailIdentity"]), region))


def _ses_v1_identity(t: Topology, r: Resource, region: str, *_: Any) -> None:
    value = r.inputs.get("domain") or r.inputs.get("email")
    if value:
        t.identities.append((str(value), region))


def _schedule_group(t: Topology, r: Resource, region: str, *_: Any) -> None:
    t.schedule_groups.append((str(r.inputs["name"]), region))


def _function(t: Topology, r: Resource, region: str, *_: Any) -> None:
    i = r.inputs
    env = ((i.get("environment") or {}).get("variables")) or {}
    role = str(i.get("role", ""))
    t.functions[i["name"]] = FunctionSpec(
        name=i["name"],
        region=region,
        handler=i["handler"],
        role_name=role.rsplit("/", 1)[-1],
        environment={str(k): str(v) for k, v in env.items()},
        memory_mb=int(i.get("memorySize") or 128),
        timeout_s=int(i.get("timeout") or 3),
    )


def _function_url(t: Topology, r: Resource, *_: Any) -> None:
    i = r.inputs
    name = str(i["functionName"])
    spec = t.functions.get(name)
    if spec is None:
        return
    cors = i.get("cors") or {}
    t.functions[name] = FunctionSpec(
        **{
            **spec.__dict__,
            "url_auth": str(i.get("authorizationType") or "NONE"),
            "cors_origins": tuple(cors.get("allowOrigins") or ()),
        }
    )


def _role_policy(t: Topology, r: Resource, *_: Any) -> None:
    document = _json(r.inputs.get("policy")) or {}
    statements = document.get("Statement") or []
    if isinstance(statements, dict):
        statements = [statements]
    t.policies.setdefault(str(r.inputs["role"]), []).extend(statements)


def _filters(i: Mapping[str, Any]) -> tuple[Any, ...]:
    criteria = i.get("filterCriteria") or {}
    return tuple(_json(f.get("pattern")) for f in criteria.get("filters") or [])


def _mapping(t: Topology, r: Resource, region: str, *_: Any) -> None:
    i = r.inputs
    source = str(i["eventSourceArn"])
    function = str(i["functionName"]).rsplit(":function:", 1)[-1]
    report = "ReportBatchItemFailures" in (i.get("functionResponseTypes") or [])
    if ":sqs:" in source:
        t.queue_mappings.append(
            QueueMapping(function, source, int(i.get("batchSize") or 10), _filters(i), report)
        )
    elif ":dynamodb:" in source:
        table = source.split(":table/", 1)[1].split("/", 1)[0]
        on_failure = ((i.get("destinationConfig") or {}).get("onFailure") or {}).get(
            "destinationArn"
        )
        t.stream_mappings.append(
            StreamMapping(
                function=function,
                table=table,
                region=region,
                batch_size=int(i.get("batchSize") or 100),
                max_retries=int(i.get("maximumRetryAttempts", -1)),
                bisect=bool(i.get("bisectBatchOnFunctionError")),
                starting_position=str(i.get("startingPosition") or "TRIM_HORIZON"),
                filters=_filters(i),
                on_failure_arn=on_failure,
                report_failures=report,
            )
        )


def _rule(t: Topology, r: Resource, region: str, *_: Any) -> None:
    i = r.inputs
    t.rules.append(
        RuleSpec(
            name=str(i["name"]),
            region=region,
            bus=str(i.get("eventBusName") or "default"),
            pattern=_json(i.get("eventPattern")),
            targets=(),
        )
    )


def _target(t: Topology, r: Resource, region: str, *_: Any) -> None:
    i = r.inputs
    for n, rule in enumerate(t.rules):
        if rule.name == i["rule"] and rule.region == region:
            dlq = (i.get("deadLetterConfig") or {}).get("arn")
            retries = int((i.get("retryPolicy") or {}).get("maximumRetryAttempts", 185))
            t.rules[n] = RuleSpec(
                **{**rule.__dict__, "targets": (*rule.targets, (str(i["arn"]), dlq, retries))}
            )


def _schedule(t: Topology, r: Resource, region: str, *_: Any) -> None:
    i = r.inputs
    target = i.get("target") or {}
    t.schedules.append(
        ScheduleSpec(
            name=str(i["name"]),
            region=region,
            group=str(i.get("groupName") or "default"),
            expression=str(i["scheduleExpression"]),
            timezone=str(i.get("scheduleExpressionTimezone") or "UTC"),
            target_arn=str(target.get("arn")),
            role_arn=str(target.get("roleArn")),
            input=str(target.get("input") or "{}"),
        )
    )


def _notification(t: Topology, r: Resource, *_: Any) -> None:
    i = r.inputs
    for config in i.get("lambdaFunctions") or []:
        t.notifications.append(
            BucketNotificationSpec(
                bucket=str(i["bucket"]),
                function_arn=str(config["lambdaFunctionArn"]),
                events=tuple(config.get("events") or ()),
                prefix=str(config.get("filterPrefix") or ""),
                suffix=str(config.get("filterSuffix") or ""),
            )
        )


def _receipt_rule(
    t: Topology, r: Resource, region: str, _versioned: set[str], active: set[str]
) -> None:
    i = r.inputs
    actions = tuple(
        (str(a["bucketName"]), str(a.get("objectKeyPrefix") or ""))
        for a in sorted(i.get("s3Actions") or [], key=lambda a: a.get("position", 0))
    )
    invokes = tuple(
        (str(a["functionArn"]), str(a.get("invocationType") or "Event"))
        for a in sorted(i.get("lambdaActions") or [], key=lambda a: a.get("position", 0))
    )
    t.receipt_rules.append(
        ReceiptRuleSpec(
            rule_set=str(i["ruleSetName"]),
            name=str(i["name"]),
            region=region,
            recipients=tuple(i.get("recipients") or ()),
            s3_actions=actions,
            active=str(i["ruleSetName"]) in active,
            lambda_actions=invokes,
        )
    )


def _async(t: Topology, r: Resource, *_: Any) -> None:
    i = r.inputs
    on_failure = ((i.get("destinationConfig") or {}).get("onFailure") or {}).get("destination")
    name = str(i["functionName"])
    t.async_configs[name] = AsyncConfig(name, int(i.get("maximumRetryAttempts", 2)), on_failure)


def _alarm(t: Topology, r: Resource, region: str, *_: Any) -> None:
    i = r.inputs
    actions = [
        str(a)
        for key in ("alarmActions", "okActions", "insufficientDataActions")
        for a in i.get(key) or []
    ]
    topics = tuple(dict.fromkeys(a for a in actions if a.startswith("arn:aws:sns:")))
    t.alarms.append(AlarmSpec(str(i.get("name") or r.name), region, topics))


_READERS: dict[str, Any] = {
    "aws:dynamodb/table:Table": _table,
    "aws:sqs/queue:Queue": _queue,
    "aws:s3/bucket:Bucket": _bucket,
    "aws:s3/bucketV2:BucketV2": _bucket,
    "aws:sns/topic:Topic": _topic,
    "aws:secretsmanager/secret:Secret": _secret,
    "aws:ssm/parameter:Parameter": _parameter,
    "aws:sesv2/emailIdentity:EmailIdentity": _identity,
    "aws:ses/domainIdentity:DomainIdentity": _ses_v1_identity,
    "aws:ses/emailIdentity:EmailIdentity": _ses_v1_identity,
    "aws:scheduler/scheduleGroup:ScheduleGroup": _schedule_group,
    "aws:lambda/function:Function": _function,
    "aws:lambda/functionUrl:FunctionUrl": _function_url,
    "aws:iam/rolePolicy:RolePolicy": _role_policy,
    "aws:lambda/eventSourceMapping:EventSourceMapping": _mapping,
    "aws:cloudwatch/eventRule:EventRule": _rule,
    "aws:cloudwatch/eventTarget:EventTarget": _target,
    "aws:scheduler/schedule:Schedule": _schedule,
    "aws:s3/bucketNotification:BucketNotification": _notification,
    "aws:ses/receiptRule:ReceiptRule": _receipt_rule,
    "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig": _async,
    "aws:iam/role:Role": _role,
    "aws:lambda/permission:Permission": _permission,
    "aws:s3/bucketPolicy:BucketPolicy": _bucket_policy,
    "aws:sqs/queuePolicy:QueuePolicy": _queue_policy,
    "aws:sns/topicPolicy:TopicPolicy": _topic_policy,
    "aws:kms/key:Key": _kms_key,
    "aws:kms/alias:Alias": _kms_alias,
    "aws:budgets/budget:Budget": _budget,
    "aws:cloudwatch/metricAlarm:MetricAlarm": _alarm,
}


def without_grant(graph: Graph, function: str, action: str) -> Graph:
    """A copy of ``graph`` where ``function``'s role policy no longer grants ``action``.

    This is how a test (or a developer) asks "what breaks without this permission?": the
    sandbox deployed from the edited graph denies exactly the calls that needed it.
    """
    edited = copy.deepcopy(graph)
    role = next(
        (
            str(r.inputs.get("role", "")).rsplit("/", 1)[-1]
            for r in edited.of_type("aws:lambda/function:Function")
            if r.inputs.get("name") == function
        ),
        None,
    )
    if role is None:
        raise KeyError(f"no function {function} in the graph")
    removed = 0
    for r in edited.of_type("aws:iam/rolePolicy:RolePolicy"):
        if r.inputs.get("role") != role:
            continue
        document = _json(r.inputs.get("policy"))
        kept = []
        for statement in document.get("Statement", []):
            actions = statement.get("Action")
            names = [actions] if isinstance(actions, str) else list(actions or [])
            left = [a for a in names if a.lower() != action.lower()]
            removed += len(names) - len(left)
            if left:
                kept.append({**statement, "Action": left})
        document["Statement"] = kept
        r.inputs["policy"] = json.dumps(document, sort_keys=True)
    if not removed:
        raise KeyError(f"{function}'s role grants no {action}")
    return edited
