"""dm follows HubSpot's deletions: after the weekly full read, a contact HubSpot deleted for
good is erased from dm's stores; an archived (restorable), merged-away or in-undo-window
contact is kept, and a read that missed contacts erases nothing."""

from __future__ import annotations

import json
import time

import pytest

from handlers.duplicate_merger import deletions
from handlers.duplicate_merger.functions import block
from tests.handlers.dm.conftest import DmAws
from tests.handlers.dm.test_dm_block import Context
from testsupport.common import LambdaStub
from testsupport.dm import InMemoryCrm


def _portal() -> InMemoryCrm:
    crm = InMemoryCrm()
    for n in range(101, 111):
        crm.add_contact(str(n), email=f"p{n}@example.com", firstname=f"F{n}", lastname="Same")
    return crm


def _seed(dm_aws: DmAws) -> None:
    from handlers.common.aws_clients import client

    future, past = int(time.time()) + 86_400, int(time.time()) - 86_400
    for pair in ("101#102", "109#110", "103#104"):
        a, b = pair.split("#")
        dm_aws.pairs.put_item(Item={"pair_key": pair, "a": {"id": a, "email": f"p{a}@example.com"}, "b": {"id": b}})
    dm_aws.decisions.put_item(Item={"pair_key": "101#102", "decision": "rejected"})
    dm_aws.decisions.put_item(Item={"pair_key": "103#104", "decision": "rejected"})
    dm_aws.merges.put_item(Item={"merge_id": "mrg_open", "kept_id": "105", "merged_id": "106", "expires_at": future})
    dm_aws.merges.put_item(Item={"merge_id": "mrg_old", "kept_id": "107", "merged_id": "108", "expires_at": past})
    s3 = client("s3")
    s3.put_object(Bucket=dm_aws.bucket, Key="undo/mrg_open.json", Body=json.dumps({"merge_id": "mrg_open", "kept": {"id": "105"}}))
    s3.put_object(Bucket=dm_aws.bucket, Key="undo/mrg_gone.json", Body=json.dumps({"merge_id": "mrg_gone", "kept": {"id": "101", "email": "p101@example.com"}}))


def test_a_contact_deleted_for_good_is_erased_and_the_others_are_kept(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    from handlers.common.aws_clients import client
    from handlers.common.entry import registry

    crm = _portal()
    crm.delete_for_good("101")  # a GDPR delete
    crm.archive("103")  # an ordinary delete: restorable for 90 days
    crm.delete_for_good("105")  # gone, but its dm merge is still in its undo window
    crm.archive("106")
    crm.archive("108")  # absorbed by dm's old merge, still archived in HubSpot
    crm.delete_for_good("109")  # merged by hand into 110
    crm.contacts["110"]["hs_merged_object_ids"] = "109"
    _seed(dm_aws)
    client("secretsmanager").put_secret_value(SecretId="dev-dm-crm-read", SecretString='{"token": "svc"}')
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "dev-dm-block")
    stub = LambdaStub()
    registry.override(block, crm=lambda deadline: crm, lambda_client=lambda: stub)

    summary = block.handler({"action": "block"}, Context(300))
    assert summary["deleted_contacts"] == 1
    (call,) = stub.invocations
    payload = json.loads(call["Payload"])
    assert payload == {"action": "erase-deleted", "contacts": ["101"]}
    assert call["FunctionName"] == "dev-dm-block" and call["InvocationType"] == "Event"

    erased = block.handler(payload, Context(300))
    assert erased == {"dm-pairs": 1, "dm-decisions": 1, "dm-undo": 1}
    assert "Item" not in dm_aws.pairs.get_item(Key={"pair_key": "101#102"})
    assert "Item" not in dm_aws.decisions.get_item(Key={"pair_key": "101#102"})
    versions = client("s3").list_object_versions(Bucket=dm_aws.bucket).get("Versions", [])
    assert sorted(v["Key"] for v in versions) == ["undo/mrg_open.json"]  # its window is open
    for kept in ("109#110", "103#104"):
        assert "Item" in dm_aws.pairs.get_item(Key={"pair_key": kept})
    assert "Item" in dm_aws.merges.get_item(Key={"merge_id": "mrg_open"})
    assert block.handler(payload, Context(300)) == {}  # idempotent: nothing left to erase


def test_a_read_that_missed_contacts_erases_nothing() -> None:
    """Every id the read did not see is asked of HubSpot before anything is erased."""
    crm = _portal()
    seen = deletions.Seen()
    list(seen.watch([("101", {}), ("102", {"hs_merged_object_ids": "90;91"})]))  # a partial read
    held = {"101", "102", "103", "104", "90", "91", "77"}
    assert deletions.deleted(seen, held, {"104"}, crm) == ["77"]  # 77 only: HubSpot has no 77
