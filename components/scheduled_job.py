"""ScheduledJob: an EventBridge Scheduler schedule invoking one function.

The schedule assumes a role of its own that may invoke exactly that one function, so a
schedule can never be pointed at anything else without a visible change to its role.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from components.deployment import Deployment
from components.scoped_lambda import ScopedLambda


@dataclass(frozen=True)
class ScheduledJobArgs:
    """Arguments of :class:`ScheduledJob`.

    Attributes:
        deployment: Where the schedule lives.
        name: The document's schedule name (``ler-retry``); physical ``<prefix>-<name>``.
        expression: ``rate(...)``, ``cron(...)`` or ``at(...)``.
        target: The function it invokes.
        timezone: IANA zone the cron expression is read in.
        payload: JSON input given to the function.
        description: What the job does.
    """

    deployment: Deployment
    name: str
    expression: str
    target: ScopedLambda
    timezone: str = "UTC"
    payload: str = "{}"
    description: str = ""


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

        self.role = aws.iam.Role(
            f"{resource_name}-role",
            name=self.role_name,
            description=f"Lets schedule {self.physical_name} invoke {args.target.physical_name}",
            assume_role_policy=json.dumps(
                {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "scheduler.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                            "Condition": {
                                "StringEquals": {"aws:SourceAccount": d.account_id},
                                "ArnEquals": {
                                    "aws:SourceArn": d.arns.schedule("default", self.physical_name)
                                },
                            },
                        }
                    ],
                },
                sort_keys=True,
            ),
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
                        }
                    ],
                },
                sort_keys=True,
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.role]),
        )
        self.schedule = aws.scheduler.Schedule(
            resource_name,
            name=self.physical_name,
            group_name="default",
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
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy, args.target]),
        )
        self.register_outputs({"schedule_name": self.schedule.name})
