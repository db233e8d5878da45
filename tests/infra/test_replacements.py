"""make plan BASE=...: what a change replaces, stateful first, and the protected stack's refusal
to lose a table or bucket its allowReplacement does not name (components/offline/replacements.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config import PROJECT
from components.offline import replacements
from components.offline.replacements import BUCKET, QUEUE, SECRET, TABLE, Change
from testsupport.graphs import GraphCache

ROOT = Path(__file__).resolve().parents[2]
FUNCTION = "aws:lambda/function:Function"


def res(type_: str, logical: str, region: str = "eu-west-2", **inputs: Any) -> dict[str, Any]:
    parent = "crm:index:GuardedTable$" if type_ == TABLE else ""
    return {
        "type": type_,
        "name": logical,
        "urn": f"urn:pulumi:prod::{PROJECT}::{parent}{type_}::{logical}",
        "physical_name": inputs.get("name") or inputs.get("bucket"),
        "custom": True,
        "region": region,
        "inputs": inputs,
    }


BASE = [
    res(TABLE, "rrs-optout", name="prod-rrs-optout", hashKey="phone"),
    res(BUCKET, "ler-raw", bucket="prod-ler-raw-123456789012"),
    res(SECRET, "rrs-sms", name="prod-rrs-sms"),
    res(QUEUE, "rrs-work", name="prod-rrs-work", visibilityTimeoutSeconds=60),
    res(FUNCTION, "rrs-sender", name="prod-rrs-sender", memorySize=256),
]


def edited(plan: list[dict[str, Any]], logical: str, **changes: Any) -> list[dict[str, Any]]:
    out = []
    for r in plan:
        if r["name"] == logical:
            region = changes.pop("region", r["region"])
            r = {**r, "region": region, "inputs": {**r["inputs"], **changes}}
        out.append(r)
    return out


def test_an_unchanged_plan_changes_nothing() -> None:
    assert replacements.changes(BASE, BASE) == []


def test_in_place_updates_are_not_replacements() -> None:
    now = edited(BASE, "rrs-work", visibilityTimeoutSeconds=90)
    now = edited(now, "rrs-sender", memorySize=512)
    assert replacements.changes(BASE, now) == []


@pytest.mark.parametrize(
    "logical,change,reason",
    [
        ("rrs-optout", {"hashKey": "contact"}, 'hashKey "phone" -> "contact"'),
        (
            "rrs-optout",
            {"name": "prod-rrs-opt-out"},
            'name "prod-rrs-optout" -> "prod-rrs-opt-out"',
        ),
        ("rrs-optout", {"region": "us-east-1"}, "region eu-west-2 -> us-east-1"),
        ("ler-raw", {"bucket": "prod-ler-raw-2"}, 'bucket "prod-ler-raw-123456789012" ->'),
        ("rrs-sms", {"name": "prod-rrs-sms-2"}, 'name "prod-rrs-sms" -> "prod-rrs-sms-2"'),
        ("rrs-work", {"fifoQueue": True}, "fifoQueue (none) -> true"),
        ("rrs-sender", {"region": "us-east-1"}, "region eu-west-2 -> us-east-1"),
    ],
)
def test_a_replace_on_change_property_or_region_replaces(
    logical: str, change: dict[str, Any], reason: str
) -> None:
    found = replacements.changes(BASE, edited(BASE, logical, **change))
    assert [(c.action, c.name) for c in found] == [("replace", logical)]
    assert any(r.startswith(reason) for r in found[0].reasons), found[0].reasons


def test_stateful_resources_come_first() -> None:
    now = edited(BASE, "rrs-sender", region="us-east-1")
    for logical in ("rrs-work", "rrs-sms", "ler-raw", "rrs-optout"):
        now = edited(now, logical, region="us-east-1")
    found = replacements.changes(BASE, now)
    assert [c.type for c in found] == [TABLE, BUCKET, SECRET, QUEUE, FUNCTION]


def test_a_protected_stack_refuses_losing_a_table_or_bucket_unless_allowed() -> None:
    now = [r for r in edited(BASE, "rrs-optout", region="us-east-1") if r["name"] != "ler-raw"]
    found = replacements.changes(BASE, now)
    assert {(c.action, c.name) for c in found} == {("replace", "rrs-optout"), ("delete", "ler-raw")}
    lines, ok = replacements.report(found, stack="prod", protected=True, allowed=())
    assert not ok
    assert "REFUSED: stack prod is protected" in lines[-1]
    assert "rrs-optout, ler-raw" in lines[-1] and "allowReplacement" in lines[-1]
    assert replacements.report(found, stack="prod", protected=False, allowed=())[1]
    assert not replacements.report(found, stack="prod", protected=True, allowed=["ler-raw"])[1]
    lines, ok = replacements.report(
        found, stack="prod", protected=True, allowed=["rrs-optout", "ler-raw", "gone"]
    )
    assert ok and any("allowReplacement names gone" in line for line in lines)


def test_secrets_and_queues_are_listed_but_not_refused() -> None:
    now = edited(edited(BASE, "rrs-sms", name="x"), "rrs-work", name="y")
    found = replacements.changes(BASE, now)
    assert [c.type for c in found] == [SECRET, QUEUE]
    assert replacements.refused(found, protected=True, allowed=()) == []


def test_the_plan_records_each_resources_region(graphs: GraphCache) -> None:
    plan = graphs.run("prod").to_json()
    tables = [r for r in plan if r["type"] == TABLE]
    assert tables and all(r["region"] in {"us-east-1", "eu-west-2"} for r in tables)
    assert replacements.stack_of(plan) == "prod"


def test_moving_a_system_to_another_region_replaces_its_tables_and_prod_refuses(
    graphs: GraphCache,
) -> None:
    """The issue's case: a one-line config edit that would empty rrs's tables, opt-outs
    included."""
    config = yaml.safe_load((ROOT / "Pulumi.prod.yaml").read_text())["config"]
    rrs = config[f"{PROJECT}:systems"]["rrs"]
    base = graphs.run("prod", {"systems": {"rrs": rrs}})
    moved = graphs.run("prod", {"systems": {"rrs": {**rrs, "region": "us-east-1"}}})
    found = replacements.changes(base.to_json(), moved.to_json())
    tables = {c.name for c in found if c.type == TABLE and c.action == "replace"}
    assert "rrs-optout" in tables and "rrs-requests" in tables
    assert found[0].type == TABLE and found[0].reasons == ("region eu-west-2 -> us-east-1",)
    lines, ok = replacements.report(
        found, stack="prod", protected=True, allowed=moved.config.allow_replacement
    )
    assert not ok and "rrs-optout" in lines[-1]
    assert replacements.report(found, stack="prod", protected=True, allowed=sorted(tables))[1]


def test_a_change_line_names_action_type_and_reason() -> None:
    change = Change("replace", TABLE, "rrs-optout", "prod-rrs-optout", ("region a -> b",))
    assert change.line() == (
        "REPLACE  aws:dynamodb/table:Table rrs-optout (prod-rrs-optout): region a -> b"
    )


def test_make_plan_base_prints_the_changes_and_refuses(
    graphs: GraphCache, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``make plan STACK=prod BASE=<file>``'s check, on the prod graph against a saved plan in
    which rrs lived in us-east-1."""
    import json

    from components.offline.plan import _replacement_check

    graph = graphs.run("prod")
    saved = graph.to_json()
    for r in saved:
        if r["name"].startswith("rrs-") and r["region"] == "eu-west-2":
            r["region"] = "us-east-1"
    base = tmp_path / "deployed.json"
    base.write_text(json.dumps(saved))
    assert _replacement_check(graph, base) is False
    out = capsys.readouterr().out
    assert "REPLACE  aws:dynamodb/table:Table rrs-optout (prod-rrs-optout): region" in out
    assert "REFUSED: stack prod is protected" in out
    base.write_text(json.dumps(graph.to_json()))
    assert _replacement_check(graph, base) is True
    assert "0 replaced, 0 deleted, 0 created" in capsys.readouterr().out
    other = [{**r, "urn": r["urn"].replace("urn:pulumi:prod::", "urn:pulumi:dev::")} for r in saved]
    base.write_text(json.dumps(other))
    assert _replacement_check(graph, base) is False
    assert "is a plan of stack dev, not prod" in capsys.readouterr().out
