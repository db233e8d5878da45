"""Scripted days, one module per system: ``sandbox/scenarios/<key>.py`` defines ``SCENARIO``.

A scenario plays the outside world against the running sandbox (a form post, a mail, a
webhook, the clock moving), lets the pump deliver, prints through the report and checks the
end state. It may give the system's handlers their fakes (CRM, store, firmographics, sheet)
and the model stand-in its answers, through ``Sandbox.patch`` so nothing outlives the run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sandbox.core import Sandbox
    from sandbox.report import Report

ORDER = ("dm", "ler", "upsr", "rrs", "ls")
"""ls plays last: its day ends by jumping the shared clock to the next Monday (its weekly mail)."""


class Scenario(Protocol):
    """One system's scripted day."""

    key: str
    title: str

    def prepare(self, sb: Sandbox) -> None:
        """Secrets, fakes, model answers, seed data: what an operator sets up once."""

    def play(self, sb: Sandbox, report: Report) -> None:
        """The day, step by step, ending with checks of the state it left."""


def load(key: str) -> Scenario | None:
    """The scenario of system ``key``, or None when it has none yet."""
    try:
        module = importlib.import_module(f"sandbox.scenarios.{key}")
    except ModuleNotFoundError as err:
        if err.name == f"sandbox.scenarios.{key}":
            return None
        raise
    scenario: Scenario = module.SCENARIO
    return scenario
