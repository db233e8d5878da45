"""model-access-allowlist: only the declared model callers invoke a model, and only the allowed one.

What: an Allow statement reaching ``bedrock:InvokeModel*`` or ``bedrock:Converse*`` (by name
or through a wildcard) appears only in an identity policy of an execution role whose functions
are all declared model callers (:mod:`policies.allowlists`: ler-normalize, ler-dedupe,
ler-filter, upsr-picker, rrs-sender), and names only ARNs of the allowed model ids (default:
``global.anthropic.claude-haiku-4-5-20251001-v1:0`` and ``global.anthropic.claude-sonnet-4-6``):

- the inference profile ``arn:<partition>:bedrock:<region>:<account>:inference-profile/<id>``;
- for a profile id (``global.``, ``us.``, ``eu.``... prefix), the foundation model it routes
  to, ``arn:<partition>:bedrock:<region>::foundation-model/<model>`` where ``<model>`` is the id
  without its prefix, plus ``arn:<partition>:bedrock:::foundation-model/<model>`` for a global
  profile;
- for a plain model id, ``arn:<partition>:bedrock:<region>::foundation-model/<id>``.

Why: "There is no model in this system" (dm, ls); "The only function with bedrock:InvokeModel"
(upsr-picker, rrs-sender); ler names its three callsites. A model grant elsewhere, or on
another model, is cost and data exposure nobody reviewed.

Fix: grant the model through the callsite's configured model id only, in the caller's role;
add a caller or a model id through the pack config (``modelCallers``, ``allowedModelIds``)
only when a document declares it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies import allowlists
from policies.common.config import replace_or_extend, schema, string_list
from policies.common.documents import Document, Statement, as_list, documents_in, role_name_of
from policies.common.graph import Stack
from policies.common.iamdata import action_matches, expand_action
from policies.common.props import as_str
from policies.common.rule import config_of, stack_policy

NAME: Final = "model-access-allowlist"
_PROFILE_PREFIXES: Final = ("global", "us", "us-gov", "eu", "apac", "jp", "au", "ca")
_REGION: Final = r"[a-z]{2}(?:-gov)?-[a-z]+-\d"
_PARTITION: Final = r"aws(?:-[a-z]+)*"
_ATTACHMENTS: Final = (
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
    "aws:iam/policyAttachment:PolicyAttachment",
    "aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive",
)


@lru_cache(maxsize=1)
def model_actions() -> tuple[str, ...]:
    """Actions that run a model: InvokeModel* from the data, and the Converse names."""
    names = [a for a in expand_action("bedrock:InvokeModel*")]
    return tuple(dict.fromkeys([*names, "bedrock:Converse", "bedrock:ConverseStream"]))


def reaches_model(statement: Statement) -> bool:
    """Whether an Allow statement can invoke a model."""
    if statement.not_actions is not None:
        return not all(
            any(action_matches(p, m) for p in statement.not_actions) for m in model_actions()
        )
    for pattern in statement.all_actions:
        lowered = pattern.lower()
        if lowered.startswith(("bedrock:invokemodel", "bedrock:converse")):
            return True
        if any(action_matches(pattern, m) for m in model_actions()):
            return True
    return False


@lru_cache(maxsize=64)
def allowed_arn_patterns(model_ids: frozenset[str]) -> tuple[re.Pattern[str], ...]:
    """Regexes of the ARNs a grant of ``model_ids`` may name."""
    patterns: list[str] = []
    for model_id in sorted(model_ids):
        quoted = re.escape(model_id)
        head, sep, rest = model_id.partition(".")
        if sep and head in _PROFILE_PREFIXES:
            base = re.escape(rest)
            patterns.append(
                rf"arn:{_PARTITION}:bedrock:{_REGION}:\d{{12}}:inference-profile/{quoted}"
            )
            patterns.append(rf"arn:{_PARTITION}:bedrock:{_REGION}::foundation-model/{base}")
            if head == "global":
                patterns.append(rf"arn:{_PARTITION}:bedrock:::foundation-model/{base}")
        else:
            patterns.append(rf"arn:{_PARTITION}:bedrock:{_REGION}::foundation-model/{quoted}")
    return tuple(re.compile(f"^{p}$") for p in patterns)


def _policy_roles(stack: Stack) -> dict[str, set[str]]:
    """Managed policy name -> role names it is attached to."""
    attached: dict[str, set[str]] = {}

    def add(policy_arn: Any, roles: Iterable[Any]) -> None:
        arn = as_str(policy_arn)
        if not arn:
            return
        policy_name = arn.rsplit("/", 1)[-1]
        for role in roles:
            name = role_name_of(role)
            if name:
                attached.setdefault(policy_name, set()).add(name)

    for node in stack.of_type(*_ATTACHMENTS):
        props = node.props
        if node.resource_type.endswith(":RolePolicyAttachment"):
            add(props.get("policyArn"), [props.get("role")])
        elif node.resource_type.endswith(":PolicyAttachment"):
            add(props.get("policyArn"), as_list(props.get("roles")))
        else:
            for arn in as_list(props.get("policyArns")):
                add(arn, [props.get("roleName")])
    return attached


def _owner_roles(doc: Document, attached: Mapping[str, set[str]]) -> set[str]:
    if doc.role_name:
        return {doc.role_name}
    if doc.resource_type == "aws:iam/policy:Policy":
        name = as_str(doc.props.get("name"))
        return set(attached.get(name, set())) if name else set()
    return set()


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    config = config_of(args)
    callers = replace_or_extend(
        config, "modelCallers", "extraModelCallers", allowlists.MODEL_CALLERS
    )
    model_ids = replace_or_extend(
        config, "allowedModelIds", "extraAllowedModelIds", allowlists.ALLOWED_MODEL_IDS
    )
    allowed = allowed_arn_patterns(model_ids)
    stack = Stack(args.resources)
    attached = _policy_roles(stack)
    for doc in documents_in(args.resources):
        if doc.kind != "identity":
            continue
        if doc.error:
            report(f"{doc.describe()} {doc.error}", doc.urn)
            continue
        model_statements = [st for st in doc.allow_statements if reaches_model(st)]
        if not model_statements:
            continue
        roles = _owner_roles(doc, attached)
        if not roles:
            report(
                f"{doc.describe()} grants model access but is not attached to the execution "
                "role of a declared model caller",
                doc.urn,
            )
        for role in sorted(roles):
            functions = stack.functions_with_role(role)
            if not functions:
                report(
                    f"{doc.describe()} grants model access to role {role}, which is no "
                    "function's execution role",
                    doc.urn,
                )
            for fn in functions:
                if fn.seed is None:
                    report(
                        f"{doc.describe()} grants model access to {fn.label}, which cannot be "
                        f"identified: {'; '.join(fn.problems)}",
                        doc.urn,
                    )
                elif fn.seed not in callers:
                    report(
                        f"{doc.describe()} grants model access to {fn.label} ({fn.seed}), which "
                        f"is not a declared model caller ({', '.join(sorted(callers))})",
                        doc.urn,
                    )
        for st in model_statements:
            if st.not_resources is not None:
                report(f"{doc.describe(st)}: model access with NotResource", doc.urn)
            for resource in st.all_resources:
                if not any(p.match(resource) for p in allowed):
                    report(
                        f"{doc.describe(st)}: model access on {resource!r}, which is not an ARN "
                        f"of an allowed model ({', '.join(sorted(model_ids))})",
                        doc.urn,
                    )


POLICY: Final = stack_policy(
    NAME,
    "Only declared model callers may invoke a Bedrock model, and only an allowed model.",
    _validate,
    remediation=(
        "Grant bedrock:InvokeModel only in a declared caller's role, on the inference profile "
        "of the configured model id and the foundation model it routes to."
    ),
    config_schema=schema(
        modelCallers=string_list(
            "Seed names whose role may invoke a model (replaces the default list)",
            tuple(allowlists.MODEL_CALLERS),
        ),
        extraModelCallers=string_list("Seed names added to modelCallers", ()),
        allowedModelIds=string_list(
            "Model or inference-profile ids a grant may name (replaces the default list)",
            tuple(allowlists.ALLOWED_MODEL_IDS),
        ),
        extraAllowedModelIds=string_list("Model ids added to allowedModelIds", ()),
    ),
)
