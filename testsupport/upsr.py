"""Test doubles of the upsell recommender: the store port and the messenger in memory."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from handlers.upsell_recommender.domain import CatalogueItem
from handlers.upsell_recommender.nudges import Nudge, NudgeRejected
from handlers.upsell_recommender.store import cart_url


@dataclass
class InMemoryStore:
    """A fake store holding a product list; counts catalogue reads."""

    domain: str
    products: list[CatalogueItem] = field(default_factory=list)
    reads: int = 0
    fail_with: Exception | None = None

    def catalogue(self) -> Iterator[CatalogueItem]:
        self.reads += 1
        if self.fail_with is not None:
            raise self.fail_with
        yield from list(self.products)

    def cart_url(self, variant_id: str) -> str:
        return cart_url(self.domain, variant_id)

    def replace(self, products: Iterable[CatalogueItem]) -> None:
        """Swap the product list (a price change, a sell-out) between syncs."""
        self.products = list(products)


@dataclass
class RecordingMessenger:
    """Fake messenger: records nudges; refuses addresses in ``reject``; fails on ``explode``."""

    sent: list[Nudge] = field(default_factory=list)
    reject: set[str] = field(default_factory=set)
    explode: set[str] = field(default_factory=set)

    def send(self, nudge: Nudge) -> str:
        if nudge.contact.address in self.reject:
            raise NudgeRejected(f"{nudge.contact.channel.value}:ConflictException")
        if nudge.contact.address in self.explode:
            raise TimeoutError("read timeout")
        self.sent.append(nudge)
        return f"msg-{len(self.sent)}"
