"""dm's test doubles, never shipped: a CRM in memory (the tests and the local sandbox) and the
read checkpoints in memory (the tests and ``benchmarks/bench_hubspot_read.py``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from handlers.duplicate_merger.crm import (
    ADDITIONAL_EMAILS,
    Association,
    Contact,
    ContactSnapshot,
    CrmError,
    additional_emails,
    changes_query,
)
from handlers.duplicate_merger.incremental import modified_ms
from handlers.duplicate_merger.reading import ReadState


@dataclass
class InMemoryCrm:
    """A CRM in memory: contacts, archived contacts, related records and associations.

    ``fail_after_writes`` makes the write after the next n raise ``CrmError`` once (a merge
    failing part way); ``writes`` counts writes so tests can assert none happened.
    """

    contacts: dict[str, dict[str, str | None]] = field(default_factory=dict)
    archived: dict[str, dict[str, str | None]] = field(default_factory=dict)
    records: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    links: dict[str, set[Association]] = field(default_factory=dict)
    fail_after_writes: int | None = None
    writes: int = 0

    def add_contact(self, contact_id: str, **properties: str | None) -> None:
        self.contacts[contact_id] = dict(properties)
        self.links.setdefault(contact_id, set())

    def add_related(self, contact_id: str, association: Association, **properties: Any) -> None:
        self.records.setdefault((association.type, association.id), dict(properties))
        self.links.setdefault(contact_id, set()).add(association)

    def _write(self) -> None:
        if self.fail_after_writes is not None:
            if self.fail_after_writes <= 0:
                self.fail_after_writes = None  # one failure, then the CRM answers again
                raise CrmError("injected failure", status=503, retryable=True)
            self.fail_after_writes -= 1
        self.writes += 1

    page_size: int = 100

    def page(self, after: str | None) -> tuple[list[Contact], str | None]:
        ordered = sorted(self.contacts)
        start = int(after or 0)
        chunk = [(cid, dict(self.contacts[cid])) for cid in ordered[start : start + self.page_size]]
        following = start + self.page_size
        return chunk, (str(following) if following < len(ordered) else None)

    search_page: int = 200
    search_results: int = 10_000
    """HubSpot's CRM search limits: a page, and the results one query answers."""
    searches: list[dict[str, Any]] = field(default_factory=list)
    """The body of every search, as HubSpot would receive it."""

    def changed_page(self, since_ms: int, after: str | None) -> tuple[list[Contact], str | None]:
        """HubSpot's search on ``lastmodifieddate`` (``changes_query``): at or after
        ``since_ms``, ascending, an offset ``after``; past ``search_results`` it refuses."""
        self.searches.append(changes_query(since_ms, after))
        start = int(after or 0)
        if start + self.search_page > self.search_results:
            raise CrmError("search: results past the query's limit", status=400)
        found = sorted(
            (modified_ms(props), cid)
            for cid, props in self.contacts.items()
            if modified_ms(props) >= since_ms
        )
        chunk = [(cid, dict(self.contacts[cid])) for _, cid in found[start : start + self.search_page]]
        following = start + self.search_page
        return chunk, (str(following) if following < len(found) else None)

    def iter_contacts(self) -> Iterator[Contact]:
        for contact_id in sorted(self.contacts):
            yield contact_id, dict(self.contacts[contact_id])

    def snapshot(self, contact_id: str) -> ContactSnapshot | None:
        if contact_id not in self.contacts:
            return None
        return ContactSnapshot(
            contact_id,
            dict(self.contacts[contact_id]),
            tuple(sorted(self.links.get(contact_id, set()))),
        )

    def related(self, association: Association) -> dict[str, Any] | None:
        found = self.records.get((association.type, association.id))
        return None if found is None else dict(found)

    def related_all(self, associations: Sequence[Association]) -> dict[Association, Any]:
        return {a: self.related(a) for a in associations}

    def associate(self, contact_id: str, association: Association) -> None:
        self._write()
        self.links.setdefault(contact_id, set()).add(association)

    def dissociate(self, contact_id: str, association: Association) -> None:
        self._write()
        self.links.setdefault(contact_id, set()).discard(association)

    def associate_all(self, contact_id: str, associations: Sequence[Association]) -> None:
        for association in associations:
            self.associate(contact_id, association)

    def dissociate_all(self, contact_id: str, associations: Sequence[Association]) -> None:
        for association in associations:
            self.dissociate(contact_id, association)

    def add_email(self, contact_id: str, email: str) -> None:
        owner = next(
            (cid for cid, p in self.contacts.items() if cid != contact_id and p.get("email") == email),
            None,
        )
        if owner is not None:  # HubSpot: one email belongs to one live contact
            raise CrmError(f"{email} is the email of contact {owner}", status=400)
        self._write()
        current = self.contacts[contact_id]
        emails = additional_emails(current)
        if email not in emails:
            current[ADDITIONAL_EMAILS] = ";".join([*emails, email])

    def remove_email(self, contact_id: str, email: str) -> None:
        self._write()
        current = self.contacts[contact_id]
        emails = [e for e in additional_emails(current) if e != email]
        if emails:
            current[ADDITIONAL_EMAILS] = ";".join(emails)
        else:
            current.pop(ADDITIONAL_EMAILS, None)

    def set_properties(self, contact_id: str, properties: Mapping[str, str | None]) -> None:
        self._write()
        current = self.contacts[contact_id]
        for name, value in properties.items():
            if name == ADDITIONAL_EMAILS:
                continue  # as HubSpot: only add_email / remove_email change it
            if value is None:
                current.pop(name, None)
            else:
                current[name] = value

    def archive(self, contact_id: str) -> None:
        self._write()
        self.archived[contact_id] = self.contacts.pop(contact_id)

    def restore(self, snapshot: ContactSnapshot) -> str:
        self._write()
        self.archived.pop(snapshot.id, None)
        self.contacts[snapshot.id] = {
            k: v for k, v in snapshot.properties.items() if v is not None
        }
        self.links.setdefault(snapshot.id, set())
        return snapshot.id

    def known(self, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` still here, live or archived (HubSpot's batch read, both ways)."""
        return {i for i in ids if i in self.contacts or i in self.archived}

    def delete_for_good(self, contact_id: str) -> None:
        """A GDPR delete (or an archive past HubSpot's 90 days): gone, live and archived."""
        self.contacts.pop(contact_id, None)
        self.archived.pop(contact_id, None)

    def state(self, ids: Sequence[str]) -> dict[str, Any]:
        """Properties and associations of ``ids`` (live or archived), for exact comparisons."""
        return {
            cid: {
                "live": cid in self.contacts,
                "properties": dict(self.contacts.get(cid) or self.archived.get(cid) or {}),
                "associations": sorted(self.links.get(cid, set())),
            }
            for cid in ids
        }


@dataclass
class MemoryCheckpoints:
    """``reading.Checkpoints`` in memory, for tests and the benchmark."""

    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    data: dict[tuple[str, int], bytes] = field(default_factory=dict)

    def load(self, run_id: str) -> ReadState | None:
        item = self.states.get(run_id)
        return None if item is None else ReadState.from_item(item)

    def save(self, state: ReadState, chunks: list[bytes], *, expected_step: int | None) -> bool:
        stored = self.states.get(state.run_id)
        if expected_step is not None and (stored is None or int(stored["step"]) != expected_step):
            return False
        for offset, chunk in enumerate(chunks):
            self.data[(state.run_id, state.chunks - len(chunks) + offset)] = chunk
        self.states[state.run_id] = state.to_item()
        return True

    def chunks(self, state: ReadState) -> Iterator[bytes]:
        for n in range(state.chunks):
            yield self.data[(state.run_id, n)]


@dataclass
class MemoryTable:
    """The two calls of a DynamoDB table dm-block's index makes (``get_item``, ``put_item``),
    on a dict: the index's tests run without moto."""

    items: dict[str, dict[str, Any]] = field(default_factory=dict)

    def get_item(self, Key: dict[str, str], **_: Any) -> dict[str, Any]:  # boto3's names
        found = self.items.get(Key["pair_key"])
        return {} if found is None else {"Item": dict(found)}

    def put_item(self, Item: dict[str, Any], **_: Any) -> None:
        self.items[str(Item["pair_key"])] = dict(Item)
