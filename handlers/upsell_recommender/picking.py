"""The model proposes, the catalogue rules dispose: candidates, prompt, filters, choice.

The deterministic filters are the authority. They run twice: once to choose which catalogue
rows the model may see (so it ranks real, eligible products), and again on the model's
shortlist against rows re-read from upsr-catalogue just before the offer is written (so a
hallucinated SKU, a product that sold out meanwhile, or a bad ranking never reaches a customer).
Whatever the model says, the offer is either a row that passes every filter or no-fit.

Filters (a candidate must pass all):
* in stock: available for sale, and untracked or with units on hand;
* fresh: the row was refreshed by catalog-sync within ``catalogue_max_age_hours``;
* complementary: its category is one the basket's products list as complements
  (``complements:<category>`` tags), or it lists a basket product's category;
* price-appropriate: more than zero and at most ``max_price_ratio`` of the order's subtotal;
* not already owned: not in the basket and not in the customer's purchase history.

The model's one-line pitch is shown to the customer only after it is cleaned: plain text, one
line, at most 120 characters, and inside the one bound on customer text
(``handlers.common.customer_text``: no link, address, phone number, price, discount code,
promise or instruction beyond the product's own title); otherwise a fixed line is used. The
sender applies the same cleaning again just before the nudge goes. Nothing here talks to AWS.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field

from handlers.common.customer_text import refusals
from handlers.upsell_recommender.domain import CatalogueItem

TOOL_NAME = "propose_addons"
MAX_CANDIDATES = 40
MAX_SUGGESTIONS = 5
MAX_LINE_CHARS = 120

SYSTEM_PROMPT = (
    "You pick add-on products for a small online shop. A customer has just placed an order. "
    "From the candidate list only, choose up to three products that genuinely complement what "
    "they bought, best first. For each, write one short, friendly sentence (under 100 "
    "characters) saying why it goes with their order. No prices, links, emoji or pressure. "
    "If nothing fits well, return an empty list: staying quiet is better than a poor fit."
)


class Suggestion(BaseModel):
    """One ranked suggestion from the model."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    sku: str = Field(min_length=1, max_length=64, description="SKU from the candidate list")
    line: str = Field(
        min_length=1, max_length=300, description="One friendly sentence on why it fits"
    )


class Shortlist(BaseModel):
    """The model's answer: at most five suggestions, best first; empty when nothing fits."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    suggestions: list[Suggestion] = Field(default_factory=list, max_length=MAX_SUGGESTIONS)


@dataclass(frozen=True)
class FilterContext:
    """What the filters compare a candidate with.

    Attributes:
        basket: Catalogue rows of the basket's SKUs (unknown SKUs are simply absent).
        owned: Every SKU the customer has: this basket plus the recorded history.
        subtotal: The order's subtotal, the base of the price filter.
        now: Unix seconds.
        max_price_ratio: Largest add-on price as a share of the subtotal.
        max_age_s: Oldest acceptable ``synced_at`` distance from ``now``.
    """

    basket: Sequence[CatalogueItem]
    owned: frozenset[str]
    subtotal: Decimal
    now: float
    max_price_ratio: float
    max_age_s: int

    @property
    def wanted_categories(self) -> frozenset[str]:
        """Categories the basket's products say go with them."""
        return frozenset(c for row in self.basket for c in row.complements)

    @property
    def basket_categories(self) -> frozenset[str]:
        return frozenset(row.category for row in self.basket if row.category)


def rejection(candidate: CatalogueItem | None, ctx: FilterContext) -> str | None:
    """Why ``candidate`` fails the filters (a short code), or None when it passes all."""
    if candidate is None:
        return "unknown-sku"
    if candidate.sku in ctx.owned:
        return "already-owned"
    if not candidate.in_stock():
        return "out-of-stock"
    if ctx.now - candidate.synced_at > ctx.max_age_s:
        return "stale-catalogue"
    complementary = (candidate.category and candidate.category in ctx.wanted_categories) or bool(
        candidate.complements & ctx.basket_categories
    )
    if not complementary:
        return "not-complementary"
    ceiling = ctx.subtotal * Decimal(str(ctx.max_price_ratio))
    if candidate.price <= 0 or candidate.price > ceiling:
        return "price"
    return None


def candidates(rows: Iterable[CatalogueItem], ctx: FilterContext) -> list[CatalogueItem]:
    """Rows passing every filter, the ones the model may choose from (stable order, capped)."""
    eligible = [row for row in rows if rejection(row, ctx) is None]
    eligible.sort(key=lambda row: (row.price, row.sku))
    return eligible[:MAX_CANDIDATES]


def rules_shortlist(offered: Sequence[CatalogueItem]) -> Shortlist:
    """The shortlist without the model (its daily calls spent): the candidates in the filters'
    own order (cheapest first), each with the fixed line ``clean_line`` gives."""
    return Shortlist(
        suggestions=[
            Suggestion(sku=row.sku, line=clean_line("", row.title)) for row in offered[:MAX_SUGGESTIONS]
        ]
    )


def build_prompt(basket: Sequence[Mapping[str, object]], offered: Sequence[CatalogueItem]) -> str:
    """The user message: the basket and the candidates as JSON (no customer details)."""
    listing = [
        {"sku": row.sku, "title": row.title, "category": row.category, "price": str(row.price)}
        for row in offered
    ]
    return (
        "Order basket:\n"
        + json.dumps(list(basket), ensure_ascii=False, default=str)
        + "\n\nCandidates (choose only from these SKUs):\n"
        + json.dumps(listing, ensure_ascii=False)
    )


def clean_line(line: str, title: str) -> str:
    """The model's pitch made safe to send, or a fixed line when it cannot be."""
    fallback = f"{title} goes well with your order."
    # Control and format characters (newlines, bidi overrides) become spaces, then collapse.
    text = "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in line)
    text = " ".join(text.split())
    if not text or len(text) > MAX_LINE_CHARS or refusals(text, (title,)):
        return fallback[: MAX_LINE_CHARS + 80]
    return text


@dataclass(frozen=True)
class Decision:
    """The outcome of filtering the model's shortlist.

    Attributes:
        chosen: The first suggestion that passed every filter, or None (no-fit).
        line: The cleaned pitch for ``chosen``.
        rejected: SKU -> filter code for every suggestion that failed.
        shortlist: The SKUs the model proposed, in its order.
    """

    chosen: CatalogueItem | None
    line: str = ""
    rejected: dict[str, str] = field(default_factory=dict)
    shortlist: tuple[str, ...] = ()


def choose(
    shortlist: Sequence[Suggestion], rows: Mapping[str, CatalogueItem], ctx: FilterContext
) -> Decision:
    """The top suggestion that passes the filters against the fresh ``rows``, or none."""
    rejected: dict[str, str] = {}
    seen: set[str] = set()
    proposed = tuple(s.sku for s in shortlist)
    for suggestion in shortlist:
        if suggestion.sku in seen:
            continue
        seen.add(suggestion.sku)
        row = rows.get(suggestion.sku)
        reason = rejection(row, ctx)
        if reason is not None or row is None:
            rejected[suggestion.sku] = reason or "unknown-sku"
            continue
        return Decision(row, clean_line(suggestion.line, row.title), rejected, proposed)
    return Decision(None, "", rejected, proposed)
