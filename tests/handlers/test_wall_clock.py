"""One clock: no handler module reads the wall clock but ``handlers/common/clock.py``.

Logic receives ``now`` or a clock from its composition root (``entry`` hands every ``wire``
and ``run`` the registry's clock), so a test or the sandbox that moves the time moves it
everywhere. Read from the source (ast): a call of ``datetime.now``/``utcnow``/``date.today`` or
``time.time``, or one of them kept as a default to call later, is a wall-clock read.
``time.monotonic`` is not: it measures an elapsed budget and cannot be moved.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TypeGuard

ROOT = Path(__file__).resolve().parents[2]
HANDLERS = ROOT / "handlers"
THE_CLOCK = HANDLERS / "common" / "clock.py"

def _reads_the_wall_clock(node: ast.AST) -> TypeGuard[ast.Attribute]:
    if not isinstance(node, ast.Attribute):
        return False
    owner = ast.unparse(node.value)
    if node.attr in {"now", "utcnow", "today"}:
        return owner.split(".")[-1] in {"datetime", "date"}
    return node.attr in {"time", "time_ns"} and owner == "time"


def wall_clock_reads(root: Path = HANDLERS, base: Path = ROOT) -> list[str]:
    """``path:line expression`` for every wall-clock read under ``root``."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        if path == THE_CLOCK:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if _reads_the_wall_clock(node):
                found.append(f"{path.relative_to(base)}:{node.lineno} {ast.unparse(node)}")
    return found


def test_only_the_clock_module_reads_the_wall_clock() -> None:
    assert wall_clock_reads() == []


def test_the_check_finds_each_way_of_reading_it(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "import datetime as dt\nimport time\nfrom datetime import date, datetime\n"
        "def f(clock=time.time):\n"
        "    return dt.datetime.now(dt.UTC), datetime.utcnow(), date.today(), time.time_ns()\n"
        "def g(started=time.monotonic()):\n"
        "    return clock_now()\n"
    )
    reads = [r.split(" ", 1)[1] for r in wall_clock_reads(tmp_path, tmp_path)]
    assert sorted(reads) == sorted(
        ["time.time", "dt.datetime.now", "datetime.utcnow", "date.today", "time.time_ns"]
    )
