"""One person's data in one system: found everywhere it is kept, listed, exported or erased.

Each system names its stores once (``handlers/<system>/privacy.py``: tables with the attributes
that link one of its records to another, buckets), and this module does the rest the same way
for all five: it reads every item of every table and every version of every object of every
bucket (a request for a person's data is rare; a full read is what proves nothing was missed),
keeps what mentions the person, follows the links (an order found by email names the customer
id, which names the offer...) until nothing new turns up, then erases what it found: a
table item or an object (every version of it) is deleted; a shared JSON object that lists many
people (``Bucket.shared``: an upload's report) keeps the others' rows and loses the person's.

A person is matched by email (case-insensitive, anywhere in a text), by phone (its digits, in
international or national form, anywhere in a text), or by an identifier (a shop customer id,
a CRM contact id, or one the links found) equal to a whole value or to one ``#``/``/``/``@``/
``.`` separated part of one (``101#102``, ``undo/mrg_x.json``). What a system must still remember
afterwards (an opt-out) it keeps as a salted hash (handlers/common/forgotten.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from handlers.common import cold_path, emails, phones
from handlers.common.forgotten import salted
from handlers.common.tables import TableSpec


@dataclass(frozen=True)
class Person:
    """Who to look for: any of their emails, phones and identifiers (shop customer, CRM contact)."""

    emails: frozenset[str] = frozenset()
    phones: frozenset[str] = frozenset()
    ids: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls, *, email: str | None = None, phone: str | None = None, ids: Iterable[str] = (),
        phone_region: str = "GB",
    ) -> Person:
        """ValueError (naming the field, never the value) when an email or phone is not one."""
        found_emails: set[str] = set()
        found_phones: set[str] = set()
        if email:
            normal = emails.normalise_email(email)
            if normal is None:
                raise ValueError("email: not an email address")
            found_emails.add(normal)
        if phone:
            e164 = phones.phone_e164(phone, phone_region, valid=False)
            if e164 is None:
                raise ValueError("phone: not a phone number")
            found_phones.add(e164)
        given = frozenset(str(i).strip() for i in ids if str(i).strip())
        if not (found_emails or found_phones or given):
            raise ValueError("give an email, a phone or an identifier")
        return cls(frozenset(found_emails), frozenset(found_phones), given)

    def with_ids(self, more: Iterable[str]) -> Person:
        return Person(self.emails, self.phones, self.ids | frozenset(more))


def remembered_forms(person: Person, salt: str) -> list[str]:
    """The salted hash of each of the person's emails and phones (what an opt-out keeps)."""
    return sorted(salted(v, salt) for v in (*person.emails, *person.phones))


# Matching --------------------------------------------------------------------------------------

_PARTS = re.compile(r"[#/@.]")
_NOT_DIGIT = re.compile(r"\D")


class Matcher:
    """Whether a value (a string, a number, nested lists and maps) mentions the person."""

    def __init__(self, person: Person) -> None:
        self.emails = tuple(person.emails)
        self.ids = person.ids
        digits: set[str] = set()
        for e164 in person.phones:
            digits.add(e164.lstrip("+"))
            national = _national(e164)
            if national:
                digits.add(national)
        self.phone_digits = tuple(d for d in digits if len(d) >= 7)

    def text(self, value: str) -> bool:
        lowered = value.lower()
        if any(e in lowered for e in self.emails):
            return True
        if self.ids and (value in self.ids or any(p in self.ids for p in _PARTS.split(value))):
            return True
        if self.phone_digits:
            digits = _NOT_DIGIT.sub("", value)
            return any(d in digits for d in self.phone_digits)
        return False

    def mentions(self, value: Any) -> bool:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bytes):
            return self.text(value.decode("utf-8", "replace"))
        if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
            return str(value) in self.ids
        if isinstance(value, Mapping):
            return any(self.mentions(v) for v in value.values())
        if isinstance(value, (list, tuple, set, frozenset)):
            return any(self.mentions(v) for v in value)
        return False

    def without(self, value: Any) -> Any:
        """``value`` less every record (the innermost map) that mentions the person;
        :data:`GONE` when ``value`` itself is such a record or scalar."""
        if isinstance(value, Mapping):
            if any(self.mentions(v) for v in value.values() if not isinstance(v, (Mapping, list))):
                return GONE
            kept = {k: self.without(v) for k, v in value.items()}
            return {k: v for k, v in kept.items() if v is not GONE}
        if isinstance(value, list):
            return [v for v in (self.without(v) for v in value) if v is not GONE]
        return GONE if self.mentions(value) else value


GONE: Final = object()


def _national(e164: str) -> str | None:
    phonenumbers = cold_path.load("phonenumbers")
    try:
        number = phonenumbers.parse(e164, None)
    except phonenumbers.NumberParseException:
        return None
    return _NOT_DIGIT.sub("", str(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)))


# Stores ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """A table that can hold the person: each matching item is theirs, and is deleted.

    ``links``: attributes whose values, on an item of the person, identify more of their
    records (a customer id, a request id); ``None`` values are skipped. ``records``: for a
    table whose items may pack many people's records (dm's blocking index), the records in an
    item; only the person's are found and exported, and the item is erased whole.
    """

    spec: TableSpec
    links: tuple[str, ...] = ()
    why: str = ""
    records: Callable[[Mapping[str, Any]], list[Any]] | None = None

    @property
    def seed(self) -> str:
        return self.spec.name


@dataclass(frozen=True)
class Bucket:
    """A bucket that can hold the person: each object whose key or any version mentions them
    is deleted, every version; under a ``shared`` prefix, a JSON object listing many people
    is rewritten without the person's rows, and its older versions are deleted.

    ``links``: top-level fields of a JSON object of the person that identify more of them.
    """

    seed: str
    links: tuple[str, ...] = ()
    shared: tuple[str, ...] = ()
    why: str = ""


Store = Table | Bucket


@dataclass(frozen=True)
class SystemStores:
    """What one system keeps about people, and what it remembers after an erasure."""

    key: str
    stores: tuple[Store, ...]
    remember: Callable[[Person, str], list[tuple[str, dict[str, Any]]]] | None = None
    """(table seed, item) rows of salted hashes to write after an erasure, from the person
    and the stack's salt (an opt-out); None when the system need not remember anyone."""
    derive: Callable[[Person, Any], Person] | None = None
    """More identifiers computed from the person before the search (ls: the keyed email hash),
    given the system's :class:`Where`."""


@dataclass(frozen=True)
class Where:
    """How to reach one system's stores: physical names by seed, and clients."""

    names: Mapping[str, str]
    dynamodb: Any
    s3: Any
    secret: Callable[[str], str] | None = None
    """The value of the system's secret of that seed name, for ``derive`` (ls's hash key)."""


@dataclass
class Held:
    """One record of the person: an item, or an object (with the versions that hold it)."""

    store: str
    key: dict[str, Any]
    content: list[Any]
    shared: bool = False

    def describe(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.key.items() if k != "versions")


def _types() -> Any:
    # boto3 only once a search runs: handlers.common imports nothing heavy (the opt-out checks)
    return cold_path.load("boto3.dynamodb.types")


def _plain(item: Mapping[str, Any]) -> dict[str, Any]:
    deserializer = _types().TypeDeserializer()
    return {k: deserializer.deserialize(v) for k, v in item.items()}


def _wire(item: Mapping[str, Any]) -> dict[str, Any]:
    serializer = _types().TypeSerializer()
    return {k: serializer.serialize(v) for k, v in item.items()}


def _scan(dynamodb: Any, name: str) -> Iterator[dict[str, Any]]:
    for page in dynamodb.get_paginator("scan").paginate(TableName=name):
        for item in page.get("Items", []):
            yield _plain(item)


def _versions(s3: Any, bucket: str) -> Iterator[dict[str, Any]]:
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket):
        yield from page.get("Versions", [])
        for marker in page.get("DeleteMarkers", []):
            yield {**marker, "marker": True}


def _body(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def find(system: SystemStores, where: Where, person: Person) -> list[Held]:
    """Everything ``system`` holds about ``person``: the links followed until nothing new."""
    if system.derive is not None:
        person = system.derive(person, where)
    tables = {s.seed: list(_scan(where.dynamodb, where.names[s.seed])) for s in system.stores if isinstance(s, Table)}
    objects: dict[str, dict[str, list[tuple[dict[str, Any], Any]]]] = {}
    for store in system.stores:
        if isinstance(store, Bucket):
            by_key: dict[str, list[tuple[dict[str, Any], Any]]] = {}
            bucket = where.names[store.seed]
            for version in _versions(where.s3, bucket):
                body = None if version.get("marker") else _body(
                    where.s3.get_object(Bucket=bucket, Key=version["Key"], VersionId=version["VersionId"])["Body"].read()
                )
                by_key.setdefault(version["Key"], []).append((version, body))
            objects[store.seed] = by_key
    while True:
        match = Matcher(person)
        held: list[Held] = []
        linked: set[str] = set()
        for store in system.stores:
            if isinstance(store, Table):
                keys = [k.name for k in (store.spec.partition_key, store.spec.sort_key) if k]
                for item in tables[store.seed]:
                    records = [item] if store.records is None else store.records(item)
                    mine = [r for r in records if match.mentions(r)]
                    if mine:
                        held.append(Held(store.seed, {k: item[k] for k in keys}, mine))
                        linked.update(str(item[a]) for a in store.links if item.get(a) is not None)
            else:
                for key, versions in objects[store.seed].items():
                    if not (match.text(key) or any(match.mentions(body) for _, body in versions)):
                        continue
                    shared = key.startswith(store.shared) if store.shared else False
                    ids = [v["VersionId"] for v, _ in versions]
                    held.append(Held(store.seed, {"key": key, "versions": ids}, [b for _, b in versions if b is not None], shared))
                    for _, body in versions:
                        if isinstance(body, dict) and not shared:
                            linked.update(str(body[a]) for a in store.links if body.get(a) is not None)
        more = person.with_ids(linked)
        if more == person:
            return held
        person = more


def erase(system: SystemStores, where: Where, person: Person, held: list[Held], salt: str | None) -> dict[str, int]:
    """Deletes (or, for shared objects, rewrites) every record in ``held``, then writes what
    the system remembers (salted). Per store, how many records were erased. Idempotent."""
    counts: dict[str, int] = {}
    match = Matcher(person.with_ids(_all_ids(held, system)))
    for h in held:
        name = where.names[h.store]
        if "versions" not in h.key:
            where.dynamodb.delete_item(TableName=name, Key=_wire(h.key))
        else:
            latest = h.content[0] if h.content else None  # S3 lists the newest version first
            if h.shared and isinstance(latest, dict | list):
                kept = match.without(latest)
                if kept is not GONE:
                    where.s3.put_object(Bucket=name, Key=h.key["key"], Body=json.dumps(kept).encode())
            for version in h.key["versions"]:
                where.s3.delete_object(Bucket=name, Key=h.key["key"], VersionId=version)
        counts[h.store] = counts.get(h.store, 0) + 1
    if system.remember is not None and salt:
        for seed, row in system.remember(person, salt):
            where.dynamodb.put_item(TableName=where.names[seed], Item=_wire(row))
    return counts


def _all_ids(held: list[Held], system: SystemStores) -> set[str]:
    links = {s.seed: s.links for s in system.stores}
    found: set[str] = set()
    for h in held:
        for body in h.content:
            if isinstance(body, dict) and not h.shared:
                found.update(str(body[a]) for a in links.get(h.store, ()) if body.get(a) is not None)
    return found


def exported(held: list[Held]) -> dict[str, list[Any]]:
    """Per store, each record's content (every version of an object), JSON-ready."""
    out: dict[str, list[Any]] = {}
    for h in held:
        out.setdefault(h.store, []).append(
            {"key": h.key, "content": h.content if "versions" in h.key else h.content[0]}
        )
    plain: dict[str, list[Any]] = json.loads(json.dumps(out, default=_json))
    return plain


def _json(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError(type(value).__name__)
