"""The adapter the stack chose (``systems.ler.enrichmentProvider``), with its defaults."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from handlers.lead_enricher.providers.apollo import ApolloOrganizationEnrichment
from handlers.lead_enricher.providers.base import DEFAULTS, FirmographicProvider
from handlers.lead_enricher.providers.pdl import PdlCompanyEnrichment


def make_provider(
    name: str,
    key: Callable[[], str],
    *,
    base_url: str | None = None,
    api_version: str | None = None,
    transport: Any = None,
) -> FirmographicProvider:
    """The real adapter for ``name`` (``pdl`` or ``apollo``), with its defaults filled in.

    ``transport`` replaces the HTTP call (``http_json.exchange``): the sandbox's stand-in.
    """
    if name not in DEFAULTS:
        raise ValueError(f"unknown enrichment provider {name!r}; expected one of {sorted(DEFAULTS)}")
    defaults = DEFAULTS[name]
    url = base_url or defaults.base_url
    version = api_version or defaults.api_version
    io: dict[str, Any] = {} if transport is None else {"transport": transport}
    if name == "pdl":
        return PdlCompanyEnrichment(url, key, api_version=version, **io)

    return ApolloOrganizationEnrichment(url, key, api_version=version, **io)
