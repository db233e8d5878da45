"""The program's graph without function archives: what the sandbox deploys and the handler
tests' world reads (the sandbox imports the handlers from the tree, so no archive is built)."""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import components.scoped_lambda as scoped_lambda
from components.offline.engine import Graph, run


@contextlib.contextmanager
def without_archives() -> Iterator[None]:
    """Run the program without building function archives (the sandbox imports handlers)."""
    module: Any = scoped_lambda
    original = module.build_function_archive
    with tempfile.TemporaryDirectory() as tmp:
        stub = Path(tmp) / "sandbox.zip"
        stub.write_bytes(b"PK\x05\x06" + b"\0" * 18)
        module.build_function_archive = lambda *a, **k: stub
        try:
            yield
        finally:
            module.build_function_archive = original


def program_graph(stack: str = "dev", overrides: Mapping[str, Any] | None = None) -> Graph:
    """The stack's graph from the mock engine (archives not built)."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the mocks log provider deprecation warnings as warnings
    try:
        with without_archives():
            return run(stack, overrides)
    finally:
        root.setLevel(level)
