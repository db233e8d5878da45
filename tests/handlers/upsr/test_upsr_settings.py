"""Every upsr function reads its settings once, with no defaults: a missing variable fails loudly.

WEBHOOK_MAX_AGE_HOURS, ORDER_TIMEOUT_S, JOBS_MAX_RECEIVES, LINK_GRACE_DAYS and REPORT_HOUR were
re-defaulted by the handlers before #16 (48 h, 10 s, 5, 14 days, 8 o'clock), so a function the
infra forgot to configure ran with a guess instead of failing.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from handlers.common.entry import registry
from handlers.common.settings import MissingSetting
from tests.handlers.upsr.conftest import T0, World, at, shopify_order, tap_event, webhook_event

CASES = [
    ("order", "WEBHOOK_MAX_AGE_HOURS"),
    ("order", "ORDER_TIMEOUT_S"),
    ("order", "JOBS_QUEUE_URL"),
    ("order", "MAX_NUDGES_PER_30_DAYS"),
    ("picker", "JOBS_MAX_RECEIVES"),
    ("picker", "MAX_PRICE_RATIO"),
    ("picker", "PICKER_MODEL_ID"),
    ("sender", "LINK_GRACE_DAYS"),
    ("sender", "ADDLINK_URL"),
    ("addlink", "ADDLINK_KEY_SECRET_ID"),
    ("sweep", "REPORT_HOUR"),
    ("sweep", "REPORT_TIMEZONE"),
    ("catalog_sync", "SHOPIFY_API_VERSION"),
]
TABLES = ("orders", "offers", "catalogue", "customers", "optout")


def _invoke(monkeypatch: pytest.MonkeyPatch, function: str) -> Any:
    module = importlib.import_module(f"handlers.upsell_recommender.functions.{function}")
    registry.override(clock=lambda: at(T0))  # a new container: the registry is cleared per test
    if function == "order":
        return module.handler(webhook_event(shopify_order()), None)
    if function == "addlink":
        return module.handler(tap_event("x.y"), None)
    if function == "picker":
        return module.handler({"Records": []}, None)
    return module.handler({}, None)


@pytest.mark.parametrize(("function", "variable"), CASES)
def test_a_missing_variable_fails_naming_it_and_changes_nothing(
    world: World, monkeypatch: pytest.MonkeyPatch, function: str, variable: str
) -> None:
    monkeypatch.delenv(variable)
    with pytest.raises(MissingSetting, match=variable):
        _invoke(monkeypatch, function)
    assert all(world.items(name) == [] for name in TABLES)
    assert world.jobs() == [] and world.messenger.sent == [] and world.owner_mail == []


@pytest.mark.parametrize("value", ["half", ""])
def test_a_malformed_or_empty_ratio_fails_naming_it(
    world: World, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("MAX_PRICE_RATIO", value)
    with pytest.raises(MissingSetting, match="MAX_PRICE_RATIO"):
        _invoke(monkeypatch, "picker")
    assert world.items("offers") == []
