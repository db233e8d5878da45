"""Syncing (upsr-catalog-sync, every 15 minutes): the store's products into upsr-catalogue.

Every variant with a SKU becomes one row: stock, price, category (product type) and
complementary categories (``complements:<category>`` tags). Only rows whose content changed
are written (the stored content hashes are read first with one Scan: a conditional write that
fails is billed as a write), with a condition that no newer sync wrote them, so overlapping
runs cannot put old stock back. A product that leaves the store is written once, unavailable.
A complete run ends by stamping the catalogue's marker (catalogue.py): the picker treats the
catalogue as stale when no complete run stamped it within ``catalogue_max_age_hours``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from handlers.common.aws_clients import table
from handlers.common.clock import Clock
from handlers.common.observability import get_logger
from handlers.common.secrets import default_cache, get_secret
from handlers.upsell_recommender.catalogue import (
    DELISTED,
    content_hash,
    delist,
    mark_complete,
    stored_hashes,
    upsert,
)
from handlers.upsell_recommender.shopify import ShopifyStore
from handlers.upsell_recommender.shopify_auth import AccessTokens
from handlers.upsell_recommender.store import StoreAuthError, StoreError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

    from handlers.upsell_recommender.contract import CatalogSyncSettings
    from handlers.upsell_recommender.store import Store


@dataclass(frozen=True)
class SyncDeps:
    """What upsr-catalog-sync touches: the store (Admin API token) and upsr-catalogue (Scan of
    the content hashes, PutItem of changed rows, UpdateItem of delisted rows).

    ``forget_key`` drops the cached token and store secret after the store refused them (an
    outage or a throttle keeps the token: it is still good).
    """

    catalogue: Table
    store: Store
    forget_key: Callable[[], None] | None = None

    @classmethod
    def from_settings(
        cls,
        config: CatalogSyncSettings,
        clock: Clock,
        *,
        store: Store | None = None,
        opener: Any = None,
    ) -> SyncDeps:
        """The real store, its token minted against ``clock``; ``opener`` replaces urllib's (the
        sandbox's Shopify stand-in)."""
        key_id = config.store_key_secret_id
        domain = config.store_domain
        io = {} if opener is None else {"opener": opener}
        # One token per container: minted on first use, kept until shortly before expiry.
        tokens = AccessTokens(
            domain,
            lambda: get_secret(key_id),
            forget_secret=lambda: default_cache.invalidate(key_id),
            clock=lambda: clock().timestamp(),
            **io,
        )
        return cls(
            catalogue=table(config.catalogue_table),
            store=store
            or ShopifyStore(
                domain,
                tokens.token,
                refresh_token=tokens.invalidate,
                api_version=config.shopify_api_version,
                **io,
            ),
            forget_key=tokens.invalidate,
        )


def run(deps: SyncDeps, *, now: float) -> dict[str, int]:
    """Write the changed product rows; returns counts (written, unchanged, delisted,
    newer-kept, duplicate SKUs)."""
    log = get_logger()
    seen: set[str] = set()
    written = newer = duplicates = unchanged = delisted = 0
    stored = stored_hashes(deps.catalogue)
    try:
        for row in deps.store.catalogue():
            if row.sku in seen:
                duplicates += 1  # two variants share a SKU: the first one listed is kept
                continue
            seen.add(row.sku)
            stamped = dataclasses.replace(row, synced_at=int(now))
            if stored.get(row.sku) == content_hash(stamped):
                unchanged += 1
                continue
            if upsert(deps.catalogue, stamped):
                written += 1
            else:
                newer += 1
    except StoreError as err:
        if isinstance(err, StoreAuthError) and deps.forget_key is not None:
            deps.forget_key()  # refused: a rotated secret and a new token on the next run
        log.exception("store read failed", extra={"written_before_failure": written})
        raise
    for sku in sorted(set(stored) - seen):
        if stored[sku] != DELISTED and delist(deps.catalogue, sku, int(now)):
            delisted += 1
    mark_complete(deps.catalogue, int(now))
    summary = {
        "written": written,
        "unchanged": unchanged,
        "delisted": delisted,
        "newer_kept": newer,
        "duplicate_skus": duplicates,
    }
    log.info("catalogue synced", extra=summary)
    return summary
