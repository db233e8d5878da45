"""External API versions and their support windows: the one place (data and rules, no I/O).

Every external API the handlers call is pinned to a version. This module holds, per API, the
version this program was written against, where it lives, and the provider's documented
support rule. The handlers import it for their defaults (it ships in every archive, so it
imports nothing but the standard library); the infra reads it for the stack config's defaults
and checks, and ``make plan`` and the Pulumi program warn (never fail) when a configured
version is outside its window (``components.config.api_version_warnings``).

- HubSpot releases a REST API version every March and September; the path carries it
  (``/crm/objects/2026-09/contacts``). Each version is *Current* for 6 months after its GA,
  then *Supported* (critical fixes only), and *Unsupported* 18 months after its GA. The
  semantic-version paths (``/crm/v3``, ``/crm/v4``) become unsupported in September 2027.
  Pages: "Developer platform and API versioning",
  https://developers.hubspot.com/docs/developer-tooling/platform/versioning (the Current /
  Supported / Unsupported schedule: 6 and 18 months after GA); "2026-03 API reference",
  https://developers.hubspot.com/docs/api-reference/2026-03/overview (the path shape
  ``/api-name/2026-03/resource``, same root ``https://api.hubapi.com``); "Migration guide"
  (legacy APIs), https://developers.hubspot.com/docs/api-reference/legacy/migration-guide
  (date-based versions from March 30th 2026; v1-v4 unsupported in September 2027); developer
  changelog, "Breaking Change: CRM API Write Validation Enforcement Starting with the 2026-09
  API Version" (announced 2026-08-11): ``/2026-09/`` ships on September 8, 2026. A version
  missing from ``HUBSPOT_RELEASES`` is refused by the stack config: add its GA date here (from
  the changelog) when HubSpot publishes it.
- Shopify Admin API: "About Shopify API versioning", https://shopify.dev/docs/api/usage/versioning
  "Shopify releases a new API version every three months at the beginning of the quarter, at
  5pm UTC. Version names are date-based (for example, 2026-04). Each stable version is
  supported for a minimum of 12 months", with at least nine months of overlap between
  consecutive versions; a request to an unsupported version is served by the oldest supported
  one ("falls forward"). The developer changelog (https://shopify.dev/changelog?api_type=admin-graphql)
  carries Admin GraphQL entries tagged 2026-10, the version released on 1 October 2026 and
  the current stable one on 1 December 2026: supported until at least 1 October 2027.
- People Data Labs: the Company Enrichment API is ``/v5/company/enrich``
  (https://docs.peopledatalabs.com/docs/reference-company-enrichment-api); PDL publishes no
  end-of-support date for v5, so its window is open-ended and only a version other than v5
  is warned about.
- Apollo: the Organization Enrichment API is ``/api/v1/organizations/enrich``
  (https://docs.apollo.io/docs/api-pricing); Apollo publishes no version sunset, so only a
  version other than v1 is warned about.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Literal

# HubSpot ------------------------------------------------------------------------------------

HUBSPOT_RELEASES: dict[str, dt.date] = {
    "2026-03": dt.date(2026, 3, 30),
    "2026-09": dt.date(2026, 9, 8),
}
"""GA date of each date-based version HubSpot has published."""

HUBSPOT_DEFAULT_VERSION = "2026-09"
"""The newest published version: what a new stack calls."""

HUBSPOT_CURRENT_MONTHS = 6
HUBSPOT_UNSUPPORTED_MONTHS = 18

Phase = Literal["current", "supported", "unsupported", "unreleased"]


def _add_months(day: dt.date, months: int) -> dt.date:
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return dt.date(year, month, min(day.day, 28))


@dataclass(frozen=True)
class SupportWindow:
    """One version's window: Current until ``supported_from``, Unsupported from ``unsupported_from``."""

    version: str
    released: dt.date
    supported_from: dt.date
    unsupported_from: dt.date

    def phase(self, today: dt.date) -> Phase:
        if today < self.released:
            return "unreleased"
        if today < self.supported_from:
            return "current"
        if today < self.unsupported_from:
            return "supported"
        return "unsupported"

    def describe(self, today: dt.date) -> str:
        """One line for the plan: the phase today and the window's dates."""
        phase = self.phase(today)
        text = (
            f"HubSpot API {self.version}: {phase} on {today.isoformat()} "
            f"(GA {self.released.isoformat()}, current until {self.supported_from.isoformat()}, "
            f"unsupported from {self.unsupported_from.isoformat()})"
        )
        newest = max(HUBSPOT_RELEASES, key=HUBSPOT_RELEASES.__getitem__)
        if phase in ("unsupported", "unreleased"):
            return f"WARNING {text}: outside HubSpot's support window, move to {newest}"
        if phase == "supported" and newest != self.version:
            return f"{text}; {newest} is current"
        return text


def hubspot_window(version: str) -> SupportWindow:
    """The support window of a published version; ``KeyError`` for an unknown one."""
    released = HUBSPOT_RELEASES[version]
    return SupportWindow(
        version,
        released,
        _add_months(released, HUBSPOT_CURRENT_MONTHS),
        _add_months(released, HUBSPOT_UNSUPPORTED_MONTHS),
    )


# Shopify and the firmographic providers --------------------------------------------------

SHOPIFY_DEFAULT_VERSION = "2026-10"
"""Shopify's current stable Admin API version on 2026-12-01 (released 2026-10-01)."""
SHOPIFY_SUPPORT_MONTHS = 12
"""Each stable Shopify version is supported for a minimum of 12 months after its release."""

_SHOPIFY_VERSION = re.compile(r"^(\d{4})-(01|04|07|10)$")


@dataclass(frozen=True)
class EnrichmentApi:
    """One firmographic provider's endpoint and the API version the adapter speaks."""

    base_url: str
    version: str
    known_versions: frozenset[str]
    support: str
    """The provider's documented support rule, shown in the plan."""


ENRICHMENT_APIS: dict[str, EnrichmentApi] = {
    "pdl": EnrichmentApi(
        "https://api.peopledatalabs.com",
        "v5",
        frozenset({"v5"}),
        "PDL Company Enrichment v5: current major version, no end of support published",
    ),
    "apollo": EnrichmentApi(
        "https://api.apollo.io",
        "v1",
        frozenset({"v1"}),
        "Apollo Organization Enrichment v1: current version, no sunset published",
    ),
}


def shopify_release(version: str) -> dt.date:
    """The day a quarterly Shopify version was released (``2026-10`` -> 2026-10-01)."""
    match = _SHOPIFY_VERSION.match(version)
    if match is None:
        raise ValueError(f"{version!r} is not a quarterly Shopify API version such as 2026-10")
    return dt.date(int(match.group(1)), int(match.group(2)), 1)


def shopify_supported_until(version: str) -> dt.date:
    """The first day ``version`` may no longer be supported (release + 12 months)."""
    released = shopify_release(version)
    return released.replace(year=released.year + SHOPIFY_SUPPORT_MONTHS // 12)


def shopify_current(today: dt.date) -> str:
    """The newest stable Shopify version released on or before ``today``."""
    quarter_month = ((today.month - 1) // 3) * 3 + 1
    return f"{today.year}-{quarter_month:02d}"


def shopify_window(version: str) -> str:
    """``2026-10 (supported 2026-10-01 to at least 2027-10-01)`` for the plan."""
    return (
        f"{version} (supported {shopify_release(version).isoformat()} "
        f"to at least {shopify_supported_until(version).isoformat()})"
    )


def shopify_warning(version: str, today: dt.date) -> str | None:
    """Why ``version`` is outside Shopify's support window on ``today``, or None."""
    released = shopify_release(version)
    current = shopify_current(today)
    if today < released:
        return (
            f"systems.upsr.shopifyApiVersion {version} is not released yet (a release "
            f"candidate until {released.isoformat()}); the current stable version is {current}"
        )
    until = shopify_supported_until(version)
    if today >= until:
        return (
            f"systems.upsr.shopifyApiVersion {version} left Shopify's 12-month support window "
            f"on {until.isoformat()}: Shopify now serves the oldest supported version instead. "
            f"Move to {current} (see https://shopify.dev/docs/api/usage/versioning)"
        )
    return None


def enrichment_warning(provider: str, version: str) -> str | None:
    """Why ``version`` is not one the ``provider`` adapter was written for, or None."""
    api = ENRICHMENT_APIS[provider]
    if version in api.known_versions:
        return None
    return (
        f"systems.ler.enrichmentApiVersion {version} is not a version the {provider} adapter "
        f"maps ({', '.join(sorted(api.known_versions))}); its response fields may differ"
    )
