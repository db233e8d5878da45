"""Business metrics and cold starts as EMF lines: the closed catalogue, small dimensions."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from handlers.common import metrics, observability
from handlers.common.entry import registry
from handlers.common.metrics import CATALOGUE, emf_metrics


def _emitted(capsys: pytest.CaptureFixture[str]) -> list[tuple[str, str, float, dict[str, Any]]]:
    found = []
    for line in capsys.readouterr().out.splitlines():
        found.extend(emf_metrics(line))
    return found


@pytest.fixture(autouse=True)
def _stack(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "crm/dev")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "dm-score")
    registry.restart()  # a cold start again


def test_a_logged_handler_emits_its_counts_and_no_cold_start_series(
    capsys: pytest.CaptureFixture[str],
) -> None:
    @observability.logged
    def handler(event: Any, context: Any) -> None:
        metrics.count("PairsScored", 3, "automatic")
        metrics.count("PairsScored", 2, "not-a-band")
        metrics.count("Merges")
        metrics.count("Merges")

    handler({}, SimpleNamespace(aws_request_id="r1"))
    handler({}, SimpleNamespace(aws_request_id="r2"))
    found = _emitted(capsys)
    # A cold start is a log field, not a billed series per function (issue 28).
    assert [f for f in found if f[1] == "ColdStart"] == []
    assert ("crm/dev", "PairsScored", 3, {"band": "automatic", "service": "dm"}) in found
    # a value outside the closed set is counted as "other": no new billed metric
    assert ("crm/dev", "PairsScored", 2, {"band": "other", "service": "dm"}) in found
    merges = [f for f in found if f[1] == "Merges"]
    assert sum(f[2] for f in merges) == 4 and {f[3]["service"] for f in merges} == {"dm"}


def test_a_stack_without_business_metrics_emits_nothing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    metrics.count("Merges", 2)
    assert _emitted(capsys) == []
    with pytest.raises(KeyError):  # a typo still fails where metrics are off
        metrics.count("Mergers")


def test_a_name_outside_the_catalogue_is_refused() -> None:
    with pytest.raises(KeyError):
        metrics.count("PairsScord")


def test_the_catalogue_is_small_and_unique() -> None:
    names = [m.name for ms in CATALOGUE.values() for m in ms]
    assert len(names) == len(set(names))
    series = sum(len(m.series) for ms in CATALOGUE.values() for m in ms)
    # Each series that receives data is a billed custom metric, prorated by the hour: the three
    # of issue #42's follow-through (deletions erased, forgotten leads dropped) are rare events.
    assert series <= 48
    for ms in CATALOGUE.values():
        for m in ms:
            assert (m.dimension is None) == (not m.values)


def _handler_modules() -> list[str]:
    from components.archive import HandlerRef, discover_handlers

    return sorted(HandlerRef.parse(h).module for h in discover_handlers())


def test_every_handler_is_logged() -> None:
    """@logged gives the correlation id, the cold start metric and the flush (dm included)."""
    import importlib

    modules = _handler_modules()
    assert len(modules) == 31  # ls-report-page and ler-rescue (issue 26), upsr-compliance (42), dm-stage (43)
    assert {m.split(".")[1] for m in modules} == {
        "duplicate_merger", "lead_enricher", "review_requests", "source_attributor",
        "upsell_recommender",
    }
    for name in modules:
        handler = importlib.import_module(name).handler
        assert getattr(handler, "__wrapped__", None) is not None, name


def test_every_counted_name_is_in_the_catalogue() -> None:
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[3] / "handlers"
    counted = {
        m.group(1)
        for path in root.glob("**/*.py")
        # metrics.count("Name", ...) or a system's wrapper taking the subject first
        # (lead_metrics.count(lead, "Name", ...): a check lead is never counted)
        for m in re.finditer(r'metrics\.count\(\s*(?:\w+,\s*)?"([A-Za-z]+)"', path.read_text())
    }
    known = {m.name for ms in CATALOGUE.values() for m in ms}
    assert counted == known  # every catalogued metric is emitted somewhere, nothing else is


def test_the_tracer_wraps_the_handler_only_when_the_stack_turned_tracing_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def handler(event: Any, context: Any) -> str:
        return "ok"

    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    assert observability._traced(handler) is handler  # off: nothing imported, nothing wrapped
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "false")
    traced = observability._traced(handler)
    assert traced is not handler
    # Outside Lambda the Tracer sends nothing; the handler still answers through it.
    assert observability.logged(handler)({}, SimpleNamespace(aws_request_id="r")) == "ok"
