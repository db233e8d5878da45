"""The one function shape: entry module from the seed name, the 6x visibility rule checked."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from components.deployment import Deployment
from components.guarded_table import GuardedTable, GuardedTableArgs
from components.scoped_lambda import QueueTrigger
from components.systems.function_factory import FunctionFactory, entry_point
from components.work_queue import WorkQueue, WorkQueueArgs, consumer_visibility
from handlers.common.tables import Index, Key, TableSpec
from tests.infra.conftest import of_type, run_blocks

pytestmark = pytest.mark.usefixtures("fake_archives")


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("rrs-webhook", "handlers.review_requests.functions.webhook.handler"),
        ("ler-junk-writer", "handlers.review_requests.functions.junk_writer.handler"),
    ],
)
def test_the_entry_module_follows_from_the_seed_name(name: str, module: str) -> None:
    assert entry_point("handlers.review_requests", name) == module


def test_a_name_without_its_system_prefix_is_refused() -> None:
    with pytest.raises(ValueError, match="<system>-<function>"):
        entry_point("handlers.review_requests", "webhook")


def consumer(visibility: int) -> Any:
    def program(d: Deployment) -> dict[str, Any]:
        factory = FunctionFactory(
            d, "handlers.tst", {"tst-worker": (256, 30)}, pulumi.ResourceOptions()
        )
        work = WorkQueue("tst-work", WorkQueueArgs(d, "tst-work", visibility_timeout_s=visibility))
        factory("tst-worker", "works", (), {}, queues=(QueueTrigger(work),))
        return {}

    return program


def test_a_queue_at_six_times_the_consumer_timeout_is_accepted() -> None:
    assert consumer_visibility(30) == 180
    resources = run_blocks(consumer(consumer_visibility(30)))
    (function,) = of_type(resources, "aws:lambda/function:Function")
    assert function.inputs["handler"] == "handlers.tst.functions.worker.handler"
    assert of_type(resources, "aws:lambda/eventSourceMapping:EventSourceMapping")


def test_a_queue_below_six_times_the_consumer_timeout_is_refused() -> None:
    with pytest.raises(Exception, match="below 180s, six times the function timeout"):
        run_blocks(consumer(consumer_visibility(30) - 1))


def test_a_table_spec_builds_the_same_table_as_hand_written_args() -> None:
    spec = TableSpec(
        "tst-items",
        Key("pk"),
        Key("sk", "N"),
        indexes=(Index("by-state", Key("state"), Key("due")),),
        ttl_attribute="ttl",
        stream="NEW_IMAGE",
    )
    assert spec.index("by-state").partition_key == Key("state")
    with pytest.raises(KeyError, match="no index"):
        spec.index("by-nothing")

    def program(d: Deployment) -> dict[str, Any]:
        GuardedTable("tst-items", GuardedTableArgs.of(d, spec))
        return {}

    (table,) = of_type(run_blocks(program), "aws:dynamodb/table:Table")
    assert table.inputs["hashKey"] == "pk" and table.inputs["rangeKey"] == "sk"
    assert table.inputs["streamViewType"] == "NEW_IMAGE"
    assert table.inputs["ttl"]["attributeName"] == "ttl"
    assert {a["name"]: a["type"] for a in table.inputs["attributes"]} == {
        "due": "S",
        "pk": "S",
        "sk": "N",
        "state": "S",
    }
