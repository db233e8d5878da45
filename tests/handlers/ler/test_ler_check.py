"""``make verify``'s check lead through the whole chain on moto (issue 25).

It travels ler-intake -> ler-normalize -> ler-enrich -> ler-dedupe -> ler-filter -> ler-push,
each stage doing its real work, and stops short only of what reaches a person or costs money:
no firmographic call, no CRM write, no business metric. ler-push proves the CRM read and notes
``check#<lead id>`` in ler-enrich-cache, which ``make verify`` waits for.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from handlers.common.hubspot import HubSpotError
from handlers.lead_enricher.check_arrivals import key
from tests.handlers.ler.conftest import CACHE, IDENTITY, JANE, JUNK_BUCKET, RECORDS, Ler
from testsupport.metrics import count_metrics, totals

CHECK = {"x-crm-check": "1"}
VERIFY_LEAD = {"name": "Verify Check", "email": "verify-check@example.com", "message": "make verify 1"}
"""What ``components/operate/verify.py`` posts: a reserved example.com address (RFC 2606)."""
BUSINESS_METRICS = {"Leads", "LeadsJunked", "EnrichmentPending", "LeadsKept"}


def _post(ler: Ler, payload: dict[str, Any], headers: dict[str, str] | None = None) -> str:
    response = ler.post(payload, headers=headers or {})
    assert response["statusCode"] == 202, response
    return str(json.loads(response["body"])["lead_id"])


def _arrival(ler: Ler, lead_id: str) -> dict[str, Any] | None:
    found = ler.clients["dynamodb"].Table(CACHE).get_item(Key={"domain": key(lead_id)}).get("Item")
    return None if found is None else dict(found)


def test_a_check_lead_travels_the_whole_chain_and_reaches_no_one(ler: Ler) -> None:
    lead_id = _post(ler, VERIFY_LEAD, CHECK)
    seen = [event["detail-type"] for event in ler.pump()]
    assert seen == ["le.normalized", "le.enriched", "le.deduped", "le.clean"]
    # Each stage did its work: a normalized record, a dedupe verdict, the filter's pass...
    assert list(ler.objects(RECORDS, "normalized/")) == [f"normalized/{lead_id}.json"]
    arrival = _arrival(ler, lead_id)
    assert arrival is not None
    assert arrival["stages"] == {
        "ler-normalize": "clean",
        "ler-enrich": "skipped (placeholder)",
        "ler-dedupe": "new",
        "ler-filter": "clean (check)",
        "ler-push": "CRM searched, no contact",
    }
    assert 0 < int(arrival["ttl"]) - dt.datetime.fromisoformat(str(arrival["at"])).timestamp() <= 3600
    # ...and ler-push read the CRM the way every push does, and wrote to no one.
    assert ler.crm.searches == [("email", "verify-check@example.com")]
    assert ler.crm.calls == []
    assert ler.objects(RECORDS, "records/") == {} and ler.objects(JUNK_BUCKET) == {}
    identity = ler.clients["dynamodb"].Table(IDENTITY).scan()["Items"]
    assert identity == []  # no claim, no key pointed at a contact


def test_a_check_lead_with_a_company_domain_calls_no_paid_provider(ler: Ler) -> None:
    """Enrich reads the cache; on a miss it skips the provider for a check (each call is paid)."""
    ler.provider.profiles["acme-widgets.co.uk"] = {"company_name": "Acme Widgets"}
    lead_id = _post(ler, JANE, CHECK)
    ler.pump()
    assert ler.provider.calls == []
    arrival = _arrival(ler, lead_id)
    assert arrival is not None and arrival["stages"]["ler-enrich"] == "skipped (check)"
    assert ler.crm.calls == []


def test_a_redelivered_check_lead_notes_its_arrival_once(ler: Ler) -> None:
    lead_id = _post(ler, VERIFY_LEAD, CHECK)
    [clean] = [e for e in ler.pump() if e["detail-type"] == "le.clean"]
    ler.deliver(clean)
    items = ler.clients["dynamodb"].Table(CACHE).scan()["Items"]
    assert [i["domain"] for i in items if str(i["domain"]).startswith("check#")] == [key(lead_id)]
    assert ler.crm.calls == []


def test_a_check_lead_is_never_counted_in_lers_business_metrics(
    ler: Ler, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A check after every deploy must not show as a lead on the dashboard: zero ``Leads`` for
    the check, one for a real lead through the same chain."""
    count_metrics(monkeypatch)

    def counted() -> dict[str, float]:
        return totals(capsys.readouterr().out, BUSINESS_METRICS)

    capsys.readouterr()
    _post(ler, VERIFY_LEAD, CHECK)
    ler.pump()
    assert counted() == {}
    _post(ler, JANE)
    ler.pump()
    assert counted() == {"Leads": 1, "LeadsKept": 1}


def test_a_refused_crm_search_is_noted_for_verify_not_retried(
    ler: Ler, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wrong Service Key (401) or a missing scope (403): no retry would mend it, so ler-push
    notes the refusal and ``make verify`` names the key; a throttle is retried like any lead's."""

    def refused(email: str) -> None:
        raise HubSpotError("unauthorized", status=401)

    monkeypatch.setattr(ler.crm, "find_by_email", refused)
    lead_id = _post(ler, VERIFY_LEAD, CHECK)
    ler.pump()
    arrival = _arrival(ler, lead_id)
    assert arrival is not None and arrival["crm_ok"] is False
    assert arrival["stages"]["ler-push"] == "CRM search refused (HTTP 401)"

    def throttled(email: str) -> None:
        raise HubSpotError("rate limited", status=429, retryable=True)

    monkeypatch.setattr(ler.crm, "find_by_email", throttled)
    again = _post(ler, {**VERIFY_LEAD, "message": "make verify 2"}, CHECK)
    with pytest.raises(HubSpotError):
        ler.pump()
    assert _arrival(ler, again) is None
