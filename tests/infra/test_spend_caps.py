"""Issue #41: the daily spend caps' defaults are derived from the planned volumes, one key per
kind of paid call each system makes, and the same key names in every system."""

from __future__ import annotations

from components.config import LerSettings, RrsSettings, UpsrSettings
from components.offline import cost
from testsupport.graphs import GraphCache

KEYS = {"model": "daily_model_calls", "lookup": "daily_enrichment_lookups", "sms": "daily_sms"}
"""The one config key of each kind (handlers/common/spend.py's kinds)."""


def test_each_default_cap_is_three_times_the_expected_day(graphs: GraphCache) -> None:
    prod = graphs.run("prod")
    monthly = cost.paid_calls(prod.resources, cost.load_usage())
    defaults = {
        system: {
            kind: settings.model_fields[key].default
            for kind, key in KEYS.items()
            if key in settings.model_fields
        }
        for system, settings in (("ler", LerSettings), ("upsr", UpsrSettings), ("rrs", RrsSettings))
    }
    assert defaults == cost.daily_caps(monthly)
    # The derivation, by hand for one: ler asks the model for 45 % of 500 leads a month.
    assert monthly["ler"]["model"] == 225 and defaults["ler"]["model"] == 23  # ceil(3 x 225 / 30.42)


def test_a_cap_below_zero_is_refused_naming_the_key() -> None:
    import pytest

    from components.config import ConfigError, parse

    raw = {
        "prefix": "t", "environment": "dev", "alertEmail": "ops@example.com",
        "monthlyBudgetUsd": 10,
        "systems": {"rrs": {
            "senderEmail": "a@example.com", "ownerEmail": "b@example.com",
            "smsOriginationIdentity": "pool/p-1", "reviewUrl": "https://g.page/r",
            "feedbackUrl": "https://example.com/f", "dailySms": -1,
        }},
    }
    with pytest.raises(ConfigError) as refused:
        parse(raw)
    assert "systems.rrs.dailySms" in str(refused.value) and "-1" not in str(refused.value)
