"""event-source-mapping-permissions: each mapping's function role holds what Lambda's poller needs.

What: for every ``aws:lambda/eventSourceMapping``, the execution role of its function (the
role named by the function's ``role`` ARN; its inline role policies and ``inlinePolicies``)
holds, in Allow statements, exactly the actions AWS documents for the source kind, on that
source:

- SQS queue (``eventSourceArn`` ``arn:aws:sqs:...``): ``sqs:ReceiveMessage``,
  ``sqs:DeleteMessage``, ``sqs:GetQueueAttributes`` on the queue's ARN;
- DynamoDB stream (``...:table/<name>/stream/<label>``): ``dynamodb:DescribeStream``,
  ``dynamodb:GetRecords``, ``dynamodb:GetShardIterator`` on the stream's ARN, and
  ``dynamodb:ListStreams`` on ``"*"`` (the only resource it accepts: the Service Authorization
  Reference lists no resource type for it); with an on-failure destination that is an SQS
  queue, ``sqs:SendMessage`` on that queue;

and no wildcard action (``sqs:*``, ``dynamodb:Get*``) reaches the source: the role holds the
documented actions, by name. A stream ARN is unknown at preview for a new table; the mapping
then names its source in the ``crm:event-source`` tag (``ScopedLambda`` sets it to the table's
ARN ``arn:...:table/<name>``, read as that table's streams ``.../stream/*``: ``*`` is no tag
character, see tag-values), and without either the mapping cannot be judged.

Why: the mapping polls as the function's role; a missing action fails at the first poll
(``CreateEventSourceMapping`` checks some, the poller the rest) and the function is never fed.
Lambda Developer Guide, "Using AWS Lambda with Amazon DynamoDB", execution role permissions
(https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html; the ``AWSLambdaDynamoDBExecutionRole``
managed policy holds the same four actions) and "Using Lambda with Amazon SQS", execution role
permissions (https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html;
``AWSLambdaSQSQueueExecutionRole``). The ls-stitch mapping lacked ``dynamodb:ListStreams``
(issue 12, defect 4).

Fix: declare event sources as ``ScopedLambda`` triggers (``QueueTrigger``, ``StreamTrigger``):
each contributes ``WorkQueue.grant_event_source`` / ``GuardedTable.grant_stream_source``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.documents import Statement, documents_in
from policies.common.graph import Node, Stack, queue_name_of_arn
from policies.common.props import as_str, get_path, string_map
from policies.common.rule import stack_policy
from policies.common.service_access import arn_covers, arn_parts

NAME: Final = "event-source-mapping-permissions"
MAPPING: Final = "aws:lambda/eventSourceMapping:EventSourceMapping"
SOURCE_TAG: Final = "crm:event-source"
SQS_ACTIONS: Final = ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes")
STREAM_ACTIONS: Final = (
    "dynamodb:DescribeStream",
    "dynamodb:GetRecords",
    "dynamodb:GetShardIterator",
)
LIST_STREAMS: Final = "dynamodb:ListStreams"


def _source(node: Node) -> str | None:
    arn = as_str(node.props.get("eventSourceArn"))
    if arn:
        return arn
    tagged = as_str(string_map(node.props.get("tags")).get(SOURCE_TAG))
    parts = arn_parts(tagged) if tagged else None
    if tagged and parts and parts[1] == "dynamodb" and "/stream/" not in parts[4]:
        return f"{tagged}/stream/*"  # a table named by the tag: any of its streams
    return tagged


def _grants(statements: Sequence[Statement], action: str, resource: str) -> bool:
    return any(
        st.covers_action(action) and any(arn_covers(r, resource) for r in st.all_resources)
        for st in statements
    )


def required(source: str, node: Node) -> list[tuple[str, str]] | str:
    """The (action, resource) pairs the mapping's role must hold, or why the source is unknown."""
    parts = arn_parts(source)
    if parts and parts[1] == "sqs" and queue_name_of_arn(source):
        return [(action, source) for action in SQS_ACTIONS]
    if parts and parts[1] == "dynamodb" and "/stream/" in parts[4]:
        pairs = [(action, source) for action in STREAM_ACTIONS] + [(LIST_STREAMS, "*")]
        failure = as_str(get_path(node.props, "destinationConfig", "onFailure", "destinationArn"))
        if failure and queue_name_of_arn(failure):
            pairs.append(("sqs:SendMessage", failure))
        return pairs
    return f"has a source {source!r} that is neither an SQS queue nor a DynamoDB stream"


def _wildcards(statements: Sequence[Statement], source: str) -> list[str]:
    service = (arn_parts(source) or ("", "", "", "", ""))[1]
    return sorted(
        {
            action
            for st in statements
            for action in st.all_actions
            if ("*" in action or "?" in action)
            and (action == "*" or action.lower().startswith(f"{service}:"))
            and any(arn_covers(r, source) for r in st.all_resources)
        }
    )


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    stack = Stack(args.resources)
    statements_by_role: dict[str, list[Statement]] = {}
    for doc in documents_in(args.resources):
        if doc.kind == "identity" and doc.role_name and not doc.error:
            statements_by_role.setdefault(doc.role_name, []).extend(doc.allow_statements)
    for node in stack.of_type(MAPPING):
        label = f"event source mapping {node.name}"
        fn = stack.function_named(node.props.get("functionName"))
        if fn is None or fn.role_name is None:
            report(
                f"{label}: its function is not declared in this stack with a known role", node.urn
            )
            continue
        source = _source(node)
        if source is None:
            report(
                f"{label} of {fn.label}: eventSourceArn is unknown at preview and no "
                f"{SOURCE_TAG} tag names the source: cannot be judged",
                node.urn,
            )
            continue
        needs = required(source, node)
        if isinstance(needs, str):
            report(f"{label} of {fn.label} {needs}", node.urn)
            continue
        held = statements_by_role.get(fn.role_name, [])
        missing = [(a, r) for a, r in needs if not _grants(held, a, r)]
        for action, resource in missing:
            hint = (
                ' (it accepts no resource ARN: grant it on "*")' if action == LIST_STREAMS else ""
            )
            report(
                f"{label} of {fn.label}: role {fn.role_name} lacks {action} on {resource}{hint}; "
                "Lambda's poller needs it (Lambda developer guide, event source permissions)",
                node.urn,
            )
        for action in _wildcards(held, source):
            report(
                f"{label} of {fn.label}: role {fn.role_name} holds {action} on {source}; name "
                "the actions AWS documents for this source instead",
                node.urn,
            )


POLICY: Final = stack_policy(
    NAME,
    "Every event source mapping's function role holds exactly the actions AWS documents for "
    "its source (SQS, DynamoDB streams) on that source.",
    _validate,
    remediation=(
        "Declare the source as a ScopedLambda QueueTrigger / StreamTrigger: they grant "
        "ReceiveMessage, DeleteMessage, GetQueueAttributes on the queue, or DescribeStream, "
        "GetRecords, GetShardIterator on the stream and ListStreams on *."
    ),
)
