"""The README's per-system tables are generated from the plan and kept current."""

from __future__ import annotations

import pytest

from components.config_reference import README
from components.offline import system_reference
from components.offline.engine import Graph, run


@pytest.fixture(scope="module")
def graph() -> Graph:
    return run(system_reference.STACK)


def test_readme_system_tables_are_current(graph: Graph) -> None:
    blocks = system_reference.render(graph)
    assert set(blocks) == set(graph.config.systems.enabled())
    stale = system_reference.stale(README.read_text(), blocks)
    assert stale == [], (
        f"README.md's generated tables of {', '.join(stale)} differ from the plan: run `make docs`"
    )


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


def test_write_replaces_only_the_blocks(graph: Graph) -> None:
    blocks = system_reference.render(graph)
    old = {s: b.replace("| 1024 MB", "| 9 MB") for s, b in blocks.items()}
    text = "intro\n" + "\n\n".join(f"## {s}\n{b}\nafter {s}" for s, b in old.items()) + "\nend\n"
    assert system_reference.stale(text, blocks) != []
    written = system_reference.write(text, blocks)
    assert system_reference.stale(written, blocks) == []
    assert written.startswith("intro\n## dm\n") and written.endswith("after rrs\nend\n")
    assert all(f"after {s}" in written for s in blocks)


def test_write_refuses_a_readme_without_the_marker(graph: Graph) -> None:
    with pytest.raises(SystemExit, match="system-reference:dm"):
        system_reference.write("no markers here", system_reference.render(graph))
