"""The suggest job upsr-order puts on upsr-jobs and upsr-picker consumes.

One pydantic model on both sides, so the producer cannot write what the consumer refuses.
Prices travel as decimal strings (no float rounding), times as unix seconds.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from handlers.upsell_recommender.customers import MAX_HISTORY_SKUS
from handlers.upsell_recommender.domain import (
    MAX_LINE_QUANTITY,
    MONEY_DIGITS,
    MONEY_PLACES,
    BasketLine,
    Channel,
    Contact,
)

JOB_VERSION: Final = 1
"""Format version of a suggest job (``handlers.common.formats``); ``SuggestJob.version`` writes it."""
VERSION_KEY: Final = "version"
"""Where a suggest job carries its version: there since 0.1.0, whose model forbids other keys."""


class JobLine(BaseModel):
    """One basket line."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    sku: str = Field(min_length=1, max_length=64)
    title: str = Field(default="", max_length=255)
    quantity: int = Field(ge=1, le=MAX_LINE_QUANTITY)
    price: Decimal = Field(ge=0, max_digits=MONEY_DIGITS, decimal_places=MONEY_PLACES)

    def line(self) -> BasketLine:
        return BasketLine(self.sku, self.title, self.quantity, self.price)


class JobContact(BaseModel):
    """Where the nudge may go (the consented channel)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    channel: Channel
    address: str = Field(min_length=3, max_length=254)
    first_name: str = Field(default="", max_length=40)

    def contact(self) -> Contact:
        return Contact(self.channel, self.address, self.first_name)


class SuggestJob(BaseModel):
    """Pick one add-on for one order."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    kind: Literal["suggest"] = "suggest"
    version: Literal[1] = 1  # JOB_VERSION; a new version adds its literal here
    order_id: str = Field(min_length=1, max_length=64)
    customer_id: str = Field(min_length=1, max_length=64)
    ordered_at: int = Field(ge=0)
    currency: str = Field(default="", max_length=3)
    subtotal: Decimal = Field(ge=0, max_digits=MONEY_DIGITS, decimal_places=MONEY_PLACES)
    basket: tuple[JobLine, ...] = Field(min_length=1, max_length=250)
    history: tuple[str, ...] = Field(default=(), max_length=MAX_HISTORY_SKUS)
    contact: JobContact

    def owned(self) -> frozenset[str]:
        """Every SKU the customer has (this basket and the recorded history)."""
        return frozenset(self.history) | {line.sku for line in self.basket}
