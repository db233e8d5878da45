"""The graph's triggers, wired in-process: queues, streams, rules, S3, mail lanes, schedules.

A pump delivers what is waiting to the functions the graph says, with Lambda's semantics:

- SQS event source mappings: batches up to the declared size; records that no filter matches
  are deleted (as Lambda does); ``batchItemFailures`` (or an exception) returns messages to
  the queue, which moto moves to the DLQ after the redrive policy's ``maxReceiveCount``.
  A returned message stays invisible for the queue's visibility timeout on the sandbox clock,
  as in SQS (``Redeliveries``), so a redelivery comes when the clock has moved that far.
- DynamoDB streams: read from moto's stream, filtered, batched, retried up to
  ``maximumRetryAttempts`` (bisecting on function errors, resuming from the first reported
  failure), then the batch's description goes to the on-failure destination.
- EventBridge: a tap rule on each bus copies every event into a hidden queue; each event is
  matched against the graph's rules (``sandbox.patterns``) and delivered to their targets as an
  asynchronous invocation (retries, then the function's on-failure destination).
- S3 notifications: buckets with notifications are listed; new objects under a configured
  prefix/suffix invoke the function with the S3 event record (keys URL-encoded as S3 does).
- Schedules: recurring ones fire on demand or when the clock moves past an occurrence;
  one-off ``at()`` schedules that handlers create through the Scheduler API are read back
  from moto and fired when due on the sandbox clock.

Permissions matter as in AWS: each service delivery is first evaluated, as the service's own
request (``sandbox.service_requests``), against the document that must admit it: the function's
resource-based policy (its ``lambda:Permission`` statements) for S3, SES and EventBridge, the
queue policy for EventBridge's SQS targets and dead-letter queues, a schedule role's trust
policy and then its role policy for Scheduler. A delivery refused is recorded in ``refusals``
(and the report), and the handler is not run. The checks AWS makes when such wiring is
*created* (S3 notifications, SES receipt rules, on-failure destinations) are made at setup and
reported in ``problems``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from components.offline.engine import ACCOUNT_ID
from sandbox import records as shapes
from sandbox.account import arns
from sandbox.clock import Clock
from sandbox.graph import QueueMapping, StreamMapping, Topology
from sandbox.iam import Requirement, evaluate
from sandbox.patterns import matches, passes_filters, sqs_filter_view
from sandbox.runtime import Invocation, Runtime
from sandbox.schedules import ScheduleSource
from sandbox.service_audit import audit
from sandbox.service_requests import (
    Refusal,
    ServiceAccess,
    events_invokes,
    events_sends,
    rule_arn,
    s3_invokes,
)
from sandbox.traces import Trace

ClientFactory = Callable[[str, str], Any]
TAP_NAME = "sandbox-bus-tap"


HELD_S = 21_600
"""moto holds a returned message this long in real time (6 hours: under SQS's 12-hour cap on a
message's total visibility timeout, above every queue's own), while ``Redeliveries`` releases
it when the sandbox clock reaches its time."""


@dataclass
class Redeliveries:
    """Messages a function returned, each invisible until the queue's visibility timeout has
    passed on the sandbox clock.

    "The visibility timeout begins as soon as a message is delivered to you ... If you don't
    delete it before the timeout expires, the message becomes visible again in the queue"
    ("Amazon SQS visibility timeout", SQS Developer Guide,
    https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html);
    Lambda leaves a failed batch item to that timeout ("Using Lambda with Amazon SQS",
    https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html). moto's own timeout runs on the
    real clock, which the sandbox's offset does not move: the message is held there
    (``HELD_S``) and made visible here when the sandbox clock reaches its time.
    """

    waiting: list[tuple[dt.datetime, str, str]] = field(default_factory=list)
    """(visible again at, queue ARN, receipt handle), in the order returned."""

    def hold(self, queue_arn: str, receipt: str, received: dt.datetime, timeout_s: int) -> None:
        self.waiting.append((received + dt.timedelta(seconds=timeout_s), queue_arn, receipt))

    def due(self, queue_arn: str, now: dt.datetime) -> list[str]:
        """Take the receipts of ``queue_arn`` whose timeout has passed."""
        ready = [w for w in self.waiting if w[1] == queue_arn and w[0] <= now]
        self.waiting = [w for w in self.waiting if w not in ready]
        return [receipt for _, _, receipt in ready]

    def next_time(self) -> dt.datetime | None:
        return min((when for when, _, _ in self.waiting), default=None)


@dataclass
class _Stream:
    mapping: StreamMapping
    arn: str
    iterators: dict[str, str] = field(default_factory=dict)


class Triggers(ScheduleSource):
    """Delivers queued work to functions until nothing is left."""

    def __init__(
        self, topology: Topology, runtime: Runtime, client: ClientFactory, clock: Clock
    ) -> None:
        self.t = topology
        self.runtime = runtime
        self.client = client
        self.clock = clock
        self.traces: list[Trace] = []
        self.local_urls: dict[str, str] = {}  # function name -> local Function URL
        self.problems: list[str] = []
        self.access = ServiceAccess(topology)
        self.refusals: list[Refusal] = []
        """Deliveries AWS would refuse (a trust, resource or key policy not admitting them)."""
        self.origin = clock.now()
        self._queue_urls: dict[str, str] = {}
        self._streams: list[_Stream] = []
        self._taps: dict[str, str] = {}  # region -> tap queue url
        self._seen_objects: dict[str, set[tuple[str, str]]] = {}
        self._fired: set[tuple[str, str, str]] = set()  # (region, group, name) of at() schedules
        self.redeliveries = Redeliveries()
        self.dirty: set[str] = set()
        self._async_queue: deque[tuple[str, Any, str]] = deque()
        self._turns: dict[str, int] = {}

    # Setup ---------------------------------------------------------------------------------

    def setup(self) -> None:
        """Resolve queue URLs, open stream iterators, create bus taps, snapshot buckets, and
        check every mapping's role as Lambda does when the mapping is created."""
        for q in self.t.queues:
            self._queue_urls[q.arn] = self.client("sqs", q.region).get_queue_url(QueueName=q.name)[
                "QueueUrl"
            ]
        for m in self.t.queue_mappings:
            self._check_role(m.function, "sqs:ReceiveMessage", m.queue_arn, "consume its queue")
            self._check_role(m.function, "sqs:DeleteMessage", m.queue_arn, "consume its queue")
            for f in m.filters:
                if isinstance(f, dict) and set(f) - {"body"}:
                    self.problems.append(
                        f"{m.function}: SQS filter {json.dumps(f)} uses keys other than 'body',"
                        " which SQS event source mappings do not support"
                    )
        shared: dict[str, list[str]] = {}
        for m in self.t.queue_mappings:
            shared.setdefault(m.queue_arn, []).append(m.function)
        for arn, functions in shared.items():
            if len(functions) > 1:
                self.problems.append(
                    f"queue {arn.rsplit(':', 1)[-1]} feeds {len(functions)} mappings "
                    f"({', '.join(functions)}): Lambda deletes a message that the polling "
                    "mapping's filters reject, so a message may never reach the other one"
                )
        for stream_mapping in self.t.stream_mappings:
            self._open_stream(stream_mapping)
        for config in self.t.async_configs.values():
            # Lambda sends an async invocation's failure record with the function's execution
            # role ("Capturing records of Lambda asynchronous invocations", Lambda Developer
            # Guide, https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html).
            if config.on_failure_arn and ":sqs:" in config.on_failure_arn:
                self._check_role(
                    config.function,
                    "sqs:SendMessage",
                    config.on_failure_arn,
                    "on-failure destination",
                )
        for region in sorted({r.region for r in self.t.rules}):
            self._tap(region)
        for bucket in {n.bucket for n in self.t.notifications}:
            self._seen_objects[bucket] = set(self._list_objects(bucket))
        self._validate_as_at_deploy()
        self.dirty.update({"queues", "streams", "bus", "buckets", "schedules"})

    def _validate_as_at_deploy(self) -> None:
        """The permission checks AWS makes when the resources are *created*, so that a missing
        permission fails ``pulumi up`` rather than the first delivery:

        - S3 ``PutBucketNotificationConfiguration`` "verifies that the Lambda function
          permissions grant Amazon S3 permission to invoke the function from the Amazon S3
          bucket" (S3 API reference,
          https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutBucketNotificationConfiguration.html);
        - SES ``CreateReceiptRule`` answers ``InvalidS3Configuration`` / ``InvalidLambdaFunction``
          when SES "could not publish to the bucket" / "could not execute the provided function,
          possibly due to permissions issues" (SES API reference,
          https://docs.aws.amazon.com/ses/latest/APIReference/API_CreateReceiptRule.html).

        Each failure is a wiring problem the report prints (``sandbox.service_audit``)."""
        for finding in audit(self.t):
            if finding.when == "create":
                refusal = finding.refusal
                self.problems.append(
                    f"{refusal.source}: pulumi up would fail, {finding.failing_call}: "
                    f"{refusal.reason}"
                )

    def refuse(self, refusal: Refusal) -> None:
        """Record a refused delivery: nothing reaches the target."""
        self.refusals.append(refusal)
        self.traces.append(Trace("refused", refusal.source, refusal.target, refusal.reason))

    def _check_role(self, function: str, action: str, resource: str, why: str) -> bool:
        spec = self.t.functions.get(function)
        statements = self.t.policies.get(spec.role_name, []) if spec else []
        if evaluate(statements, Requirement(action, resource)).allowed:
            return True
        self.problems.append(f"{function}: its role lacks {action} on {resource} ({why})")
        return False

    def _open_stream(self, m: StreamMapping) -> None:
        table = self.t.table(m.table)
        if table is None or not table.stream_view:
            self.problems.append(f"{m.function}: table {m.table} has no stream")
            return
        ddb = self.client("dynamodb", m.region)
        arn = ddb.describe_table(TableName=m.table)["Table"]["LatestStreamArn"]
        self._check_role(m.function, "dynamodb:GetRecords", arn, "read its stream")
        if m.on_failure_arn:
            self._check_role(
                m.function, "sqs:SendMessage", m.on_failure_arn, "on-failure destination"
            )
        streams = self.client("dynamodbstreams", m.region)
        stream = _Stream(m, arn)
        for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
            stream.iterators[shard["ShardId"]] = streams.get_shard_iterator(
                StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
            )["ShardIterator"]
        self._streams.append(stream)

    def _tap(self, region: str) -> None:
        sqs = self.client("sqs", region)
        url = sqs.create_queue(QueueName=TAP_NAME)["QueueUrl"]
        arn = arns(region).queue(TAP_NAME)
        events = self.client("events", region)
        for bus in sorted({r.bus for r in self.t.rules if r.region == region}):
            events.put_rule(
                Name=TAP_NAME, EventBusName=bus, EventPattern=json.dumps({"account": [ACCOUNT_ID]})
            )
            events.put_targets(Rule=TAP_NAME, EventBusName=bus, Targets=[{"Id": "tap", "Arn": arn}])
        self._taps[region] = url

    # The pump ------------------------------------------------------------------------------

    def mark(self, *sources: str) -> None:
        self.dirty.update(sources)

    def drain(self, max_rounds: int = 200) -> int:
        """Deliver until a whole round delivers nothing; return the deliveries made."""
        total = 0
        for _ in range(max_rounds):
            done = self.poll_once()
            total += done
            if not done and not self.dirty:
                return total
        self.problems.append(f"the pump stopped after {max_rounds} rounds (a loop?)")
        return total

    def poll_once(self, *, full: bool = False) -> int:
        """One round over the dirty sources (all of them with ``full``)."""
        wanted = {"queues", "streams", "bus", "buckets", "schedules"} if full else set(self.dirty)
        returned = self.redeliveries.next_time()
        if returned is not None and returned <= self.clock.now():
            wanted.add("queues")
        self.dirty.clear()
        done = self._poll_async()
        if "bus" in wanted:
            done += self._poll_bus()
        if "buckets" in wanted:
            done += self._poll_buckets()
        if "streams" in wanted:
            done += self._poll_streams()
        if "queues" in wanted:
            done += self._poll_queues()
        if "schedules" in wanted:
            done += self._poll_one_off_schedules()
        return done

    def enqueue_async(self, target_arn: str, event: Any, source: str) -> None:
        """An asynchronous invocation to deliver on the next round (Lambda ``Invoke`` Event)."""
        self._async_queue.append((target_arn, event, source))
        self.dirty.add("async")

    def _poll_async(self) -> int:
        done = 0
        while self._async_queue:
            target, event, source = self._async_queue.popleft()
            self._deliver_async(target, event, source, None, None)
            done += 1
        return done

    def note_call(self, service: str, operation: str) -> None:
        """The interceptor's listener: which sources a finished call may have fed."""
        if service == "sqs" and operation.startswith("SendMessage"):
            self.dirty.add("queues")
        elif service == "dynamodb" and operation in (
            "PutItem",
            "UpdateItem",
            "DeleteItem",
            "BatchWriteItem",
            "TransactWriteItems",
        ):
            self.dirty.add("streams")
        elif service == "s3" and operation in (
            "PutObject",
            "CopyObject",
            "CompleteMultipartUpload",
        ):
            self.dirty.add("buckets")
        elif service == "events" and operation == "PutEvents":
            self.dirty.add("bus")
        elif service == "scheduler" and operation in ("CreateSchedule", "UpdateSchedule"):
            self.dirty.add("schedules")

    # SQS -----------------------------------------------------------------------------------

    def _poll_queues(self) -> int:
        done = 0
        for arn in dict.fromkeys(m.queue_arn for m in self.t.queue_mappings):
            mappings = self._mappings_on(arn)
            # Several mappings on one queue poll it concurrently in AWS: take turns (per
            # queue, so one system's day does not depend on another's traffic).
            turn = self._turns.get(arn, 0)
            self._turns[arn] = turn + 1
            shift = turn % len(mappings)
            for m in mappings[shift:] + mappings[:shift]:
                done += self._poll_queue(m)
        return done

    def _mappings_on(self, queue_arn: str) -> list[QueueMapping]:
        return [m for m in self.t.queue_mappings if m.queue_arn == queue_arn]

    def _poll_queue(self, m: QueueMapping) -> int:
        queue = self.t.queue_by_arn(m.queue_arn)
        url = self._queue_urls.get(m.queue_arn)
        if queue is None or url is None:
            return 0
        sqs = self.client("sqs", queue.region)
        received = self.clock.now()
        for receipt in self.redeliveries.due(m.queue_arn, received):
            sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=receipt, VisibilityTimeout=0)
        messages: list[dict[str, Any]] = []
        while len(messages) < m.batch_size:
            got = sqs.receive_message(
                QueueUrl=url,
                MaxNumberOfMessages=min(10, m.batch_size - len(messages)),
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
                WaitTimeSeconds=0,
            ).get("Messages", [])
            if not got:
                break
            messages.extend(got)
        if not messages:
            return 0
        records = [shapes.sqs_record(msg, queue.arn, queue.region) for msg in messages]
        kept = []
        for msg, record in zip(messages, records, strict=True):
            if passes_filters(m.filters, sqs_filter_view(record)):
                kept.append((msg, record))
            else:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=msg["ReceiptHandle"])
                kind = "lost" if len(self._mappings_on(m.queue_arn)) > 1 else "filtered"
                detail = (
                    "deleted by this mapping's filter; the other mapping on the queue never sees it"
                    if kind == "lost"
                    else "deleted by filter"
                )
                self.traces.append(Trace(kind, queue.name, m.function, detail))
        if not kept:
            return len(messages)
        invocation = self.runtime.invoke(
            m.function, {"Records": [r for _, r in kept]}, source=f"sqs:{queue.name}"
        )
        failed = shapes.failed_ids(invocation, [r["messageId"] for _, r in kept], m.report_failures)
        for msg, record in kept:
            if record["messageId"] in failed:
                sqs.change_message_visibility(
                    QueueUrl=url, ReceiptHandle=msg["ReceiptHandle"], VisibilityTimeout=HELD_S
                )
                self.redeliveries.hold(
                    m.queue_arn, msg["ReceiptHandle"], received, queue.visibility_timeout_s
                )
            else:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=msg["ReceiptHandle"])
        detail = f"{len(kept)} message(s)" + (f", {len(failed)} returned" if failed else "")
        self.traces.append(Trace("sqs", queue.name, m.function, detail, invocation))
        self.dirty.add("queues")
        return len(messages)

    # DynamoDB streams ----------------------------------------------------------------------

    def _poll_streams(self) -> int:
        done = 0
        for stream in self._streams:
            streams = self.client("dynamodbstreams", stream.mapping.region)
            records: list[dict[str, Any]] = []
            for shard, iterator in list(stream.iterators.items()):
                answer = streams.get_records(ShardIterator=iterator, Limit=1000)
                stream.iterators[shard] = answer.get("NextShardIterator") or iterator
                records.extend(answer.get("Records", []))
            if not records:
                continue
            done += len(records)
            lambda_records = [shapes.stream_record(r, stream.arn) for r in records]
            matching = [r for r in lambda_records if passes_filters(stream.mapping.filters, r)]
            if matching:
                self._deliver_stream(stream, matching)
        return done

    def _deliver_stream(self, stream: _Stream, records: list[dict[str, Any]]) -> None:
        m = stream.mapping
        retries = m.max_retries if m.max_retries >= 0 else 10
        pending = deque(
            (records[i : i + m.batch_size], retries) for i in range(0, len(records), m.batch_size)
        )
        while pending:
            batch, left = pending.popleft()
            invocation = self.runtime.invoke(
                m.function, {"Records": batch}, source=f"stream:{m.table}"
            )
            ids = [r["dynamodb"]["SequenceNumber"] for r in batch]
            failed = shapes.failed_ids(invocation, ids, m.report_failures)
            self.traces.append(
                Trace("stream", m.table, m.function, f"{len(batch)} record(s)", invocation)
            )
            if not failed:
                continue
            first = min(ids.index(i) for i in failed)
            remaining = batch[first:]
            if left > 0:
                if invocation.error and m.bisect and len(remaining) > 1:
                    half = len(remaining) // 2
                    pending.appendleft((remaining[half:], left - 1))
                    pending.appendleft((remaining[:half], left - 1))
                else:
                    pending.appendleft((remaining, left - 1))
                continue
            self._stream_failure(stream, remaining, invocation)

    def _stream_failure(
        self, stream: _Stream, batch: list[dict[str, Any]], invocation: Invocation
    ) -> None:
        m = stream.mapping
        if not m.on_failure_arn:
            self.traces.append(Trace("dropped", m.table, m.function, "retries exhausted"))
            return
        record = shapes.stream_failure_record(
            function_arn=self.t.functions[m.function].arn,
            stream_arn=stream.arn,
            batch=batch,
            attempts=(m.max_retries if m.max_retries >= 0 else 10) + 1,
            function_error=bool(invocation.error),
            now=self.clock.now(),
        )
        self._send_to_queue(m.on_failure_arn, json.dumps(record))
        self.traces.append(Trace("on-failure", m.table, m.on_failure_arn.rsplit(":", 1)[-1]))

    # EventBridge ---------------------------------------------------------------------------

    def _poll_bus(self) -> int:
        done = 0
        for region, url in self._taps.items():
            sqs = self.client("sqs", region)
            while True:
                got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0)
                messages = got.get("Messages", [])
                if not messages:
                    break
                for msg in messages:
                    sqs.delete_message(QueueUrl=url, ReceiptHandle=msg["ReceiptHandle"])
                    event = json.loads(msg["Body"])
                    event.setdefault("account", ACCOUNT_ID)
                    done += 1
                    self._route(region, event)
        return done

    def _route(self, region: str, event: dict[str, Any]) -> None:
        routed = False
        for rule in self.t.rules:
            if rule.region != region or not isinstance(rule.pattern, dict):
                continue
            if not matches(rule.pattern, event):
                continue
            for target, dlq, _retries in rule.targets:
                routed = True
                arn = rule_arn(region, rule.name, rule.bus)
                deliver = events_sends if ":sqs:" in target else events_invokes
                self._deliver_async(
                    target,
                    event,
                    f"rule:{rule.name}",
                    deliver(arn, target),
                    events_sends(arn, dlq) if dlq else None,
                )
        if not routed:
            self.traces.append(
                Trace("unrouted", "bus", "-", f"{event.get('detail-type')} matched no rule")
            )

    # S3 ------------------------------------------------------------------------------------

    def _list_objects(self, bucket: str) -> list[tuple[str, str]]:
        region = next((b.region for b in self.t.buckets if b.name == bucket), "us-east-1")
        s3 = self.client("s3", region)
        found: list[tuple[str, str]] = []
        versioned = next((b.versioned for b in self.t.buckets if b.name == bucket), False)
        if versioned:
            for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket):
                found += [(v["Key"], v["VersionId"]) for v in page.get("Versions", [])]
        else:
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
                found += [
                    (o["Key"], f"{o['ETag']}@{o['LastModified'].isoformat()}")
                    for o in page.get("Contents", [])
                ]
        return found

    def _poll_buckets(self) -> int:
        done = 0
        for bucket, seen in self._seen_objects.items():
            for key, version in self._list_objects(bucket):
                if (key, version) in seen:
                    continue
                seen.add((key, version))
                done += 1
                self._object_created(bucket, key, version)
        return done

    def _object_created(self, bucket: str, key: str, version: str) -> None:
        spec = next(b for b in self.t.buckets if b.name == bucket)
        for n in self.t.notifications:
            if n.bucket != bucket or not key.startswith(n.prefix) or not key.endswith(n.suffix):
                continue
            if not any(e in ("s3:ObjectCreated:*", "s3:ObjectCreated:Put") for e in n.events):
                continue
            head = self.client("s3", spec.region).head_object(
                Bucket=bucket, Key=key, **({"VersionId": version} if spec.versioned else {})
            )
            record = shapes.s3_record(
                bucket=bucket,
                key=key,
                region=spec.region,
                size=int(head.get("ContentLength", 0)),
                etag=str(head.get("ETag", "")),
                version=version if spec.versioned else None,
                configuration=f"sandbox-{n.prefix or 'all'}",
                now=self.clock.now(),
            )
            self._deliver_async(
                n.function_arn,
                {"Records": [record]},
                f"s3:{bucket}/{n.prefix}",
                s3_invokes(bucket, n.function_arn),
                None,
            )

    # Asynchronous invocation ---------------------------------------------------------------

    def deliver(self, target: str, event: Any, source: str, request: Requirement) -> None:
        """A service's asynchronous invocation of ``target`` (SES's Lambda action), admitted
        or refused by the target's policy like every other one."""
        self._deliver_async(target, event, source, request, None)

    def _deliver_async(
        self,
        target: str,
        event: Any,
        source: str,
        request: Requirement | None,
        dead_letter: Requirement | None,
    ) -> None:
        """An asynchronous invocation of ``target`` (or a message to a queue target) made by
        ``request``'s service principal, which the target's policy must admit; a refused event
        goes to the ``dead_letter`` queue when the queue's policy admits that send."""
        if request is not None:
            decision, where = self.access.resource(target, request)
            if not decision.allowed:
                self.refuse(Refusal(source, target, request, where, decision.explicit_deny))
                if dead_letter is not None:
                    self._dead_letter(source, event, dead_letter)
                return
        spec = self.t.function_by_arn(target)
        if spec is None:
            if ":sqs:" in target:
                self._send_to_queue(target, json.dumps(event))
                self.traces.append(Trace("sqs-target", source, target.rsplit(":", 1)[-1]))
            else:
                self.traces.append(Trace("unsupported", source, target))
            return
        config = self.t.async_configs.get(spec.name)
        attempts = 1 + (config.max_retries if config else 2)
        invocation: Invocation | None = None
        for _ in range(attempts):
            invocation = self.runtime.invoke(spec.name, event, source=source)
            self.traces.append(Trace("async", source, spec.name, "", invocation))
            if invocation.ok:
                return
        if config and config.on_failure_arn and invocation is not None:
            record = shapes.async_failure_record(
                function_arn=spec.arn,
                event=event,
                attempts=attempts,
                invocation=invocation,
                now=self.clock.now(),
            )
            self._send_to_queue(config.on_failure_arn, json.dumps(record, default=str))
            self.traces.append(
                Trace("on-failure", source, config.on_failure_arn.rsplit(":", 1)[-1])
            )

    def _dead_letter(self, source: str, event: Any, send: Requirement) -> None:
        assert send.resource is not None
        decision, where = self.access.resource(send.resource, send)
        if not decision.allowed:
            self.refuse(Refusal(source, send.resource, send, where, decision.explicit_deny))
            return
        self._send_to_queue(send.resource, json.dumps(event))
        self.traces.append(Trace("dead-letter", source, send.resource.rsplit(":", 1)[-1]))

    def _send_to_queue(self, arn: str, body: str) -> None:
        queue = self.t.queue_by_arn(arn)
        if queue is None:
            self.traces.append(Trace("unsupported", "send", arn, "queue not in the graph"))
            return
        self.client("sqs", queue.region).send_message(
            QueueUrl=self._queue_urls[arn], MessageBody=body
        )
        self.dirty.add("queues")
