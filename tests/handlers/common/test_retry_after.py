"""The one ``Retry-After`` reader (handlers/common/retry_after.py) and its three callers.

The header's two forms are RFC 9110 section 10.2.3's
(https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3): delta-seconds or an HTTP-date.
HubSpot answers a 429 with seconds ("API usage guidelines",
https://developers.hubspot.com/docs/developer-tooling/platform/usage-guidelines); Shopify's
REST and GraphQL throttles say ``Retry-After`` in seconds ("Shopify API limits",
https://shopify.dev/docs/api/usage/limits); People Data Labs' older answers carry it beside
``x-ratelimit-reset`` ("Usage limits", https://docs.peopledatalabs.com/docs/usage-limits).
"""

from __future__ import annotations

import ast
import datetime as dt
from pathlib import Path

import pytest

from handlers.common.retry_after import retry_after_seconds

NOW = dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC).timestamp()
HANDLERS = Path(__file__).resolve().parents[3] / "handlers"


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("7", 7.0),
        (" 120 ", 120.0),
        ("0", 0.0),
        ("-3", 0.0),  # never a negative wait
        ("Tue, 01 Dec 2026 10:00:30 GMT", 30.0),  # the IMF-fixdate form
        ("Tuesday, 01-Dec-26 10:01:00 GMT", 60.0),  # the obsolete RFC 850 form
        ("Tue Dec  1 10:00:05 2026", 5.0),  # asctime, read as GMT
        ("Tue, 01 Dec 2026 09:00:00 GMT", 0.0),  # already past
        (None, None),
        ("", None),
        ("soon", None),
        ("nan", None),
        ("inf", None),
    ],
)
def test_both_forms_and_nothing_else(value: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(value, NOW) == seconds


def test_no_other_module_parses_retry_after_itself() -> None:
    """HubSpot, Shopify and the PDL/Apollo adapters read the header through the one reader:
    no other module names the header and parses a date or a float from it."""
    callers = set()
    for path in sorted(HANDLERS.rglob("*.py")):
        source = path.read_text()
        if "retry-after" not in source.lower() or path.name == "retry_after.py":
            continue
        tree = ast.parse(source)
        names = {
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
        }
        assert "parsedate_to_datetime" not in names, path
        if "retry_after_seconds" in names:
            callers.add(path.relative_to(HANDLERS).as_posix())
    assert {
        "common/hubspot.py",
        "upsell_recommender/shopify.py",
        "lead_enricher/providers/pdl.py",
        "lead_enricher/providers/apollo.py",
    } <= callers
