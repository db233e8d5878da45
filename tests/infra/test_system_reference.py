"""Each system's table is read from the plan (tests/infra/test_docs.py keeps the pages current)."""

from __future__ import annotations

import pytest

from components.offline import system_reference
from components.offline.engine import Graph
from testsupport.graphs import GraphCache


@pytest.fixture(scope="module")
def graph(graphs: GraphCache) -> Graph:
    return graphs.run(system_reference.STACK)


def test_every_enabled_system_has_a_table(graph: Graph) -> None:
    assert set(system_reference.render(graph)) == set(graph.config.systems.enabled())


def test_every_function_of_the_plan_has_a_row(graph: Graph) -> None:
    blocks = "\n".join(system_reference.render(graph).values())
    for function in graph.of_type("aws:lambda/function:Function"):
        assert f"| `{function.inputs['tags']['crm:function']}` |" in blocks


def test_a_table_shows_sizes_triggers_and_grants(graph: Graph) -> None:
    dm = system_reference.render(graph)["dm"]
    row = next(line for line in dm.splitlines() if line.startswith("| `dm-merge` |"))
    assert "| 1024 MB / 60 s |" in row
    assert "PUBLIC Function URL (auth NONE)" in row
    assert "event source `sqs:dev-dm-merges batch 1`" in row
    assert "schedule `dev-dm-digest-weekly` `cron(0 9 ? * MON *)`" in row
    assert "RecordDecisions: dynamodb:DeleteItem, GetItem, PutItem, UpdateItem on `table/dev-dm-decisions`" in row
    assert "SendDigest: ses:SendEmail on `identity/example.com` if ses:FromAddress" in row
    assert "WriteOwnLogs" not in row  # said once, above the table
