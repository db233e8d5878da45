"""What a handler counted, read back from captured stdout (CloudWatch embedded metric format).

Tests that count business metrics switch them on first (``count_metrics``: the dev stack runs
with them off) and read ``capsys.readouterr().out`` through ``emitted`` or ``totals``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import pytest

from handlers.common.metrics import emf_metrics


def emitted(out: str, *, service: str | None = None) -> list[tuple[str, float, dict[str, Any]]]:
    """(metric, value, dimensions) of every metric in ``out``, in order; only ``service``'s if
    given (the ``service`` dimension every metric carries)."""
    return [
        (name, value, dims)
        for line in out.splitlines()
        for _, name, value, dims in emf_metrics(line)
        if service is None or dims.get("service") == service
    ]


def totals(out: str, names: Collection[str] | None = None) -> dict[str, float]:
    """Each metric's sum over ``out`` (only ``names`` if given), whatever its dimensions."""
    summed: dict[str, float] = {}
    for name, value, _ in emitted(out):
        if names is None or name in names:
            summed[name] = summed.get(name, 0) + value
    return summed


def count_metrics(monkeypatch: pytest.MonkeyPatch, function: str | None = None) -> None:
    """Business metrics on, as prod has them (the dev stack runs with them off); ``function``,
    if given, is the service name Lambda sets per function, from which the metrics' dimensions
    are read."""
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    if function is not None:
        monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", function)
