"""ls-report-page under repeated views of one link: DynamoDB reads per view, on the sandbox.

    make bench-ls-views                            # 60 s of views (about 90 s in all)
    .venv/bin/python benchmarks/bench_report_views.py --seconds 5

The dev stack with only ls enabled runs in the sandbox (moto server, local Function URLs,
every AWS call in the interceptor's ledger); ls's scripted day ends with the weekly mail, and
its signed link is then opened one view at a time for ``--seconds``. Twice: at the stack's
view limit (``reportLinkViews``: past it a view is refused and reads nothing), and with the
limit raised above anything the run reaches, so every view is served and the figure is the
cost of a served view. Prints views, reads and reads per view; nothing here is a pass/fail
test (tests/sandbox/test_systems.py checks reads per view over a fixed number of views).
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from components.offline.program import program_graph  # noqa: E402
from sandbox import scenarios  # noqa: E402
from sandbox.core import Sandbox  # noqa: E402
from sandbox.play import play  # noqa: E402
from sandbox.scenarios.ls import open_repeatedly  # noqa: E402

UNREACHED_LIMIT = 10_000
"""The setting's maximum: more views than a one-at-a-time minute reaches on this machine."""


def ls_only(views: int | None) -> dict[str, object]:
    systems = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())["config"][
        "crm-automations:systems"
    ]
    out = {key: {**section, "enabled": key == "ls"} for key, section in systems.items()}
    if views is not None:
        out["ls"] = {**out["ls"], "reportLinkViews": views}
    return {"systems": out}


def measure(seconds: float, views: int | None) -> str:
    with Sandbox(program_graph("dev", ls_only(views))) as sb:
        [result] = play(sb, ["ls"], out=io.StringIO())
        if result.crashed or not all(c.ok for c in result.checks):
            raise SystemExit(f"ls's scripted day did not end as it should: {result}")
        mails = [m for m in sb.outbox.messages if m.function == sb.name("ls-report")]
        found = re.search(r"https?://\S+/report\?t=[\w.\-]+", mails[-1].text)
        assert found, "the weekly mail has no link"
        return open_repeatedly(sb, found.group(0), seconds=seconds).line()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()
    assert scenarios.load("ls") is not None
    print(f"ls-report-page: one link opened for {args.seconds:.0f} s, one view at a time")
    print(f"  at the stack's view limit:  {measure(args.seconds, None)}")
    print(f"  limit {UNREACHED_LIMIT} (all served): {measure(args.seconds, UNREACHED_LIMIT)}")


if __name__ == "__main__":
    main()
