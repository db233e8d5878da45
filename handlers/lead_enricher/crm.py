"""The CRM behind a port: a HubSpot adapter (the shared date-based client).

Push needs: find a contact by email or phone (the final, authoritative duplicate check),
read one, create one, update some of its properties, and page through all of them (the
nightly export the identity index is re-synced from). HubSpot refuses a second contact with
the same email (409 with the existing id), which the adapter turns into "that one": a push
that is retried after creating never creates twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from handlers.common.api_versions import HUBSPOT_DEFAULT_VERSION
from handlers.common.hubspot import HubSpotClient, HubSpotError, refused_properties

READ_PROPERTIES = (
    "email",
    "firstname",
    "lastname",
    "phone",
    "mobilephone",
    "company",
    "country",
    "jobtitle",
    "website",
    "city",
    "numberofemployees",
    "hs_merged_object_ids",
)


class CrmRejected(HubSpotError):
    """HubSpot refused a write for a property the portal requires (or does not have): not
    the lead's fault and not transient, so the lead is kept for replay once the portal is
    fixed. ``properties`` are the names HubSpot gave (possibly none)."""

    def __init__(self, properties: tuple[str, ...], cause: HubSpotError | None = None) -> None:
        named = ", ".join(properties) or "a property HubSpot did not name"
        super().__init__(
            f"HubSpot requires {named}",
            status=400 if cause is None else cause.status,
            body="" if cause is None else cause.body,
            category="VALIDATION_ERROR",
            correlation_id="" if cause is None else cause.correlation_id,
        )
        self.properties = properties


def _raise_rejected(err: HubSpotError) -> None:
    """Raise :class:`CrmRejected` when ``err`` is a required-property refusal."""
    properties = refused_properties(err)
    if properties is not None:
        raise CrmRejected(properties, err) from err


@dataclass
class CrmContact:
    """One contact: its id, its properties (None or "" when empty), merged-away ids."""

    crm_id: str
    properties: dict[str, str | None] = field(default_factory=dict)

    @property
    def merged_ids(self) -> list[str]:
        text = self.properties.get("hs_merged_object_ids") or ""
        return [part for part in re.split(r"[;,\s]+", text) if part]


class Crm(Protocol):
    """What ler-push (the only CRM caller) does with the CRM."""

    def find_by_email(self, email: str) -> CrmContact | None: ...

    def find_by_phone(self, phone: str) -> CrmContact | None: ...

    def get(self, crm_id: str) -> CrmContact | None: ...

    def archived(self, crm_id: str) -> bool:
        """Whether the contact is archived (restorable): False once deleted for good."""
        ...

    def create(self, properties: Mapping[str, str]) -> tuple[CrmContact, bool]:
        """The new contact and True, or the contact that already has this email and False."""
        ...

    def update(self, crm_id: str, properties: Mapping[str, str]) -> CrmContact: ...

    def page(self, after: str | None, limit: int = 100) -> tuple[list[CrmContact], str | None]:
        """One page of every contact and the cursor of the next (None at the end)."""
        ...


def _contact(data: Mapping[str, Any]) -> CrmContact:
    properties = data.get("properties") or {}
    return CrmContact(
        crm_id=str(data["id"]),
        properties={k: (None if v is None else str(v)) for k, v in properties.items()},
    )


class HubSpotCrm:
    """HubSpot's date-based contacts API through the shared client (``handlers.common.hubspot``),
    with a Service Key read at call time. Search calls keep to the search endpoints' own limit.

    Governing pages: "Search the CRM" (``POST /crm/objects/{version}/contacts/search``, filter
    groups ORed, ``CONTAINS_TOKEN`` on ``hs_additional_emails``),
    https://developers.hubspot.com/docs/api-reference/latest/crm/search/guide; "Create a
    contact" (409 ``Existing ID`` on a duplicate email),
    https://developers.hubspot.com/docs/api-reference/2026-03/crm/objects/contacts/create-contact;
    "CRM API Write Validation Enforcement" (from 2026-09 a portal's required properties apply
    to API writes: 400 ``VALIDATION_ERROR``, raised here as :class:`CrmRejected`),
    https://developers.hubspot.com/changelog/crm-api-write-validation-enforcement.
    """

    def __init__(
        self,
        base_url: str,
        token: Callable[[], str],
        timeout: float = 8.0,
        *,
        version: str | None = None,
        client: HubSpotClient | None = None,
        on_unauthorized: Callable[[], None] | None = None,
        wall: Callable[[], float],
    ) -> None:
        self.client = client or HubSpotClient(
            token,
            wall=wall,
            base_url=base_url,
            timeout=timeout,
            version=version or HUBSPOT_DEFAULT_VERSION,
            on_unauthorized=on_unauthorized,
        )

    def _contacts(self, *parts: str) -> str:
        return self.client.crm_path("objects", "contacts", *parts)

    def _search(self, groups: list[list[dict[str, str]]]) -> CrmContact | None:
        body = {
            "filterGroups": [{"filters": filters} for filters in groups],
            "properties": list(READ_PROPERTIES),
            "sorts": [{"propertyName": "createdate", "direction": "ASCENDING"}],
            "limit": 1,
        }
        answer = self.client.request("POST", self._contacts("search"), body=body, idempotent=True) or {}
        results = answer.get("results") or []
        return _contact(results[0]) if results else None

    def find_by_email(self, email: str) -> CrmContact | None:
        return self._search(
            [
                [{"propertyName": "email", "operator": "EQ", "value": email}],
                [
                    {
                        "propertyName": "hs_additional_emails",
                        "operator": "CONTAINS_TOKEN",
                        "value": email,
                    }
                ],
            ]
        )

    def find_by_phone(self, phone: str) -> CrmContact | None:
        return self._search(
            [
                [{"propertyName": "phone", "operator": "EQ", "value": phone}],
                [{"propertyName": "mobilephone", "operator": "EQ", "value": phone}],
            ]
        )

    def get(self, crm_id: str) -> CrmContact | None:
        try:
            answer = self.client.request(
                "GET", self._contacts(crm_id), query={"properties": ",".join(READ_PROPERTIES)}
            )
        except HubSpotError as err:
            if err.status == 404:
                return None
            raise
        return _contact(answer)

    def archived(self, crm_id: str) -> bool:
        """``GET`` with ``archived=true`` answers only an archived contact: an ordinary delete
        is restorable 90 days ("Delete a contact",
        https://developers.hubspot.com/docs/api-reference/2026-03/crm/objects/contacts/delete-contact);
        a GDPR delete, or an archive HubSpot purged, is a 404 here too."""
        try:
            self.client.request("GET", self._contacts(crm_id), query={"archived": "true"})
        except HubSpotError as err:
            if err.status == 404:
                return False
            raise
        return True

    def create(self, properties: Mapping[str, str]) -> tuple[CrmContact, bool]:
        try:
            answer = self.client.request(
                "POST", self._contacts(), body={"properties": dict(properties)}
            )
        except HubSpotError as err:
            existing = re.search(r"Existing ID:\s*(\d+)", err.body) if err.status == 409 else None
            if existing is None:
                _raise_rejected(err)
                raise
            found = self.get(existing.group(1))
            if found is None:
                raise
            return found, False
        return _contact(answer), True

    def update(self, crm_id: str, properties: Mapping[str, str]) -> CrmContact:
        try:
            answer = self.client.request(
                "PATCH", self._contacts(crm_id), body={"properties": dict(properties)}
            )
        except HubSpotError as err:
            _raise_rejected(err)
            raise
        return _contact(answer)

    def page(self, after: str | None, limit: int = 100) -> tuple[list[CrmContact], str | None]:
        query = {"limit": str(limit), "archived": "false", "properties": ",".join(READ_PROPERTIES)}
        results, following = self.client.page(self._contacts(), query, after)
        return [_contact(r) for r in results], following
