"""ScheduledJob: an EventBridge Scheduler schedule invoking one function, in its system's group.

The schedule assumes a role of its own that may invoke exactly that one function, so a
schedule can never be pointed at anything else without a visible change to its role.

Every system declares one schedule group (``<prefix>-<system>``, :func:`schedule_group`) and
its schedules live there, never in ``default``. Scheduler assumes an execution role with
``aws:SourceAccount`` and ``aws:SourceArn`` = the ARN of the schedule's *group* in its request
context, so the trust policy (:func:`scheduler_trust_policy`) pins both to those values; a
trust scoped to one schedule's ARN or to a schedule-name prefix never matches and the schedule
silently never runs. Governing page: EventBridge Scheduler User Guide, "Confused deputy
prevention in EventBridge Scheduler",
https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html
("The value of aws:SourceArn must be your EventBridge Scheduler schedule group ARN ... Do not
scope the aws:SourceArn statement to a specific schedule or a schedule name prefix.")

Failures are never silent. An invocation Scheduler cannot deliver after its retries goes to the
schedule's own dead-letter queue; Scheduler sends it there with the schedule's execution role,
so that role (not the queue policy) holds ``sqs:SendMessage`` on that one queue (EventBridge
Scheduler User Guide, "Configuring a dead-letter queue for a schedule", "Set up execution role
permissions": https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html;
a standard queue, FIFO is not supported). Scheduler invokes Lambda asynchronously, so a failure
inside the function is caught by the function's on-failure destination instead: the target must
be declared ``invoked_async`` (ScopedLambda then gives it one). Where the schedule's window fits
CloudWatch's evaluation limits, a "did not run" alarm watches the target's invocations.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.deployment import Deployment
from components.monitoring import declare_alarm, not_run
from components.personal_data import SCHEDULE_EVENTS
from components.scoped_lambda import ScopedLambda
from components.work_queue import WorkQueue, WorkQueueArgs

SCHEDULER: str = "scheduler.amazonaws.com"


@dataclass(frozen=True)
class ScheduleGroupRef:
    """A system's schedule group.

    Attributes:
        name: Physical group name (``dev-dm``).
        arn: Its ARN, built from known values (the ``aws:SourceArn`` Scheduler sends).
        resource: The declared group (schedules depend on it).
    """

    name: str
    arn: str
    resource: aws.scheduler.ScheduleGroup


def schedule_group(
    resource_name: str, d: Deployment, seed: str, opts: pulumi.ResourceOptions | None = None
) -> ScheduleGroupRef:
    """Declare the schedule group ``<prefix>-<seed>`` (``seed`` is the system key, or e.g.
    ``rrs-requests`` for rrs's per-request schedules)."""
    name = d.name(seed)
    group = aws.scheduler.ScheduleGroup(
        resource_name,
        name=name,
        tags=d.resource_tags(**{"crm:schedule-group": seed}),
        opts=opts,
    )
    return ScheduleGroupRef(name=name, arn=d.arns.schedule_group(name), resource=group)


def scheduler_trust_policy(d: Deployment, group: ScheduleGroupRef) -> str:
    """The trust policy letting Scheduler assume a role for the schedules of ``group`` only."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": SCHEDULER},
                    "Action": "sts:AssumeRole",
                    "Condition": {
                        "StringEquals": {"aws:SourceAccount": d.account_id},
                        "ArnEquals": {"aws:SourceArn": group.arn},
                    },
                }
            ],
        },
        sort_keys=True,
    )


@dataclass(frozen=True)
class Schedule:
    """A schedule of one function, declared with it: ``FunctionFactory(..., schedules=...)``.

    The factory makes it a :class:`ScheduledJob` in the system's schedule group, targeting the
    function of that call (which is thereby invoked asynchronously).

    Attributes:
        name: The document's schedule name; physical ``<prefix>-<name>``. It may be the
            function's own name (``ler-retry``).
        expression: ``rate(...)``, ``cron(...)`` or ``at(...)``.
        description: What the job does.
        payload: JSON input given to the function.
        timezone: IANA zone the cron expression is read in.
    """

    name: str
    expression: str
    description: str = ""
    payload: str = "{}"
    timezone: str = "UTC"

    def resource_name(self, function: str) -> str:
        """The component's resource name: the schedule's, with ``-schedule`` when it is named
        after its function (the job's role would otherwise share the function role's name)."""
        return f"{self.name}-schedule" if self.name == function else self.name


@dataclass(frozen=True)
class ScheduledJobArgs:
    """Arguments of :class:`ScheduledJob`.

    Attributes:
        deployment: Where the schedule lives.
        name: The document's schedule name (``ler-retry``); physical ``<prefix>-<name>``.
        expression: ``rate(...)``, ``cron(...)`` or ``at(...)``.
        target: The function it invokes.
        group: The system's schedule group (from :func:`schedule_group`).
        timezone: IANA zone the cron expression is read in.
        payload: JSON input given to the function.
        description: What the job does.
        dead_letter: Queue for invocations Scheduler could not deliver; default a queue of the
            schedule's own, ``<name>-schedule-dlq``.
    """

    deployment: Deployment
    name: str
    expression: str
    target: ScopedLambda
    group: ScheduleGroupRef
    timezone: str = "UTC"
    payload: str = "{}"
    description: str = ""
    dead_letter: WorkQueue | None = None


class ScheduledJob(pulumi.ComponentResource):
    """One schedule, one invoke-only role, one target."""

    schedule: aws.scheduler.Schedule
    role: aws.iam.Role

    def __init__(
        self, resource_name: str, args: ScheduledJobArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("crm:index:ScheduledJob", resource_name, None, opts)
        d = args.deployment
        self.args = args
        self.physical_name = d.name(args.name)
        self.role_name = d.name(f"{args.name}-schedule-role")
        self.role_arn = d.arns.role(self.role_name)
        json.loads(args.payload)  # a malformed payload fails here, not at the first firing
        if not args.target.is_async or args.target.on_failure is None:
            raise ValueError(
                f"schedule {args.name}: target {args.target.args.name} must be declared "
                "invoked_async, so a failed run reaches its on-failure destination"
            )
        self.dead_letter = args.dead_letter or WorkQueue(
            f"{resource_name}-dlq",
            WorkQueueArgs(
                d, f"{args.name}-schedule-dlq", dead_letter=True, personal_data=SCHEDULE_EVENTS
            ),
            pulumi.ResourceOptions(parent=self),
        )

        self.role = aws.iam.Role(
            f"{resource_name}-role",
            name=self.role_name,
            description=f"Lets schedule {self.physical_name} invoke {args.target.physical_name}",
            permissions_boundary=d.permissions_boundary,
            assume_role_policy=scheduler_trust_policy(d, args.group),
            tags=d.resource_tags(**{"crm:schedule": args.name}),
            opts=pulumi.ResourceOptions(parent=self),
        )
        policy = aws.iam.RolePolicy(
            f"{resource_name}-policy",
            name=f"{self.physical_name}-invoke",
            role=self.role_name,
            policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Sid": "InvokeTargetOnly",
                            "Effect": "Allow",
                            "Action": ["lambda:InvokeFunction"],
                            "Resource": [args.target.arn],
                        },
                        {
                            "Sid": "SendUndeliveredToDlq",
                            "Effect": "Allow",
                            "Action": ["sqs:SendMessage"],
                            "Resource": [self.dead_letter.arn],
                        },
                    ],
                },
                sort_keys=True,
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.role]),
        )
        self.schedule = aws.scheduler.Schedule(
            resource_name,
            name=self.physical_name,
            group_name=args.group.name,
            description=args.description or None,
            schedule_expression=args.expression,
            schedule_expression_timezone=args.timezone,
            flexible_time_window=aws.scheduler.ScheduleFlexibleTimeWindowArgs(mode="OFF"),
            target=aws.scheduler.ScheduleTargetArgs(
                arn=args.target.arn,
                role_arn=self.role_arn,
                input=args.payload,
                retry_policy=aws.scheduler.ScheduleTargetRetryPolicyArgs(
                    maximum_retry_attempts=2, maximum_event_age_in_seconds=3600
                ),
                dead_letter_config=aws.scheduler.ScheduleTargetDeadLetterConfigArgs(
                    arn=self.dead_letter.arn
                ),
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[policy, args.target, args.group.resource, self.dead_letter],
            ),
        )
        spec = not_run(args.target.physical_name, args.expression)
        self.not_run_alarm = (
            declare_alarm(
                f"{resource_name}-not-run-alarm",
                f"{self.physical_name}-not-run",
                spec,
                f"No invocation of {args.target.physical_name} by {self.physical_name}",
                d.monitoring,
                d.resource_tags(**{"crm:schedule": args.name}),
                self,
            )
            if spec is not None
            else None
        )
        self.register_outputs({"schedule_name": self.schedule.name})
