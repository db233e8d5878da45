"""public-surface-allowlist: only the documents' public surfaces are reachable anonymously.

What:
- A Function URL with ``authorizationType`` other than ``AWS_IAM`` belongs to a function in the
  public allowlist (:mod:`policies.allowlists`: dm-merge, ls-capture, ls-report-page,
  ler-intake in shared-secret mode, upsr-order, upsr-addlink, rrs-webhook), identified by its
  ``crm:function`` tag checked against its name.
- A lambda Permission with principal ``*`` is one of the two a public Function URL needs, on an
  allowlisted function: ``lambda:InvokeFunctionUrl`` with ``functionUrlAuthType`` NONE, or
  ``lambda:InvokeFunction`` with ``invokedViaFunctionUrl`` true. Any other principal-``*``
  permission is public and refused.
- A permission for an AWS service principal (``*.amazonaws.com``) names its source: a
  wildcard-free ``sourceArn`` or a ``sourceAccount``; for S3, whose bucket ARNs carry no
  account, both.
- An Allow in a resource policy (bucket, queue, topic, secret...) to everyone (``*``) or to a
  service principal carries a scoping condition (``aws:SourceArn``, ``aws:SourceAccount``,
  ``aws:PrincipalOrgID``...).

Why: "only one is reachable from the public internet" (000, 002); "the only inbound surfaces
are two Lambda Function URLs" (003); "the only public surface" (004). A public surface must be
declared by a document and check authenticity in-function; a service principal without a
source is the confused-deputy hole (any account's bucket or rule could invoke).

Fix: use ``AWS_IAM`` auth, or add the function to ``publicFunctions`` in the pack config only
when a document declares it public; give service permissions ``sourceArn``/``sourceAccount``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies import allowlists
from policies.common.config import replace_or_extend, schema, string_list
from policies.common.documents import documents_in, is_everyone, principals, scoping_keys
from policies.common.graph import FunctionInfo, Stack
from policies.common.props import as_str
from policies.common.rule import config_of, stack_policy

NAME: Final = "public-surface-allowlist"
FUNCTION_URL: Final = "aws:lambda/functionUrl:FunctionUrl"
PERMISSION: Final = "aws:lambda/permission:Permission"


def _identify(stack: Stack, reference: Any) -> tuple[FunctionInfo | None, str]:
    fn = stack.function_named(reference)
    if fn is None:
        return None, f"function {reference!r} is not declared in this stack"
    if fn.seed is None:
        return None, f"function {fn.label} cannot be identified: {'; '.join(fn.problems)}"
    return fn, ""


def _check_permission(stack: Stack, props: Mapping[str, Any], public: frozenset[str]) -> str | None:
    principal = as_str(props.get("principal"))
    action = (as_str(props.get("action")) or "").lower()
    if principal is None:
        return "principal is not a known string: cannot be judged"
    if "*" in principal:
        url_invoke = (
            action == "lambda:invokefunctionurl" and props.get("functionUrlAuthType") == "NONE"
        )
        via_url = action == "lambda:invokefunction" and props.get("invokedViaFunctionUrl") is True
        if not (url_invoke or via_url):
            return (
                f"grants {props.get('action')} to principal * outside a public Function URL; "
                "only the Function URL pair (InvokeFunctionUrl with auth NONE, InvokeFunction "
                "invoked via the URL) may be public"
            )
        fn, problem = _identify(stack, props.get("function"))
        if fn is None:
            return f"public Function URL permission: {problem}"
        if fn.seed not in public:
            return f"makes {fn.label} ({fn.seed}) public, but it is not a declared public surface"
        return None
    if principal.endswith(".amazonaws.com"):
        source_arn = as_str(props.get("sourceArn"))
        source_account = as_str(props.get("sourceAccount"))
        if source_arn and ("*" in source_arn or "?" in source_arn):
            return (
                f"lets {principal} invoke from any source matching {source_arn!r}; name one source"
            )
        if not source_arn and not source_account:
            return f"lets {principal} invoke without sourceArn or sourceAccount (any account's resources could)"
        is_s3 = principal == "s3.amazonaws.com" or (source_arn or "").split(":")[2:5] == [
            "s3",
            "",
            "",
        ]
        if is_s3 and not source_account:
            return (
                "lets s3.amazonaws.com invoke without sourceAccount (bucket ARNs carry no account)"
            )
    return None


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    config = config_of(args)
    public = replace_or_extend(
        config, "publicFunctions", "extraPublicFunctions", allowlists.PUBLIC_FUNCTIONS
    )
    stack = Stack(args.resources)
    for node in stack.of_type(FUNCTION_URL):
        auth = node.props.get("authorizationType")
        if auth == "AWS_IAM":
            continue
        fn, problem = _identify(stack, node.props.get("functionName"))
        if fn is None:
            report(f"Function URL {node.name} with auth {auth!r}: {problem}", node.urn)
        elif fn.seed not in public:
            report(
                f"Function URL of {fn.label} ({fn.seed}) uses auth {auth!r}, but {fn.seed} is not "
                f"a declared public surface ({', '.join(sorted(public))})",
                node.urn,
            )
    for node in stack.of_type(PERMISSION):
        finding = _check_permission(stack, node.props, public)
        if finding:
            report(f"lambda Permission {node.name}: {finding}", node.urn)
    for doc in documents_in(args.resources):
        if doc.kind != "resource" or doc.error:
            continue
        for st in doc.allow_statements:
            who = principals(st.principal)
            services = who.get("Service", [])
            if st.not_principal is not None:
                report(f"{doc.describe(st)}: Allow with NotPrincipal admits everyone else", doc.urn)
            elif (is_everyone(st.principal) or services) and not scoping_keys(st.condition):
                whom = "everyone (*)" if is_everyone(st.principal) else ", ".join(services)
                report(
                    f"{doc.describe(st)}: allows {whom} without a condition naming the source "
                    "(aws:SourceArn, aws:SourceAccount, aws:PrincipalOrgID...)",
                    doc.urn,
                )


POLICY: Final = stack_policy(
    NAME,
    "Only the public surfaces the documents declare are reachable without AWS credentials.",
    _validate,
    remediation=(
        "Use AWS_IAM auth on Function URLs that no document declares public; give service "
        "principals a sourceArn/sourceAccount (or an aws:SourceArn condition)."
    ),
    config_schema=schema(
        publicFunctions=string_list(
            "Seed names whose Function URL may use auth NONE (replaces the default list)",
            tuple(allowlists.PUBLIC_FUNCTIONS),
        ),
        extraPublicFunctions=string_list("Seed names added to publicFunctions", ()),
    ),
)
