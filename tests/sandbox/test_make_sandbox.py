"""`make sandbox` starts with the scenarios' data, so docs/sandbox.md's calls find something."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_make_sandbox_plays_the_scenarios_first() -> None:
    dry = subprocess.run(
        ["make", "-n", "--no-print-directory", "sandbox"], capture_output=True, text=True, cwd=ROOT, check=True
    )
    line = next(x for x in dry.stdout.splitlines() if "-m sandbox serve" in x)
    assert "--scenarios" in line.split()
