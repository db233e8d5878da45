"""The program's graphs for tests: each built once per test run, shared by every xdist worker.

Running the program on the mock engine costs seconds (the whole dev stack takes about 8 s on
an idle 2-core machine, several times that under load), and the infra, sandbox and handler
tests read the same few graphs many times. The first process that needs one builds it and
pickles it into the run's shared temporary directory under a file lock; every other process
waits on the lock and loads the pickle (about 25 ms). Each call returns its own copy, so a
test that edits its graph cannot change another test's.

``shared()`` is the process's cache: test modules that need a graph at collection time (to
parametrize over its functions) read it there; tests/conftest.py points it at the run's shared
directory when the session starts and gives it to fixtures as ``graphs``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import pickle
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from components.offline.engine import Graph


class GraphCache:
    """Graphs by (kind, stack, overrides), in memory and in ``directory`` (None: memory only)."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory
        self._pickles: dict[str, bytes] = {}

    def run(self, stack: str, overrides: Mapping[str, Any] | None = None) -> Graph:
        """``components.offline.engine.run(stack, overrides)``: function archives built."""
        # the mock engine loads Pulumi and the program (seconds): only on this path
        from components.offline.engine import run

        return self._get("run", stack, overrides, lambda: run(stack, overrides))

    def program(self, stack: str = "dev", overrides: Mapping[str, Any] | None = None) -> Graph:
        """``components.offline.program.program_graph(stack, overrides)``: no archives (what
        the sandbox and the handler tests' world deploy)."""
        # the mock engine loads Pulumi and the program (seconds): only on this path
        from components.offline.program import program_graph

        return self._get("program", stack, overrides, lambda: program_graph(stack, overrides))

    def _get(
        self,
        kind: str,
        stack: str,
        overrides: Mapping[str, Any] | None,
        build: Callable[[], Graph],
    ) -> Graph:
        key = hashlib.sha256(
            json.dumps([kind, stack, overrides or {}], sort_keys=True, default=str).encode()
        ).hexdigest()[:16]
        data = self._pickles.get(key)
        if data is None:
            data = self._load_or_build(key, build)
            self._pickles[key] = data
        graph: Graph = pickle.loads(data)  # noqa: S301 (our own pickle, this run); a copy per caller
        return graph

    def _load_or_build(self, key: str, build: Callable[[], Graph]) -> bytes:
        if self.directory is None:
            return pickle.dumps(build())
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"{key}.pickle"
        with (self.directory / f"{key}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one builder; the others wait, then read
            if path.exists():
                return path.read_bytes()
            data = pickle.dumps(build())
            partial = path.with_suffix(".partial")
            partial.write_bytes(data)
            partial.rename(path)
            return data


_SHARED = GraphCache(None)


def shared() -> GraphCache:
    """This process's cache (memory only until ``share_in`` gives it a directory)."""
    return _SHARED


def share_in(directory: Path) -> None:
    """Keep this process's graphs in ``directory`` too, for the other processes of the run."""
    _SHARED.directory = directory
