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

from testsupport.graphs import GraphCache

os.environ["CRM_NATIVE_WHEELS"] = "host"


@pytest.fixture(scope="session")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> GraphCache:
    """The program's graphs, each built once per run and shared by the xdist workers (the
    workers' temporary directories share one parent per run)."""
    base = tmp_path_factory.getbasetemp()
    shared: Path = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return GraphCache(shared / "graphs")
