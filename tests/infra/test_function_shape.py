"""The one function shape: entry module from the seed name, the 6x visibility rule checked."""

from __future__ import annotations

import importlib
from typing import Any

import pulumi
import pytest

from components.deployment import Deployment
from components.guarded_table import GuardedTable, GuardedTableArgs
from components.offline.engine import ACCOUNT_ID
from components.personal_data import NoPersonalData
from components.scheduled_job import Schedule
from components.scoped_lambda import EventRuleTrigger, FunctionUrl, QueueTrigger
from components.systems.function_factory import FunctionFactory, entry_point
from components.work_queue import WorkQueue, WorkQueueArgs, consumer_visibility
from handlers.common.entry import registry
from handlers.common.tables import Index, Key, TableSpec
from tests.infra.conftest import of_type, run_blocks
from testsupport.graphs import GraphCache

pytestmark = pytest.mark.usefixtures("fake_archives")

NOTHING = NoPersonalData("a test fixture's made-up data")


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
            d,
            "handlers.tst",
            {"tst-worker": (256, 30)},
            pulumi.ResourceOptions(),
            logs=NOTHING,
            failed_events=NOTHING,
        )
        work = WorkQueue(
            "tst-work",
            WorkQueueArgs(d, "tst-work", visibility_timeout_s=visibility, personal_data=NOTHING),
        )
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
        GuardedTable("tst-items", GuardedTableArgs.of(d, spec, NOTHING))
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


def scheduled(**extra: Any) -> Any:
    def program(d: Deployment) -> dict[str, Any]:
        factory = FunctionFactory(
            d,
            "handlers.tst",
            {"tst-sweep": (128, 30)},
            pulumi.ResourceOptions(),
            logs=NOTHING,
            failed_events=NOTHING,
        )
        factory(
            "tst-sweep",
            "sweeps",
            (),
            {},
            schedules=(
                Schedule("tst-sweep", "rate(1 hour)", "hourly"),
                Schedule("tst-nightly", "cron(0 3 * * ? *)", payload='{"full": true}'),
            ),
            **extra,
        )
        return {}

    return program


def test_schedules_are_declared_with_their_function_in_one_group() -> None:
    resources = run_blocks(scheduled())
    schedules = of_type(resources, "aws:scheduler/schedule:Schedule")
    assert sorted(s.name for s in schedules) == ["tst-nightly", "tst-sweep-schedule"]
    (group,) = of_type(resources, "aws:scheduler/scheduleGroup:ScheduleGroup")
    assert {s.inputs["groupName"] for s in schedules} == {group.inputs["name"]}
    (function,) = of_type(resources, "aws:lambda/function:Function")
    assert {s.inputs["target"]["arn"] for s in schedules} == {
        f"arn:aws:lambda:eu-west-2:{ACCOUNT_ID}:function:{function.inputs['name']}"
    }
    # Scheduler invokes asynchronously: the function got its on-failure destination.
    (config,) = of_type(resources, "aws:lambda/functionEventInvokeConfig:FunctionEventInvokeConfig")
    assert config.inputs["maximumRetryAttempts"] == 2


def test_a_system_without_schedules_declares_no_group() -> None:
    resources = run_blocks(consumer(consumer_visibility(30)))
    assert not of_type(resources, "aws:scheduler/scheduleGroup:ScheduleGroup")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"invoked_async": True}, "invoked_async is implied by its schedules"),
        ({"async_max_retries": 3}, "async_max_retries must be 0..2"),
    ],
)
def test_a_scheduled_function_refuses_arguments_that_do_nothing(
    extra: dict[str, Any], message: str
) -> None:
    with pytest.raises(Exception, match=message):
        run_blocks(scheduled(**extra))


def unscheduled(**extra: Any) -> Any:
    def program(d: Deployment) -> dict[str, Any]:
        factory = FunctionFactory(
            d,
            "handlers.tst",
            {"tst-worker": (256, 30)},
            pulumi.ResourceOptions(),
            logs=NOTHING,
            failed_events=NOTHING,
        )
        work = WorkQueue(
            "tst-work", WorkQueueArgs(d, "tst-work", dead_letter=True, personal_data=NOTHING)
        )
        if "events" in extra:
            extra["events"] = (EventRuleTrigger("tst-rule", {"detail-type": ["x"]}),)
        if "on_failure" in extra:
            extra["on_failure"] = work
        factory("tst-worker", "works", (), {}, **extra)
        return {}

    return program


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        # Polled from a queue or called synchronously: retries of async invokes never apply.
        ({"async_max_retries": 1}, "async_max_retries applies to asynchronous invocations"),
        ({"on_failure": True}, "on_failure applies to asynchronous invocations"),
        ({"events": True, "invoked_async": True}, "invoked_async is implied by its event rule"),
    ],
)
def test_arguments_that_would_be_ignored_are_refused(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(Exception, match=message):
        run_blocks(unscheduled(**extra))


def test_cors_methods_without_origins_are_refused() -> None:
    with pytest.raises(ValueError, match="cors_methods without cors_origins"):
        FunctionUrl("AWS_IAM", cors_methods=("GET",))
    assert FunctionUrl("AWS_IAM", cors_origins=("https://example.com",)).cors_methods == ()


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_function_url_call_is_read_once_at_the_entry(graphs: GraphCache, stack: str) -> None:
    """A function behind a Function URL gets each call as one ``Request`` (method, headers,
    query, exact body, check mark), never the raw event: ``entry.handler(..., url=...)``."""
    graph = graphs.run(stack)
    functions = {str(f.inputs["name"]): f for f in graph.of_type("aws:lambda/function:Function")}
    behind_url = {str(u.inputs["functionName"]) for u in graph.of_type("aws:lambda/functionUrl:FunctionUrl")}
    assert behind_url, "the stack has Function URLs"
    for name, function in functions.items():
        module_name = str(function.inputs["handler"]).rsplit(".", 1)[0]
        importlib.import_module(module_name)
        assert registry.reads_requests(module_name) == (name in behind_url), name
