"""``make upgrade-check``'s verdict on one message this release cannot read.

A dm block message of a format dm-score does not read (version 6: older than the 0.1.0 format
it converts) is refused: reported, received ``maxReceiveCount`` times, moved to dm-blocks-dlq,
whose depth alarm counts it. Put 0.1.0's drop back (``batch.Unusable`` acknowledged, one
ERROR line) and the check reports the message dropped and fails. The whole upgrade from
0.1.0 runs in ``make upgrade-check`` (``make test`` runs it), not here: it takes two minutes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from handlers.common import batch
from handlers.common.observability import get_logger
from sandbox.core import Sandbox
from sandbox.upgrade_check import Row, in_flight, judge
from testsupport.graphs import shared

V7 = Path(__file__).parents[1] / "handlers" / "dm" / "data" / "block_message_v7.json"


def _unreadable_block_message(sb: Sandbox) -> Row:
    body = json.loads(json.loads(V7.read_text())["bodies"][0])
    sqs = sb.aws("sqs", sb.region_of("dm-score"))
    url = sqs.get_queue_url(QueueName="dev-dm-blocks")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({**body, "v": 6}))
    before = in_flight(sb)
    sb.drain()
    assert sb.triggers is not None
    while (returned := sb.triggers.redeliveries.next_time()) is not None:
        sb.clock.jump_to(returned)  # each receive one visibility timeout after the last
        sb.drain()
    sb.drain()
    return next(r for r in judge(sb, before) if r.name.startswith("dev-dm-blocks "))


def test_a_message_this_release_cannot_read_ends_dead_lettered_and_counted() -> None:
    with Sandbox(shared().program("dev")) as sb:
        row = _unreadable_block_message(sb)
        assert row.ok and dict(row.outcomes) == {"dead-lettered to dev-dm-blocks-dlq, counted": 1}
        assert sb.queue_depth("dm-blocks-dlq") == 1


def test_the_check_fails_when_the_drop_is_put_back() -> None:
    with Sandbox(shared().program("dev")) as sb:
        real = batch._process

        def as_in_0_1_0(kind: Any, event: Any, context: Any, handle: Any) -> dict[str, Any]:
            def one(record: Any) -> object:
                try:
                    return handle(record)
                except batch.Unusable as err:
                    get_logger().error(
                        "unusable record dropped", extra={"record": batch._id(record), "error": str(err)}
                    )
                    return "dropped"

            return real(kind, event, context, one)

        sb.patch(batch, "_process", as_in_0_1_0)
        row = _unreadable_block_message(sb)
        assert not row.ok and dict(row.outcomes) == {"dropped": 1}, row
        assert sb.queue_depth("dm-blocks-dlq") == 0


def test_an_old_release_runs_in_this_venv_only_when_it_has_every_package_at_its_version() -> None:
    from sandbox.upgrade_check import locked_packages

    def lock(*pins: tuple[str, str]) -> str:
        return "version = 1\n\n" + "".join(
            f'[[package]]\nname = "{n}"\nversion = "{v}"\nsource = {{ registry = "x" }}\n\n' for n, v in pins
        )

    old = locked_packages(lock(("crm-automations", "0.1.0"), ("boto3", "1.40.0")))
    assert old == {("boto3", "1.40.0")}  # the project's own version moves every release
    assert old <= locked_packages(lock(("crm-automations", "0.1.1"), ("boto3", "1.40.0"), ("zizmor", "1.0")))
    assert not old <= locked_packages(lock(("boto3", "1.41.0")))
