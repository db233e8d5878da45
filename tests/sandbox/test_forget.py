"""`make forget` on the sandbox, then a scan of everything the stack holds.

One person passes through all five systems (sandbox/scenarios/person.py: a duplicate merged
and undone in dm, a lead by form and by mail in ler, an order and its SMS nudge in upsr, a job,
its review ask and an opt-out in rrs, a visit and an enquiry in ls), with one name, email and
phone. ``make forget`` by that email and phone erases them; then every item of every table and
every version of every object of every bucket, in every region, is read, and none may hold
their email, phone, name, or an identifier the search linked to them (a visitor id, a request
id, a merge id: what stays when an erase step only misses the records found through a link).
A second forget erases nothing, and a new order, job or lead of theirs is a stranger's who
opted out where they had. Removing any one store's erase step makes the scan fail
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
from handlers.common.privacy import Held, Person, SystemStores, Where, find
from sandbox.control import ControlServer
from sandbox.core import Sandbox
from sandbox.interceptor import outside
from sandbox.report import Report
from sandbox.scenarios.person import TITLE, OnePerson
from sandbox.scenarios.rrs import requests
from testsupport.graphs import shared

DEV = shared().program("dev")


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
    """Put the tables and buckets (or those named in ``only``) back as ``state`` holds them:
    in batches, which is what keeps a case of ``test_each_store_erase_is_needed`` cheap."""
    for where, content in state.items():
        region, kind, name = where.split("|")
        if only and name not in only:
            continue
        if kind == "t":
            ddb = sb.internal("dynamodb", region)
            keys = [k["AttributeName"] for k in ddb.describe_table(TableName=name)["Table"]["KeySchema"]]
            gone = [{"DeleteRequest": {"Key": {k: i[k] for k in keys}}} for i in ddb.scan(TableName=name)["Items"]]
            back = [{"PutRequest": {"Item": item}} for item in content]
            for requests_ in (gone, back):
                for start in range(0, len(requests_), 25):  # BatchWriteItem takes 25 at most
                    ddb.batch_write_item(RequestItems={name: requests_[start:start + 25]})
        else:
            s3 = sb.internal("s3", region)
            listed = s3.list_object_versions(Bucket=name)
            old = [{"Key": v["Key"], "VersionId": v["VersionId"]}
                   for v in [*listed.get("Versions", []), *listed.get("DeleteMarkers", [])]]
            if old:
                s3.delete_objects(Bucket=name, Delete={"Objects": old, "Quiet": True})
            for key, body in content:
                s3.put_object(Bucket=name, Key=key, Body=body)


@dataclass(frozen=True)
class Day:
    sb: Sandbox
    url: str
    journey: OnePerson
    state: dict[str, Any]
    person: Person
    names: list[str]
    linked: dict[str, set[str]]
    """Per system, the identifiers its search linked to the person (before the erasure)."""


@pytest.fixture(scope="module")
def day() -> Iterator[Day]:
    """The dev stack after the person's journey, its control API, a snapshot, the person."""
    journey = OnePerson()
    with Sandbox(DEV) as sb:
        out = io.StringIO()
        report = Report(sb, out)
        journey.prepare(sb)
        with report.system(journey.key, TITLE, "all regions"):
            journey.play(sb, report)
        assert report.results[0].ok, out.getvalue()
        control = ControlServer(sb, port=0)
        control.start()
        try:
            p = journey.person
            person = Person.of(email=p.email, phone=p.phone)
            linked = {k: _linked(sb, control.url, person, [k]) for k in forget.PACKAGES}
            yield Day(sb, control.url, journey, _snapshot(sb), person, [p.name, p.last], linked)
        finally:
            control.stop()


def _linked(sb: Sandbox, url: str, person: Person, systems: Collection[str]) -> set[str]:
    """Every identifier the search linked to the person in ``systems``."""
    found: set[str] = set()
    with outside():
        stack = _stack(sb, url)
        for system in systems:
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
    """``make forget STACK=dev SANDBOX=<url> …``: the target's command, on the sandbox."""
    monkeypatch.setattr(engine, "run", lambda stack, overrides=None: DEV)
    with outside():
        code = forget.main(["--stack", "dev", "--sandbox", url, *args])
    return code, capsys.readouterr().out


NOT_HELD = {"upsr-optout"}
"""The one store the journey leaves without the person: nothing the shop sends writes an
opt-out there (the owner adds one by hand), so removing its erase step changes nothing here."""


def test_forget_leaves_no_trace(
    day: Day, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    sb, url, person, journey = day.sb, day.url, day.person, day.journey
    _restore(sb, day.state)
    needles = _needles(person, day.names, set().union(*day.linked.values()))
    before = _traces(sb, needles)
    assert len(before) > 20, before
    held = {h.store for k in forget.PACKAGES for h in _found(sb, url, person, k)}
    assert held == {s.seed for k in forget.PACKAGES for s in forget.stores_of(k).stores} - NOT_HELD

    them = ("--email", journey.person.email, "--phone", journey.person.national_phone)  # as a user types them
    code, dry = _cli(url, monkeypatch, capsys, *them, "--dry-run")
    assert code == 0 and dry.count("would erase") == 5, dry
    assert _traces(sb, needles) == before  # a dry run changes nothing

    code, exported = _cli(url, monkeypatch, capsys, *them, "--export")
    document = json.loads(exported)
    assert code == 0 and {k for k, stores in document.items() if stores} == {"dm", "ler", "ls", "upsr", "rrs"}
    assert document["dm"]["dm-undo"] and document["upsr"]["upsr-orders"] and document["rrs"]["rrs-audit"]

    code, erased = _cli(url, monkeypatch, capsys, *them)
    assert code == 0 and erased.count(" erased ") == 5, erased
    assert _traces(sb, needles) == []
    code, again = _cli(url, monkeypatch, capsys, *them)
    assert code == 0 and again.count("nothing held") == 5 and "erased" not in again, again

    # Afterwards they are strangers who opted out where they had (salted hashes remember it).
    assert journey.order(sb) == 200
    sb.drain()
    [order] = sb.items("upsr-orders")
    assert order["outcome"] == "opted-out", order
    sb.fire("rrs-sync")  # the owner's sheet still lists them
    sb.drain()
    assert journey.job_done(sb, "cmp-ros-2") == 200
    sb.drain()
    assert requests(sb)[journey.person.sheet_customer] == "suppressed", requests(sb)
    # ler forgot their CRM contact: once the owner erased it there too, a lead is a new contact
    crm = journey.ler.crm
    [(_, old_id, _)] = [c for c in crm.calls if c[0] == "create"]
    del crm.contacts[old_id]
    assert journey.lead_by_form(sb, "Me again") == 202
    sb.drain()
    created = [(i, p.get("email")) for m, i, p in crm.calls if m == "create"]
    assert len(created) == 2 and created[1][0] != old_id and created[1][1] == journey.person.email, created
    records = [r for r in _objects(sb, "ler-records") if r.get("crm") and journey.person.email in json.dumps(r).lower()]
    verdicts = [(r.get("dedupe") or {}).get("verdict") for r in records]
    assert verdicts == ["new"], [{k: r.get(k) for k in ("dedupe", "crm")} for r in records]  # not a link


def _objects(sb: Sandbox, seed: str) -> list[Any]:
    s3 = sb.internal("s3", sb.region_of(seed))
    bucket = sb.bucket(seed)
    return [json.loads(s3.get_object(Bucket=bucket, Key=key)["Body"].read()) for key in sb.objects(seed)]


def _stores() -> list[tuple[str, str]]:
    return [(k, s.seed) for k in forget.PACKAGES for s in forget.stores_of(k).stores if s.seed not in NOT_HELD]


@pytest.mark.parametrize(("system", "seed"), _stores(), ids=[f"{k}:{s}" for k, s in _stores()])
def test_each_store_erase_is_needed(
    day: Day, monkeypatch: pytest.MonkeyPatch, system: str, seed: str,
) -> None:
    """With this one store's erase step removed (the engine erases what it found everywhere
    else), the person stays in that store, and the scan finds them there. Only this system is put back and erased, and
    only the store scanned: the other systems and stores do not change the answer, and
    ``test_forget_leaves_no_trace`` shows that with every step nothing is left anywhere."""
    sb, url, person = day.sb, day.url, day.person
    stack = _stack(sb, url)
    names = stack.where(system).names
    _restore(sb, day.state, set(names.values()))
    needles = _needles(person, day.names, day.linked[system])
    real = find  # what forget.forget calls

    def without(system: SystemStores, where: Where, person: Person) -> list[Held]:
        return [h for h in real(system, where, person) if h.store != seed]

    monkeypatch.setattr(stack, "systems", lambda: [system])
    monkeypatch.setattr(forget, "find", without)
    with outside():
        erased = {store for _, _, counts in forget.forget(stack, person, dry_run=False) for store in counts}
    assert seed not in erased
    left = _traces(sb, needles, [names[seed]])
    assert left, f"{system}: with {seed}'s erase removed the scan still found nothing"
