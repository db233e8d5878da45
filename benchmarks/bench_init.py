"""Cold-start budget: archive size and handler import time for every function.

For each function the dev stack declares (the program run on the mock engine, so these are the
archives ``pulumi up`` would upload), and for any handler module under handlers/<system>/ that
no enabled system deploys yet, this unpacks the archive into a fresh directory and times ``import`` of the handler module in a new interpreter (``-I -S``) whose path is only the
unpacked archive plus a "runtime" directory holding what Lambda and the Powertools layer provide
(boto3 & co.; aws_lambda_powertools, pydantic & co.). That is the part of INIT the code controls.
Compiled distributions ship as their python3.14 arm64 wheel, which this machine cannot load, so
for timing only they are swapped for this environment's build of the same locked version.

Two columns: ``src ms`` imports the archive as built here (sources only when no Python 3.14 is
available; ``-B`` so nothing is cached, as on Lambda's read-only /var/task), and ``pyc ms``
imports the same tree after compiling it with this interpreter (checked-hash pycs), which is
what shipping bytecode buys. Figures are from this machine and Python, not from arm64 Lambda:
compare rows and runs, not absolute values with Lambda's INIT duration.

Usage: .venv/bin/python benchmarks/bench_init.py [--runs 7] [--budget-ms 1000] [--strict]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from importlib.metadata import PathDistribution
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from components.archive import (  # noqa: E402
    HandlerRef,
    build_function_archive,
    compile_bytecode,
    discover_handlers,
    distributions_for,
    function_name_for,
    handler_imports,
    stage_runtime_packages,
    vendored_distribution,
)

FIXTURE = REPO / "tests" / "fixtures" / "archive_system"
REFERENCE_IMPORTS = {
    "runtime: boto3": "import boto3",
    "runtime: boto3 + dynamodb resource": (
        "import boto3; boto3.session.Session().resource('dynamodb', region_name='eu-west-2')"
    ),
    "layer: powertools Logger": "from aws_lambda_powertools.logging import Logger",
    "layer: pydantic BaseModel": "from pydantic import BaseModel",
}


@dataclass(frozen=True)
class Row:
    """One function's figures."""

    function: str
    handler: str
    vendored: tuple[str, ...]
    kib: float
    files: int
    src_ms: float
    pyc_ms: float


def time_code(code: str, paths: list[Path], runs: int) -> float:
    """Median seconds of ``code`` (timed in-process) over ``runs`` fresh interpreters."""
    prelude = f"import sys, time\nsys.path[:0] = {[str(p) for p in paths]!r}\nstart = time.perf_counter()\n"
    tail = "\nprint(time.perf_counter() - start)\n"
    env = {"PATH": "/usr/bin:/bin", "AWS_DEFAULT_REGION": "eu-west-2", "AWS_REGION": "eu-west-2"}
    samples = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-B", "-c", prelude + code + tail],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"import failed:\n{done.stderr.strip()}")
        samples.append(float(done.stdout.strip().splitlines()[-1]))
    return statistics.median(samples)


def fixture_source_root(scratch: Path) -> Path:
    """A source tree with the real handlers/common and the archive test's fixture system."""
    root = scratch / "fixture-src"
    ignore = shutil.ignore_patterns("__pycache__")
    (root / "handlers").mkdir(parents=True)
    shutil.copy(REPO / "handlers" / "__init__.py", root / "handlers" / "__init__.py")
    shutil.copytree(REPO / "handlers" / "common", root / "handlers" / "common", ignore=ignore)
    shutil.copytree(FIXTURE, root / "handlers" / "archive_system", ignore=ignore)
    return root


def deployed_functions() -> list[tuple[str, str, Path]]:
    """(document name, handler, archive) of every function the dev stack declares.

    The program is run on the mock engine, so the archives measured are the ones ``pulumi up``
    would upload, built with the vendored packages each function declares.
    """
    from components.offline.engine import run

    graph = run("dev")
    found = []
    for fn in graph.of_type("aws:lambda/function:Function"):
        archive = Path(fn.inputs["code"]["archive"])
        found.append((fn.inputs["tags"]["crm:function"], fn.inputs["handler"], archive))
    return sorted(found)


def swap_in_host_builds(tree: Path) -> list[str]:
    """Replace the archive's compiled distributions by this environment's build of them.

    The archive holds the python3.14 arm64 wheel (components/wheels.py), which this machine
    cannot load; the same locked version built for this machine is put in its place so the
    import can be timed. Size and file counts are taken from the archive before the swap.
    """
    swapped = []
    for info in sorted(tree.glob("*.dist-info")):
        wheel = info / "WHEEL"
        if not wheel.is_file() or "Root-Is-Purelib: false" not in wheel.read_text():
            continue
        name = PathDistribution(info).metadata["Name"]
        host = vendored_distribution(name, native="host")
        for top in host.modules:
            shutil.rmtree(tree / top, ignore_errors=True)
            for loose in tree.glob(f"{top}.*"):
                loose.unlink()
        for arcname, path in host.files:
            target = tree / arcname
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        swapped.append(name)
    return swapped


def measure_archive(
    name: str, handler: str, path: Path, scratch: Path, runtime: Path, runs: int
) -> Row:
    """Unpack one built archive and time a clean import of its handler."""
    ref = HandlerRef.parse(handler)
    work = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=scratch))
    with zipfile.ZipFile(path) as zipped:
        files = len(zipped.namelist())
        zipped.extractall(work / "src")
        vendored = tuple(
            sorted(
                top
                for top in {n.split("/")[0] for n in zipped.namelist() if "/" in n}
                if top != "handlers" and not top.endswith(".dist-info")
            )
        )
    swap_in_host_builds(work / "src")
    code = f"import importlib\ngetattr(importlib.import_module({ref.module!r}), {ref.attribute!r})"
    src_ms = time_code(code, [work / "src", runtime], runs) * 1000
    shutil.copytree(work / "src", work / "pyc")
    compile_bytecode(work / "pyc", sys.executable)
    pyc_ms = time_code(code, [work / "pyc", runtime], runs) * 1000
    return Row(name, handler, vendored, path.stat().st_size / 1024, files, src_ms, pyc_ms)


def measure(
    handler: str, root: Path | None, scratch: Path, runtime: Path, runs: int, label: str
) -> Row:
    """Build, unpack and time one discovered handler (no stack declares it)."""
    vendored = distributions_for(handler_imports(handler, source_root=root))
    name = function_name_for(handler)
    path = build_function_archive(
        name, handler, vendored, source_root=root, out_dir=scratch / "archives"
    )
    row = measure_archive(name, handler, path, scratch, runtime, runs)
    return Row(label + row.function, *list(row.__dict__.values())[1:])


def table(headers: list[str], rows: list[list[str]], right: set[int]) -> str:
    """Rows as an aligned plain-text table."""
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    lines = []
    for row in [headers, ["-" * w for w in widths], *rows]:
        cells = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=7, help="fresh interpreters per figure (median)"
    )
    parser.add_argument(
        "--budget-ms", type=float, default=1000.0, help="import budget per function"
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when a function is over budget"
    )
    parser.add_argument("--only", default="", help="only handlers containing this text")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args()

    handlers = [h for h in discover_handlers() if args.only in h]
    rows: list[Row] = []
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-init-") as scratch_dir:
        scratch = Path(scratch_dir)
        runtime = stage_runtime_packages(scratch / "runtime")
        deployed = [f for f in deployed_functions() if args.only in f[1] or args.only in f[0]]
        for name, handler, archive in deployed:
            try:
                rows.append(measure_archive(name, handler, archive, scratch, runtime, args.runs))
            except Exception as err:  # one broken function must not hide the others' figures
                failures.append(f"{name}: {err}")
        covered = {handler for _, handler, _ in deployed}
        targets: list[tuple[str, Path | None, str]] = [
            (h, None, "(not deployed) ") for h in handlers if h not in covered
        ]
        if not targets and not deployed and args.only:
            print(f"no handler matches --only {args.only!r}", file=sys.stderr)
            return 1
        if not targets and not deployed:
            print("no system handlers under handlers/ yet: measuring the archive test fixture\n")
            targets = [
                (
                    "handlers.archive_system.hello.handler",
                    fixture_source_root(scratch),
                    "(fixture) ",
                )
            ]
        for handler, root, label in targets:
            try:
                rows.append(measure(handler, root, scratch, runtime, args.runs, label))
            except Exception as err:  # one broken function must not hide the others' figures
                failures.append(f"{handler}: {err}")
        reference = {
            name: time_code(code, [runtime], args.runs) * 1000
            for name, code in REFERENCE_IMPORTS.items()
        }

    print(
        table(
            ["function", "handler", "vendored", "KiB", "files", "src ms", "pyc ms", "budget"],
            [
                [
                    r.function,
                    r.handler,
                    ",".join(r.vendored) or "-",
                    f"{r.kib:.0f}",
                    str(r.files),
                    f"{r.src_ms:.1f}",
                    f"{r.pyc_ms:.1f}",
                    "ok" if r.src_ms <= args.budget_ms else "OVER",
                ]
                for r in rows
            ],
            right={3, 4, 5, 6},
        )
    )
    print(
        f"\nmedian of {args.runs} fresh interpreters, {sys.implementation.name} {sys.version.split()[0]}"
    )
    print(f"budget: {args.budget_ms:.0f} ms per handler import (src ms)\n")
    print(
        table(
            ["reference import", "ms"], [[k, f"{v:.1f}"] for k, v in reference.items()], right={1}
        )
    )
    for failure in failures:
        print(f"\nFAILED {failure}", file=sys.stderr)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "runs": args.runs,
                    "functions": [r.__dict__ for r in rows],
                    "reference_ms": reference,
                },
                indent=2,
            )
        )
    over = [r for r in rows if r.src_ms > args.budget_ms]
    return 1 if failures or (args.strict and over) else 0


if __name__ == "__main__":
    sys.exit(main())
