"""Sandbox tests start a real local emulator (moto server on 127.0.0.1) in this process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandbox.core import Sandbox
from tests.sandbox.fixture_system import fixture_graph, resolve_handler


@pytest.fixture(scope="module")
def fixture_sandbox() -> Iterator[Sandbox]:
    """The fixture system, deployed and wired, for the tests of one module."""
    with Sandbox(fixture_graph(), resolver=resolve_handler) as sb:
        yield sb
