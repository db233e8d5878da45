"""The sandbox returns a failed SQS message after the queue's visibility timeout, as SQS does.

"The visibility timeout begins as soon as a message is delivered to you ... If you don't delete
it before the timeout expires, the message becomes visible again in the queue" ("Amazon SQS
visibility timeout", SQS Developer Guide,
https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-visibility-timeout.html).
Until issue #27 the sandbox returned it at visibility 0, so every redelivery of a failing
merge fell inside dm's 180 s claim and the pair ended in the DLQ still ``merging`` (finding 8).
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
from typing import Any

from sandbox.core import Sandbox
from testsupport.graphs import shared


def test_a_returned_message_comes_back_one_visibility_timeout_later() -> None:
    """Fails on ae6d6c4: the five deliveries all happen in the first drain, at one instant."""
    with Sandbox(shared().program("dev")) as sb:
        from handlers.duplicate_merger import scoring

        seen: list[dt.datetime] = []

        def broken(*_: Any, **__: Any) -> dict[str, int]:
            seen.append(sb.clock.now())
            raise RuntimeError("the scorer is broken")

        sb.patch(scoring, "process", broken)
        queue = next(q for q in sb.topology.queues if q.name == "dev-dm-blocks")
        timeout = dt.timedelta(seconds=queue.visibility_timeout_s)
        assert timeout >= dt.timedelta(seconds=180)  # dm-score's 60 s x 6
        sqs = sb.aws("sqs", sb.region_of("dm-score"))
        url = sqs.get_queue_url(QueueName="dev-dm-blocks")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"block": "b-1"}))
        sb.drain()
        sb.drain()
        assert len(seen) == 1  # returned, and invisible while the clock stands
        sb.clock.jump_to(seen[0] + timeout - dt.timedelta(seconds=5))
        sb.drain()
        assert len(seen) == 1  # not before the timeout
        sb.clock.jump_to(seen[0] + timeout - dt.timedelta(seconds=5))
        sb.advance(seconds=4 * timeout.total_seconds() + 60)
        assert len(seen) == 5  # maxReceiveCount 5
        gaps = [later - earlier for earlier, later in itertools.pairwise(seen)]
        assert all(abs(gap - timeout) < dt.timedelta(seconds=5) for gap in gaps), gaps  # real time runs too
        assert sb.queue_depth("dm-blocks") == 0 and sb.queue_depth("dm-blocks-dlq") == 1
