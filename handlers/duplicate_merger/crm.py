"""The CRM behind two small ports: a reader for dm-block, a writer for dm-merge.

``HubSpotCrm`` talks to HubSpot's CRM v3 REST API with urllib (no extra dependency);
``InMemoryCrm`` is the fake the tests and the local sandbox use, with failure injection so a
merge can be made to fail part way. Associations are read and written from the contact's side;
a label names the association type (``contact_to_deal``, ``referred_by``...), which keeps a
direction: a contact-to-contact "referred by" and "referrer of" are different labels.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

ASSOCIATED_TYPES = ("companies", "deals", "tickets", "contacts")
READ_PROPERTIES = (
    "firstname",
    "lastname",
    "email",
    "phone",
    "mobilephone",
    "company",
    "website",
    "address",
    "city",
    "zip",
    "state",
    "date_of_birth",
    "createdate",
)


class CrmError(Exception):
    """The CRM refused or failed a call; ``retryable`` for throttling and server errors."""

    def __init__(self, message: str, *, status: int = 0, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable


@dataclass(frozen=True, order=True)
class Association:
    """One association of a contact: the related object's type and id, and its label."""

    type: str
    id: str
    label: str

    def to_item(self) -> dict[str, str]:
        return {"type": self.type, "id": self.id, "label": self.label}

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Association:
        return cls(str(item["type"]), str(item["id"]), str(item["label"]))


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


class CrmReader(Protocol):
    """What dm-block needs: every contact's matching properties."""

    def iter_contacts(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(contact_id, properties)`` for every live contact."""
        ...


class CrmWriter(Protocol):
    """What dm-merge needs to merge two contacts and to put them back."""

    def snapshot(self, contact_id: str) -> ContactSnapshot | None:
        """The contact's full properties and associations; None if it does not exist."""
        ...

    def related(self, association: Association) -> dict[str, Any] | None:
        """The full properties of an associated record (kept in the undo bundle)."""
        ...

    def associate(self, contact_id: str, association: Association) -> None: ...

    def dissociate(self, contact_id: str, association: Association) -> None: ...

    def set_properties(self, contact_id: str, properties: Mapping[str, str | None]) -> None:
        """Set (or, with None, clear) the given properties."""
        ...

    def archive(self, contact_id: str) -> None:
        """Absorb: the contact leaves the live CRM (HubSpot keeps it restorable 90 days)."""
        ...

    def restore(self, snapshot: ContactSnapshot) -> str:
        """Bring an archived contact back with the snapshot's properties; returns its id."""
        ...


# HubSpot ---------------------------------------------------------------------------------


class HubSpotCrm:
    """HubSpot CRM v3 over HTTPS with a private-app bearer token."""

    def __init__(self, token: str, base_url: str = "https://api.hubapi.com", timeout: float = 20):
        if not token:
            raise ValueError("HubSpot token is empty")
        self._token = token
        self._base = base_url.rstrip("/")
        self._timeout = timeout
        self._property_names: tuple[str, ...] | None = None

    def _call(
        self, method: str, path: str, body: Any = None, query: Mapping[str, str] | None = None
    ) -> Any:
        url = f"{self._base}{path}"
        if query:
            url += "?" + urllib.parse.urlencode(query)
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(url, data=data, method=method)  # noqa: S310 - https base
        request.add_header("authorization", f"Bearer {self._token}")
        request.add_header("accept", "application/json")
        if data is not None:
            request.add_header("content-type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:  # noqa: S310
                raw = response.read()
        except urllib.error.HTTPError as err:
            if err.code == 404 and method == "GET":
                return None
            retryable = err.code == 429 or err.code >= 500
            raise CrmError(f"{method} {path}: HTTP {err.code}", status=err.code, retryable=retryable) from err
        except (urllib.error.URLError, TimeoutError) as err:
            raise CrmError(f"{method} {path}: {err}", retryable=True) from err
        return json.loads(raw) if raw else None

    # Reader -------------------------------------------------------------------------------

    def iter_contacts(self) -> Iterator[tuple[str, dict[str, Any]]]:
        after: str | None = None
        while True:
            query = {"limit": "100", "properties": ",".join(READ_PROPERTIES), "archived": "false"}
            if after:
                query["after"] = after
            page = self._call("GET", "/crm/v3/objects/contacts", query=query) or {}
            for result in page.get("results", []):
                yield str(result["id"]), dict(result.get("properties") or {})
            after = ((page.get("paging") or {}).get("next") or {}).get("after")
            if not after:
                return

    # Writer -------------------------------------------------------------------------------

    def _all_properties(self) -> tuple[str, ...]:
        if self._property_names is None:
            listing = self._call("GET", "/crm/v3/properties/contacts") or {}
            self._property_names = tuple(
                sorted(p["name"] for p in listing.get("results", []) if not p.get("calculated"))
            )
        return self._property_names

    def snapshot(self, contact_id: str) -> ContactSnapshot | None:
        found = self._call(
            "GET",
            f"/crm/v3/objects/contacts/{urllib.parse.quote(contact_id)}",
            query={
                "properties": ",".join(self._all_properties()),
                "associations": ",".join(ASSOCIATED_TYPES),
            },
        )
        if not found:
            return None
        associations = []
        for kind, block in (found.get("associations") or {}).items():
            for result in block.get("results", []):
                associations.append(Association(kind, str(result["id"]), str(result["type"])))
        return ContactSnapshot(
            str(found["id"]), dict(found.get("properties") or {}), tuple(sorted(associations))
        )

    def related(self, association: Association) -> dict[str, Any] | None:
        found = self._call(
            "GET",
            f"/crm/v3/objects/{association.type}/{urllib.parse.quote(association.id)}",
        )
        return None if not found else dict(found.get("properties") or {})

    def associate(self, contact_id: str, association: Association) -> None:
        self._call(
            "PUT",
            f"/crm/v3/objects/contacts/{contact_id}/associations/"
            f"{association.type}/{association.id}/{association.label}",
        )

    def dissociate(self, contact_id: str, association: Association) -> None:
        self._call(
            "DELETE",
            f"/crm/v3/objects/contacts/{contact_id}/associations/"
            f"{association.type}/{association.id}/{association.label}",
        )

    def set_properties(self, contact_id: str, properties: Mapping[str, str | None]) -> None:
        writable = {k: ("" if v is None else v) for k, v in properties.items() if not k.startswith("hs_")}
        self._call("PATCH", f"/crm/v3/objects/contacts/{contact_id}", {"properties": writable})

    def archive(self, contact_id: str) -> None:
        self._call("DELETE", f"/crm/v3/objects/contacts/{contact_id}")

    def restore(self, snapshot: ContactSnapshot) -> str:
        # The public API cannot un-archive; the contact comes back as a new record with the
        # snapshot's properties, and the caller re-attaches its associations to the new id.
        writable = {
            k: v
            for k, v in snapshot.properties.items()
            if v not in (None, "") and not k.startswith("hs_") and k not in ("createdate", "lastmodifieddate")
        }
        created = self._call("POST", "/crm/v3/objects/contacts", {"properties": writable})
        return str(created["id"])


# In-memory fake --------------------------------------------------------------------------


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

    def iter_contacts(self) -> Iterator[tuple[str, dict[str, Any]]]:
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

    def associate(self, contact_id: str, association: Association) -> None:
        self._write()
        self.links.setdefault(contact_id, set()).add(association)

    def dissociate(self, contact_id: str, association: Association) -> None:
        self._write()
        self.links.setdefault(contact_id, set()).discard(association)

    def set_properties(self, contact_id: str, properties: Mapping[str, str | None]) -> None:
        self._write()
        current = self.contacts[contact_id]
        for name, value in properties.items():
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
