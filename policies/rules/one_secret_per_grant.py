"""one-secret-per-grant: every GetSecretValue or GetParameter grant names exactly one secret.

What: each Allow statement whose actions reach ``secretsmanager:GetSecretValue`` (by name or
through a wildcard such as ``secretsmanager:Get*``) has exactly one resource, and it is one
secret's ARN, ``arn:<partition>:secretsmanager:<region>:<account>:secret:<name>`` with no
wildcard except the ``-??????`` suffix that stands for the six random characters Secrets
Manager appends. In a secret's own resource policy, ``Resource: "*"`` is that one secret.

The same holds for Parameter Store, where ``secretStore: ssm`` keeps the secrets: each Allow
statement reaching ``ssm:GetParameter``, ``ssm:GetParameters`` or ``ssm:GetParameterHistory``
(each returns values) has exactly one resource, one parameter's ARN
``arn:<partition>:ssm:<region>:<account>:parameter/<name>`` with no wildcard; and no statement
reaches ``ssm:GetParametersByPath``, which reads every parameter under a path. Parameter Store
authorises each of these per parameter ARN ("Restricting access to Parameter Store parameters
using IAM policies",
https://docs.aws.amazon.com/systems-manager/latest/userguide/sysman-paramstore-access.html), and
under the AWS managed key ``aws/ssm`` that grant is the only control: the key lets every
principal of the account decrypt
(https://docs.aws.amazon.com/systems-manager/latest/userguide/ps-restrict-decryption.html).

AWS's public parameters (``parameter/aws/service/...``: the Powertools layer ARN the program
looks up, "Working with public parameters",
https://docs.aws.amazon.com/systems-manager/latest/userguide/parameter-store-public-parameters.html)
are the same in every account and hold no secret: a read of only those is not judged here.

Why: "every GetSecretValue grant names a single secret arn. That is why there is more than one
secret rather than one JSON blob with everything in it" (documents 000 and 002). The CRM write
credential must stay readable by dm-merge alone, and a shared statement would leak it.

Fix: one statement per secret (``SecretSlot.grant_read()``), each naming that secret's or
parameter's ARN.
"""

from __future__ import annotations

import re
from typing import Any, Final

from pulumi_policy import ReportViolation, ResourceValidationArgs

from policies.common.iamdata import action_matches
from policies.common.rule import documents_for, resource_policy

NAME: Final = "one-secret-per-grant"
GET_SECRET_VALUE: Final = "secretsmanager:GetSecretValue"
_ONE_SECRET: Final = re.compile(
    r"^arn:[^:*?]+:secretsmanager:[^:*?]+:[0-9]{12}:secret:[^*?]+?(-\?{6})?$"
)
PARAMETER_READS: Final = ("ssm:GetParameter", "ssm:GetParameters", "ssm:GetParameterHistory")
BY_PATH: Final = "ssm:GetParametersByPath"
_ONE_PARAMETER: Final = re.compile(r"^arn:[^:*?]+:ssm:[^:*?]+:[0-9]{12}:parameter/[^*?]+$")


def names_one_parameter(arn: str) -> bool:
    """One Parameter Store parameter's ARN, with no wildcard."""
    return bool(_ONE_PARAMETER.match(arn))


_PUBLIC_PARAMETER: Final = re.compile(r"^arn:[^:*?]+:ssm:[^:*?]+:[^:]*:parameter/aws/service/")


def is_public_parameter(arn: str) -> bool:
    """One of AWS's public parameters (``/aws/service/...``), which no account writes."""
    return bool(_PUBLIC_PARAMETER.match(arn))


def names_one_secret(arn: str) -> bool:
    """One secret's ARN: concrete, or with only the ``-??????`` random-suffix wildcard."""
    return bool(_ONE_SECRET.match(arn))


def _reaches(st: Any, action: str) -> bool:
    return bool(
        st.covers_action(action)
        or (st.not_actions is not None and not any(action_matches(p, action) for p in st.not_actions))
    )


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for doc in documents_for(args):
        if doc.error:
            report(f"{doc.describe()} {doc.error}", None)
            continue
        for st in doc.allow_statements:
            where = doc.describe(st)
            if _reaches(st, BY_PATH):
                report(f"{where}: {BY_PATH} reads every parameter under a path; grant "
                       "GetParameter on each parameter instead", None)
            for action, one, shape in (
                (GET_SECRET_VALUE, names_one_secret, "arn:...:secret:<name>-??????"),
                *((a, names_one_parameter, "arn:...:parameter/<name>") for a in PARAMETER_READS),
            ):
                if not _reaches(st, action):
                    continue
                if action != GET_SECRET_VALUE and st.all_resources and all(
                    is_public_parameter(r) for r in st.all_resources
                ):
                    continue
                verb = action.split(":", 1)[1]
                if st.not_resources is not None:
                    report(f"{where}: {verb} with NotResource reaches every other secret", None)
                    break
                resources = st.all_resources
                if len(resources) != 1:
                    report(
                        f"{where}: {verb} on {len(resources)} resources "
                        f"({', '.join(resources) or 'none'}); grant one secret per statement",
                        None,
                    )
                    break
                arn = resources[0]
                if arn.strip() == "*" and doc.star_is_self:
                    continue
                if not one(arn):
                    report(f"{where}: {verb} on {arn!r}, which is not one secret's ARN ({shape})", None)
                    break


POLICY: Final = resource_policy(
    NAME,
    "Every secretsmanager:GetSecretValue or ssm:GetParameter grant names exactly one secret ARN.",
    _validate,
    remediation=(
        "Split the statement: one GetSecretValue or GetParameter statement per secret, naming "
        "its ARN."
    ),
)
