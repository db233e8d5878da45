"""ls-capture refuses a beacon whose url is not an absolute http(s) URL of the site (#27, 6)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from handlers.source_attributor.functions import capture
from tests.handlers.ls.conftest import ORIGIN, arrival, beacon, enquiry, items

pytestmark = pytest.mark.usefixtures("apps")


@pytest.mark.parametrize(
    ("case", "url"),
    [
        ("does not parse", "http://[::1"),
        ("does not parse (bad port)", "https://www.example.com:99999/"),
        ("no host", "https:///contact"),
        ("another site", "https://evil.example.net/landing?utm_source=google"),
        ("the site's host over another scheme", "ftp://www.example.com/"),
        ("credentials in the authority", "https://user@www.example.com/"),
        ("a look-alike host", "https://www.example.com.evil.net/"),
    ],
)
@pytest.mark.parametrize("kind", ["arrival", "enquiry"])
def test_a_url_that_is_not_a_page_of_the_site_is_refused(case: str, url: str, kind: str) -> None:
    """Found on a1a1316: "http://[::1" was stored as a direct touch landing on /."""
    data: dict[str, Any] = arrival(url) if kind == "arrival" else enquiry("a@example.com", url=url)
    response = capture.handler(beacon(data), None)
    assert response["statusCode"] == 400, case
    assert json.loads(response["body"])["error"]["code"] == "invalid_field", case
    assert items("dev-ls-touches") == [] and items("dev-ls-enquiries") == []


@pytest.mark.parametrize(
    "url", [f"{ORIGIN}/", f"{ORIGIN}:443/pricing?utm_source=google", "https://example.com/x"]
)
def test_a_page_of_an_allowed_origin_is_taken(url: str) -> None:
    response = capture.handler(beacon(arrival(url)), None)
    assert response["statusCode"] == 200
