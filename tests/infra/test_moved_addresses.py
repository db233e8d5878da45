"""make plan BASE=...: a change that moves a Function URL says so first, with what outside AWS
holds the old address, and a system moved away from its SMS pool is reported
(components/offline/moved_addresses.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config import PROJECT
from components.offline import moved_addresses, plan, replacements
from components.offline.engine import Graph
from components.offline.two_stacks import Verdict
from testsupport.graphs import GraphCache

ROOT = Path(__file__).resolve().parents[2]
SYSTEMS = yaml.safe_load((ROOT / "Pulumi.prod.yaml").read_text())["config"][f"{PROJECT}:systems"]


def _alone(graphs: GraphCache, system: str, **changes: Any) -> Graph:
    """prod with ``system`` alone (a smaller graph), its settings edited by ``changes``."""
    return graphs.run("prod", {"systems": {system: {**SYSTEMS[system], **changes}}})


def _report(base: Graph, now: Graph) -> list[str]:
    saved = base.to_json()
    return moved_addresses.report(replacements.changes(saved, now.to_json()), now, saved)


def test_moving_upsr_lists_its_addresses_and_the_sms_pool_it_leaves_behind(graphs: GraphCache) -> None:
    assert SYSTEMS["upsr"]["region"] == "eu-west-2"
    lines = _report(_alone(graphs, "upsr"), _alone(graphs, "upsr", region="us-east-1"))
    text = "\n".join(lines)
    assert lines[0].startswith("ADDRESSES THAT MOVE: 3 Function URL(s)")
    # The webhook: where it is registered (declared with the URL) and the output to paste.
    assert "REPLACE  upsr-order-url: region eu-west-2 -> us-east-1" in text
    assert (
        "registered in  Shopify: the app orders/create webhook subscription; set the new "
        "address there (stack output `upsr.order_webhook_url`)"
    ) in text
    # The add links: found in the sender's environment, sent by what its grants send.
    assert "sent in        mails and SMS by prod-upsr-sender (ADDLINK_URL): links already sent" in text
    # The pool is End User Messaging's, made by hand in eu-west-2; nothing else is left behind
    # (the parameters, tables and log groups move with the program, Bedrock's profiles exist
    # in both regions).
    behind = lines[lines.index("LEFT IN THE OLD REGION: resources this program uses but does not create") + 1 :]
    assert behind == [
        "  prod-upsr-sender SendNudgeSms: sms-voice pool/pool-0123456789abcdef0123456789abcdef "
        "is made outside this program in eu-west-2; after the update prod-upsr-sender uses it in "
        "us-east-1: create it there first, or its calls fail"
    ]


def _renamed(graph: Graph, url: str) -> list[str]:
    """The report against a base in which ``url``'s function had another name (so the URL is
    replaced): one graph instead of two."""
    saved = graph.to_json()
    for r in saved:
        if r["type"] == moved_addresses.FUNCTION_URL and r["name"] == url:
            r["inputs"] = {**r["inputs"], "functionName": "prod-old-name"}
    return moved_addresses.report(replacements.changes(saved, graph.to_json()), graph, saved)


def test_a_review_link_read_through_get_function_url_config_is_found(graphs: GraphCache) -> None:
    # dm-merge puts no URL in its environment: it asks Lambda for its own and mails it.
    lines = _renamed(_alone(graphs, "dm"), "dm-merge-url")
    assert '  REPLACE  dm-merge-url: functionName "prod-old-name" -> "prod-dm-merge"' in lines
    assert (
        "    sent in        mails by prod-dm-merge (reads it with GetFunctionUrlConfig): links "
        "already sent point at the old address and stop working"
    ) in lines


def test_the_job_tools_webhook_is_named_where_it_is_registered(graphs: GraphCache) -> None:
    lines = _renamed(_alone(graphs, "rrs"), "rrs-webhook-url")
    assert any("registered in  the job tool: its webhook settings;" in line for line in lines)
    assert any("(stack output `rrs.webhook_url`)" in line for line in lines)


def test_a_change_that_moves_no_address_says_so_in_one_line(graphs: GraphCache) -> None:
    graph = _alone(graphs, "upsr")
    assert _report(graph, graph) == [
        "addresses: no Function URL moves and no outside resource is left in another region"
    ]


def test_make_plan_base_prints_the_moved_addresses_before_the_plan(
    graphs: GraphCache, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, moved = _alone(graphs, "upsr"), _alone(graphs, "upsr", region="us-east-1")
    saved = tmp_path / "deployed.json"
    saved.write_text(json.dumps(base.to_json()))
    monkeypatch.setattr(plan, "run", lambda stack: moved)
    # The other stack's build is two_stacks' business (tests/infra/test_two_stacks.py).
    monkeypatch.setattr(plan, "check_project", lambda built: Verdict(stacks=("prod",)))
    plan.main(["--stack", "prod", "--base", str(saved)])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ADDRESSES THAT MOVE: 3 Function URL(s)")
    first_plan_line = out.index(next(line for line in out if line.startswith("stack prod")))
    assert "LEFT IN THE OLD REGION: resources this program uses but does not create" in out[:first_plan_line]
    # The full list of replacements still closes the output.
    assert any(line.startswith("changes against the base plan:") for line in out[first_plan_line:])
