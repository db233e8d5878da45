"""`make forget` on the sandbox, then a scan of everything the stack holds.

The five scripted days (sandbox/scenarios) run once: an order and its SMS nudge (upsr), a job
and its review ask (rrs), a lead by form twice (ler), visits and two enquiries (ls), and a
duplicate merged and undone (dm). Their people are erased with ``make forget``; then every item
of every table and every version of every object of every bucket, in every region, is read,
and none may hold their email, phone, name, or an identifier the search linked to them (a
visitor id, a request id, a merge id: what stays when an erase step only misses the records
found through a link). Removing any one store's erase step makes the scan fail
(``test_each_store_erase_is_needed``), which is what shows every step is needed.
"""

from __future__ import annotations

import io
import json
import re
import zlib
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from components.offline import engine
from components.operate import forget
from components.operate.probing import Target
from handlers.common.privacy import Held, Person, SystemStores, find
from sandbox import scenarios
from sandbox.control import ControlServer
from sandbox.core import Sandbox
from sandbox.interceptor import outside
from sandbox.play import play
from sandbox.scenarios.upsr import UpsellDay, _order
from testsupport.graphs import shared

DEV = shared().program("dev")


def _undone_contact(sb: Sandbox) -> dict[str, str]:
    """The kept contact of the merge the dm day undid (its CRM is generated)."""
    undone = next(m for m in sb.items("dm-merges") if m.get("state") == "undone")
    s3 = sb.internal("s3", sb.region_of("dm-undo"))
    bundle = json.loads(s3.get_object(Bucket=sb.bucket("dm-undo"), Key=undone["bundle_key"])["Body"].read())
    props: dict[str, str] = bundle["kept"]["properties"]
    return props


def _the_people(sb: Sandbox) -> tuple[Person, list[str]]:
    """Each scripted day's person, as one person with several addresses (the days were written
    per system), and their names."""
    dm = _undone_contact(sb)
    people = [
        Person.of(email="ann@example.org", phone="+447700900123", ids=["7001"]),  # upsr
        Person.of(phone="+447911123456"),  # rrs: Ann Smith's phone
        Person.of(email="Jane.Doe@Acme-Widgets.co.uk", phone="07400 123456"),  # ler
        Person.of(email="jane.doe@example.org"),  # ls
        Person.of(email=dm["email"], phone=dm.get("phone") or dm.get("mobilephone"), phone_region="US"),
    ]
    person = Person(
        frozenset().union(*(p.emails for p in people)),
        frozenset().union(*(p.phones for p in people)),
        frozenset().union(*(p.ids for p in people)),
    )
    return person, ["Ann Smith", "Jane Doe", f"{dm['firstname']} {dm['lastname']}"]


def _everything(sb: Sandbox, only: Collection[str] = ()) -> Iterator[tuple[str, Any]]:
    """(where, content) of every table item and every object version in every region (or in
    the tables and buckets named in ``only``)."""
    regions = {str(s.region) for s in sb.graph.config.systems.enabled().values()}
    buckets: set[str] = set()
    for region in sorted(regions):
        ddb = sb.internal("dynamodb", region)
        for name in ddb.list_tables()["TableNames"]:
            if only and name not in only:
                continue
            for page in ddb.get_paginator("scan").paginate(TableName=name):
                for item in page.get("Items", []):
                    yield name, item
        s3 = sb.internal("s3", region)
        for bucket in s3.list_buckets()["Buckets"]:
            if bucket["Name"] in buckets or (only and bucket["Name"] not in only):
                continue
            buckets.add(bucket["Name"])
            for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket["Name"]):
                for v in page.get("Versions", []):
                    body = s3.get_object(Bucket=bucket["Name"], Key=v["Key"], VersionId=v["VersionId"])["Body"].read()
                    yield f"{bucket['Name']}/{v['Key']}", body.decode("utf-8", "replace")


def _needles(person: Person, names: list[str], linked: set[str]) -> list[re.Pattern[str]]:
    words = [*person.emails, *names, *(p.lstrip("+") for p in person.phones)]
    patterns = [re.compile(re.escape(w), re.IGNORECASE) for w in words]
    patterns += [re.compile(rf"(?<![\w-]){re.escape(i)}(?![\w-])") for i in person.ids]
    # a linked id is found only whole (a visitor id, "rq-…", "mrg_…"), not inside another word
    patterns += [re.compile(rf"(?<![\w-]){re.escape(i)}(?![\w-])") for i in linked if len(i) >= 6]
    return patterns


def _opened(value: Any) -> str:
    """A binary attribute as text, opened first when it is compressed (dm's chunks of
    contacts): a person inside one is a trace too."""
    if not isinstance(value, bytes):
        raise TypeError(type(value).__name__)
    try:
        return zlib.decompress(value).decode("utf-8", "replace")
    except zlib.error:
        return value.decode("utf-8", "replace")


def _traces(sb: Sandbox, needles: list[re.Pattern[str]], only: Collection[str] = ()) -> list[str]:
    found = []
    for where, content in _everything(sb, only):
        text = content if isinstance(content, str) else json.dumps(content, default=_opened)
        text_digits = re.sub(r"[\s\-().]", "", text)
        hits = [n.pattern for n in needles if n.search(text) or n.search(text_digits)]
        if hits:
            found.append(f"{where}: {hits[0]}")
    return found


def _snapshot(sb: Sandbox) -> dict[str, Any]:
    """Every table's items and every bucket's versions (oldest first), to replay per case."""
    state: dict[str, Any] = {}
    for region in {str(s.region) for s in sb.graph.config.systems.enabled().values()}:
        ddb = sb.internal("dynamodb", region)
        for name in ddb.list_tables()["TableNames"]:
            state[f"{region}|t|{name}"] = ddb.scan(TableName=name)["Items"]
        s3 = sb.internal("s3", region)
        for bucket in s3.list_buckets()["Buckets"]:
            versions = s3.list_object_versions(Bucket=bucket["Name"]).get("Versions", [])
            state[f"{region}|b|{bucket['Name']}"] = [
                (v["Key"], s3.get_object(Bucket=bucket["Name"], Key=v["Key"], VersionId=v["VersionId"])["Body"].read())
                for v in reversed(versions)
            ]
    return state


def _restore(sb: Sandbox, state: dict[str, Any], only: Collection[str] = ()) -> None:
    for where, content in state.items():
        region, kind, name = where.split("|")
        if only and name not in only:
            continue
        if kind == "t":
            ddb = sb.internal("dynamodb", region)
            keys = [k["AttributeName"] for k in ddb.describe_table(TableName=name)["Table"]["KeySchema"]]
            for item in ddb.scan(TableName=name)["Items"]:
                ddb.delete_item(TableName=name, Key={k: item[k] for k in keys})
            for item in content:
                ddb.put_item(TableName=name, Item=item)
        else:
            s3 = sb.internal("s3", region)
            listed = s3.list_object_versions(Bucket=name)
            for v in [*listed.get("Versions", []), *listed.get("DeleteMarkers", [])]:
                s3.delete_object(Bucket=name, Key=v["Key"], VersionId=v["VersionId"])
            for key, body in content:
                s3.put_object(Bucket=name, Key=key, Body=body)


@dataclass(frozen=True)
class Day:
    sb: Sandbox
    url: str
    state: dict[str, Any]
    person: Person
    names: list[str]


@pytest.fixture(scope="module")
def day() -> Iterator[Day]:
    """The dev stack after the five scripted days, its control API, a snapshot, the people."""
    with Sandbox(DEV) as sb:
        play(sb, scenarios.ORDER, out=io.StringIO())
        control = ControlServer(sb, port=0)
        control.start()
        try:
            yield Day(sb, control.url, _snapshot(sb), *_the_people(sb))
        finally:
            control.stop()


def _linked(sb: Sandbox, url: str, person: Person, systems: Collection[str] = ()) -> set[str]:
    """Every identifier the search linked to the person, across the systems (or ``systems``)."""
    found: set[str] = set()
    with outside():
        stack = _stack(sb, url)
        for system in systems or stack.systems():
            for held in find(forget.stores_of(system), stack.where(system), person):
                stores = {s.seed: s.links for s in forget.stores_of(system).stores}
                for body in held.content:
                    if isinstance(body, dict):
                        found.update(str(body[a]) for a in stores[held.store] if body.get(a) is not None)
    return found - person.ids


def _found(sb: Sandbox, url: str, person: Person, system: str) -> list[Held]:
    with outside():
        return find(forget.stores_of(system), _stack(sb, url).where(system), person)


def _stack(sb: Sandbox, url: str) -> forget.Stack:
    return forget.Stack(Target(sb.graph, url), sb.graph)


def _cli(
    url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str]:
    monkeypatch.setattr(engine, "run", lambda stack, overrides=None: DEV)
    with outside():
        code = forget.main(["--stack", "dev", "--sandbox", url, *args])
    return code, capsys.readouterr().out


def test_forget_leaves_no_trace(
    day: Day, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    sb, url, person, names = day.sb, day.url, day.person, day.names
    _restore(sb, day.state)
    linked = _linked(sb, url, person)
    needles = _needles(person, names, linked)
    before = _traces(sb, needles)
    assert len(before) > 20, before  # every system held them
    held = {h.store for k in forget.PACKAGES for h in _found(sb, url, person, k)}
    assert held == {s.seed for k in forget.PACKAGES for s in forget.stores_of(k).stores} - NOT_HELD

    ann = ("--email", "ann@example.org", "--customer", "7001")  # upsr keeps the shop's id only
    code, dry = _cli(url, monkeypatch, capsys, *ann, "--dry-run")
    assert code == 0 and "would erase" in dry, dry
    assert _traces(sb, needles) == before  # a dry run changes nothing

    code, exported = _cli(url, monkeypatch, capsys, *ann, "--export")
    document = json.loads(exported)
    assert code == 0 and set(document) == {"dm", "ler", "ls", "upsr", "rrs"}
    assert document["upsr"]["upsr-orders"] and document["rrs"]["rrs-audit"]

    with outside():
        for system, found, counts in forget.forget(_stack(sb, url), person, dry_run=False):
            assert found and sum(counts.values()) == len(found), system
    assert _traces(sb, needles) == []
    code, again = _cli(url, monkeypatch, capsys, *ann)
    assert code == 0 and set(again.split()) >= {"nothing", "held"} and "erased" not in again, again
    # upsr remembers Ann only as salted hashes: her next order is an opted-out stranger's
    upsr = scenarios.load("upsr")
    assert isinstance(upsr, UpsellDay)
    assert upsr._webhook(sb, _order(5009, sb.clock.now())) == 200
    [order] = sb.items("upsr-orders")
    assert order["outcome"] == "opted-out", order


NOT_HELD = {"ler-junk", "upsr-optout", "rrs-optout"}
"""Stores the scripted days leave without the person (their lead was not junk, they never
opted out): removing their erase step changes nothing here."""


def _stores() -> list[tuple[str, str]]:
    return [(k, s.seed) for k in forget.PACKAGES for s in forget.stores_of(k).stores if s.seed not in NOT_HELD]


@pytest.mark.parametrize(("system", "seed"), _stores(), ids=[f"{k}:{s}" for k, s in _stores()])
def test_each_store_erase_is_needed(
    day: Day, monkeypatch: pytest.MonkeyPatch, system: str, seed: str,
) -> None:
    """Without this one store's erase step, the scan of the system's stores finds the person
    (only this system is restored, erased and scanned: the others do not change the answer)."""
    sb, url, state, person = day.sb, day.url, day.state, day.person
    names = set(_stack(sb, url).where(system).names.values())
    _restore(sb, state, names)
    needles = _needles(person, day.names, _linked(sb, url, person, [system]))
    real = forget.stores_of

    def without(key: str) -> SystemStores:
        stores = real(key)
        kept = tuple(s for s in stores.stores if s.seed != seed)
        return SystemStores(stores.key, kept, stores.remember, stores.derive)

    stack = _stack(sb, url)
    monkeypatch.setattr(stack, "systems", lambda: [system])
    with outside():
        list(forget.forget(stack, person, dry_run=False))
        assert _traces(sb, needles, names) == []  # every step: nothing left in this system
        _restore(sb, state, names)
        monkeypatch.setattr(forget, "stores_of", without)
        list(forget.forget(stack, person, dry_run=False))
    left = _traces(sb, needles, names)
    assert left, f"{system}: with {seed}'s erase removed the scan still found nothing"
