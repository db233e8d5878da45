"""ScopedLambda: one function, its own role, one inline policy built from grants.

The function's permissions are exactly its grants plus what its declared triggers need (each
trigger contributes the actions AWS documents for its event source mapping, scoped to its own
queue or stream: ``WorkQueue.grant_event_source``, ``GuardedTable.grant_stream_source``). There are no managed policies
and no shared roles. The log group is created here with 7-day retention, and the logs grant
names that group only. Triggers, the Function URL and the on-failure destination are typed
options, so a reader sees every way into the function in one place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pulumi
import pulumi_aws as aws

from components.archive import build_function_archive
from components.deployment import Deployment
from components.grants import Grant, policy_document
from components.guarded_table import GuardedTable
from components.monitoring import AlarmSpec, declare_alarm, function_errors
from components.personal_data import Holding, component_inputs, tags
from components.private_bucket import PrivateBucket
from components.work_queue import WorkQueue, WorkQueueArgs, consumer_visibility

RUNTIME = "python3.14"
ARCHITECTURE = "arm64"
URL_REGISTERED_IN = "crm:url-registered-in"
"""The function tag saying where its Function URL is set up outside AWS (``FunctionUrl``)."""
LOG_RETENTION_DAYS = 7
DEFAULT_ASYNC_RETRIES = 2
"""Lambda's own default for asynchronous invocations (the most it allows)."""
XRAY_ACTIONS = ("xray:PutTelemetryRecords", "xray:PutTraceSegments")
"""What active tracing needs of the function's role. Neither action has a resource type in the
Service Authorization Reference ("Actions defined by AWS X-Ray",
https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsx-ray.html), so
they can only be granted on ``Resource: "*"``; see :data:`components.grants.RESOURCELESS_WRITE_ACTIONS`.
AWS Lambda Developer Guide, "Visualize Lambda function invocations using AWS X-Ray":
https://docs.aws.amazon.com/lambda/latest/dg/services-xray.html"""


@dataclass(frozen=True)
class FunctionUrl:
    """A Function URL.

    Attributes:
        auth: ``AWS_IAM`` (callers sign with SigV4) or ``NONE`` (public).
        public_reason: Required with ``NONE``: how the function proves authenticity itself
            (a signature, a signed token). Declaring it is what makes the surface public.
        cors_origins: Allowed browser origins; empty for no CORS.
        cors_methods: Allowed methods for CORS (default ``POST``); only with ``cors_origins``.
        registered_in: Where the address is set up outside AWS (a webhook subscription, a page
            snippet), which must be updated when it moves; empty when only this program's own
            mails and SMS carry it (``make plan BASE=...`` finds those in the graph). Tagged
            on the function as :data:`URL_REGISTERED_IN`.
    """

    auth: Literal["NONE", "AWS_IAM"]
    public_reason: str = ""
    cors_origins: tuple[str, ...] = ()
    cors_methods: tuple[str, ...] = ()
    registered_in: str = ""

    def __post_init__(self) -> None:
        if self.auth == "NONE" and not self.public_reason.strip():
            raise ValueError("a public Function URL (auth NONE) must declare public_reason")
        if self.auth == "AWS_IAM" and self.public_reason:
            raise ValueError("public_reason is only for auth NONE")
        if self.cors_methods and not self.cors_origins:
            raise ValueError("cors_methods without cors_origins would be ignored (no CORS)")


@dataclass(frozen=True)
class QueueTrigger:
    """An SQS event source; partial batch failures are always reported.

    Attributes:
        queue: The queue consumed.
        batch_size: Messages per invocation.
        filter_patterns: Event source filter criteria (JSON patterns on the message).
        max_batching_window_s: Wait to fill a batch.
        maximum_concurrency: Cap on concurrent invocations from this source (2..1000).
    """

    queue: WorkQueue
    batch_size: int = 10
    filter_patterns: tuple[Mapping[str, Any], ...] = ()
    max_batching_window_s: int = 0
    maximum_concurrency: int | None = None


@dataclass(frozen=True)
class StreamTrigger:
    """A DynamoDB-stream event source with bounded retries and an on-failure destination.

    Attributes:
        table: The table whose stream is read.
        on_failure: Queue receiving records that still fail after ``max_retries``.
        batch_size: Records per invocation.
        max_retries: Retries before the record goes to ``on_failure``.
        starting_position: ``TRIM_HORIZON`` (nothing missed) or ``LATEST``.
        filter_patterns: Event source filter criteria.
    """

    table: GuardedTable
    on_failure: WorkQueue
    batch_size: int = 25
    max_retries: int = 3
    starting_position: Literal["TRIM_HORIZON", "LATEST"] = "TRIM_HORIZON"
    filter_patterns: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class EventRuleTrigger:
    """An EventBridge rule on a bus, targeting this function.

    Attributes:
        name: The rule's seed name (physical ``<prefix>-<name>``).
        event_pattern: The rule's event pattern.
        dead_letter: Queue for events the target could not receive; its policy must list
            this rule as a service sender (see :class:`components.work_queue.ServiceSender`).
        max_retries: EventBridge delivery retries before the DLQ.
        bus: Event bus name.
    """

    name: str
    event_pattern: Mapping[str, Any]
    dead_letter: WorkQueue | None = None
    max_retries: int = 2
    bus: str = "default"


@dataclass(frozen=True)
class BucketTrigger:
    """S3 object-created notifications for some prefixes of one bucket.

    A bucket has one notification configuration, so one bucket feeds one function.
    """

    bucket: PrivateBucket
    prefixes: tuple[str, ...]
    events: tuple[str, ...] = ("s3:ObjectCreated:*",)

    def __post_init__(self) -> None:
        if not self.prefixes or any(not p or not p.endswith("/") for p in self.prefixes):
            raise ValueError("bucket triggers name non-empty prefixes ending in '/'")


@dataclass(frozen=True)
class FunctionCode:
    """What the function runs.

    Attributes:
        handler: Dotted handler, ``handlers.<system package>.functions.<function>.handler``.
        vendored: Pure-Python distributions bundled into the archive beyond the runtime and
            the Powertools layer (e.g. ``phonenumbers``).
    """

    handler: str
    vendored: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        parts = self.handler.split(".")
        if len(parts) != 5 or parts[0] != "handlers" or parts[2] != "functions":
            raise ValueError(
                f"handler {self.handler!r} must be handlers.<system package>.functions."
                "<function>.handler"
            )


@dataclass(frozen=True)
class ScopedLambdaArgs:
    """Arguments of :class:`ScopedLambda`.

    Attributes:
        deployment: Where the function lives.
        name: The document's function name (``dm-block``); physical ``<prefix>-<name>``.
        description: What the function does, shown in the console.
        code: Handler and vendored packages.
        memory_mb: Memory, from the document.
        timeout_s: Timeout, from the document.
        grants: Every permission the handler's own code uses.
        environment: Plain configuration (names, ids, ARNs, another function's URL). Never
            secret values.
        url: Optional Function URL.
        queue_triggers: SQS event sources.
        stream_triggers: DynamoDB-stream event sources.
        event_rules: EventBridge rules targeting the function.
        bucket_trigger: S3 notifications from one bucket.
        on_failure: Destination queue for failed asynchronous invocations (S3, EventBridge,
            Scheduler invoke asynchronously); the role gets SendMessage on it.
        invoked_async: Something not declared here invokes the function asynchronously (a
            schedule, another function). With an EventBridge rule or an S3 trigger it is
            implied, and saying it again is refused. An asynchronously invoked function
            without ``on_failure`` gets a failure queue of its own, ``<name>-failures``.
        async_max_retries: Retries of asynchronous invocations before ``on_failure`` (0..2;
            default 2).
        reserved_concurrency: Optional cap on concurrent executions; a function behind a
            public (auth NONE) URL gets the stack's ``publicConcurrency`` unless given one.
        logs: What its log lines hold about people (components/personal_data.py).
        failed_events: What a failed asynchronous event holds about people: required when
            the function gets a failure queue of its own.

    An argument that would do nothing is refused rather than ignored: ``async_max_retries`` or
    ``on_failure`` on a function nothing invokes asynchronously, ``invoked_async`` where a
    declared trigger already implies it.
    """

    deployment: Deployment
    name: str
    description: str
    code: FunctionCode
    memory_mb: int
    timeout_s: int
    grants: Sequence[Grant] = field(default_factory=tuple)
    environment: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)
    url: FunctionUrl | None = None
    queue_triggers: Sequence[QueueTrigger] = field(default_factory=tuple)
    stream_triggers: Sequence[StreamTrigger] = field(default_factory=tuple)
    event_rules: Sequence[EventRuleTrigger] = field(default_factory=tuple)
    bucket_trigger: BucketTrigger | None = None
    on_failure: WorkQueue | None = None
    async_max_retries: int | None = None
    reserved_concurrency: int | None = None
    invoked_async: bool = False
    logs: Holding = field(kw_only=True)
    failed_events: Holding | None = field(default=None, kw_only=True)

    @property
    def is_async(self) -> bool:
        """Whether something invokes this function asynchronously."""
        return self.invoked_async or bool(self.event_rules) or self.bucket_trigger is not None

    def __post_init__(self) -> None:
        implied = bool(self.event_rules) or self.bucket_trigger is not None
        if self.invoked_async and implied:
            raise ValueError(
                f"{self.name}: invoked_async is implied by its event rule or bucket trigger"
            )
        if not self.is_async:
            for given, what in (
                (self.async_max_retries is not None, "async_max_retries"),
                (self.on_failure is not None, "on_failure"),
            ):
                if given:
                    raise ValueError(
                        f"{self.name}: {what} applies to asynchronous invocations, and nothing "
                        "invokes this function asynchronously (declare invoked_async, an event "
                        "rule, a bucket trigger or a schedule)"
                    )
        if self.async_max_retries is not None and not 0 <= self.async_max_retries <= 2:
            raise ValueError(f"{self.name}: async_max_retries must be 0..2")


class ScopedLambda(pulumi.ComponentResource):
    """A least-privilege Lambda function with its own role, log group and triggers."""

    function: aws.lambda_.Function
    role: aws.iam.Role
    function_url: pulumi.Output[str] | None

    def __init__(
        self, resource_name: str, args: ScopedLambdaArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(
            "crm:index:ScopedLambda", resource_name, component_inputs(args.logs), opts
        )
        d = args.deployment
        self.args = args
        self._base = resource_name
        self.physical_name = d.name(args.name)
        self.arn = d.arns.lambda_function(self.physical_name)
        self.role_name = d.name(f"{args.name}-role")
        self.role_arn = d.arns.role(self.role_name)
        self.log_group_name = f"/aws/lambda/{self.physical_name}"
        if not 128 <= args.memory_mb <= 10240 or not 1 <= args.timeout_s <= 900:
            raise ValueError(f"{args.name}: memory 128..10240 MB and timeout 1..900 s")
        self.on_failure: WorkQueue | None = args.on_failure
        if self.is_async and self.on_failure is None:
            # A failure after the async retries must land where an alarm watches it.
            if args.failed_events is None:
                raise ValueError(f"{args.name}: its failure queue needs failed_events declared")
            self.on_failure = WorkQueue(
                f"{resource_name}-failures",
                WorkQueueArgs(
                    d,
                    f"{args.name}-failures",
                    dead_letter=True,
                    personal_data=args.failed_events,
                ),
                pulumi.ResourceOptions(parent=self),
            )
        self.grants: tuple[Grant, ...] = self._all_grants()
        document = policy_document(self.grants, owner=args.name)
        self._check_environment()

        child = pulumi.ResourceOptions(parent=self)
        self.log_group = aws.cloudwatch.LogGroup(
            f"{resource_name}-logs",
            name=self.log_group_name,
            retention_in_days=LOG_RETENTION_DAYS,
            tags=d.resource_tags(**{"crm:function": args.name}, **tags(args.logs)),
            opts=child,
        )
        self.role = aws.iam.Role(
            f"{resource_name}-role",
            name=self.role_name,
            description=f"Execution role of {self.physical_name} only",
            permissions_boundary=d.permissions_boundary,
            assume_role_policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "lambda.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                            "Condition": {"StringEquals": {"aws:SourceAccount": d.account_id}},
                        }
                    ],
                },
                sort_keys=True,
            ),
            tags=d.resource_tags(**{"crm:function": args.name}),
            opts=child,
        )
        self.role_policy = aws.iam.RolePolicy(
            f"{resource_name}-policy",
            name=f"{self.physical_name}-grants",
            role=self.role_name,
            policy=document,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.role]),
        )
        archive = build_function_archive(args.name, args.code.handler, args.code.vendored)
        self.function = aws.lambda_.Function(
            resource_name,
            name=self.physical_name,
            description=args.description,
            role=self.role_arn,
            runtime=RUNTIME,
            architectures=[ARCHITECTURE],
            handler=args.code.handler,
            code=pulumi.FileArchive(str(archive)),
            memory_size=args.memory_mb,
            timeout=args.timeout_s,
            layers=[d.powertools_layer_arn],
            reserved_concurrent_executions=self._reserved_concurrency(),
            tracing_config=aws.lambda_.FunctionTracingConfigArgs(mode="Active")
            if d.monitoring.tracing
            else None,
            environment=aws.lambda_.FunctionEnvironmentArgs(variables=self._environment()),
            logging_config=aws.lambda_.FunctionLoggingConfigArgs(
                log_format="JSON", log_group=self.log_group_name
            ),
            tags=d.resource_tags(**{"crm:function": args.name}, **self._url_tags()),
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[self.log_group, self.role, self.role_policy]
            ),
        )
        self.function_url = self._url()
        self._queue_sources()
        self._stream_sources()
        self._event_rules()
        self._bucket_trigger()
        self._async_config()
        self.alarms = self._alarms()
        d.monitoring.registry.function(d.system, self.physical_name, d.region)
        outputs: dict[str, Any] = {
            "function_name": self.function.name,
            "function_arn": self.function.arn,
            "role_arn": self.role.arn,
        }
        if self.function_url is not None:
            outputs["function_url"] = self.function_url
        self.register_outputs(outputs)

    # Permissions --------------------------------------------------------------------------

    def _all_grants(self) -> tuple[Grant, ...]:
        d, args = self.args.deployment, self.args
        grants = [
            Grant(
                "WriteOwnLogs",
                ("logs:CreateLogStream", "logs:PutLogEvents"),
                (d.arns.log_streams(self.log_group_name),),
            ),
            *args.grants,
        ]
        grants += [
            t.queue.grant_event_source(sid=f"Trigger{t.queue._sid()}") for t in args.queue_triggers
        ]
        for t in args.stream_triggers:
            sid = "".join(p.capitalize() for p in t.table.args.name.split("-"))
            grants.extend(t.table.grant_stream_source(sid=f"Trigger{sid}Stream"))
            grants.append(t.on_failure.grant_send(sid=f"StreamFailure{t.on_failure._sid()}"))
        if self.on_failure is not None:
            grants.append(self.on_failure.grant_send(sid=f"AsyncFailure{self.on_failure._sid()}"))
        if d.monitoring.tracing:
            grants.append(Grant("WriteTraces", XRAY_ACTIONS, ("*",)))
        # Two triggers failing into one queue would repeat a statement; keep the first. The
        # condition is part of the identity: a statement limited to some keys must neither
        # hide nor be hidden by the same actions granted on the whole resource.
        unique: dict[tuple[tuple[str, ...], tuple[str, ...], str], Grant] = {}
        for g in grants:
            unique.setdefault((g.actions, g.resources, json.dumps(g.conditions, sort_keys=True)), g)
        return tuple(unique.values())

    def _check_environment(self) -> None:
        for key in self.args.environment:
            if key.startswith("AWS_") or key in {"LOG_LEVEL"}:
                raise ValueError(f"{self.args.name}: environment key {key} is reserved")

    def _reserved_concurrency(self) -> int | None:
        """A public URL's function is capped (policy ``public-surface-capped`` says why)."""
        if self.args.reserved_concurrency is not None:
            return self.args.reserved_concurrency
        if self.args.url is not None and self.args.url.auth == "NONE":
            return self.args.deployment.public_concurrency
        return None

    def _environment(self) -> dict[str, pulumi.Input[str]]:
        d = self.args.deployment
        return {
            "POWERTOOLS_SERVICE_NAME": self.args.name,
            "POWERTOOLS_LOG_LEVEL": "INFO",
            "CRM_STACK": d.prefix,
            "CRM_ENVIRONMENT": d.environment,
            "POWERTOOLS_METRICS_NAMESPACE": d.monitoring.namespace,
            # Off: no Tracer is built and nothing is imported for it. On: responses stay out of
            # traces (they can hold customer data); errors are recorded.
            "POWERTOOLS_TRACE_DISABLED": "false" if d.monitoring.tracing else "true",
            "POWERTOOLS_TRACER_CAPTURE_RESPONSE": "false",
            **({} if d.monitoring.business_metrics else {"POWERTOOLS_METRICS_DISABLED": "true"}),
            **dict(self.args.environment),
        }

    # Entry points -------------------------------------------------------------------------

    def _url_tags(self) -> dict[str, str]:
        url = self.args.url
        return {URL_REGISTERED_IN: url.registered_in} if url and url.registered_in else {}

    def _url(self) -> pulumi.Output[str] | None:
        url = self.args.url
        if url is None:
            return None
        child = pulumi.ResourceOptions(parent=self, depends_on=[self.function])
        cors = (
            aws.lambda_.FunctionUrlCorsArgs(
                allow_origins=list(url.cors_origins),
                allow_methods=list(url.cors_methods or ("POST",)),
                allow_headers=["content-type"],
                max_age=3600,
            )
            if url.cors_origins
            else None
        )
        function_url = aws.lambda_.FunctionUrl(
            f"{self._base}-url",
            function_name=self.physical_name,
            authorization_type=url.auth,
            cors=cors,
            opts=child,
        )
        if url.auth == "NONE":
            # Public by declaration: both permissions are conditioned on the URL itself, so
            # nothing but the Function URL can invoke the function anonymously.
            aws.lambda_.Permission(
                f"{self._base}-url-public",
                function=self.physical_name,
                action="lambda:InvokeFunctionUrl",
                principal="*",
                function_url_auth_type="NONE",
                statement_id="PublicFunctionUrl",
                opts=child,
            )
            aws.lambda_.Permission(
                f"{self._base}-url-invoke",
                function=self.physical_name,
                action="lambda:InvokeFunction",
                principal="*",
                invoked_via_function_url=True,
                statement_id="PublicFunctionUrlInvoke",
                opts=child,
            )
        return function_url.function_url

    def _queue_sources(self) -> None:
        for t in self.args.queue_triggers:
            needed = consumer_visibility(self.args.timeout_s)
            if t.queue.args.visibility_timeout_s < needed:
                raise ValueError(
                    f"{self.args.name}: queue {t.queue.args.name} visibility timeout "
                    f"{t.queue.args.visibility_timeout_s}s is below {needed}s, six times the "
                    "function timeout (declare it with consumer_visibility(timeout))"
                )
            aws.lambda_.EventSourceMapping(
                f"{self._base}-{t.queue.args.name}-source",
                event_source_arn=t.queue.arn,
                function_name=self.physical_name,
                # queueTriggers: paused (dev): no poller, so no billed empty receive, while idle.
                enabled=self.args.deployment.queue_triggers == "on",
                batch_size=t.batch_size,
                maximum_batching_window_in_seconds=t.max_batching_window_s or None,
                function_response_types=["ReportBatchItemFailures"],
                filter_criteria=_filters(t.filter_patterns),
                scaling_config=aws.lambda_.EventSourceMappingScalingConfigArgs(
                    maximum_concurrency=t.maximum_concurrency
                )
                if t.maximum_concurrency
                else None,
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=[self.function, self.role_policy, t.queue]
                ),
            )

    def _stream_sources(self) -> None:
        for t in self.args.stream_triggers:
            aws.lambda_.EventSourceMapping(
                f"{self._base}-{t.table.args.name}-stream",
                event_source_arn=t.table.stream_arn,
                function_name=self.physical_name,
                starting_position=t.starting_position,
                batch_size=t.batch_size,
                maximum_retry_attempts=t.max_retries,
                bisect_batch_on_function_error=True,
                function_response_types=["ReportBatchItemFailures"],
                filter_criteria=_filters(t.filter_patterns),
                destination_config=aws.lambda_.EventSourceMappingDestinationConfigArgs(
                    on_failure=aws.lambda_.EventSourceMappingDestinationConfigOnFailureArgs(
                        destination_arn=t.on_failure.arn
                    )
                ),
                # The stream ARN is unknown at preview for a new table: name the source in a
                # known string, for the policy pack (event-source-mapping-permissions).
                tags={
                    **self.args.deployment.resource_tags(**{"crm:function": self.args.name}),
                    # The table, not its ``.../stream/*`` pattern: ``*`` is no tag character.
                    "crm:event-source": self.args.deployment.arns.table(t.table.physical_name),
                },
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=[self.function, self.role_policy, t.table]
                ),
            )

    def _event_rules(self) -> None:
        d = self.args.deployment
        for t in self.args.event_rules:
            rule_name = d.name(t.name)
            rule = aws.cloudwatch.EventRule(
                f"{self._base}-{t.name}",
                name=rule_name,
                event_bus_name=t.bus,
                event_pattern=json.dumps(t.event_pattern, sort_keys=True),
                tags=d.resource_tags(**{"crm:function": self.args.name}),
                opts=pulumi.ResourceOptions(parent=self),
            )
            aws.cloudwatch.EventTarget(
                f"{self._base}-{t.name}-target",
                rule=rule_name,
                event_bus_name=t.bus,
                arn=self.arn,
                retry_policy=aws.cloudwatch.EventTargetRetryPolicyArgs(
                    maximum_retry_attempts=t.max_retries, maximum_event_age_in_seconds=3600
                ),
                dead_letter_config=aws.cloudwatch.EventTargetDeadLetterConfigArgs(
                    arn=t.dead_letter.arn
                )
                if t.dead_letter
                else None,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[rule, self.function]),
            )
            aws.lambda_.Permission(
                f"{self._base}-{t.name}-invoke",
                function=self.physical_name,
                action="lambda:InvokeFunction",
                principal="events.amazonaws.com",
                source_arn=d.arns.event_rule(rule_name, t.bus),
                source_account=d.account_id,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.function]),
            )

    def _bucket_trigger(self) -> None:
        t = self.args.bucket_trigger
        if t is None:
            return
        d = self.args.deployment
        permission = aws.lambda_.Permission(
            f"{self._base}-s3-invoke",
            function=self.physical_name,
            action="lambda:InvokeFunction",
            principal="s3.amazonaws.com",
            source_arn=t.bucket.arn,
            source_account=d.account_id,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.function]),
        )
        aws.s3.BucketNotification(
            f"{self._base}-s3-notification",
            bucket=t.bucket.physical_name,
            lambda_functions=[
                aws.s3.BucketNotificationLambdaFunctionArgs(
                    lambda_function_arn=self.arn,
                    events=list(t.events),
                    filter_prefix=prefix,
                )
                for prefix in t.prefixes
            ],
            opts=pulumi.ResourceOptions(parent=self, depends_on=[permission, t.bucket]),
        )

    @property
    def is_async(self) -> bool:
        """Whether something invokes this function asynchronously."""
        return self.args.is_async

    @property
    def failures_kept(self) -> bool:
        """Whether every way this function is invoked ends a final failure in a queue whose
        depth is alarmed: no Function URL (its caller gets the error, nothing keeps it), and
        each trigger is an SQS queue (its DLQ), a stream (its on-failure queue) or an async
        invoke (its on-failure destination)."""
        a = self.args
        # An async function always has an on-failure queue (see __init__), a queue trigger its
        # WorkQueue's DLQ, a stream trigger its on_failure queue: each one alarmed.
        return a.url is None and (bool(a.queue_triggers or a.stream_triggers) or self.is_async)

    def _alarms(self) -> list[aws.cloudwatch.MetricAlarm]:
        """Errors, unless every failure lands in an alarmed queue (components/monitoring.py)."""
        d = self.args.deployment
        tags = d.resource_tags(**{"crm:function": self.args.name})
        alarms = [
            declare_alarm(
                f"{self._base}-{spec.kind}-alarm",
                f"{self.physical_name}-{spec.kind}",
                spec,
                f"{spec.metric} of {self.physical_name}",
                d.monitoring,
                tags,
                self,
            )
            for spec in self._alarm_specs()
        ]
        return [alarm for alarm in alarms if alarm is not None]

    def _alarm_specs(self) -> tuple[AlarmSpec, ...]:
        specs: tuple[AlarmSpec, ...] = (
            () if self.failures_kept else (function_errors(self.physical_name),)
        )
        # A model caller's refusals are watched by its system's one degraded alarm
        # (Deployment.watch_degradations), not one alarm per function.
        return specs

    def _async_config(self) -> None:
        if self.on_failure is None:
            return
        aws.lambda_.FunctionEventInvokeConfig(
            f"{self._base}-async",
            function_name=self.physical_name,
            maximum_retry_attempts=(
                DEFAULT_ASYNC_RETRIES
                if self.args.async_max_retries is None
                else self.args.async_max_retries
            ),
            destination_config=aws.lambda_.FunctionEventInvokeConfigDestinationConfigArgs(
                on_failure=aws.lambda_.FunctionEventInvokeConfigDestinationConfigOnFailureArgs(
                    destination=self.on_failure.arn
                )
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.function, self.role_policy]),
        )


def _filters(
    patterns: Sequence[Mapping[str, Any]],
) -> aws.lambda_.EventSourceMappingFilterCriteriaArgs | None:
    if not patterns:
        return None
    return aws.lambda_.EventSourceMappingFilterCriteriaArgs(
        filters=[
            aws.lambda_.EventSourceMappingFilterCriteriaFilterArgs(
                pattern=json.dumps(p, sort_keys=True)
            )
            for p in patterns
        ]
    )
