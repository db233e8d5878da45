"""The CRM behind two small ports: a reader for dm-block, a writer for dm-merge.

``HubSpotCrm`` talks to HubSpot's date-based CRM APIs through the shared client
(``handlers.common.hubspot``); the in-memory fake the tests and the local sandbox use is
``testsupport.dm.InMemoryCrm``.

Associations are read and written from the contact's side, with HubSpot's association types
(v4 model, the date-based Associations API): each has a category and a type id that keep a
direction (contact-to-company unlabeled is ``HUBSPOT_DEFINED`` 279, primary company is 1;
contact-to-deal 4, to-ticket 15, to-contact 449, to-call 193, to-email 197, to-meeting 199,
to-note 201, to-task 203; a custom label is ``USER_DEFINED`` with its own id). A merge moves
every one of them, engagements included. Governing pages:

* "Associations" API guide (date-based),
  https://developers.hubspot.com/docs/api-reference/latest/crm/associations/associate-records/guide
* "Read associations in batch",
  https://developers.hubspot.com/docs/api-reference/2026-03/crm/associations/associate-records/batch/get-associations
  (``POST /crm/associations/{version}/{from}/{to}/batch/read``, ``after`` per input)
* "Associate records (labelled)",
  https://developers.hubspot.com/docs/api-reference/2026-03/crm/associations/associate-records/batch/create-associations-labeled
  (``POST .../batch/create`` with ``types``)
* "Delete specific labels",
  https://developers.hubspot.com/docs/api-reference/latest/crm/associations/associate-records/batch/delete-association-labels
  (``POST .../batch/labels/archive``; deleting the unlabeled type deletes every label)
* Association type ids: HubSpot's SDK constants (``Hubspot::Helpers::AssociationType``,
  https://rubydoc.info/gems/hubspot-api-client/17.2.0/Hubspot/Helpers/AssociationType) and the
  "Associations" overview, https://developers.hubspot.com/docs/api-reference/latest/crm/associations/overview
* Secondary emails: ``hs_additional_emails`` is HubSpot's semicolon-separated list and is not
  written through the objects API; the legacy secondary-email endpoints add and remove one
  (``PUT``/``DELETE /contacts/v1/secondary-email/{vid}/email/{email}``, "Get the secondary email
  addresses for a contact", https://legacydocs.hubspot.com/docs/methods/contacts/get-secondary-email-addresses-by-vid).
  No date-based equivalent is published yet; see docs/hubspot.md.
"""

from __future__ import annotations

import re
import urllib.parse
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from handlers.common.clock import Clock
from handlers.common.hubspot import HubSpotClient, HubSpotError, chunks, token_from_secret
from handlers.common.secrets import default_cache
from handlers.duplicate_merger.matcher import PROFILE_PROPERTIES

ASSOCIATED_TYPES = (
    "companies",
    "deals",
    "tickets",
    "contacts",
    "notes",
    "emails",
    "calls",
    "meetings",
    "tasks",
)
"""Every object type a contact's associations are read from and moved to: records and the
five engagement types."""
ENGAGEMENT_TYPES = frozenset({"notes", "emails", "calls", "meetings", "tasks"})
READ_PROPERTIES = (*PROFILE_PROPERTIES, "createdate", "hs_merged_object_ids")
"""``hs_merged_object_ids``: the ids merged into a contact are not deletions (``deletions``)."""
MODIFIED = "lastmodifieddate"
"""The contact property HubSpot stamps on every change: what a week's read searches on."""
SEARCH_LIMIT = 200
SEARCH_RESULTS = 10_000
"""HubSpot's CRM search answers at most 200 records a page and 10,000 results a query (a later
page is refused) ("Search the CRM", Limitations,
https://developers.hubspot.com/docs/api-reference/2026-03/crm/search-the-crm)."""
ADDITIONAL_EMAILS = "hs_additional_emails"
HUBSPOT_DEFINED = "HUBSPOT_DEFINED"
PRIMARY_COMPANY = ("companies", HUBSPOT_DEFINED, 1)
"""A contact has one primary company; the absorbed one's moves as an unlabeled association."""
LEGACY_TYPE_IDS = {
    "contact_to_company": 279,
    "contact_to_company_unlabeled": 279,
    "contact_to_deal": 4,
    "contact_to_ticket": 15,
    "contact_to_contact": 449,
}
"""v3 association type names in bundles written before the v4 model (bundle version 1)."""


class CrmError(Exception):
    """The CRM refused or failed a call; ``retryable`` for throttling and server errors."""

    def __init__(self, message: str, *, status: int = 0, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable


@dataclass(frozen=True, order=True)
class Association:
    """One association of a contact: the related object's type and id, and the association
    type (category and id, from the contact's side). ``label`` is HubSpot's display label,
    kept for people, not compared."""

    type: str
    id: str
    type_id: int
    category: str = HUBSPOT_DEFINED
    label: str = field(default="", compare=False)

    @property
    def engagement(self) -> bool:
        return self.type in ENGAGEMENT_TYPES

    def to_item(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "id": self.id,
            "type_id": self.type_id,
            "category": self.category,
            "label": self.label,
        }

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Association:
        if "type_id" in item:
            return cls(
                str(item["type"]),
                str(item["id"]),
                int(item["type_id"]),
                str(item.get("category") or HUBSPOT_DEFINED),
                str(item.get("label") or ""),
            )
        # Bundle version 1: a v3 type name; an unknown (custom) name keeps type id 0, which
        # the HubSpot adapter refuses to write rather than guess.
        name = str(item["label"])
        return cls(str(item["type"]), str(item["id"]), LEGACY_TYPE_IDS.get(name, 0), HUBSPOT_DEFINED, name)


def additional_emails(properties: Mapping[str, str | None]) -> list[str]:
    """The contact's secondary emails (HubSpot stores them separated by semicolons)."""
    text = properties.get(ADDITIONAL_EMAILS) or ""
    return [part.strip() for part in re.split(r"[;,\s]+", text) if part.strip()]


@dataclass(frozen=True)
class ContactSnapshot:
    """Everything about one contact that a merge changes: properties and associations."""

    id: str
    properties: Mapping[str, str | None]
    associations: tuple[Association, ...]

    def to_item(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "properties": dict(self.properties),
            "associations": [a.to_item() for a in self.associations],
        }

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> ContactSnapshot:
        return cls(
            str(item["id"]),
            {str(k): (None if v is None else str(v)) for k, v in item["properties"].items()},
            tuple(sorted(Association.from_item(a) for a in item["associations"])),
        )


Contact = tuple[str, dict[str, Any]]


class CrmReader(Protocol):
    """What dm-block needs: every contact's matching properties, a page at a time."""

    def page(self, after: str | None) -> tuple[list[Contact], str | None]:
        """One page of ``(contact_id, properties)`` and the cursor of the next (None: done)."""
        ...

    def iter_contacts(self) -> Iterator[Contact]:
        """``(contact_id, properties)`` for every live contact."""
        ...


def paged(page: Callable[[str | None], tuple[list[Contact], str | None]]) -> Iterator[Contact]:
    """Every contact of a paged read, page after page until the cursor runs out."""
    after: str | None = None
    while True:
        contacts, after = page(after)
        yield from contacts
        if after is None:
            return


class ChangesReader(Protocol):
    """What a week's read needs: the contacts modified since a time, oldest change first."""

    def changed_page(self, since_ms: int, after: str | None) -> tuple[list[Contact], str | None]:
        """One page of contacts whose ``lastmodifieddate`` is at or after ``since_ms`` (epoch
        milliseconds), ascending by it, and the cursor of the next page (None: done)."""
        ...


def changes_query(since_ms: int, after: str | None) -> dict[str, Any]:
    """The CRM search body of one page of a week's read: ``lastmodifieddate`` at or after
    ``since_ms`` (a date-time filter value is epoch milliseconds), sorted ascending so that a
    window past the query's 10,000 results can start again at the last change seen."""
    body: dict[str, Any] = {
        "filterGroups": [
            {"filters": [{"propertyName": MODIFIED, "operator": "GTE", "value": str(since_ms)}]}
        ],
        "sorts": [{"propertyName": MODIFIED, "direction": "ASCENDING"}],
        "properties": [*READ_PROPERTIES, MODIFIED],
        "limit": SEARCH_LIMIT,
    }
    if after:
        body["after"] = after
    return body


class CrmWriter(Protocol):
    """What dm-merge needs to merge two contacts and to put them back."""

    def snapshot(self, contact_id: str) -> ContactSnapshot | None:
        """The contact's full properties and every association; None if it does not exist."""
        ...

    def related(self, association: Association) -> dict[str, Any] | None:
        """The properties of one associated record (kept in the undo bundle)."""
        ...

    def related_all(self, associations: Sequence[Association]) -> dict[Association, Any]:
        """The properties of many associated records, read in batches."""
        ...

    def associate(self, contact_id: str, association: Association) -> None: ...

    def dissociate(self, contact_id: str, association: Association) -> None: ...

    def associate_all(self, contact_id: str, associations: Sequence[Association]) -> None:
        """Create these associations from the contact, in batches (already present: no-op)."""
        ...

    def dissociate_all(self, contact_id: str, associations: Sequence[Association]) -> None:
        """Remove exactly these association types from the contact (absent: no-op)."""
        ...

    def set_properties(self, contact_id: str, properties: Mapping[str, str | None]) -> None:
        """Set (or, with None, clear) the given properties."""
        ...

    def add_email(self, contact_id: str, email: str) -> None:
        """Add a secondary email (``hs_additional_emails``); already there: no-op."""
        ...

    def remove_email(self, contact_id: str, email: str) -> None:
        """Remove a secondary email; absent: no-op."""
        ...

    def archive(self, contact_id: str) -> None:
        """Absorb: the contact leaves the live CRM (HubSpot keeps it restorable 90 days)."""
        ...

    def restore(self, snapshot: ContactSnapshot) -> str:
        """Bring an archived contact back with the snapshot's properties; returns its id."""
        ...


# HubSpot ---------------------------------------------------------------------------------


def _crm_error(err: HubSpotError) -> CrmError:
    return CrmError(str(err), status=err.status, retryable=err.retryable)


class HubSpotCrm:
    """HubSpot's date-based CRM APIs with a Service Key (bearer token)."""

    def __init__(
        self,
        token: str | Callable[[], str],
        base_url: str = "https://api.hubapi.com",
        *,
        version: str | None = None,
        client: HubSpotClient | None = None,
        **client_options: Any,
    ) -> None:
        if client is None:
            if version is not None:
                client_options["version"] = version
            client = HubSpotClient(token, base_url=base_url, **client_options)
        self.client = client
        self._property_names: tuple[str, ...] | None = None

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            return self.client.request(method, path, **kwargs)
        except HubSpotError as err:
            raise _crm_error(err) from err

    # Reader -------------------------------------------------------------------------------

    def page(self, after: str | None) -> tuple[list[Contact], str | None]:
        query = {"limit": "100", "properties": ",".join(READ_PROPERTIES), "archived": "false"}
        try:
            results, following = self.client.page(
                self.client.crm_path("objects", "contacts"), query, after
            )
        except HubSpotError as err:
            raise _crm_error(err) from err
        return [(str(r["id"]), dict(r.get("properties") or {})) for r in results], following

    def changed_page(self, since_ms: int, after: str | None) -> tuple[list[Contact], str | None]:
        # A search is a POST that changes nothing: safe to repeat (the client's search limiter
        # keeps it under HubSpot's requests per second, and a 429 is retried).
        answer = self._call(
            "POST",
            self.client.crm_path("objects", "contacts", "search"),
            body=changes_query(since_ms, after),
            idempotent=True,
        ) or {}
        following = ((answer.get("paging") or {}).get("next") or {}).get("after")
        contacts = [(str(r["id"]), dict(r.get("properties") or {})) for r in answer.get("results") or []]
        return contacts, (str(following) if following else None)

    def iter_contacts(self) -> Iterator[Contact]:
        return paged(self.page)

    def known(self, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` HubSpot answers a batch read for, live or (``archived=true``)
        archived: a contact deleted for good is in neither (``deletions``)."""
        found: set[str] = set()
        for archived in ("false", "true"):
            for batch in chunks(list(ids)):
                try:
                    answer = self._call(
                        "POST",
                        self.client.crm_path("objects", "contacts", "batch", "read"),
                        query={"archived": archived},
                        body={"inputs": [{"id": i} for i in batch], "properties": ["hs_object_id"]},
                        idempotent=True,
                    ) or {}
                except CrmError as err:
                    if err.status != 404:  # 404: none of the batch (as snapshot reads it)
                        raise
                    answer = {}
                found.update(str(r.get("id")) for r in answer.get("results") or [])
        return found

    # Writer -------------------------------------------------------------------------------

    def _all_properties(self) -> tuple[str, ...]:
        if self._property_names is None:
            listing = self._call("GET", self.client.crm_path("properties", "contacts")) or {}
            self._property_names = tuple(
                sorted(
                    p["name"]
                    for p in listing.get("results", [])
                    if (
                        not p.get("calculated")
                        and not (p.get("modificationMetadata") or {}).get("readOnlyValue")
                    )
                    # Read-only, yet part of the snapshot: the age rule and the secondary emails.
                    or p.get("name") in (ADDITIONAL_EMAILS, "createdate")
                )
            )
        return self._property_names

    def snapshot(self, contact_id: str) -> ContactSnapshot | None:
        try:
            answer = self._call(
                "POST",
                self.client.crm_path("objects", "contacts", "batch", "read"),
                body={"inputs": [{"id": contact_id}], "properties": list(self._all_properties())},
                idempotent=True,
            ) or {}
        except CrmError as err:
            if err.status == 404:
                return None
            raise
        found = [r for r in answer.get("results") or [] if str(r.get("id")) == contact_id]
        if not found:
            return None
        associations: list[Association] = []
        for kind in ASSOCIATED_TYPES:
            associations.extend(self._associations(contact_id, kind))
        return ContactSnapshot(
            contact_id, dict(found[0].get("properties") or {}), tuple(sorted(set(associations)))
        )

    def _associations(self, contact_id: str, kind: str) -> Iterator[Association]:
        path = self.client.crm_path("associations", "contacts", kind, "batch", "read")
        after: str | None = None
        while True:
            entry: dict[str, str] = {"id": contact_id}
            if after:
                entry["after"] = after
            answer = self._call("POST", path, body={"inputs": [entry]}, idempotent=True) or {}
            after = None
            for result in answer.get("results") or []:
                for to in result.get("to") or []:
                    for t in to.get("associationTypes") or []:
                        yield Association(
                            kind,
                            str(to["toObjectId"]),
                            int(t["typeId"]),
                            str(t.get("category") or HUBSPOT_DEFINED),
                            str(t.get("label") or ""),
                        )
                following = ((result.get("paging") or {}).get("next") or {}).get("after")
                after = str(following) if following else None
            if after is None:
                return

    def related(self, association: Association) -> dict[str, Any] | None:
        return self.related_all([association]).get(association)

    def related_all(self, associations: Sequence[Association]) -> dict[Association, Any]:
        found: dict[Association, Any] = {}
        by_type: dict[str, list[Association]] = defaultdict(list)
        for assoc in associations:
            by_type[assoc.type].append(assoc)
        for kind, group in sorted(by_type.items()):
            ids = sorted({a.id for a in group})
            properties: dict[str, Any] = {}
            for batch in chunks(ids):
                answer = self._call(
                    "POST",
                    self.client.crm_path("objects", kind, "batch", "read"),
                    body={"inputs": [{"id": i} for i in batch]},
                    idempotent=True,
                ) or {}
                for result in answer.get("results") or []:
                    properties[str(result["id"])] = dict(result.get("properties") or {})
            for assoc in group:
                found[assoc] = properties.get(assoc.id)
        return found

    def associate(self, contact_id: str, association: Association) -> None:
        self.associate_all(contact_id, [association])

    def dissociate(self, contact_id: str, association: Association) -> None:
        self.dissociate_all(contact_id, [association])

    @staticmethod
    def _grouped(
        contact_id: str, associations: Iterable[Association]
    ) -> dict[str, list[dict[str, Any]]]:
        """Per object type, one input per related record with all its association types."""
        types: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for a in associations:  # in the caller's order
            if a.type_id <= 0:
                raise CrmError(f"association {a.type}/{a.id} {a.label!r} has no HubSpot type id")
            types[(a.type, a.id)].append(
                {"associationCategory": a.category, "associationTypeId": a.type_id}
            )
        inputs: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for (kind, to_id), specs in types.items():
            inputs[kind].append({"from": {"id": contact_id}, "to": {"id": to_id}, "types": specs})
        return inputs

    def associate_all(self, contact_id: str, associations: Sequence[Association]) -> None:
        for kind, inputs in self._grouped(contact_id, associations).items():
            path = self.client.crm_path("associations", "contacts", kind, "batch", "create")
            for batch in chunks(inputs):
                self._call("POST", path, body={"inputs": batch}, idempotent=True)

    def dissociate_all(self, contact_id: str, associations: Sequence[Association]) -> None:
        # Labelled types first: removing the unlabeled type removes every label with it.
        ordered = sorted(associations, key=lambda a: (not a.label and a.category == HUBSPOT_DEFINED, a))
        for kind, inputs in self._grouped(contact_id, ordered).items():
            path = self.client.crm_path("associations", "contacts", kind, "batch", "labels", "archive")
            for batch in chunks(inputs):
                self._call("POST", path, body={"inputs": batch}, idempotent=True)

    def set_properties(self, contact_id: str, properties: Mapping[str, str | None]) -> None:
        writable = {
            k: ("" if v is None else v) for k, v in properties.items() if not k.startswith("hs_")
        }
        if writable:
            self._call(
                "PATCH",
                self.client.crm_path("objects", "contacts", contact_id),
                body={"properties": writable},
            )

    def _secondary_email_path(self, contact_id: str, email: str) -> str:
        quote = urllib.parse.quote
        return f"/contacts/v1/secondary-email/{quote(contact_id, safe='')}/email/{quote(email, safe='')}"

    def add_email(self, contact_id: str, email: str) -> None:
        self._call("PUT", self._secondary_email_path(contact_id, email))

    def remove_email(self, contact_id: str, email: str) -> None:
        try:
            self.client.request("DELETE", self._secondary_email_path(contact_id, email))
        except HubSpotError as err:
            if err.status != 404:
                raise _crm_error(err) from err

    def archive(self, contact_id: str) -> None:
        self._call("DELETE", self.client.crm_path("objects", "contacts", contact_id))

    def restore(self, snapshot: ContactSnapshot) -> str:
        # The public API cannot un-archive; the contact comes back as a new record with the
        # snapshot's properties, and the caller re-attaches its associations to the new id.
        writable = {
            k: v
            for k, v in snapshot.properties.items()
            if v not in (None, "") and not k.startswith("hs_") and k not in ("createdate", "lastmodifieddate")
        }
        created = self._call(
            "POST", self.client.crm_path("objects", "contacts"), body={"properties": writable}
        )
        return str(created["id"])


def hubspot(
    secret: str, base_url: str, version: str, clock: Clock, *, deadline: float | None = None
) -> HubSpotCrm:
    """HubSpot as dm's functions reach it: the Service Key read from ``secret`` (dm-block's read
    credential, dm-merge's write one: each role may read only its own), dropped from the cache
    when HubSpot refuses it, and no rate-limit wait past ``deadline`` when one is given."""
    return HubSpotCrm(
        lambda: token_from_secret(default_cache.get_string(secret)),
        base_url,
        version=version,
        on_unauthorized=lambda: default_cache.invalidate(secret),
        deadline=deadline,
        wall=lambda: clock().timestamp(),
    )
