"""The one evaluator on trust, resource and key policies: principals, the absent-key rule, and
the requests each service sends (``sandbox.service_requests``)."""

from __future__ import annotations

from typing import Any

import pytest

from components.offline.engine import ACCOUNT_ID
from sandbox.iam import Requirement, evaluate
from sandbox.service_requests import (
    aws_managed_key_policy,
    budgets_publishes,
    events_invokes,
    rule_arn,
    s3_invokes,
    scheduler_assume_role,
    ses_puts_object,
    topic_key_uses,
)

ROLE = f"arn:aws:iam::{ACCOUNT_ID}:role/dev-x-schedule-role"


def _trust(condition: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "Effect": "Allow",
            "Principal": {"Service": "scheduler.amazonaws.com"},
            "Action": "sts:AssumeRole",
            "Condition": condition,
        }
    ]


@pytest.mark.parametrize(
    ("condition", "admitted"),
    [
        (
            {
                "StringEquals": {"aws:SourceAccount": ACCOUNT_ID},
                "ArnEquals": {
                    "aws:SourceArn": f"arn:aws:scheduler:eu-west-2:{ACCOUNT_ID}:schedule-group/g"
                },
            },
            True,
        ),
        (
            {"ArnLike": {"aws:SourceArn": f"arn:aws:scheduler:*:{ACCOUNT_ID}:schedule-group/*"}},
            True,
        ),
        # defect 2: a schedule's ARN, or a schedule-name prefix, never equals what Scheduler sends
        (
            {
                "ArnEquals": {
                    "aws:SourceArn": f"arn:aws:scheduler:eu-west-2:{ACCOUNT_ID}:schedule/g/x"
                }
            },
            False,
        ),
        (
            {
                "ArnLike": {
                    "aws:SourceArn": f"arn:aws:scheduler:eu-west-2:{ACCOUNT_ID}:schedule/g/*"
                }
            },
            False,
        ),
        ({"StringEquals": {"aws:SourceAccount": "999999999999"}}, False),
        # a key Scheduler does not send: false (strict), unless IfExists or negated
        ({"StringEquals": {"aws:PrincipalOrgID": "o-1"}}, False),
        ({"StringEqualsIfExists": {"aws:PrincipalOrgID": "o-1"}}, True),
        ({"StringNotEquals": {"aws:PrincipalOrgID": "o-1"}}, True),
        ({"Null": {"aws:PrincipalOrgID": "true"}}, True),
        ({"ForAnyValue:StringEquals": {"aws:SourceAccount": [ACCOUNT_ID, "1"]}}, True),
    ],
)
def test_scheduler_trust(condition: dict[str, Any], admitted: bool) -> None:
    request = scheduler_assume_role("eu-west-2", "g", ROLE)
    assert evaluate(_trust(condition), request, strict=True).allowed is admitted


def test_principals() -> None:
    request = s3_invokes("b", f"arn:aws:lambda:eu-west-2:{ACCOUNT_ID}:function:f")
    base = {"Effect": "Allow", "Action": "lambda:InvokeFunction", "Resource": request.resource}
    assert evaluate(
        [{**base, "Principal": {"Service": "s3.amazonaws.com"}}], request, strict=True
    ).allowed
    assert not evaluate(
        [{**base, "Principal": {"Service": "ses.amazonaws.com"}}], request, strict=True
    ).allowed
    # An account principal admits that account's IAM principals, never a service principal.
    assert not evaluate([{**base, "Principal": {"AWS": ACCOUNT_ID}}], request, strict=True).allowed
    role_call = Requirement("lambda:InvokeFunction", request.resource, principal=ROLE)
    assert evaluate(
        [{**base, "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT_ID}:root"}}], role_call
    ).allowed
    assert not evaluate([{**base, "Principal": {"AWS": "arn:aws:iam::1:root"}}], role_call).allowed
    # A statement with no Principal is an identity policy's: it never admits a service.
    assert not evaluate([base], request, strict=True).allowed
    # NotAction, explicit Deny with Principal "*"
    assert evaluate(
        [{**base, "Action": None, "NotAction": "s3:*", "Principal": "*"}], request, strict=True
    ).allowed
    deny = {**base, "Effect": "Deny", "Principal": "*"}
    decision = evaluate(
        [{**base, "Principal": {"Service": "s3.amazonaws.com"}}, deny], request, strict=True
    )
    assert not decision.allowed and decision.explicit_deny


def test_the_public_url_permission_admits_no_service() -> None:
    """``lambda:InvokedViaFunctionUrl`` is not in an S3 or EventBridge request: the
    Principal "*" statement a public Function URL needs does not let them invoke."""
    arn = f"arn:aws:lambda:eu-west-2:{ACCOUNT_ID}:function:f"
    url_only = [
        {
            "Effect": "Allow",
            "Principal": "*",
            "Action": "lambda:InvokeFunction",
            "Resource": arn,
            "Condition": {"Bool": {"lambda:InvokedViaFunctionUrl": "true"}},
        }
    ]
    assert not evaluate(
        url_only, events_invokes(rule_arn("eu-west-2", "r"), arn), strict=True
    ).allowed


def test_ses_bucket_policy_as_the_ses_guide_writes_it() -> None:
    request = ses_puts_object("eu-west-2", "set", "rule", "bkt", "inbound/abc")
    policy = [
        {
            "Sid": "AllowSESPuts",
            "Effect": "Allow",
            "Principal": {"Service": "ses.amazonaws.com"},
            "Action": "s3:PutObject",
            "Resource": "arn:aws:s3:::bkt/inbound/*",
            "Condition": {
                "StringEquals": {
                    "AWS:SourceAccount": ACCOUNT_ID,
                    "AWS:SourceArn": f"arn:aws:ses:eu-west-2:{ACCOUNT_ID}:receipt-rule-set/set:receipt-rule/rule",
                }
            },
        }
    ]
    assert evaluate(policy, request, strict=True).allowed
    other_rule = ses_puts_object("eu-west-2", "set", "other", "bkt", "inbound/abc")
    assert not evaluate(policy, other_rule, strict=True).allowed
    other_prefix = ses_puts_object("eu-west-2", "set", "rule", "bkt", "junk/abc")
    assert not evaluate(policy, other_prefix, strict=True).allowed


def test_an_aws_managed_key_never_admits_a_service_principal() -> None:
    publish = budgets_publishes("b", f"arn:aws:sns:us-east-1:{ACCOUNT_ID}:t")
    key = f"arn:aws:kms:us-east-1:{ACCOUNT_ID}:key/k"
    for use in topic_key_uses(publish, key):
        assert not evaluate(aws_managed_key_policy("sns", "us-east-1"), use, strict=True).allowed
    # ...while a principal of the account using it through SNS is admitted.
    through_sns = Requirement(
        "kms:GenerateDataKey",
        key,
        {"kms:CallerAccount": ACCOUNT_ID, "kms:ViaService": "sns.us-east-1.amazonaws.com"},
        principal=ROLE,
    )
    assert evaluate(aws_managed_key_policy("sns", "us-east-1"), through_sns, strict=True).allowed
    customer_key = [
        {
            "Effect": "Allow",
            "Principal": {"Service": "budgets.amazonaws.com"},
            "Action": ["kms:GenerateDataKey*", "kms:Decrypt"],
            "Resource": "*",
            "Condition": {"StringEquals": {"aws:SourceAccount": ACCOUNT_ID}},
        }
    ]
    assert all(evaluate(customer_key, u, strict=True).allowed for u in topic_key_uses(publish, key))


@pytest.mark.parametrize(
    ("pattern", "arn", "expected"),
    [
        # ArnEquals and ArnLike both take wildcards, part by part
        (
            f"arn:aws:scheduler:*:{ACCOUNT_ID}:schedule-group/*",
            f"arn:aws:scheduler:eu-west-2:{ACCOUNT_ID}:schedule-group/g",
            True,
        ),
        (
            f"arn:aws:scheduler:*:{ACCOUNT_ID}:schedule-group/*",
            f"arn:aws:scheduler:eu-west-2:{ACCOUNT_ID}:schedule/g/x",
            False,
        ),
        # a `*` in the region part does not swallow the account part
        ("arn:aws:sns:*:1:t", f"arn:aws:sns:us-east-1:{ACCOUNT_ID}:t", False),
        (f"arn:aws:budgets::{ACCOUNT_ID}:*", f"arn:aws:budgets::{ACCOUNT_ID}:budget/b", True),
    ],
)
@pytest.mark.parametrize("operator", ["ArnEquals", "ArnLike"])
def test_arn_operators(operator: str, pattern: str, arn: str, expected: bool) -> None:
    statement = {
        "Effect": "Allow",
        "Principal": {"Service": "scheduler.amazonaws.com"},
        "Action": "sts:AssumeRole",
        "Condition": {operator: {"aws:SourceArn": pattern}},
    }
    request = Requirement(
        "sts:AssumeRole", ROLE, {"aws:SourceArn": arn}, principal="scheduler.amazonaws.com"
    )
    assert evaluate([statement], request, strict=True).allowed is expected
    negated = {
        **statement,
        "Condition": {operator.replace("Arn", "ArnNot"): {"aws:SourceArn": pattern}},
    }
    assert evaluate([negated], request, strict=True).allowed is not expected
