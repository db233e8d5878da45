"""The one-time bootstrap of an account for the pipeline: run once per stack, by a person.

It creates the GitHub OIDC provider (once per account: ``createOidcProvider: false`` in the
second stack of an account that holds both), and two roles for the app stack of the same name
(``pulumi up -s dev`` here serves ``Pulumi.dev.yaml`` of the program):

- ``crm-pipeline/<stack>-preview``, trusted by the repository's pull requests, which may only
  read what the stack declares (``pulumi preview``);
- ``crm-pipeline/<stack>-deploy``, trusted by the one branch or environment that deploys the
  stack, with the policies bootstrap/deploy_policy.py generated from the stack's graph (and,
  with ``verify: true``, what ``make verify`` needs);

and the permissions boundary ``crm-pipeline/<prefix>-role-boundary`` that every role the deploy
role creates must carry. Both roles' sessions last at most ``maxSessionSeconds``. With a
self-managed backend (``stateBucket``), both may read the state, only the deploy role write it
(the preview role takes the stack's lock, nothing else).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

import pulumi
import pulumi_aws as aws
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from bootstrap import trust
from bootstrap.deploy_policy import ACCOUNT, path_for
from components.arns import ROLE_BOUNDARY_PATH, Arns
from components.config import ConfigError

PROJECT: Final = "crm-pipeline-bootstrap"
PATH: Final = ROLE_BOUNDARY_PATH
"""The pipeline's roles and policies live under this path, outside every stack's prefix: the
deploy role, scoped to ``role/<prefix>-*``, can never touch them."""


class BootstrapConfig(BaseModel):
    """``Pulumi.<stack>.yaml`` of the bootstrap project."""

    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, frozen=True)

    repository: str = Field(pattern=trust.REPOSITORY.pattern)
    """``<owner>/<name>`` of the repository whose workflows assume the roles."""
    deploy_from: tuple[str, ...] = Field(min_length=1)
    """Who may deploy: ``branch:main`` (dev, on a merge) or ``environment:prod`` (a protected
    environment with a required reviewer)."""
    preview_from: tuple[str, ...] = ("pull_request",)
    """Who may preview: the repository's pull requests."""
    create_oidc_provider: bool = True
    """False in the second bootstrap stack of one account: the provider exists once."""
    max_session_seconds: int = Field(default=3600, ge=900, le=43200)
    """How long one job's credentials last (IAM allows 900 to 43200 seconds)."""
    state_bucket: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
    """The S3 bucket of a self-managed Pulumi backend, or none (Pulumi Cloud)."""
    verify: bool = False
    """The deploy role may also run ``make verify`` (reads the stack's secrets to sign its
    checks, writes and removes marked items)."""

    @field_validator("deploy_from", "preview_from")
    @classmethod
    def _sources(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for source in value:
            if not trust.SOURCE.match(source):
                raise ValueError("each entry is pull_request, branch:<name> or environment:<name>")
        return value


def load_config(config: pulumi.Config) -> BootstrapConfig:
    """The stack's bootstrap config; a ConfigError names the key, never the value."""
    raw: dict[str, Any] = {}
    for name, field in BootstrapConfig.model_fields.items():
        key = field.alias or name
        value = config.get(key)
        if value is not None:
            try:
                raw[key] = json.loads(value)
            except ValueError:
                raw[key] = value
    try:
        return BootstrapConfig.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        key = ".".join(str(p) for p in first["loc"] if isinstance(p, str)) or "config"
        raise ConfigError(f"{PROJECT}:{key}: {first['msg']}") from None


def load_generated(stack: str) -> dict[str, Any]:
    """bootstrap/generated/<stack>.json, written by ``make deploy-policy``."""
    path = path_for(stack)
    if not path.exists():
        raise ConfigError(
            f"no generated policy for stack {stack!r} ({path.name}): the bootstrap stack is named "
            "after the program's stack it serves; run make deploy-policy"
        )
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def fill(document: Mapping[str, Any] | str, account_id: str) -> str:
    """A generated document (or ARN) for this account."""
    text = document if isinstance(document, str) else json.dumps(document, sort_keys=True)
    return text.replace(ACCOUNT, account_id)


def state_policy(bucket: str, *, write: bool) -> str:
    """A self-managed backend's state: read, and the stack's lock (``.pulumi/locks/``) for the
    preview role; read and write under ``.pulumi/`` for the deploy role."""
    arns = Arns("aws", "", "")
    written = arns.objects(bucket, ".pulumi/") if write else arns.objects(bucket, ".pulumi/locks/")
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Sid": "ListState", "Effect": "Allow", "Action": ["s3:ListBucket"],
                 "Resource": [arns.bucket(bucket)]},
                {"Sid": "ReadState", "Effect": "Allow", "Action": ["s3:GetObject"],
                 "Resource": [arns.objects(bucket, ".pulumi/")]},
                {"Sid": "WriteState" if write else "TakeLock", "Effect": "Allow",
                 "Action": ["s3:DeleteObject", "s3:PutObject"], "Resource": [written]},
            ],
        },
        sort_keys=True,
    )


def _attach(
    role: str,
    role_name: str,
    documents: Sequence[tuple[str, Mapping[str, Any]]],
    account_id: str,
    partition: str,
    parent: pulumi.Resource,
) -> None:
    arns = Arns(partition, "", account_id)
    for name, document in documents:
        policy = aws.iam.Policy(
            name,
            name=name,
            path=PATH,
            description=f"Generated from the plan (make deploy-policy) for the {role} role",
            policy=fill(document, account_id),
            opts=pulumi.ResourceOptions(parent=parent),
        )
        aws.iam.RolePolicyAttachment(
            name,
            role=role_name,
            policy_arn=arns.policy(name, PATH),
            opts=pulumi.ResourceOptions(parent=parent, depends_on=[policy]),
        )


def build() -> dict[str, Any]:
    """Declare the provider, the boundary and the two roles; return the ARNs to set in the
    repository (docs/pipeline.md)."""
    stack = pulumi.get_stack()
    config = load_config(pulumi.Config(PROJECT))
    generated = load_generated(stack)
    identity = aws.get_caller_identity()
    partition = aws.get_partition().partition
    account_id = identity.account_id
    arns = Arns(partition, "", account_id)
    provider_arn = trust.provider_arn(partition, account_id)
    waits: list[pulumi.Resource] = []
    if config.create_oidc_provider:
        waits.append(
            aws.iam.OpenIdConnectProvider(
                "github", url=trust.URL, client_id_lists=[trust.AUDIENCE]
            )
        )
    boundary = generated["boundary"]
    boundary_arn = fill(boundary["arn"], account_id)
    aws.iam.Policy(
        "role-boundary",
        name=boundary_arn.rsplit("/", 1)[-1],
        path=boundary["path"],
        description=f"The most any role of stack {stack} may do (make deploy-policy)",
        policy=fill(boundary["document"], account_id),
    )
    outputs: dict[str, Any] = {"boundaryArn": boundary_arn}
    for role, sources, kinds in (
        ("preview", config.preview_from, ("preview",)),
        ("deploy", config.deploy_from, ("deploy", "verify") if config.verify else ("deploy",)),
    ):
        name = f"{stack}-{role}"
        resource = aws.iam.Role(
            f"{role}-role",
            name=name,
            path=PATH,
            description=f"GitHub Actions of {config.repository}: {role} stack {stack}",
            assume_role_policy=trust.trust_policy(
                provider_arn, [trust.subject(config.repository, s) for s in sources]
            ),
            max_session_duration=config.max_session_seconds,
            opts=pulumi.ResourceOptions(depends_on=waits),
        )
        documents = [
            (f"{stack}-pipeline-{kind}-{n}", document)
            for kind in kinds
            for n, document in enumerate(generated["policies"][kind], start=1)
        ]
        _attach(role, name, documents, account_id, partition, resource)
        if config.state_bucket:
            aws.iam.RolePolicy(
                f"{role}-state",
                name=f"{name}-state",
                role=name,
                policy=state_policy(config.state_bucket, write=role == "deploy"),
                opts=pulumi.ResourceOptions(parent=resource),
            )
        outputs[f"{role}RoleArn"] = arns.role(f"{PATH.strip('/')}/{name}")
    return outputs
