"""The owner's side of a run (issue 40): no proposal about a record an automatic merge of the
same run took, one item and one page per person, and result pages that say who, what, when, by
whom and what can still be done."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from handlers.common.entry import registry
from handlers.common.link_tokens import issue_token
from handlers.duplicate_merger import people
from handlers.duplicate_merger.functions import merge
from tests.handlers.dm.conftest import DmAws
from tests.handlers.dm.flows import (
    BROWSER,
    KEYS,
    NOW,
    crm_with_duplicates,
    deliver_clicks,
    last_mail,
    link_token,
    queued_merges,
    request,
    run_week,
)
from testsupport.dm import InMemoryCrm


def crm_with_people() -> InMemoryCrm:
    """Ann Zyborski twice (merged automatically) and a third Ann sharing the absorbed record's
    mobile; Zed Quarrington three times, each pair only a proposal."""
    crm = crm_with_duplicates()
    crm.add_contact("103", firstname="Ann", lastname="Zyborsky", email="a.zyborsky@home.example",
                    mobilephone="617-555-0199", city="Boston", createdate="2025-06-01")
    crm.add_contact("301", firstname="Zed", lastname="Quarrington", email="zq@one.io", city="Tulsa",
                    phone="918-555-0144")
    crm.add_contact("302", firstname="Zed", lastname="Quarington", email="zed.q@two.io", city="Tulsa",
                    phone="918-555-0144")
    crm.add_contact("303", firstname="Zed", lastname="Quarrington", email="zed@three.io", city="Tulsa",
                    phone="918-555-0144")
    return crm


def week_with_its_automatic_merge(dm_aws: DmAws) -> InMemoryCrm:
    """The week's run, then the automatic merge it queued (Ann 102 into Ann 101)."""
    crm = crm_with_people()
    run_week(dm_aws, crm)
    registry.override(merge, crm=lambda: crm)
    registry.override(clock=lambda: NOW)
    (message,) = queued_merges(dm_aws)
    merge.handler({"Records": [{"messageId": "m1", "body": json.dumps(message)}]}, None)
    return crm


def zeds_page(dm_aws: DmAws) -> tuple[str, str]:
    """The week's run, then Zed's page from one of his pairs: (its review token, the page)."""
    crm = crm_with_people()
    run_week(dm_aws, crm)
    registry.override(merge, crm=lambda: crm)
    registry.override(clock=lambda: NOW)
    review = issue_token(KEYS, subject="302#303", action="review", ttl_seconds=86_400, now=NOW.timestamp())
    page = merge.handler(request("GET", "/review", review, BROWSER), None)
    assert page["statusCode"] == 200
    return review, str(page["body"])


def pairs_of(dm_aws: DmAws, band: str) -> dict[str, float]:
    return {i["pair_key"]: float(i["score"]) for i in dm_aws.pairs.scan()["Items"]
            if i.get("band") == band}


def test_the_scenario_has_what_the_rules_are_about(dm_aws: DmAws) -> None:
    """Guards the fixture: without these pairs the tests below would pass vacuously."""
    run_week(dm_aws, crm_with_people())
    proposed = pairs_of(dm_aws, "propose")
    assert set(pairs_of(dm_aws, "automatic")) == {"101#102"}
    assert "102#103" in proposed, proposed
    assert {"301#302", "302#303"} <= set(proposed), proposed


def test_no_proposal_touches_a_record_the_run_merged_and_a_person_is_one_item(
    dm_aws: DmAws,
) -> None:
    crm = week_with_its_automatic_merge(dm_aws)
    assert "102" in crm.archived
    result = merge.handler({"action": "digest"}, None)
    sent = json.loads(last_mail())
    assert "week of Mon 3 Aug 2026" in sent["subject"] and "W32" not in sent["subject"]
    html = str(sent["body"])
    assert "W32" not in html.split("class=detail")[0]  # the run's name only as detail
    review = html.split("<h2>To review</h2>")[1].split("</ol>")[0]
    items = review.split("<li")[1:]
    assert not [i for i in items if "Zyborsky" in i], review  # 102 is gone: no such proposal
    zeds = [i for i in items if "Zed Qua" in i]
    assert len(zeds) == 1, review  # three records of Zed: one item
    assert "3 records" in zeds[0] and "See all 3 records" in zeds[0], zeds[0]
    assert result["proposals"] == len(items)


def test_a_person_with_three_records_has_one_page_with_every_record(dm_aws: DmAws) -> None:
    _, body = zeds_page(dm_aws)
    assert body.count("Zed Quarington") >= 1 and body.count("Zed Quarrington") >= 2
    forms = re.findall(r"action='(/confirm\?t=[^']+)'", body)
    assert len(forms) == len([k for k in pairs_of(dm_aws, "propose") if k.startswith("30")])


def test_an_old_link_to_a_pair_an_automatic_merge_took_says_who_and_what(dm_aws: DmAws) -> None:
    week_with_its_automatic_merge(dm_aws)

    def token(action: str) -> str:
        return issue_token(KEYS, subject="102#103", action=action, ttl_seconds=86_400, now=NOW.timestamp())

    page = merge.handler(request("GET", "/review", token("review"), BROWSER), None)
    assert page["statusCode"] == 410
    assert "Ann Zyborski and Ann Zyborsky" in page["body"] and "merged automatically" in page["body"]
    gone = merge.handler(request("POST", "/confirm", token("confirm"), BROWSER), None)
    assert gone["statusCode"] == 410 and "Ann Zyborski and Ann Zyborsky" in gone["body"]
    assert "Nothing was changed" in gone["body"] and "proposed again next week" in gone["body"]


def test_the_person_page_after_one_merge_says_what_is_left(dm_aws: DmAws) -> None:
    review, body = zeds_page(dm_aws)
    first = re.findall(r"action='(/confirm\?t=[^']+)'", body)[0].replace("&amp;", "&")
    done = merge.handler(request("POST", "/confirm", link_token(first)), None)
    assert done["statusCode"] == 202  # claimed; dm-merge finishes it from the queue
    deliver_clicks(dm_aws)
    after = merge.handler(request("GET", "/review", review, BROWSER), None)["body"]
    assert "Already merged by " in after and "Undo this merge" in after
    assert "nothing left to decide for this pair" in after
    assert len(re.findall(r"action='(/confirm\?t=[^']+)'", after)) == 1, after  # the one pair left


def test_what_an_automatic_merge_takes_depends_on_where_it_is() -> None:
    """Finished: the absorbed record; queued or in flight: both (the kept one is not chosen
    yet); undone: nothing."""
    auto = [{"pair_key": "1#2"}, {"pair_key": "3#4"}, {"pair_key": "5#6"}, {"pair_key": "7#8"}]
    decisions: dict[str, Mapping[str, Any]] = {"1#2": {"decision": "merged", "merge_id": "m1"},
                 "5#6": {"decision": "merging", "merge_id": "m3"},
                 "7#8": {"decision": "not_a_duplicate", "undone": True, "merge_id": "m4"}}
    merges: dict[str, Mapping[str, Any]] = {"m1": {"merged_id": "2", "kept_id": "1"}}
    assert people.absorbed(auto, decisions.get, merges.get) == {"2", "3", "4", "5", "6"}
    proposals = [{"pair_key": k, "score": s} for k, s in
                 (("1#9", 3.0), ("2#9", 5.0), ("10#7", 1.0), ("10#11", 2.0), ("12#4", 9.0))]
    found = people.people(proposals, frozenset({"2", "3", "4", "5", "6"}))
    assert [p.records for p in found] == [("1", "9"), ("10", "11", "7")]
    assert [p.key for p in found] == ["1#9", "10#11"]  # the best pair of each person
