"""Every ls function reads its settings once, with no defaults: a missing variable fails loudly.

TOUCH_TTL_DAYS and REPORT_CACHE_SECONDS were re-defaulted by the handlers before #16 (548 days,
one day), so a function the infra forgot to configure ran with a guess instead of failing.
"""

from __future__ import annotations

from typing import Any

import pytest

from handlers.common.entry import registry
from handlers.common.settings import MissingSetting
from handlers.source_attributor.functions import capture, report, stitch
from tests.handlers.ls.conftest import ORIGIN, StreamReader, arrival, beacon, enquiry, items

pytestmark = pytest.mark.usefixtures("ls_env")

CASES = [
    ("capture", "TOUCHES_TABLE"),
    ("capture", "ENQUIRIES_TABLE"),
    ("capture", "EMAIL_HASH_SECRET"),
    ("capture", "SITE_ORIGINS"),
    ("capture", "TOUCH_TTL_DAYS"),
    ("report", "ENQUIRIES_TABLE"),
    ("report", "REPORT_CACHE_SECONDS"),
    ("stitch", "IDENTITIES_TABLE"),
]


def _invoke(function: str, read_stream: StreamReader) -> Any:
    if function == "capture":
        return capture.handler(beacon(arrival(f"{ORIGIN}/?utm_source=google")), None)
    if function == "report":
        return report.handler({"requestContext": {"http": {"method": "GET"}}}, None)
    return stitch.handler(read_stream(), None)


def _rows() -> list[Any]:
    return items("dev-ls-touches") + items("dev-ls-identities")


@pytest.mark.parametrize(("function", "variable"), CASES)
def test_a_missing_variable_fails_naming_it_and_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, read_stream: StreamReader, function: str, variable: str
) -> None:
    if function == "stitch":  # an enquiry waiting on the stream, written while configured
        assert capture.handler(beacon(enquiry("ada@example.com")), None)["statusCode"] == 200
        registry.clear(capture)  # a new container
    before = _rows()
    monkeypatch.delenv(variable)
    with pytest.raises(MissingSetting, match=variable):
        _invoke(function, read_stream)
    assert _rows() == before


@pytest.mark.parametrize("value", ["a year", "2.5"])
def test_a_malformed_number_fails_naming_it(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("TOUCH_TTL_DAYS", value)
    with pytest.raises(MissingSetting, match="TOUCH_TTL_DAYS is not an integer"):
        capture.handler(beacon(arrival(f"{ORIGIN}/?utm_source=google")), None)
    assert items("dev-ls-touches") == []
