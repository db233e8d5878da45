"""What a change moves that someone outside AWS holds: ``make plan BASE=...`` prints it first.

A Function URL replaced or deleted is a new address (``https://<url-id>.lambda-url.<region>.on.aws``,
the url-id generated at creation: https://docs.aws.amazon.com/lambda/latest/dg/lambda-urls.html),
and the old one stops answering. Per URL, from the graph:

- where it is set up outside AWS, as its ``FunctionUrl`` declares (``registered_in``, tagged on
  the function), and the stack output that gives the new address;
- the functions that put it in messages (the URL in their environment, or their own URL read
  with ``lambda:GetFunctionUrlConfig``), by what they send: mails (``ses:SendEmail``) or SMS
  (``sms-voice:SendTextMessage``). Links already sent carry the old address.

A system moved to another region also takes along grants on resources this program does not
create (an End User Messaging SMS pool or phone number, an SES identity it does not declare):
the grant now names the new region, the resource stays in the old one. Those are listed too
(End User Messaging resources are regional: "Phone numbers are resources that are unique to
each AWS Region", https://docs.aws.amazon.com/sms-voice/latest/userguide/phone-numbers.html).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from components.offline.engine import Graph, Resource, listed
from components.offline.replacements import Change
from components.scoped_lambda import URL_REGISTERED_IN

FUNCTION_URL: Final = "aws:lambda/functionUrl:FunctionUrl"
FUNCTION: Final = "aws:lambda/function:Function"
ROLE_POLICY: Final = "aws:iam/rolePolicy:RolePolicy"
MEDIA: Final = {"ses:SendEmail": "mails", "ses:SendRawEmail": "mails", "sms-voice:SendTextMessage": "SMS"}
"""The actions that send a message someone outside keeps, and what they send."""


def _outputs_holding(value: Any, url: str, path: str = "") -> Iterator[str]:
    """Stack output paths (``upsr.order_webhook_url``) whose value is ``url``."""
    if value == url:
        yield path
    elif isinstance(value, Mapping):
        for key, inner in value.items():
            yield from _outputs_holding(inner, url, f"{path}.{key}" if path else str(key))


def _policy_of(graph: Graph, function: Resource) -> list[dict[str, Any]]:
    return [
        st
        for r in graph.of_type(ROLE_POLICY)
        if r.parent == function.parent
        for st in r.policy_statements()
    ]


def _senders(graph: Graph, function: Resource, url: str) -> list[str]:
    """``mails and SMS by prod-upsr-sender (ADDLINK_URL)``: who puts ``url`` in messages."""
    arn_tail = f":function:{function.inputs['name']}"
    found = []
    for fn in sorted(graph.of_type(FUNCTION), key=lambda r: str(r.inputs.get("name"))):
        env = (fn.inputs.get("environment") or {}).get("variables") or {}
        how = [name for name, value in sorted(env.items()) if value == url]
        statements = _policy_of(graph, fn)
        if any(
            "lambda:GetFunctionUrlConfig" in listed(st.get("Action"))
            and any(str(a).endswith(arn_tail) for a in listed(st.get("Resource")))
            for st in statements
        ):
            how.append("reads it with GetFunctionUrlConfig")
        sent = {MEDIA[a] for st in statements for a in listed(st.get("Action")) if a in MEDIA}
        media = sorted(sent, reverse=True)  # "mails and SMS"
        if how and media:
            found.append(f"{' and '.join(media)} by {fn.inputs['name']} ({', '.join(how)})")
    return found


def _url_lines(change: Change, graph: Graph, base: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    why = f": {'; '.join(change.reasons)}" if change.reasons else ""
    yield f"  {change.action.upper():8} {change.name}{why}"
    if change.action == "delete":
        before = next((r for r in base if r["type"] == FUNCTION_URL and r["name"] == change.name), None)
        fn_name = (before or {}).get("inputs", {}).get("functionName")
        fn = next((r for r in base if r["type"] == FUNCTION and r.get("physical_name") == fn_name), None)
        where = ((fn or {}).get("inputs", {}).get("tags") or {}).get(URL_REGISTERED_IN)
        if where:
            yield f"    registered in  {where}; remove it there (the address stops answering)"
        return
    url_resource = next(r for r in graph.of_type(FUNCTION_URL) if r.name == change.name)
    function = graph.named(FUNCTION, str(url_resource.inputs["functionName"]))
    url = str(url_resource.outputs.get("functionUrl"))
    outputs = ", ".join(f"`{p}`" for p in _outputs_holding(graph.outputs, url)) or "none"
    where = (function.inputs.get("tags") or {}).get(URL_REGISTERED_IN)
    if where:
        yield f"    registered in  {where}; set the new address there (stack output {outputs})"
    senders = _senders(graph, function, url)
    for sender in senders:
        yield f"    sent in        {sender}: links already sent point at the old address and stop working"
    if not where and not senders:
        yield f"    held by        whoever calls it (stack output {outputs})"


def _statements(policy: Any) -> dict[str, list[str]]:
    if not isinstance(policy, str):
        return {}
    loaded = json.loads(policy).get("Statement", [])
    return {
        str(st.get("Sid", i)): [str(a) for a in listed(st.get("Resource"))]
        for i, st in enumerate(loaded if isinstance(loaded, list) else [loaded])
    }


def _same_but_region(before: str, after: str) -> bool:
    a, b = before.split(":", 5), after.split(":", 5)
    return len(a) == len(b) == 6 and a[3] != b[3] and a[:3] + a[4:] == b[:3] + b[4:]


def _declared(resource: str, names: set[str]) -> bool:
    """Whether an ARN's resource part names one of the graph's resources (``table/<name>/...``,
    ``log-group:<name>:*``, ``parameter/<name>``)."""
    return any(
        re.search(rf"(^|[/:]){re.escape(name.lstrip('/'))}($|[/:])", resource) for name in names
    )


def left_behind(graph: Graph, base: Sequence[Mapping[str, Any]]) -> list[str]:
    """Grants that followed their system to a new region onto a resource this program does
    not create, which stays in the old one."""
    declared = {r.physical_name for r in graph.resources if r.physical_name and r.custom}
    before = {r["urn"]: r for r in base if r["type"] == ROLE_POLICY}
    lines = []
    for policy in sorted(graph.of_type(ROLE_POLICY), key=lambda r: str(r.inputs.get("name"))):
        if policy.urn not in before:
            continue
        old = _statements(before[policy.urn]["inputs"].get("policy"))
        for sid, arns in _statements(policy.inputs.get("policy")).items():
            for arn in arns:
                moved_from = [o for o in old.get(sid, []) if _same_but_region(o, arn)]
                if not moved_from:
                    continue
                service, region, account, resource = arn.split(":", 5)[2:6]
                # AWS's own (no account; Bedrock's models and system inference profiles, which
                # config checks per region) exist wherever offered; a declared one moves along.
                if not account or service == "bedrock" or _declared(resource, declared):
                    continue
                old_region = moved_from[0].split(":")[3]
                owner = str(policy.inputs.get("name", "")).removesuffix("-grants")
                lines.append(
                    f"  {owner} {sid}: {service} {resource} is made outside this program in "
                    f"{old_region}; after the update {owner} uses it in {region}: create it there "
                    "first, or its calls fail"
                )
    return lines


def report(found: Sequence[Change], graph: Graph, base: Sequence[Mapping[str, Any]]) -> list[str]:
    """The lines ``make plan BASE=...`` prints before anything else (none: one line saying so)."""
    urls = [c for c in found if c.type == FUNCTION_URL and c.action in ("replace", "delete")]
    behind = left_behind(graph, base)
    if not urls and not behind:
        return ["addresses: no Function URL moves and no outside resource is left in another region"]
    lines = []
    if urls:
        lines.append(
            f"ADDRESSES THAT MOVE: {len(urls)} Function URL(s) get a new address; update what "
            "holds the old one right after `pulumi up`"
        )
        for change in urls:
            lines.extend(_url_lines(change, graph, base))
    if behind:
        lines.append("LEFT IN THE OLD REGION: resources this program uses but does not create")
        lines.extend(behind)
    return lines
