"""Business metrics and cold starts as EMF lines: the closed catalogue, small dimensions."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from handlers.common import metrics, observability
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
    monkeypatch.setattr(metrics, "_metrics", None)
    monkeypatch.setattr(observability, "_cold_start", True)


def test_a_logged_handler_emits_its_counts_and_one_cold_start(
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
    assert ("crm/dev", "ColdStart", 1, {"function_name": "dm-score", "service": "dm"}) in found
    assert [f for f in found if f[1] == "ColdStart"] == [found[0]]  # one, on the first call
    assert ("crm/dev", "PairsScored", 3, {"band": "automatic", "service": "dm"}) in found
    # a value outside the closed set is counted as "other": no new billed metric
    assert ("crm/dev", "PairsScored", 2, {"band": "other", "service": "dm"}) in found
    merges = [f for f in found if f[1] == "Merges"]
    assert sum(f[2] for f in merges) == 4 and {f[3]["service"] for f in merges} == {"dm"}


def test_a_name_outside_the_catalogue_is_refused() -> None:
    with pytest.raises(KeyError):
        metrics.count("PairsScord")


def test_the_catalogue_is_small_and_unique() -> None:
    names = [m.name for ms in CATALOGUE.values() for m in ms]
    assert len(names) == len(set(names))
    series = sum(len(m.series) for ms in CATALOGUE.values() for m in ms)
    assert series <= 45  # each series that receives data is a billed custom metric
    for ms in CATALOGUE.values():
        for m in ms:
            assert (m.dimension is None) == (not m.values)
