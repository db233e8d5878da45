"""dm-block's incremental weeks: the week's read (HubSpot's CRM search in date windows), the
stored index, and a week's pairs against a full run's on the changed CRM.

The request shape is HubSpot's "Search the CRM" (date-based reference,
https://developers.hubspot.com/docs/api-reference/2026-03/crm/search-the-crm): ``filterGroups``
of ``filters`` (``propertyName``, ``operator``, ``value``), ``sorts`` of ``propertyName`` and
``direction``, ``properties``, ``limit`` (at most 200) and ``after``; at most 10,000 results a
query; a date-time filter value in epoch milliseconds.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import random
from collections.abc import Iterable
from typing import Any

import pytest

from handlers.duplicate_merger.crm import SEARCH_LIMIT, HubSpotCrm, changes_query
from handlers.duplicate_merger.incremental import (
    IndexTable,
    IndexWriter,
    WindowedChanges,
    WindowStuck,
    epoch_ms,
    read_kind,
    since_ms,
    updated,
    week_blocking,
)
from handlers.duplicate_merger.matcher import Thresholds
from handlers.duplicate_merger.pipeline import (
    BlockingRun,
    decode_message,
    encode_messages,
    profiles_from,
    run_blocking,
    score_message,
)
from handlers.duplicate_merger.reading import SAVE_RESERVE_S, read_step
from tests.handlers.common.hubspot_stub import running
from tests.handlers.dm.conftest import DmAws
from testsupport.crm_generator import generate
from testsupport.dm import InMemoryCrm, MemoryCheckpoints, MemoryTable

CAP = 50
BANDS = Thresholds(automatic=12.0, propose=0.0)
T0 = dt.datetime(2026, 11, 30, 6, 0, tzinfo=dt.UTC)
WEEK = dt.timedelta(weeks=1)
COUNTS_DRIFT_BITS = 0.25
"""Beyond the baseline's own move, how far a week's score of a pair may stand from a full
run's on the same CRM: the week weighs with the last full read's context and dependence counts
too (docs/systems/dm.md, "Large portals"). Measured here: the baseline moved 0.43 bits (sure
pairs 224 -> 313 in a week that made a hundred duplicates among 3,000), the largest pair 0.64."""


def iso(at: dt.datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


# The week's read -----------------------------------------------------------------------------


def test_the_search_body_is_hubspots_documented_shape() -> None:
    body = changes_query(1_764_482_400_000, "200")
    assert set(body) == {"filterGroups", "sorts", "properties", "limit", "after"}
    assert body["filterGroups"] == [
        {"filters": [{"propertyName": "lastmodifieddate", "operator": "GTE", "value": "1764482400000"}]}
    ]
    assert body["sorts"] == [{"propertyName": "lastmodifieddate", "direction": "ASCENDING"}]
    assert body["limit"] == SEARCH_LIMIT == 200
    assert "lastmodifieddate" in body["properties"] and "email" in body["properties"]
    assert "after" not in changes_query(0, None)


def test_the_adapter_posts_the_search_and_retries_a_429() -> None:
    sleeps: list[float] = []
    with running() as stub:
        crm = HubSpotCrm("svc", stub.url, version="2026-03", sleep=sleeps.append, wall=lambda: 0.0)
        stub.answer(429, {"status": "error", "errorType": "RATE_LIMIT", "policyName": "SECONDLY"}, Retry_After="1")
        stub.answer(200, {"total": 2, "results": [
            {"id": "7", "properties": {"email": "a@b.example", "lastmodifieddate": "2026-12-01T10:00:00.000Z"}},
        ], "paging": {"next": {"after": "1"}}})
        contacts, following = crm.changed_page(1_764_482_400_000, None)
        requests: list[dict[str, Any]] = list(stub.requests)
    assert contacts == [("7", {"email": "a@b.example", "lastmodifieddate": "2026-12-01T10:00:00.000Z"})]
    assert following == "1" and sleeps == [1.0]
    assert [r["path"] for r in requests] == ["/crm/objects/2026-03/contacts/search"] * 2
    assert requests[-1]["method"] == "POST" and requests[-1]["body"] == changes_query(1_764_482_400_000, None)


def changed_crm(count: int, *, same_ms: bool = False) -> InMemoryCrm:
    crm = InMemoryCrm(search_page=100, search_results=1_000)
    for n in range(count):
        at = T0 + dt.timedelta(seconds=0 if same_ms else n // 3)  # three changes a second
        crm.add_contact(f"{500 + n}", email=f"p{n}@example.com", lastmodifieddate=iso(at))
    crm.add_contact("1", email="old@example.com", lastmodifieddate=iso(T0 - WEEK))
    return crm


def test_a_week_past_one_querys_limit_is_read_in_date_windows() -> None:
    crm = changed_crm(2_500)
    read = list(WindowedChanges(crm, epoch_ms(T0), page=100, results=1_000).iter_contacts())
    assert {cid for cid, _ in read} == {f"{500 + n}" for n in range(2_500)}  # none missed
    assert len(read) - 2_500 < 10  # a window's edge re-reads only its last millisecond
    starts = [int(q["filterGroups"][0]["filters"][0]["value"]) for q in crm.searches if "after" not in q]
    assert len(starts) == 3 and starts == sorted(starts)  # three windows, each later


def test_a_weeks_read_continues_across_invocations_with_its_window_cursor() -> None:
    """The window's start, its answered count and HubSpot's ``after`` travel in the read
    state's cursor, so a week's read too is checkpointed and resumed (``reading.read_step``)."""
    crm = changed_crm(2_500)
    reader = WindowedChanges(crm, epoch_ms(T0), page=100, results=1_000)
    store = MemoryCheckpoints()
    left = {"s": 0.0}

    def remaining() -> float:  # each look at the clock costs a second: about 8 pages a step
        left["s"] -= 1
        return left["s"]

    step, steps = 0, 0
    while True:
        steps += 1
        left["s"] = SAVE_RESERVE_S + 9
        outcome = read_step(reader, store, "2026-W50", step, remaining, lambda _: 0.0)
        if outcome.action != "continue":
            break
        step = outcome.state.step
    assert outcome.action == "block" and steps >= 3
    assert {cid for cid, _ in outcome.contacts} == {f"{500 + n}" for n in range(2_500)}


def test_more_changes_in_one_millisecond_than_a_query_answers_is_refused() -> None:
    crm = changed_crm(1_200, same_ms=True)
    with pytest.raises(WindowStuck):
        list(WindowedChanges(crm, epoch_ms(T0), page=100, results=1_000).iter_contacts())


# Which runs read in full ----------------------------------------------------------------------


def test_the_first_run_and_every_nth_week_read_in_full() -> None:
    table = MemoryTable()
    index = IndexTable(table, ttl=0)
    assert index.load() is None and read_kind(None, T0, 4) == "full"
    contacts = generate(200, seed=3).contacts
    writer = IndexWriter(index, "g1")
    run = run_blocking("2026-W49", profiles_from(writer.tee(contacts)), cap=CAP)
    state = writer.commit(run, T0, None, "full")
    assert index.load() == state and state.contacts == 200
    assert [c for c in index.contacts(state)] == contacts
    assert [read_kind(state, T0 + n * WEEK, 4) for n in (1, 2, 3, 4)] == ["changes"] * 3 + ["full"]
    assert read_kind(state, T0 + WEEK, 1) == "full"
    assert since_ms(state) == epoch_ms(T0) - 3_600_000  # the last run's start, less an hour
    # A week keeps the full read's figures and moves the start the next week reads from.
    week = writer.commit(run, T0 + WEEK, state, "changes")
    assert week.full_started == state.full_started and week.run_started != state.run_started


# A week's pairs against a full run's ----------------------------------------------------------


def scored(bodies: Iterable[str]) -> dict[str, float]:
    """Every pair's score, none left below a record floor: the candidate pairs compared whole."""
    out: dict[str, float] = {}
    for body in bodies:
        for pair in score_message(decode_message(body), BANDS, floor=-math.inf).pairs:
            out[pair.scored.pair_key] = pair.scored.score
    return out


def change(contacts: list[tuple[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """5 % of the CRM changed in a week: corrected and mistyped fields, a contact that now
    duplicates another (an edit that copies a mailbox), and new contacts that duplicate old ones."""
    rng = random.Random(43)
    picked = rng.sample(contacts, 150)
    out: dict[str, dict[str, Any]] = {}
    for n, (cid, props) in enumerate(picked):
        new = dict(props)
        if n % 3 == 0:
            new["lastname"] = (props.get("lastname") or "X") + "e"
        elif n % 3 == 1:
            other = contacts[(int(cid) * 7) % len(contacts)][1]
            new.update(email=other.get("email", ""), firstname=other.get("firstname", ""),
                       lastname=other.get("lastname", ""))
        else:
            out[f"9{cid}"] = {**props, "email": "", "phone": props.get("phone", "")}  # a new one
            new["city"] = ""
        out[cid] = new
    return out


def test_a_week_scores_every_pair_with_a_changed_contact_as_a_full_run_would() -> None:
    before = generate(3_000, seed=11).contacts
    changes = change(before)
    after = list({**dict(before), **changes}.items())  # the changed CRM, built apart from the index
    # The first, full run stores the index.
    index = IndexTable(MemoryTable(), ttl=0)
    writer = IndexWriter(index, "g1")
    first = run_blocking("2026-W49", profiles_from(writer.tee(before)), cap=CAP)
    state = writer.commit(first, T0, None, "full")
    # The week: HubSpot's search answers the changed and new contacts (stamped after T0).
    crm = InMemoryCrm()
    for cid, props in after:
        crm.add_contact(cid, **props, lastmodifieddate=iso(T0 + (WEEK / 2 if cid in changes else -WEEK)))
    read = dict(WindowedChanges(crm, since_ms(state)).iter_contacts())
    assert set(read) == set(changes)
    week_writer = IndexWriter(index, "g2")
    profiles = profiles_from(week_writer.tee(updated(index.contacts(state), read)))
    week: BlockingRun = week_blocking("2026-W50", profiles, set(read), state, cap=CAP)
    assert week_writer.contacts == len(after)  # the index now holds the changed CRM
    week_pairs = scored(encode_messages(week))
    # A full run on the changed CRM, restricted to the pairs with a changed contact.
    full = run_blocking("2026-W50", profiles_from(after), cap=CAP)
    full_pairs = {
        key: score for key, score in scored(encode_messages(full)).items()
        if not set(key.split("#")).isdisjoint(changes)
    }
    assert len(full_pairs) > 100
    assert set(full_pairs) <= set(week_pairs)  # every pair with a changed contact is scored
    drift = max(abs(week_pairs[k] - s) for k, s in full_pairs.items())
    assert drift <= abs(full.baseline - first.baseline) + COUNTS_DRIFT_BITS
    proposed = {k for k, s in full_pairs.items() if s >= BANDS.propose}
    near_cut = {k for k, s in full_pairs.items() if abs(s - BANDS.propose) <= drift}
    week_proposed = {k for k in full_pairs if week_pairs[k] >= BANDS.propose}
    assert proposed ^ week_proposed <= near_cut  # the same proposals, but within the drift of the cut
    # The week sends only blocks with a changed contact: a small share of a full run's.
    assert len(week.blocks) < len(full.blocks) / 3


# dm-block's handler ---------------------------------------------------------------------------


class Context:
    function_name = "dev-dm-block"

    def get_remaining_time_in_millis(self) -> int:
        return 300_000


def wired_portal(monkeypatch: pytest.MonkeyPatch, lambda_client: Any = None) -> InMemoryCrm:
    """300 generated contacts last changed a week before T0, given to dm-block as its CRM on
    the dev stack (dm_aws), with its read credential set and the time at T0."""
    from handlers.common.aws_clients import client
    from handlers.common.entry import registry
    from handlers.duplicate_merger.functions import block

    crm = InMemoryCrm()
    for cid, props in generate(300, seed=5).contacts:
        crm.add_contact(cid, **props, lastmodifieddate=iso(T0 - WEEK))
    client("secretsmanager").put_secret_value(SecretId="dev-dm-crm-read", SecretString='{"token": "svc"}')
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "dev-dm-block")
    registry.override(block, crm=lambda deadline: crm, lambda_client=lambda: lambda_client, clock=lambda: T0)
    return crm


def test_the_handler_reads_in_full_first_then_the_weeks_changes_then_in_full_again(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    from handlers.common.entry import registry
    from handlers.duplicate_merger.functions import block

    crm = wired_portal(monkeypatch)
    answers = []
    for week in range(5):  # the dev stack's systems.dm.fullReadEveryWeeks is the default, 4
        now = T0 + week * WEEK
        registry.override(clock=functools.partial(lambda at: at, now))
        edited = sorted(crm.contacts)[week * 3 : week * 3 + 3]
        for cid in edited if week else ():
            crm.contacts[cid].update(lastname="Changed", lastmodifieddate=iso(now - dt.timedelta(days=2)))
        answers.append(block.handler({"action": "block"}, Context()))
    assert [(a["read"], a["changed"], a["contacts"]) for a in answers] == [
        ("full", 0, 300), ("changes", 3, 300), ("changes", 3, 300), ("changes", 3, 300), ("full", 0, 300),
    ]
    # Each week searched from the last run's start, less the margin; a full read searched nothing.
    starts = [int(q["filterGroups"][0]["filters"][0]["value"]) for q in crm.searches]
    assert starts == [epoch_ms(T0 + n * WEEK) - 3_600_000 for n in range(3)]
    assert all(a["blocks"] < answers[0]["blocks"] / 10 for a in answers[1:4])  # only around the changes
    index = IndexTable(dm_aws.pairs, ttl=0).load()
    assert index is not None and index.contacts == 300 and index.full_started == (T0 + 4 * WEEK).isoformat()


def test_forget_finds_a_person_in_the_index_and_the_next_week_reads_in_full(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``make forget`` erases the index chunk holding the person (as it erases a pair row); the
    index is then incomplete, so the next run reads the whole portal and writes it whole."""
    from handlers.common.aws_clients import client
    from handlers.common.entry import registry
    from handlers.common.privacy import Person, Where, erase, exported, find
    from handlers.duplicate_merger import contract
    from handlers.duplicate_merger.functions import block
    from handlers.duplicate_merger.privacy import STORES

    crm = wired_portal(monkeypatch)
    contacts = sorted(crm.contacts.items())
    assert block.handler({"action": "block"}, Context())["read"] == "full"
    email = next(p["email"] for _, p in contacts if p.get("email"))
    names = {
        contract.PAIRS.name: dm_aws.pairs.name, contract.DECISIONS.name: dm_aws.decisions.name,
        contract.MERGES.name: dm_aws.merges.name, contract.UNDO_BUCKET: dm_aws.bucket,
    }
    where = Where(names, client("dynamodb"), client("s3"))
    held = find(STORES, where, Person.of(email=email))
    chunks = [h for h in held if str(h.key["pair_key"]).startswith("index#2026-W49.")]
    # The chunk is found, and only the person's own contacts in it (their duplicates) exported.
    assert len(chunks) == 1 and 1 <= len(chunks[0].content) <= 3
    assert {c["properties"]["email"] for c in chunks[0].content} == {email}
    assert exported(held)["dm-pairs"]
    erase(STORES, where, Person.of(email=email), held, None)
    registry.override(clock=lambda: T0 + WEEK)
    crm.contacts[contacts[0][0]]["lastmodifieddate"] = iso(T0 + WEEK / 2)
    week = block.handler({"action": "block"}, Context())
    assert (week["read"], week["contacts"]) == ("full", 300)
    state = IndexTable(dm_aws.pairs, ttl=0).load()
    assert state is not None and sum(1 for _ in IndexTable(dm_aws.pairs, ttl=0).contacts(state)) == 300


class Invoked:
    def __init__(self) -> None:
        self.payloads: list[dict[str, Any]] = []

    def invoke(self, **kwargs: Any) -> dict[str, Any]:
        self.payloads.append(json.loads(kwargs["Payload"]))
        return {"StatusCode": 202}


@pytest.mark.parametrize("index_expires", [False, True])
def test_a_weeks_read_continues_in_new_invocations_and_an_expired_index_restarts_it_in_full(
    dm_aws: DmAws, monkeypatch: pytest.MonkeyPatch, index_expires: bool
) -> None:
    from handlers.common.entry import registry
    from handlers.duplicate_merger import reading
    from handlers.duplicate_merger.functions import block

    invoked = Invoked()
    crm = wired_portal(monkeypatch, invoked)
    contacts = sorted(crm.contacts.items())
    assert block.handler({"action": "block"}, Context())["read"] == "full"
    for cid, _ in contacts[:250]:  # a busy week: two search pages
        crm.contacts[cid].update(city="Springfield", lastmodifieddate=iso(T0 + WEEK / 2))
    # From here each invocation has time for one page before its save reserve.
    clock = {"t": 0.0}
    search = crm.changed_page

    def timed(since: int, after: str | None) -> Any:
        clock["t"] += 0.01
        return search(since, after)

    monkeypatch.setattr(crm, "changed_page", timed)
    monkeypatch.setattr(reading, "SAVE_RESERVE_S", 300 - 0.01 + 0.001)
    monkeypatch.setattr(reading, "block_reserve", lambda contacts: 0.0)
    monkeypatch.setattr("time.monotonic", lambda: clock["t"])
    registry.override(clock=lambda: T0 + WEEK)
    answer = block.handler({"action": "block"}, Context())
    assert answer["continued"] is True and answer["read"] == "changes"
    payload = invoked.payloads.pop()
    assert payload["read"] == "changes" and payload["started"] == (T0 + WEEK).isoformat()
    if index_expires:
        dm_aws.pairs.delete_item(Key={"pair_key": "index#current"})
    answer = block.handler(payload, Context())
    if index_expires:  # read again from the contacts list's first page, in full
        assert (answer["read"], answer["contacts"], answer["changed"]) == ("full", 300, 0)
    else:
        assert (answer["read"], answer["contacts"], answer["changed"]) == ("changes", 300, 250)
    assert invoked.payloads == []
