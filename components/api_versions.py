"""External API versions: the defaults, their documented support windows, and the check.

Every external API the handlers call is pinned to a version in stack config. This module
holds, per API, the version this program was written against, where it lives, and the
provider's documented support rule, so ``make plan`` and the Pulumi program can warn (never
fail) when a configured version is outside its window.

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
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from components.config import StackConfig

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


def warnings(config: StackConfig, today: dt.date) -> list[str]:
    """Every configured external API version outside its window (a warning, not an error)."""
    found: list[str] = []
    ler, upsr = config.systems.ler, config.systems.upsr
    if ler is not None and ler.enabled:
        message = enrichment_warning(ler.enrichment_provider, ler.enrichment_version)
        if message:
            found.append(message)
    if upsr is not None and upsr.enabled:
        message = shopify_warning(upsr.shopify_api_version, today)
        if message:
            found.append(message)
    return found


def windows(config: StackConfig) -> list[str]:
    """One line per external API in use: version and support window, for the plan."""
    lines: list[str] = []
    ler, upsr = config.systems.ler, config.systems.upsr
    if ler is not None and ler.enabled:
        api = ENRICHMENT_APIS[ler.enrichment_provider]
        lines.append(
            f"ler enrichment: {ler.enrichment_provider} {ler.enrichment_version} at "
            f"{ler.enrichment_url} ({api.support})"
        )
    if upsr is not None and upsr.enabled:
        lines.append(f"upsr Shopify Admin API: {shopify_window(upsr.shopify_api_version)}")
    return lines
