"""The control API says what a fire or a clock move set running (docs/sandbox.md)."""

from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass, field
from typing import Any

from sandbox.control import answer


@dataclass
class _Run:
    function: str
    source: str
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class _Runtime:
    invocations: list[_Run] = field(default_factory=list)


class _Clock:
    def now(self) -> dt.datetime:
        return dt.datetime(2026, 12, 2, tzinfo=dt.UTC)


class _Sandbox:
    """Just what ``answer`` touches: a schedule fires one function, which queues nothing."""

    def __init__(self) -> None:
        self.pump_lock = threading.Lock()
        self.runtime = _Runtime([_Run("dev-ls-report", "schedule")])  # an earlier run
        self.clock = _Clock()

    def fire(self, name: str) -> None:
        if name != "dev-rrs-sync":
            raise KeyError(name)
        self.runtime.invocations.append(_Run("dev-rrs-sync", f"schedule:{name}", "TimeoutError: x"))

    def drain(self) -> int:
        return 0

    def advance(self, **delta: float) -> list[str]:
        self.runtime.invocations.append(_Run("dev-upsr-sweep", "schedule:dev-upsr-sweep"))
        return ["dev-upsr-sweep"]


def test_fire_answers_what_ran_and_how_it_ended() -> None:
    sb: Any = _Sandbox()
    status, body = answer(sb, "POST", "/schedules/dev-rrs-sync/fire")
    assert status == 200
    assert body["ran"] == [
        {"function": "dev-rrs-sync", "source": "schedule:dev-rrs-sync", "ok": False, "error": "TimeoutError: x"}
    ]
    assert body["deliveries"] == 0


def test_clock_advance_answers_what_ran() -> None:
    sb: Any = _Sandbox()
    status, body = answer(sb, "POST", "/clock/advance?hours=2")
    assert status == 200 and body["fired"] == ["dev-upsr-sweep"]
    assert [r["function"] for r in body["ran"]] == ["dev-upsr-sweep"]


def test_an_unknown_schedule_is_a_404_that_names_it() -> None:
    sb: Any = _Sandbox()
    status, body = answer(sb, "POST", "/schedules/dev-nope/fire")
    assert status == 404 and "dev-nope" in body["error"]
