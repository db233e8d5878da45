"""The AWS-free rules: order payload and consent, gate, cap, filters, pitch cleaning, report."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handlers.upsell_recommender.customers import is_capped, owned_skus, recent_nudges
from handlers.upsell_recommender.domain import (
    CatalogueItem,
    Channel,
    Contact,
    OfferState,
    is_phone,
)
from handlers.upsell_recommender.gate import Gate, gate_order
from handlers.upsell_recommender.picking import (
    MAX_CANDIDATES,
    MAX_LINE_CHARS,
    FilterContext,
    Shortlist,
    Suggestion,
    build_prompt,
    candidates,
    choose,
    clean_line,
    rejection,
)
from handlers.upsell_recommender.report import Rollup, render
from handlers.upsell_recommender.store import cart_url
from handlers.upsell_recommender.webhook import PayloadError, parse_order
from tests.handlers.upsr.conftest import PRODUCTS, T0, product, shopify_order

NOW = float(T0)


def ctx(**changes: Any) -> FilterContext:
    tent = dataclasses.replace(PRODUCTS[0], synced_at=T0 - 60)
    base = FilterContext(
        basket=[tent],
        owned=frozenset({"TENT-2P"}),
        subtotal=Decimal("200"),
        now=NOW,
        max_price_ratio=0.5,
        max_age_s=6 * 3600,
    )
    return dataclasses.replace(base, **changes)


def fresh(row: CatalogueItem) -> CatalogueItem:
    return dataclasses.replace(row, synced_at=T0 - 60)


# Webhook payload --------------------------------------------------------------------------


def test_order_payload_is_read_with_consent_and_sku_lines() -> None:
    payload = shopify_order(skus=(("TENT-2P", "200.00"), ("", "3.00")))
    payload["line_items"].append({"sku": "X", "quantity": 0, "price": "1.00"})
    order = parse_order(payload)
    assert order.order_id == "5001" and order.customer_id == "7001"
    assert [line.sku for line in order.lines] == ["TENT-2P"]  # no SKU / no quantity dropped
    assert order.subtotal == Decimal("203.00")
    assert order.contact == Contact(Channel.SMS, "+447700900123", "Ann")
    assert order.created_at == T0 - 60


@pytest.mark.parametrize(
    ("sms", "email", "phone", "expected"),
    [
        (True, True, "+447700900123", Channel.SMS),
        (True, True, "07700 900123", Channel.EMAIL),  # not E.164: SMS cannot be sent
        (False, True, "+447700900123", Channel.EMAIL),
        (False, False, "+447700900123", None),
        (True, False, None, None),
    ],
)
def test_the_nudge_goes_only_by_a_consented_channel(
    sms: bool, email: bool, phone: str | None, expected: Channel | None
) -> None:
    order = parse_order(shopify_order(sms=sms, email_consent=email, phone=phone))
    assert (order.contact.channel if order.contact else None) == expected


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"id": 1},
        {"id": 1, "created_at": "2026-01-01T10:00:00"},  # no offset
        {"id": "x", "created_at": "2026-01-01T10:00:00Z"},
        {"id": 1, "created_at": "2026-01-01T10:00:00Z", "line_items": "many"},
    ],
)
def test_payloads_that_are_not_orders_are_refused(payload: dict[str, Any]) -> None:
    with pytest.raises(PayloadError):
        parse_order(payload)


def test_order_without_customer_has_no_contact() -> None:
    order = parse_order(shopify_order(customer_id=None))
    assert order.customer_id is None and order.contact is None


# Gate and cap -----------------------------------------------------------------------------


def _gate(**changes: Any) -> Gate:
    args: dict[str, Any] = {
        "customer_id": "1",
        "has_contact": True,
        "has_skus": True,
        "opted_out": False,
        "customer": None,
        "now": NOW,
        "max_nudges": 2,
    }
    args.update(changes)
    return gate_order(**args)


def test_gate_outcomes_in_order_of_weight() -> None:
    capped = {"recent_nudges": [T0 - 10, T0 - 20]}
    assert _gate() is Gate.ELIGIBLE
    assert _gate(customer_id=None, opted_out=True) is Gate.NO_CUSTOMER
    assert _gate(opted_out=True, customer=capped, has_contact=False) is Gate.OPTED_OUT
    assert _gate(has_contact=False, customer=capped) is Gate.NO_CONSENT
    assert _gate(customer=capped, has_skus=False) is Gate.CAPPED
    assert _gate(has_skus=False) is Gate.NO_SKUS


def test_cap_counts_a_rolling_thirty_days() -> None:
    day = 86400
    customer = {"recent_nudges": [T0 - 31 * day, T0 - 29 * day, T0 - day]}
    assert recent_nudges(customer, NOW) == [T0 - 29 * day, T0 - day]
    assert is_capped(customer, NOW, 2)
    assert not is_capped(customer, NOW + 2 * day, 2)  # the 29-day-old nudge aged out
    assert not is_capped(None, NOW, 1)


def test_owned_skus_are_sorted_and_bounded() -> None:
    assert owned_skus({"owned_skus": {"b", "a"}}) == ("a", "b")
    assert len(owned_skus({"owned_skus": {f"s{i}" for i in range(900)}})) == 500


# Filters ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        (None, "unknown-sku"),
        (PRODUCTS[0], "already-owned"),
        (product("LANTERN-1", "lanterns", "25.00", stock=0), "out-of-stock"),
        (product("LANTERN-1", "lanterns", "25.00", available=False), "out-of-stock"),
        (product("STOVE-1", "stoves", "60.00"), "not-complementary"),
        (product("MAT-PRO", "sleeping-mats", "100.01"), "price"),
        (product("MAT-FREE", "sleeping-mats", "0.00"), "price"),
        (product("MAT-1", "sleeping-mats", "40.00"), None),
        (product("MAT-2", "sleeping-mats", "100.00"), None),  # exactly half: allowed
        (product("LAMP", "lanterns", "20.00", stock=None), None),  # untracked inventory
        (product("HAMMER", "tools", "9.00", complements=("tents",)), None),  # lists the tent
    ],
)
def test_each_filter(row: CatalogueItem | None, reason: str | None) -> None:
    assert rejection(None if row is None else fresh(row), ctx()) == reason


def test_a_row_not_refreshed_recently_counts_as_out_of_stock() -> None:
    stale = dataclasses.replace(PRODUCTS[1], synced_at=T0 - 6 * 3600 - 1)
    assert rejection(stale, ctx()) == "stale-catalogue"


def test_without_known_basket_products_nothing_is_complementary() -> None:
    assert rejection(fresh(PRODUCTS[1]), ctx(basket=[])) == "not-complementary"


def test_candidates_are_exactly_the_rows_passing_every_filter() -> None:
    rows = [fresh(p) for p in PRODUCTS]
    assert [r.sku for r in candidates(rows, ctx())] == ["MAT-1"]
    many = [fresh(product(f"M{i:03}", "sleeping-mats", "10.00")) for i in range(60)]
    assert len(candidates(many, ctx())) == MAX_CANDIDATES


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["TENT-2P", "MAT-1", "MAT-PRO", "LANTERN-1", "STOVE-1", "GHOST"]),
            st.text(max_size=300),
        ),
        max_size=5,
    )
)
def test_whatever_the_model_says_the_choice_passes_every_filter(
    picks: list[tuple[str, str]],
) -> None:
    rows = {p.sku: fresh(p) for p in PRODUCTS}
    shortlist = [Suggestion(sku=sku, line=line or "x") for sku, line in picks]
    decision = choose(shortlist, rows, ctx())
    if decision.chosen is not None:
        assert rejection(decision.chosen, ctx()) is None
        assert len(decision.line) <= MAX_LINE_CHARS + 80
    assert all(rejection(rows.get(s), ctx()) is not None for s in decision.rejected)


def test_shortlist_schema_allows_empty_and_at_most_five() -> None:
    assert Shortlist.model_validate({"suggestions": []}).suggestions == []
    with pytest.raises(ValueError):
        Shortlist.model_validate({"suggestions": [{"sku": "a", "line": "b"}] * 6})


@pytest.mark.parametrize(
    "line",
    [
        "Visit https://evil.example now",
        "www.cheap.shop has it",
        "Call +44 7700 900123 for more",
        "Email me@there.com",
        "x" * (MAX_LINE_CHARS + 1),
        "   ",
        "\u202egnirts desrever",
    ],
)
def test_unsafe_pitches_are_replaced(line: str) -> None:
    cleaned = clean_line(line, "Mat 1")
    assert cleaned == "Mat 1 goes well with your order." or (
        "\u202e" not in cleaned and "http" not in cleaned
    )


def test_a_plain_pitch_is_kept_on_one_line() -> None:
    assert clean_line("  A comfy\nmat  for cold nights. ", "Mat") == "A comfy mat for cold nights."


def test_prompt_lists_candidates_and_basket_but_no_customer_details() -> None:
    prompt = build_prompt([{"title": "Tent", "sku": "TENT-2P"}], [fresh(PRODUCTS[1])])
    assert "MAT-1" in prompt and "TENT-2P" in prompt
    assert "+44" not in prompt and "@" not in prompt


# Links and report -------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["1/../../evil", "12?x=1", "", "abc", "1" * 21])
def test_cart_url_interpolates_only_numeric_variants(variant: str) -> None:
    with pytest.raises(ValueError):
        cart_url("example-shop.myshopify.com", variant)


def test_cart_url_refuses_other_hosts() -> None:
    with pytest.raises(ValueError):
        cart_url("evil.example.com", "123")
    assert cart_url("Example-Shop.myshopify.com", "123") == (
        "https://example-shop.myshopify.com/cart/123:1"
    )


def test_phone_numbers_are_e164_only() -> None:
    assert is_phone("+447700900123") and not is_phone("07700900123") and not is_phone(None)


def test_report_shows_what_is_new_beside_the_running_totals() -> None:
    from decimal import Decimal

    from handlers.upsell_recommender.offers import Activity

    new = Activity(nudged=12, taps=4, taken=3, closed=10, value={"GBP": Decimal("84.00"), "EUR": Decimal("12.5")})
    before = Activity(nudged=30, taps=9, taken=6, closed=30, value={"GBP": Decimal("100.00")})
    rollup = Rollup(new, before.plus(new), since=T0 - 86400, until=T0, totals_since=T0 - 30 * 86400,
                    counts={OfferState.NO_FIT: 4}, closed_now=2)
    mail = render(rollup, zone="Europe/London")
    assert mail.subject == "Upsell: 3 add-ons taken (€12.50 + £84.00) from 12 orders nudged since the last roll-up"
    assert "  Take-up, of the windows closed: 30% (running total: 22%)" in mail.text
    assert "  Taps on the link: 4 (running total: 13)" in mail.text
    assert "  Value of add-ons taken: €12.50 + £84.00 (running total: €12.50 + £184.00)" in mail.text
    assert "  No add-on fitted the order: 4" in mail.text
    assert "<html lang=en>" in mail.html and "€12.50 + £184.00" in mail.html
    assert not rollup.quiet
    first = Rollup(Activity(nudged=1), Activity(nudged=1), T0, T0, T0)
    assert "not yet" in render(first).text


def test_nothing_new_is_quiet_whatever_is_waiting() -> None:
    from handlers.upsell_recommender.offers import Activity

    assert Rollup(Activity(), Activity(nudged=5), T0 - 86400, T0, T0 - 86400,
                  counts={OfferState.NO_FIT: 2, OfferState.CHOSEN: 1}).quiet


