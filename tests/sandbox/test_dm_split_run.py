"""Issue 43: dm's split weekly run, played through the sandbox's own SQS triggers: dm-block
reads a small portal and, above ``splitAbove``, queues the read stage on dm-stages; dm-stage
runs every stage's partitions as SQS delivers them, under its deployed grants (the shards
bucket's prefix, the stage counters' keys); emit feeds dm-blocks, and dm-score writes the same
pairs, scores and bands as the single run writes on the same portal."""

from __future__ import annotations

from typing import Any

from sandbox import scenarios
from sandbox.core import Sandbox
from tests.infra.graph_helpers import only_system
from testsupport.graphs import shared

PARTITION = 60
"""Contacts per partition: the scripted day's ~300 contacts in six partitions."""


def weekly_run(systems: dict[str, Any]) -> tuple[Sandbox, dict[str, tuple[Any, ...]]]:
    """The scripted day's portal read and scored once; dm-pairs' rows by pair key."""
    sb = Sandbox(shared().program("dev", {"systems": systems})).start()
    day = scenarios.load("dm")
    assert day is not None
    day.prepare(sb)
    sb.fire("dm-block-weekly")
    sb.drain()
    rows = {
        str(i["pair_key"]): (i.get("score"), i.get("band"), i.get("blocked_by"))
        for i in sb.items("dm-pairs")
        if "#" in str(i["pair_key"]) and not str(i["pair_key"]).startswith(("run#", "read#", "split#", "index#"))
    }
    return sb, rows


def test_the_split_run_finds_the_single_runs_pairs_through_the_sandboxs_queues() -> None:
    single_sb, single = weekly_run(only_system("dm"))
    try:
        assert single and not single_sb.objects("dm-shards")  # below splitAbove: one invocation
    finally:
        single_sb.stop()
    sb, split = weekly_run(only_system("dm", splitAbove=100, partitionContacts=PARTITION))
    try:
        assert split == single
        assert sb.denials() == [] and sb.queue_depth("dm-stages-dlq") == 0
        shards = sb.objects("dm-shards")
        assert shards and all(key.startswith("shards/") for key in shards)
        latest = next(i for i in sb.items("dm-pairs") if i["pair_key"] == "run#latest")
        assert latest["split"]["partitions"] == -(-int(latest["contacts"]) // PARTITION)
    finally:
        sb.stop()
