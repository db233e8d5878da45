"""Who may assume the pipeline's roles: GitHub Actions jobs of one repository, by OIDC.

GitHub's OIDC provider signs a token per job; ``aws-actions/configure-aws-credentials``
exchanges it with STS (``AssumeRoleWithWebIdentity``) for credentials that last one session,
so no AWS key is stored anywhere. A role trusts the provider only for tokens whose audience is
STS and whose subject is exactly one source in one repository:

- GitHub, "Configuring OpenID Connect in Amazon Web Services"
  (https://docs.github.com/en/actions/security-for-github-actions/security-hardening-your-deployments/configuring-openid-connect-in-amazon-web-services):
  provider URL ``https://token.actions.githubusercontent.com``, audience ``sts.amazonaws.com``
  for the official action, and a ``token.actions.githubusercontent.com:sub`` condition in
  every trust policy;
- GitHub, "OpenID Connect reference" (https://docs.github.com/en/actions/reference/security/oidc):
  the subject of a job in an environment is ``repo:<owner>/<repo>:environment:<name>``, of a
  job on a branch outside any environment ``repo:<owner>/<repo>:ref:refs/heads/<branch>``, of
  a job triggered by a pull request ``repo:<owner>/<repo>:pull_request``;
- AWS, "Create a role for OpenID Connect federation"
  (https://docs.aws.amazon.com/IAM/latest/UserGuide/id_roles_create_for-idp_oidc.html): the
  ``Federated`` principal is the provider's ARN, the action ``sts:AssumeRoleWithWebIdentity``,
  conditions on ``<provider host>:aud`` and ``:sub``.
"""

from __future__ import annotations

import json
import re
from typing import Final

HOST: Final = "token.actions.githubusercontent.com"
URL: Final = f"https://{HOST}"
AUDIENCE: Final = "sts.amazonaws.com"
REPOSITORY: Final = re.compile(r"^[A-Za-z0-9-]{1,39}/[A-Za-z0-9._-]{1,100}$")
SOURCE: Final = re.compile(r"^(pull_request|branch:[A-Za-z0-9._/-]+|environment:[A-Za-z0-9._ -]+)$")
"""``pull_request``, ``branch:<name>`` or ``environment:<name>``: one kind of job."""


def subject(repository: str, source: str) -> str:
    """The ``sub`` claim of a job of ``repository`` from ``source`` (no wildcard, ever)."""
    if not REPOSITORY.match(repository):
        raise ValueError("repository must be <owner>/<name>")
    if not SOURCE.match(source):
        raise ValueError("a source is pull_request, branch:<name> or environment:<name>")
    kind, _, name = source.partition(":")
    if kind == "pull_request":
        return f"repo:{repository}:pull_request"
    if kind == "branch":
        return f"repo:{repository}:ref:refs/heads/{name}"
    return f"repo:{repository}:environment:{name}"


def provider_arn(partition: str, account_id: str) -> str:
    """The account's GitHub OIDC provider (one per account and URL)."""
    return f"arn:{partition}:iam::{account_id}:oidc-provider/{HOST}"


def trust_policy(provider: str, subjects: list[str]) -> str:
    """Only jobs with one of ``subjects``, holding a token for STS, may assume the role."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Sid": "GitHubActionsOnly",
                    "Effect": "Allow",
                    "Principal": {"Federated": provider},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": {
                        "StringEquals": {
                            f"{HOST}:aud": AUDIENCE,
                            f"{HOST}:sub": sorted(subjects),
                        }
                    },
                }
            ],
        },
        sort_keys=True,
    )
