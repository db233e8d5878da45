"""Teardown: dev goes with `pulumi destroy` alone and frees its secret names at once; prod's
path lifts every protection the graph declares, in order."""

from __future__ import annotations

import pytest

from components import archive
from components.offline.engine import ACCOUNT_ID
from components.operate import teardown
from testsupport.graphs import GraphCache

SECRET = "aws:secretsmanager/secret:Secret"
SECRETS_MANAGER = {"secretStore": "secretsmanager"}
"""The documents' store (both stack files choose Parameter Store, which has no window)."""


def test_recovery_window_per_environment(graphs: GraphCache) -> None:
    # Both stacks keep their secrets in Parameter Store (secretStore: ssm): no window.
    assert graphs.run("dev").of_type(SECRET) == graphs.run("prod").of_type(SECRET) == []
    dev = graphs.run("dev").of_type("aws:ssm/parameter:Parameter")
    assert len(dev) == 17 and {s.inputs["type"] for s in dev} == {"SecureString"}
    dev = graphs.run("dev", SECRETS_MANAGER).of_type(SECRET)
    prod = graphs.run("prod", SECRETS_MANAGER).of_type(SECRET)
    assert dev and {int(s.inputs.get("recoveryWindowInDays") or 0) for s in dev} == {0}
    assert prod and {int(s.inputs["recoveryWindowInDays"]) for s in prod} == {30}


def test_dev_is_one_destroy(graphs: GraphCache) -> None:
    assert list(teardown.steps(graphs.run("dev"))) == [
        "1. pulumi destroy --stack dev   # nothing is protected in dev"
    ]


@pytest.mark.parametrize("overrides", [None, SECRETS_MANAGER])
def test_prod_lifts_each_protection_before_destroy(
    graphs: GraphCache, overrides: dict[str, str] | None
) -> None:
    graph = graphs.run("prod", overrides)
    lines = list(teardown.steps(graph))
    text = "\n".join(lines)
    assert lines[0] == "1. pulumi state unprotect --all --stack prod --yes   # lift Pulumi's protect"
    destroy = next(i for i, line in enumerate(lines) if "pulumi destroy --stack prod" in line)
    for table in graph.of_type("aws:dynamodb/table:Table"):
        at = next(i for i, line in enumerate(lines) if f"--table-name {table.inputs['name']} " in line)
        assert 0 < at < destroy
    for bucket in graph.of_type("aws:s3/bucket:Bucket"):
        mocked = str(bucket.inputs["bucket"])
        assert mocked.endswith(f"-{ACCOUNT_ID}")  # the plan's stand-in account, never printed
        assert f"empty s3://{mocked.removesuffix(ACCOUNT_ID)}<account id> " in text
    assert ACCOUNT_ID not in text
    deletes = [line for line in lines[destroy:] if "--force-delete-without-recovery" in line]
    assert len(deletes) == len(graph.of_type(SECRET)) == (16 if overrides else 0)
    assert sum("--region eu-west-2 " in line for line in deletes) == (12 if overrides else 0)
    if not overrides:  # parameters are protected in prod, then go with the destroy
        assert {p.inputs["name"] for p in graph.of_type("aws:ssm/parameter:Parameter")}


def test_a_command_that_reads_the_graph_keeps_the_archive_note_off_screen(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """`make teardown` (like secrets, preflight, verify) prints its steps, not whether archives
    carry bytecode: that note is `make plan`'s."""
    monkeypatch.setattr(archive, "_announced_sources_only", False)
    monkeypatch.setattr(archive, "find_target_python", lambda: None)
    assert teardown.main(["--stack", "dev"]) == 0
    assert not [r for r in caplog.records if "sources only" in r.getMessage()]
    assert capsys.readouterr().out.startswith("Removing stack dev")
