"""Issue 14 in the sandbox: a handler that keeps failing fills its DLQ and the DLQ's alarm
condition is met; the demo reads the business metrics back from the handlers' EMF lines."""

from __future__ import annotations

import datetime as dt
import json
from types import SimpleNamespace
from typing import Any

from sandbox.core import Sandbox
from sandbox.ops import day_metrics, evaluate_alarms
from testsupport.graphs import shared


def test_a_handler_failing_until_the_dlq_sets_off_the_dlq_alarm() -> None:
    # dev declares no alarm (alarms: none); with prod's profile it has prod's.
    with Sandbox(shared().program("dev", {"alarms": "failures"})) as sb:
        alarms = {a.name: a for a in evaluate_alarms(sb)}
        assert "dev-dm-blocks-dlq-depth" in alarms  # read from the graph, as WorkQueue declared it
        assert not any(a.in_alarm for a in alarms.values())

        from handlers.duplicate_merger import scoring

        def broken(*_: Any, **__: Any) -> dict[str, int]:
            raise RuntimeError("the scorer is broken")

        sb.patch(scoring, "process", broken)
        sqs = sb.aws("sqs", sb.region_of("dm-score"))
        url = sqs.get_queue_url(QueueName="dev-dm-blocks")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"block": "b-1"}))
        sb.drain()
        visibility = next(q for q in sb.topology.queues if q.name == "dev-dm-blocks").visibility_timeout_s
        for _ in range(5):  # each redelivery one visibility timeout later, as SQS returns it
            sb.clock.jump_to(sb.clock.now() + dt.timedelta(seconds=visibility))
            sb.drain()

        failed = [i for i in sb.runtime.invocations if i.function == "dev-dm-score"]  # type: ignore[union-attr]
        assert len(failed) == 5  # maxReceiveCount 5: five deliveries, then the DLQ
        assert sb.queue_depth("dm-blocks") == 0 and sb.queue_depth("dm-blocks-dlq") == 1
        after = {a.name: a for a in evaluate_alarms(sb)}
        dlq = after["dev-dm-blocks-dlq-depth"]
        assert dlq.in_alarm and dlq.visible == 1
        assert dlq.actions == ("arn:aws:sns:us-east-1:123456789012:dev-alarms-us-east-1",)
        assert [a.name for a in after.values() if a.in_alarm] == ["dev-dm-blocks-dlq-depth"]


def test_day_metrics_sum_the_emf_lines_of_the_system_only() -> None:
    def emf(name: str, value: int, **dims: str) -> str:
        return json.dumps(
            {
                "_aws": {
                    "Timestamp": 0,
                    "CloudWatchMetrics": [
                        {
                            "Namespace": "crm/dev",
                            "Dimensions": [sorted(dims)],
                            "Metrics": [{"Name": name, "Unit": "Count"}],
                        }
                    ],
                },
                name: [value],
                **dims,
            }
        )

    runs = [
        SimpleNamespace(
            function="dev-dm-score",
            logs="\n".join(
                [
                    '{"message": "block message scored"}',
                    emf("PairsScored", 3, service="dm", band="automatic"),
                    emf("PairsScored", 2, service="dm", band="automatic"),
                    emf("ColdStart", 1, service="dm", function_name="dm-score"),
                ]
            ),
        ),
        SimpleNamespace(function="dev-dm-merge", logs=emf("Merges", 1, service="dm")),
        SimpleNamespace(function="dev-ls-capture", logs=emf("Beacons", 4, service="ls")),
    ]
    assert day_metrics(runs, "dev", "dm") == {"PairsScored{band=automatic}": 5, "Merges": 1}
