"""Session-wide settings for every test.

Compiled distributions (jellyfish) are vendored from the locked python3.14 arm64 wheel, which
the archive builder fetches from PyPI into build/wheels. Tests never need the network, so
archives built under pytest take compiled code from this environment instead
(``CRM_NATIVE_WHEELS=host``, still at the locked version). tests/test_wheels.py covers the
locked-wheel path with a wheel it builds itself.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from testsupport import tools
from testsupport.graphs import GraphCache, share_in, shared

os.environ["CRM_NATIVE_WHEELS"] = "host"

# Property tests check what is true, not how fast: Hypothesis's 200 ms deadline per example
# made them fail on a loaded machine (speed belongs to benchmarks/).
settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Graphs go to a directory of this run that every xdist worker shares: the workers'
    temporary directories are ``<run>/popen-gw<N>`` (pytest-xdist's own use of the factory)."""
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None:
        return  # memory only
    base: Path = factory.getbasetemp()
    share_in((base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "graphs")


@pytest.fixture(scope="session")
def graphs() -> GraphCache:
    """The program's graphs, each built once per run (see testsupport/graphs.py)."""
    return shared()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Checks skipped for want of a tool (``tools.skip_or_fail``): one line each saying why,
    not one per check."""
    reasons = [report.longrepr[2] for report in terminalreporter.stats.get("skipped", [])
               if isinstance(report.longrepr, tuple)]
    said = [r.removeprefix("Skipped: ") for r in reasons]
    for reason in sorted({r for r in said if tools.SKIPPED in r}):
        terminalreporter.write_line(f"{said.count(reason)} {reason}")
