"""The two-stack check: every stack of the project built together, as the one account holds them.

``dev`` and ``prod`` share one AWS account. A name that AWS keeps unique per partition (S3
buckets), per account (IAM, budgets, dashboards) or per account and region (everything else
here) may be declared by one stack only; on the mock engine both stacks build, and the second
``pulumi up`` fails on the first such name, or worse, silently shares the resource (SNS
``CreateTopic`` and SQS ``CreateQueue`` return the existing one; EventBridge ``PutRule``,
CloudWatch ``PutMetricAlarm`` and ``PutDashboard`` overwrite it). This module builds each
``Pulumi.<stack>.yaml`` on the mock engine, computes the scoped name every resource claims and
reports:

- a **collision**: two resources, in one stack or across stacks, claiming one scoped name;
- an **unclassified type**: a resource type this table does not know, so a new kind of
  resource cannot slip past unchecked (add it to ``NAMES`` or ``ATTACHED``);
- a **missing owner**: an SES identity a stack sends from (a ``SendEmail`` grant names it) or
  receives for (a receipt rule recipient) that no stack declares in that region, since the
  non-owner stack only references the owner's identities (``mailIdentityOwner``);
- **no active rule set**: stacks declare receipt rule sets in a region but none activates one,
  so mail for the lane is never received;
- **cross-stack delivery**: an EventBridge rule of one stack whose pattern matches the sources
  another stack's rules listen for on the same bus (or no source at all), so dev's functions
  would receive prod's events (a rule receives every event on its bus that its pattern
  matches: EventBridge user guide, "Amazon EventBridge event patterns",
  https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html).

``make plan`` prints the verdict line; ``tests/infra/test_two_stacks.py`` runs it in ``make test``.
``python -m components.offline.two_stacks`` runs it alone.

Pages encoded (one per kind of name, in ``NAMES``): the AWS API reference of each create call,
which states the conflict error (or the create-or-update behaviour) and so the scope.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from components.offline.engine import ROOT, Graph, Resource, listed, run, stack_config_values

Scope = Literal["partition", "account", "region"]
KeyFn = Callable[[Mapping[str, Any]], tuple[str, ...] | None]


@dataclass(frozen=True)
class Uniqueness:
    """How AWS keeps one kind of name unique.

    Attributes:
        what: The namespace, as a person says it ("SES identity"); types sharing a namespace
            (SES v1 and v2 identities) collide with each other.
        scope: ``partition`` (S3 buckets), ``account`` (IAM, budgets) or ``region``.
        key: The name parts inside the scope, from the resource's inputs; ``None`` when the
            resource is auto-named by the provider (then it cannot collide).
        page: The AWS page that states the uniqueness.
    """

    what: str
    scope: Scope
    key: KeyFn
    page: str


def _field(*names: str, lower: bool = False) -> KeyFn:
    def key(inputs: Mapping[str, Any]) -> tuple[str, ...] | None:
        for name in names:
            value = inputs.get(name)
            if isinstance(value, str) and value:
                return (value.lower() if lower else value,)
        return None

    return key


def _within(container: str, default: str, *names: str) -> KeyFn:
    """A name unique inside a container (a schedule group, an event bus, a rule set)."""
    inner = _field(*names)

    def key(inputs: Mapping[str, Any]) -> tuple[str, ...] | None:
        name = inner(inputs)
        if name is None:
            return None
        group = inputs.get(container)
        return (group if isinstance(group, str) and group else default, *name)

    return key


def _singleton(inputs: Mapping[str, Any]) -> tuple[str, ...]:
    return ()  # one per region, whatever it points at


_API = "https://docs.aws.amazon.com"
_SES_IDENTITY = Uniqueness(
    "SES identity",
    "region",
    _field("emailIdentity", "domain", "email", lower=True),
    f"{_API}/ses/latest/APIReference-V2/API_CreateEmailIdentity.html (AlreadyExistsException)",
)
_BUCKET = Uniqueness(
    "S3 bucket",
    "partition",
    _field("bucket"),
    f"{_API}/AmazonS3/latest/userguide/bucketnamingrules.html (unique across all accounts)",
)
_ALARM = Uniqueness(
    "CloudWatch alarm",
    "region",
    _field("name", "alarmName"),
    f"{_API}/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html (create or update)",
)
_IAM = f"{_API}/IAM/latest/UserGuide/reference_identifiers.html (unique within the account)"
_SES_CONFIGURATION_SET = Uniqueness(
    "SES configuration set",
    "region",
    _field("configurationSetName", "name"),
    f"{_API}/ses/latest/APIReference-V2/API_CreateConfigurationSet.html (AlreadyExists)",
)


def _region_named(what: str, page: str) -> Uniqueness:
    """A kind whose ``name`` is unique per account and region (the page says how)."""
    return Uniqueness(what, "region", _field("name"), f"{_API}/{page}")


NAMES: dict[str, Uniqueness] = {
    "aws:sesv2/emailIdentity:EmailIdentity": _SES_IDENTITY,
    "aws:ses/domainIdentity:DomainIdentity": _SES_IDENTITY,
    "aws:ses/emailIdentity:EmailIdentity": _SES_IDENTITY,
    "aws:ses/activeReceiptRuleSet:ActiveReceiptRuleSet": Uniqueness(
        "active receipt rule set",
        "region",
        _singleton,
        f"{_API}/ses/latest/APIReference/API_SetActiveReceiptRuleSet.html (one active set)",
    ),
    "aws:ses/receiptRuleSet:ReceiptRuleSet": Uniqueness(
        "receipt rule set",
        "region",
        _field("ruleSetName"),
        f"{_API}/ses/latest/APIReference/API_CreateReceiptRuleSet.html (AlreadyExists)",
    ),
    "aws:ses/receiptRule:ReceiptRule": Uniqueness(
        "receipt rule",
        "region",
        _within("ruleSetName", "", "name"),
        f"{_API}/ses/latest/APIReference/API_CreateReceiptRule.html (AlreadyExists)",
    ),
    "aws:sesv2/configurationSet:ConfigurationSet": _SES_CONFIGURATION_SET,
    "aws:s3/bucket:Bucket": _BUCKET,
    "aws:s3/bucketV2:BucketV2": _BUCKET,
    "aws:iam/role:Role": Uniqueness("IAM role", "account", _field("name", lower=True), _IAM),
    "aws:iam/policy:Policy": Uniqueness(
        "IAM managed policy", "account", _field("name", lower=True), _IAM
    ),
    "aws:iam/rolePolicy:RolePolicy": Uniqueness(
        "IAM inline role policy", "account", _within("role", "", "name"), _IAM
    ),
    "aws:iam/user:User": Uniqueness("IAM user", "account", _field("name", lower=True), _IAM),
    "aws:iam/instanceProfile:InstanceProfile": Uniqueness(
        "IAM instance profile", "account", _field("name", lower=True), _IAM
    ),
    "aws:lambda/function:Function": Uniqueness(
        "Lambda function",
        "region",
        _field("name"),
        f"{_API}/lambda/latest/api/API_CreateFunction.html (ResourceConflictException)",
    ),
    "aws:lambda/layerVersion:LayerVersion": Uniqueness(
        "Lambda layer",
        "region",
        _field("layerName"),
        f"{_API}/lambda/latest/api/API_PublishLayerVersion.html (versions of one layer)",
    ),
    "aws:cloudwatch/logGroup:LogGroup": Uniqueness(
        "log group",
        "region",
        _field("name"),
        f"{_API}/AmazonCloudWatchLogs/latest/APIReference/API_CreateLogGroup.html "
        "(ResourceAlreadyExistsException)",
    ),
    "aws:sqs/queue:Queue": Uniqueness(
        "SQS queue",
        "region",
        _field("name"),
        f"{_API}/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html "
        "(QueueNameExists, or the existing queue returned)",
    ),
    "aws:dynamodb/table:Table": Uniqueness(
        "DynamoDB table",
        "region",
        _field("name"),
        f"{_API}/amazondynamodb/latest/APIReference/API_CreateTable.html (ResourceInUseException)",
    ),
    "aws:secretsmanager/secret:Secret": Uniqueness(
        "secret",
        "region",
        _field("name"),
        f"{_API}/secretsmanager/latest/apireference/API_CreateSecret.html "
        "(ResourceExistsException)",
    ),
    "aws:sns/topic:Topic": Uniqueness(
        "SNS topic",
        "region",
        _field("name"),
        f"{_API}/sns/latest/api/API_CreateTopic.html (idempotent: the existing topic returned)",
    ),
    "aws:scheduler/scheduleGroup:ScheduleGroup": Uniqueness(
        "schedule group",
        "region",
        _field("name"),
        f"{_API}/scheduler/latest/APIReference/API_CreateScheduleGroup.html (ConflictException)",
    ),
    "aws:scheduler/schedule:Schedule": Uniqueness(
        "schedule",
        "region",
        _within("groupName", "default", "name"),
        f"{_API}/scheduler/latest/APIReference/API_CreateSchedule.html "
        "(ConflictException; names unique within a group)",
    ),
    "aws:budgets/budget:Budget": Uniqueness(
        "budget",
        "account",
        _field("name"),
        f"{_API}/aws-cost-management/latest/APIReference/API_budgets_CreateBudget.html "
        "(DuplicateRecordException)",
    ),
    "aws:cloudwatch/eventBus:EventBus": Uniqueness(
        "event bus",
        "region",
        _field("name"),
        f"{_API}/eventbridge/latest/APIReference/API_CreateEventBus.html "
        "(ResourceAlreadyExistsException)",
    ),
    "aws:cloudwatch/eventRule:EventRule": Uniqueness(
        "EventBridge rule",
        "region",
        _within("eventBusName", "default", "name"),
        f"{_API}/eventbridge/latest/APIReference/API_PutRule.html "
        "(create or update: names unique per bus)",
    ),
    "aws:kms/alias:Alias": Uniqueness(
        "KMS alias",
        "region",
        _field("name"),
        f"{_API}/kms/latest/APIReference/API_CreateAlias.html (AlreadyExistsException)",
    ),
    "aws:cloudwatch/metricAlarm:MetricAlarm": _ALARM,
    "aws:cloudwatch/compositeAlarm:CompositeAlarm": _ALARM,
    "aws:cloudwatch/dashboard:Dashboard": Uniqueness(
        "CloudWatch dashboard",
        "account",
        _field("dashboardName"),
        f"{_API}/AmazonCloudWatch/latest/APIReference/API_PutDashboard.html "
        "(create or replace; the ARN has no region)",
    ),
    "aws:cloudwatch/eventArchive:EventArchive": _region_named(
        "EventBridge archive", "eventbridge/latest/APIReference/API_CreateArchive.html"
    ),
    "aws:cloudwatch/eventConnection:EventConnection": _region_named(
        "EventBridge connection", "eventbridge/latest/APIReference/API_CreateConnection.html"
    ),
    "aws:cloudwatch/eventApiDestination:EventApiDestination": _region_named(
        "EventBridge API destination",
        "eventbridge/latest/APIReference/API_CreateApiDestination.html",
    ),
    "aws:pipes/pipe:Pipe": _region_named(
        "EventBridge pipe", "eventbridge/latest/pipes-reference/API_CreatePipe.html"
    ),
    "aws:cloudwatch/metricStream:MetricStream": _region_named(
        "CloudWatch metric stream", "AmazonCloudWatch/latest/APIReference/API_PutMetricStream.html"
    ),
    "aws:cloudwatch/logResourcePolicy:LogResourcePolicy": Uniqueness(
        "log resource policy",
        "region",
        _field("policyName"),
        f"{_API}/AmazonCloudWatchLogs/latest/APIReference/API_PutResourcePolicy.html",
    ),
    "aws:ses/receiptFilter:ReceiptFilter": _region_named(
        "receipt filter", "ses/latest/APIReference/API_CreateReceiptFilter.html"
    ),
    "aws:ses/configurationSet:ConfigurationSet": _SES_CONFIGURATION_SET,
    "aws:pinpoint/smsvoicev2ConfigurationSet:Smsvoicev2ConfigurationSet": _region_named(
        "SMS configuration set",
        "goto/WebAPI/pinpoint-sms-voice-v2-2022-03-31/CreateConfigurationSet",
    ),
    "aws:pinpoint/smsvoicev2OptOutList:Smsvoicev2OptOutList": _region_named(
        "SMS opt-out list", "goto/WebAPI/pinpoint-sms-voice-v2-2022-03-31/CreateOptOutList"
    ),
    "aws:ssm/parameter:Parameter": Uniqueness(
        "SSM parameter",
        "region",
        _field("name"),
        f"{_API}/systems-manager/latest/APIReference/API_PutParameter.html "
        "(ParameterAlreadyExists)",
    ),
}

# Types whose only name lives inside a resource checked above (one per bucket, queue, topic,
# function or rule), or that AWS names itself: they cannot collide unless their parent does.
ATTACHED: frozenset[str] = frozenset(
    {
        "pulumi:providers:aws",
        "aws:s3/bucketPolicy:BucketPolicy",
        "aws:s3/bucketNotification:BucketNotification",
        "aws:s3/bucketOwnershipControls:BucketOwnershipControls",
        "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock",
        "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        "aws:s3/bucketVersioning:BucketVersioning",
        "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
        "aws:s3/bucketObject:BucketObject",
        "aws:s3/bucketObjectv2:BucketObjectv2",
        "aws:sqs/queuePolicy:QueuePolicy",
        "aws:sqs/redrivePolicy:RedrivePolicy",
        "aws:sns/topicPolicy:TopicPolicy",
        "aws:sns/topicSubscription:TopicSubscription",
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        "aws:lambda/permission:Permission",
        "aws:lambda/functionUrl:FunctionUrl",
        "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig",
        "aws:lambda/eventSourceMapping:EventSourceMapping",
        "aws:lambda/alias:Alias",
        "aws:cloudwatch/eventTarget:EventTarget",
        "aws:cloudwatch/logSubscriptionFilter:LogSubscriptionFilter",
        "aws:cloudwatch/logMetricFilter:LogMetricFilter",
        "aws:kms/key:Key",
        "aws:kms/keyPolicy:KeyPolicy",
        "aws:sesv2/emailIdentityMailFromAttributes:EmailIdentityMailFromAttributes",
        "aws:sesv2/configurationSetEventDestination:ConfigurationSetEventDestination",
        "aws:ses/identityPolicy:IdentityPolicy",
        "aws:sesv2/emailIdentityPolicy:EmailIdentityPolicy",
        "aws:sesv2/emailIdentityFeedbackAttributes:EmailIdentityFeedbackAttributes",
        "aws:ses/eventDestination:EventDestination",
        "aws:cloudwatch/eventBusPolicy:EventBusPolicy",
        "aws:sqs/redriveAllowPolicy:RedriveAllowPolicy",
        "aws:sns/dataProtectionPolicy:DataProtectionPolicy",
        "aws:lambda/provisionedConcurrencyConfig:ProvisionedConcurrencyConfig",
        "aws:lambda/functionRecursionConfig:FunctionRecursionConfig",
        "aws:lambda/layerVersionPermission:LayerVersionPermission",
        "aws:cloudwatch/logDataProtectionPolicy:LogDataProtectionPolicy",
        "aws:s3/bucketCorsConfiguration:BucketCorsConfiguration",
        "aws:s3/bucketLogging:BucketLogging",
        "aws:s3/bucketAcl:BucketAcl",
        "aws:s3/bucketLifecycleConfigurationV2:BucketLifecycleConfigurationV2",
        "aws:s3/bucketVersioningV2:BucketVersioningV2",
        "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2",
        "aws:secretsmanager/secretVersion:SecretVersion",
        "aws:secretsmanager/secretPolicy:SecretPolicy",
        "aws:secretsmanager/secretRotation:SecretRotation",
        "aws:dynamodb/tableItem:TableItem",
        "aws:dynamodb/contributorInsights:ContributorInsights",
        "aws:dynamodb/resourcePolicy:ResourcePolicy",
        "aws:pinpoint/smsvoicev2PhoneNumber:Smsvoicev2PhoneNumber",
    }
)

_IDENTITY_TYPES = frozenset(token for token, rule in NAMES.items() if rule is _SES_IDENTITY)


@dataclass(frozen=True)
class Claim:
    """One resource's claim on a scoped name."""

    stack: str
    type: str
    logical_name: str
    scoped_name: tuple[str, ...]  # (namespace, scope value, name parts...)

    @property
    def where(self) -> str:
        return f"{self.stack}:{self.logical_name}"


@dataclass(frozen=True)
class Collision:
    """Two or more claims on one scoped name."""

    what: str
    scoped_name: tuple[str, ...]
    claims: tuple[Claim, ...]
    page: str

    def describe(self) -> str:
        scope, *name = self.scoped_name[1:]
        owners = ", ".join(c.where for c in self.claims)
        named = f"{self.what} {'/'.join(name)}" if name else self.what
        return f"{named} ({scope}) declared by {owners}  [{self.page}]"


@dataclass
class Verdict:
    """What the two-stack check found."""

    stacks: tuple[str, ...]
    names_checked: int = 0
    kinds_checked: set[str] = field(default_factory=set)
    collisions: list[Collision] = field(default_factory=list)
    unclassified: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    references: int = 0

    @property
    def ok(self) -> bool:
        return not (self.collisions or self.unclassified or self.problems)

    def lines(self) -> list[str]:
        """The verdict line, then one line per finding."""
        together = " + ".join(self.stacks)
        if self.ok:
            return [
                f"two-stack check: passed ({together} in one account: {self.names_checked} "
                f"names of {len(self.kinds_checked)} kinds, no collision; "
                f"{self.references} SES identities in use, each declared by one stack)"
            ]
        found = len(self.collisions) + len(self.unclassified) + len(self.problems)
        out = [f"two-stack check: FAILED ({together}: {found} problem(s))"]
        out += [f"  collision: {c.describe()}" for c in self.collisions]
        out += [
            f"  unclassified type {t}: add it to NAMES or ATTACHED in "
            "components/offline/two_stacks.py"
            for t in self.unclassified
        ]
        out += [f"  {p}" for p in self.problems]
        return out


def _regions(graph: Graph) -> tuple[dict[str, str], str]:
    providers = {
        r.urn: str(r.inputs.get("region") or "") for r in graph.of_type("pulumi:providers:aws")
    }
    default = stack_config_values(graph.stack).get("aws:region", "us-east-1")
    return providers, default


def region_of(graph: Graph, resource: Resource) -> str:
    """The region of the explicit provider the resource (or its nearest ancestor) was given."""
    providers, default = _regions(graph)
    return _region(graph, resource, providers, default)


def _region(graph: Graph, resource: Resource, providers: Mapping[str, str], default: str) -> str:
    seen: Resource | None = resource
    while seen is not None:
        if seen.provider:
            for urn, region in providers.items():
                if seen.provider.startswith(urn + "::") or seen.provider == urn:
                    return region
        if not seen.parent:
            break
        try:
            seen = graph.by_urn(seen.parent)
        except KeyError:
            break
    return default


def claims(graph: Graph) -> tuple[list[Claim], list[str]]:
    """Every scoped name the stack's resources claim, and the types nobody classified."""
    providers, default = _regions(graph)
    found: list[Claim] = []
    unclassified: set[str] = set()
    for r in graph.resources:
        if not r.custom or r.type in ATTACHED:
            continue
        rule = NAMES.get(r.type)
        if rule is None:
            unclassified.add(r.type)
            continue
        name = rule.key(r.inputs)
        if name is None:
            continue
        scope = {
            "partition": "aws",
            "account": "account",
            "region": _region(graph, r, providers, default),
        }[rule.scope]
        found.append(Claim(graph.stack, r.type, r.name, (rule.what, scope, *name)))
    return found, sorted(unclassified)




def _needed_identities(graph: Graph) -> set[tuple[str, str, str]]:
    """(region, identity, why) for every identity the stack sends from or receives for."""
    needed: set[tuple[str, str, str]] = set()
    for policy in graph.of_type("aws:iam/rolePolicy:RolePolicy"):
        for st in policy.policy_statements():
            if st.get("Effect") != "Allow":
                continue
            actions = [str(a) for a in listed(st.get("Action"))]
            if not any(a.startswith("ses:Send") for a in actions):
                continue
            for arn in listed(st.get("Resource")):
                parts = str(arn).split(":", 5)
                if len(parts) == 6 and parts[5].startswith("identity/"):
                    identity = parts[5].removeprefix("identity/").lower()
                    needed.add((parts[3], identity, f"sent from by {policy.inputs.get('role')}"))
    providers, default = _regions(graph)
    for rule in graph.of_type("aws:ses/receiptRule:ReceiptRule"):
        region = _region(graph, rule, providers, default)
        for recipient in rule.inputs.get("recipients") or []:
            domain = str(recipient).rpartition("@")[2].lower()
            needed.add((region, domain, f"received for by receipt rule {rule.inputs.get('name')}"))
    return needed


def check(graphs: Sequence[Graph]) -> Verdict:
    """Judge the graphs as one account holds them."""
    verdict = Verdict(stacks=tuple(g.stack for g in graphs))
    by_name: dict[tuple[str, ...], list[Claim]] = defaultdict(list)
    unclassified: set[str] = set()
    for graph in graphs:
        found, unknown = claims(graph)
        unclassified.update(unknown)
        for claim in found:
            by_name[claim.scoped_name].append(claim)
    pages = {rule.what: rule.page for rule in NAMES.values()}
    verdict.names_checked = len(by_name)
    verdict.kinds_checked = {name[0] for name in by_name}
    for scoped_name, owners in sorted(by_name.items()):
        if len(owners) > 1:
            verdict.collisions.append(
                Collision(scoped_name[0], scoped_name, tuple(owners), pages[scoped_name[0]])
            )
    verdict.unclassified = sorted(unclassified)

    declared = {
        (name[1], name[2]) for name, owners in by_name.items() if owners[0].type in _IDENTITY_TYPES
    }
    referenced: set[tuple[str, str, str]] = set()
    for graph in graphs:
        orphans: dict[tuple[str, str], list[str]] = defaultdict(list)
        for region, identity, why in sorted(_needed_identities(graph)):
            domain = identity.rpartition("@")[2]
            if (region, identity) in declared or (region, domain) in declared:
                referenced.add((graph.stack, region, identity))
            else:
                orphans[(region, identity)].append(why)
        for (region, identity), whys in sorted(orphans.items()):
            verdict.problems.append(
                f"missing owner: SES identity {identity} in {region} is {'; '.join(whys)} in "
                f"{graph.stack}, and no stack declares it (set mailIdentityOwner: true in one "
                "stack)  [https://docs.aws.amazon.com/ses/latest/dg/creating-identities.html]"
            )
    verdict.references = len({(region, identity) for _, region, identity in referenced})
    verdict.problems.extend(_inactive_lanes(by_name))
    verdict.problems.extend(_crosstalk(graphs))
    return verdict


def _crosstalk(graphs: Sequence[Graph]) -> list[str]:
    """Rules of different stacks on one bus whose source filters overlap."""
    rules: list[tuple[str, str, str, str, frozenset[str] | None]] = []
    for graph in graphs:
        providers, default = _regions(graph)
        for rule in graph.of_type("aws:cloudwatch/eventRule:EventRule"):
            pattern = rule.inputs.get("eventPattern")
            if not isinstance(pattern, str):
                continue  # a scheduled rule: no pattern, no events from others
            sources = json.loads(pattern).get("source")
            bus = str(rule.inputs.get("eventBusName") or "default")
            region = _region(graph, rule, providers, default)
            matched = frozenset(str(x) for x in sources) if isinstance(sources, list) else None
            rules.append((graph.stack, region, bus, str(rule.inputs.get("name")), matched))
    found: list[str] = []
    for i, (stack, region, bus, name, sources) in enumerate(rules):
        for other, o_region, o_bus, o_name, o_sources in rules[i + 1 :]:
            if other == stack or (region, bus) != (o_region, o_bus):
                continue
            if sources is None or o_sources is None or sources & o_sources:
                shared = (
                    "any source"
                    if sources is None or o_sources is None
                    else ", ".join(sorted(sources & o_sources))
                )
                found.append(
                    f"cross-stack delivery: rules {stack}:{name} and {other}:{o_name} on bus "
                    f"{bus} ({region}) both match {shared}, so each stack receives the other's "
                    "events  [https://docs.aws.amazon.com/eventbridge/latest/userguide/"
                    "eb-event-patterns.html]"
                )
    return found


def _inactive_lanes(by_name: Mapping[tuple[str, ...], list[Claim]]) -> list[str]:
    """Regions where stacks declare receipt rule sets but none is active."""
    with_sets = {name[1] for name, owners in by_name.items() if name[0] == "receipt rule set"}
    active = {name[1] for name in by_name if name[0] == "active receipt rule set"}
    return [
        f"no active rule set: receipt rule sets are declared in {region} but no stack activates "
        "one, so no mail is received (set systems.ler.activateInboundRuleSet: true in one stack)"
        for region in sorted(with_sets - active)
    ]


def stack_names() -> list[str]:
    """Every stack with a ``Pulumi.<stack>.yaml`` in the project, in name order."""
    return sorted(p.name.split(".")[1] for p in ROOT.glob("Pulumi.*.yaml"))


def check_project(built: Mapping[str, Graph] | None = None) -> Verdict:
    """Build every stack of the project (reusing graphs already ``built``) and check them."""
    graphs = [(built or {}).get(stack) or run(stack) for stack in stack_names()]
    return check(graphs)


def main() -> int:
    verdict = check_project()
    print("\n".join(verdict.lines()))
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main())
