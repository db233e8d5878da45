"""no-secrets-in-env: Lambda environment variables carry references to secrets, never secrets.

What, precisely, for each variable in a function's ``environment.variables``:

1. Its value must not look like a credential, whatever its name: an AWS access key id
   (``AKIA``/``ASIA`` + 16), a PEM private key, a JWT, a URL with ``user:password@``, or a
   known token format (GitHub ``ghp_``/``github_pat_``, Slack ``xox?-``, Stripe ``sk_live_``,
   Shopify ``shpat_``/``shpss_``, HubSpot ``pat-na1-``, Anthropic/OpenAI ``sk-``, Google
   ``AIza``, SendGrid ``SG.``, Twilio ``SK`` + 32 hex).
2. A *sensitive name* is one whose upper-cased name (non-alphanumerics read as ``_``) contains
   SECRET, PASSWORD, PASSWD, PASSPHRASE, TOKEN, CREDENTIAL, PRIVATE_KEY, API_KEY, APIKEY,
   ACCESS_KEY, SIGNING_KEY, ENCRYPTION_KEY or AUTH_KEY, or has the word PWD. Its value must be
   a *reference*:
   - empty;
   - an ARN of Secrets Manager, SSM Parameter Store or KMS;
   - the name of a Secrets Manager secret or SSM parameter declared in this stack;
   - a name following the project's convention ``<prefix>-<system>-<words>`` with the
     function's own stack prefix and ``crm:system`` (``dev-upsr-webhook-secret``);
   - or, for a setting about the secret rather than the secret itself (a name ending in
     ``_TTL``, ``_SECONDS``, ``_MINUTES``, ``_HOURS``, ``_DAYS``, ``_COUNT``, ``_LENGTH``,
     ``_BYTES``, ``_SIZE``, ``_LIMIT``, ``_MAX``, ``_MIN``, ``_ENABLED``), a plain number or
     boolean.
   A sensitive variable whose value is not a known string cannot be judged and is reported.

Names listed in ``allowedVariables`` in the pack config are skipped.

Why: "fetched at call time, never in env vars" (003, 004). Environment variables are readable
by anyone with ``lambda:GetFunctionConfiguration`` and land in Pulumi state in plain text.

Fix: keep the value in Secrets Manager or Parameter Store (``SecretSlot``), pass the secret's name or ARN in the
environment, grant GetSecretValue on that one secret and read it at call time.
"""

from __future__ import annotations

import re
from typing import Any, Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.config import get_strings, schema, string_list
from policies.common.graph import FunctionInfo, Stack
from policies.common.props import as_str, get_path, is_unknown, string_map
from policies.common.rule import config_of, stack_policy

NAME: Final = "no-secrets-in-env"
SECRET: Final = "aws:secretsmanager/secret:Secret"
PARAMETER: Final = "aws:ssm/parameter:Parameter"

SENSITIVE_PARTS: Final = (
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "TOKEN",
    "CREDENTIAL",
    "PRIVATE_KEY",
    "API_KEY",
    "APIKEY",
    "ACCESS_KEY",
    "SIGNING_KEY",
    "ENCRYPTION_KEY",
    "AUTH_KEY",
)
SENSITIVE_WORDS: Final = frozenset({"PWD"})
SETTING_SUFFIXES: Final = (
    "_TTL",
    "_SECONDS",
    "_MINUTES",
    "_HOURS",
    "_DAYS",
    "_COUNT",
    "_LENGTH",
    "_BYTES",
    "_SIZE",
    "_LIMIT",
    "_MAX",
    "_MIN",
    "_ENABLED",
)
CREDENTIAL_PATTERNS: Final[dict[str, re.Pattern[str]]] = {
    "an AWS access key id": re.compile(r"\b(AKIA|ASIA)[A-Z0-9]{16}\b"),
    "a private key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    "a JWT": re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    "a URL with a password": re.compile(r"://[^/\s:@]+:[^/\s@]+@"),
    "a GitHub token": re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    "a Slack token": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    "a Stripe key": re.compile(r"\b[sr]k_(live|test)_[A-Za-z0-9]{16,}"),
    "a Shopify token": re.compile(r"\bshp(at|ss|ca|pa)_[A-Fa-f0-9]{32}\b"),
    "a HubSpot token": re.compile(r"\bpat-(na|eu)\d-[0-9a-f]{8}-[0-9a-f-]{27}"),
    "an Anthropic or OpenAI key": re.compile(r"\bsk-(ant-|proj-)?[A-Za-z0-9_-]{20,}"),
    "a Google API key": re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
    "a SendGrid key": re.compile(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
    "a Twilio API key secret": re.compile(r"\bSK[0-9a-fA-F]{32}\b"),
}
_REFERENCE_ARN: Final = re.compile(r"^arn:aws[a-z-]*:(secretsmanager|ssm|kms):")
_NUMBER_OR_BOOL: Final = re.compile(r"^(-?\d+(\.\d+)?|true|false)$", re.IGNORECASE)


def _normalised(name: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", name.upper())


def is_sensitive_name(name: str) -> bool:
    """Whether a variable name says its value is a secret."""
    upper = _normalised(name)
    return any(part in upper for part in SENSITIVE_PARTS) or bool(
        SENSITIVE_WORDS & set(upper.split("_"))
    )


def credential_kind(value: str) -> str | None:
    """What kind of credential a value looks like, or None."""
    for kind, pattern in CREDENTIAL_PATTERNS.items():
        if pattern.search(value):
            return kind
    return None


def is_reference(name: str, value: str, fn: FunctionInfo, secret_names: set[str]) -> bool:
    """Whether a sensitive variable's value refers to a secret rather than holding one."""
    if value == "" or _REFERENCE_ARN.match(value) or value in secret_names:
        return True
    if fn.prefix and fn.system:
        convention = rf"^{re.escape(fn.prefix)}-{re.escape(fn.system)}-[a-z0-9]+(-[a-z0-9]+)*$"
        if re.match(convention, value):
            return True
    upper = _normalised(name)
    return upper.endswith(SETTING_SUFFIXES) and bool(_NUMBER_OR_BOOL.match(value))


def _variables(fn: FunctionInfo) -> dict[str, Any]:
    return string_map(get_path(fn.node.props, "environment", "variables"))


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    allowed = set(get_strings(config_of(args), "allowedVariables", ()))
    stack = Stack(args.resources)
    secret_names = {
        n
        for kind in (SECRET, PARAMETER)
        for node in stack.of_type(kind)
        if (n := as_str(node.props.get("name")))
    }
    for fn in stack.functions:
        for name, raw in sorted(_variables(fn).items()):
            if name in allowed:
                continue
            value = as_str(raw)
            if value is not None and (kind := credential_kind(value)):
                report(
                    f"function {fn.label}: environment variable {name} holds {kind}", fn.node.urn
                )
                continue
            if not is_sensitive_name(name):
                continue
            if value is None:
                shown = "unknown at preview" if is_unknown(raw) else "not a string"
                report(
                    f"function {fn.label}: environment variable {name} looks secret and its "
                    f"value is {shown}: cannot be judged",
                    fn.node.urn,
                )
            elif not is_reference(name, value, fn, secret_names):
                report(
                    f"function {fn.label}: environment variable {name} looks secret and its "
                    "value is not a reference (a Secrets Manager/SSM ARN or a secret name); keep "
                    "the value in Secrets Manager or Parameter Store (SecretSlot) and pass its name",
                    fn.node.urn,
                )


POLICY: Final = stack_policy(
    NAME,
    "No secret values in Lambda environment variables: only references to secrets.",
    _validate,
    remediation=(
        "Store the value in Secrets Manager, put the secret's name or ARN in the environment, "
        "and read it at call time with a one-secret GetSecretValue grant."
    ),
    config_schema=schema(
        allowedVariables=string_list("Variable names this rule skips", ()),
    ),
)
