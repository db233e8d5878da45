"""The lead enricher's test doubles: an in-memory CRM and an in-memory firmographic provider.

Never shipped (components/archive.py refuses ``testsupport``): tests and the sandbox inject
them where the handlers take a real client (``functions.push.make_crm``,
``functions.enrich.make_provider``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from handlers.lead_enricher.crm import CrmContact, CrmRejected
from handlers.lead_enricher.providers.base import ProviderUnavailable, RateLimited


class FakeCrm:
    """In-memory CRM with HubSpot's rules that matter here (unique email, 409 on a repeat,
    and from 2026-09 the portal's required properties on a create).

    ``calls`` records every write as (method, crm_id, properties) so tests can count them,
    ``searches`` every search as (property, value);
    ``required`` names the properties the portal requires on a create.
    """

    def __init__(self) -> None:
        self.required: set[str] = set()
        self.contacts: dict[str, CrmContact] = {}
        self.calls: list[tuple[str, str, dict[str, str]]] = []
        self.searches: list[tuple[str, str]] = []
        self.archived_ids: set[str] = set()
        self._next = 1000

    def add(self, **properties: str | None) -> CrmContact:
        """Seed a contact as a person would have typed it."""
        self._next += 1
        contact = CrmContact(str(self._next), dict(properties))
        self.contacts[contact.crm_id] = contact
        return contact

    def _find(self, names: tuple[str, ...], value: str) -> CrmContact | None:
        for contact in sorted(self.contacts.values(), key=lambda c: int(c.crm_id)):
            if any((contact.properties.get(n) or "") == value for n in names):
                return contact
        return None

    def find_by_email(self, email: str) -> CrmContact | None:
        self.searches.append(("email", email))
        return self._find(("email",), email)

    def find_by_phone(self, phone: str) -> CrmContact | None:
        self.searches.append(("phone", phone))
        return self._find(("phone", "mobilephone"), phone)

    def get(self, crm_id: str) -> CrmContact | None:
        found = self.contacts.get(crm_id)
        return None if found is None else CrmContact(found.crm_id, dict(found.properties))

    def archived(self, crm_id: str) -> bool:
        return crm_id in self.archived_ids

    def delete(self, crm_id: str, *, for_good: bool) -> None:
        """An ordinary delete (archived, restorable) or a GDPR delete (gone)."""
        self.contacts.pop(crm_id, None)
        if not for_good:
            self.archived_ids.add(crm_id)

    def create(self, properties: Mapping[str, str]) -> tuple[CrmContact, bool]:
        email = properties.get("email")
        if email and (existing := self.find_by_email(email)) is not None:
            return self.get(existing.crm_id) or existing, False
        missing = tuple(sorted(n for n in self.required if not properties.get(n)))
        if missing:
            raise CrmRejected(missing)
        contact = self.add(**dict(properties))
        self.calls.append(("create", contact.crm_id, dict(properties)))
        return self.get(contact.crm_id) or contact, True

    def update(self, crm_id: str, properties: Mapping[str, str]) -> CrmContact:
        contact = self.contacts[crm_id]
        contact.properties.update(properties)
        self.calls.append(("update", crm_id, dict(properties)))
        return self.get(crm_id) or contact

    def page(self, after: str | None, limit: int = 100) -> tuple[list[CrmContact], str | None]:
        ordered = sorted(self.contacts.values(), key=lambda c: int(c.crm_id))
        start = int(after or 0)
        chunk = ordered[start : start + limit]
        following = start + limit
        return [CrmContact(c.crm_id, dict(c.properties)) for c in chunk], (
            str(following) if following < len(ordered) else None
        )


class FakeFirmographics:
    """In-memory provider: fields by domain; ``down`` fails every call, ``throttle`` 429s it."""

    name = "fake"

    def __init__(self, profiles: dict[str, dict[str, Any]] | None = None) -> None:
        self.profiles = dict(profiles or {})
        self.down = False
        self.throttle: float | None = None
        self.calls: list[str] = []

    def lookup(self, domain: str) -> dict[str, Any] | None:
        self.calls.append(domain)
        if self.down:
            raise ProviderUnavailable("fake provider is down")
        if self.throttle is not None:
            raise RateLimited("fake provider throttled", self.throttle)
        found = self.profiles.get(domain)
        return None if found is None else dict(found)
