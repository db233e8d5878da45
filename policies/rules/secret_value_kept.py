"""secret-value-kept: a parameter whose value the program writes once is never written again.

What: an SSM Parameter declared with a write-only value (``valueWo`` / ``valueWoVersion``: the
program writes a placeholder once, the operator's ``make secrets`` writes the real value) lists
in ``ignoreChanges`` every input it declares except ``name``, ``region`` and ``tags``.

Why: the provider's update sends PutParameter (``Overwrite``) whenever any input but ``tags``
and ``overwrite`` changes; the value it sends is ``valueWo`` when ``valueWoVersion`` changed and
otherwise the value in state, which is empty for a write-only parameter
(``resourceParameterUpdate`` in
https://github.com/hashicorp/terraform-provider-aws/blob/0073593e7d6993ba482409f4dc35438daaa79bb3/internal/service/ssm/parameter.go).
So a new description or tier fails the update (PutParameter refuses an empty ``Value``:
https://docs.aws.amazon.com/systems-manager/latest/APIReference/API_PutParameter.html) and a
new ``valueWoVersion`` puts the placeholder over the operator's secret. An ignored input keeps
its value from state, so the provider sees no change and sends nothing
(https://www.pulumi.com/docs/iac/concepts/options/ignorechanges/). A new ``name`` or
``region`` is another parameter (a replacement ``make plan BASE=...`` lists); tags update with
their own calls.

Fix: declare the parameter through ``SecretSlot`` (its ``SET_ONCE`` is the list), or add the
input to the parameter's ``ignore_changes``.
"""

from __future__ import annotations

from typing import Final

from pulumi_policy import ReportViolation, ResourceValidationArgs

from policies.common.props import props_of
from policies.common.rule import resource_policy

NAME: Final = "secret-value-kept"
PARAMETER: Final = "aws:ssm/parameter:Parameter"
WRITE_ONLY: Final = ("valueWo", "valueWoVersion")
NEVER_RESENDS: Final = frozenset({"name", "region", "tags", "tagsAll", "overwrite"})
"""Inputs whose change sends no PutParameter (or makes another parameter)."""


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != PARAMETER:
        return
    props = props_of(args)
    if not any(key in props for key in WRITE_ONLY):
        return
    ignored = set(args.opts.ignore_changes or ())
    resent = sorted(set(props) - NEVER_RESENDS - ignored)
    if resent:
        report(
            f"parameter {args.name}: its value is written once (valueWo), but a change to "
            f"{', '.join(resent)} would make `pulumi up` send PutParameter again, with the "
            "placeholder or an empty value over the operator's secret; add them to ignore_changes",
            None,
        )


POLICY: Final = resource_policy(
    NAME,
    "A write-only parameter's value is never re-sent: every input but name, region and tags is set once.",
    _validate,
    remediation=(
        "Declare the parameter with SecretSlot, or list each input the rule names in the "
        "parameter's ignore_changes."
    ),
)
