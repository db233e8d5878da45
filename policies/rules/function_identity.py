"""function-identity: every function says which document function it is, consistently.

What: each Lambda function has an explicit physical name, a ``crm:system`` tag (``dm``) and a
``crm:function`` tag (``dm-merge``) such that the name is ``<prefix>-<crm:function>`` with a
stack prefix of 2-10 lowercase letters and digits, and ``crm:function`` starts with
``<crm:system>-``; no two functions claim the same ``crm:function``.

Why: the allowlists (public surfaces, model callers) are written in the documents' names. A
function is matched to them through its tag, and the tag is trusted only when the physical
name agrees, so a mis-tagged function cannot borrow another one's public URL or model access.

Fix: build functions with ``ScopedLambda``, which names and tags them from the seed name.
"""

from __future__ import annotations

from typing import Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.graph import Stack
from policies.common.rule import stack_policy

NAME: Final = "function-identity"


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    stack = Stack(args.resources)
    claimed: dict[str, list[str]] = {}
    for fn in stack.functions:
        for problem in fn.problems:
            report(f"function {fn.label} {problem}", fn.node.urn)
        if fn.seed:
            claimed.setdefault(fn.seed, []).append(fn.node.urn)
    for seed, urns in claimed.items():
        if len(urns) > 1:
            for urn in urns:
                report(f"{len(urns)} functions claim crm:function={seed}", urn)


POLICY: Final = stack_policy(
    NAME,
    "Every Lambda function is named <prefix>-<seed> and tagged crm:system and crm:function.",
    _validate,
    remediation="Name and tag functions from their seed name (ScopedLambda does).",
)
