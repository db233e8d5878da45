"""Function archives: one deterministic zip per Lambda function, built from the working tree.

An archive holds ``handlers/__init__.py``, ``handlers/common/``, the function's own system
package (``handlers/<system>/``) and nothing else of ours; tests, ``__pycache__`` and hidden files
stay out. Third-party code comes from three places only: the Lambda runtime (boto3 and its
dependencies), the AWS-published Powertools layer (Powertools and pydantic), and distributions
named in ``vendored``. A pure-Python one (``Root-Is-Purelib: true``, ``*-none-any`` tags) is
copied from the current environment. One with compiled code is not: the functions run
Python 3.14 on arm64, so its files come from the manylinux aarch64 cp314 (or abi3) wheel that
``uv.lock`` pins, fetched once into the wheel cache and checked by sha256 and tag
(``components/wheels.py``). Before writing anything, the builder reads the handler's import
graph and refuses a handler that imports a module none of those three places provides.

Same sources give the same bytes: entries sorted, every timestamp 1980-01-01 00:00, every mode
0644, no directory entries, no extra fields; the zip comment carries a digest of the inputs, so a
rebuild with unchanged inputs leaves the file untouched (Pulumi then sees no code change).

Bytecode: ``/var/task`` is read-only, so Python cannot cache bytecode there and recompiles every
module on every cold start. When a Python 3.14 interpreter is available (``$CRM_TARGET_PYTHON``
or ``python3.14`` on PATH) the builder compiles with ``CHECKED_HASH`` pycs (valid whatever the
file times, checked against the shipped source) and ships them. Without one it ships sources
only and says so once in the log: pycs from another version would be dead weight Lambda ignores.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import importlib.util
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path, PurePosixPath
from typing import Literal

from components import wheels

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[1]
ARCHIVE_DIR = REPO_ROOT / "build" / "archives"
TARGET_PYTHON_ENV = "CRM_TARGET_PYTHON"
TARGET_PYTHON_VERSION = (3, 14)
TASK_ROOT = "/var/task"
FIXED_DATE_TIME = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o100644
_FORMAT = "crm-archive-v1"

RUNTIME_PACKAGES: tuple[str, ...] = (
    "boto3",
    "botocore",
    "s3transfer",
    "jmespath",
    "dateutil",
    "urllib3",
    "six",
)
"""Top-level modules the Lambda Python runtime provides beside the standard library."""

LAYER_PACKAGES: tuple[str, ...] = (
    "aws_lambda_powertools",
    "pydantic",
    "pydantic_core",
    "typing_extensions",
    "annotated_types",
    "typing_inspection",
)
"""Top-level modules the AWS-published Powertools layer (python3.14, arm64) provides."""

_PROVIDED_DISTRIBUTIONS = frozenset(
    {
        "boto3",
        "botocore",
        "s3transfer",
        "jmespath",
        "python-dateutil",
        "urllib3",
        "six",
        "aws-lambda-powertools",
        "pydantic",
        "pydantic-core",
        "typing-extensions",
        "annotated-types",
        "typing-inspection",
    }
)

# The standard library as Python 3.14 has it, judged from the interpreter running the build.
_ADDED_BY_314 = frozenset({"annotationlib", "compression", "_interpreters", "_colorize"})
_REMOVED_BY_314 = frozenset(
    {
        "asynchat",
        "asyncore",
        "distutils",
        "imp",
        "smtpd",
        "aifc",
        "audioop",
        "cgi",
        "cgitb",
        "chunk",
        "crypt",
        "imghdr",
        "mailcap",
        "msilib",
        "nis",
        "nntplib",
        "ossaudiodev",
        "pipes",
        "sndhdr",
        "spwd",
        "sunau",
        "telnetlib",
        "uu",
        "xdrlib",
        "lib2to3",
    }
)
STDLIB_MODULES = (frozenset(sys.stdlib_module_names) | _ADDED_BY_314) - _REMOVED_BY_314

_FUNCTION = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SKIPPED_DIRS = frozenset({"__pycache__", "tests", "test"})
_SKIPPED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd", ".dylib", ".md")
"""Not shipped from a source tree: bytecode, native builds, and design notes (a package's README)."""
_BINARY_SUFFIXES = (".so", ".pyd", ".dylib", ".dll")
_ENVIRONMENT_METADATA = frozenset(
    {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json", "uv_cache.json"}
)

_announced_sources_only = False


class ArchiveError(Exception):
    """An archive that cannot be built as asked; the message says what to change."""


ENTRY_PACKAGE = "functions"
"""Entry points live in ``handlers/<system>/functions/<function>.py``, one per seed function."""
TEST_ONLY_PACKAGES = frozenset({"testsupport"})
"""Fakes, in-memory stand-ins and data generators: never shipped (refused by name)."""


@dataclass(frozen=True)
class HandlerRef:
    """A Lambda handler string taken apart.

    Attributes:
        module: Dotted module, ``handlers.<system>.functions.<function>``.
        attribute: The entry point inside it, normally ``handler``.
        system_package: The system package name, ``<system>``.
    """

    module: str
    attribute: str
    system_package: str

    @classmethod
    def parse(cls, handler: str) -> HandlerRef:
        """Split ``handlers.<system>.functions.<function>.<attribute>``; anything else is refused.

        (The four-part ``handlers.<system>.<module>.<attribute>`` is read too, for fixtures.)
        """
        parts = handler.split(".")
        shaped = (len(parts) == 5 and parts[2] == ENTRY_PACKAGE) or len(parts) == 4
        if not shaped or parts[0] != "handlers" or not all(_IDENTIFIER.match(p) for p in parts):
            raise ArchiveError(
                f"handler {handler!r} must be handlers.<system>.{ENTRY_PACKAGE}.<function>.handler"
            )
        if parts[1] == "common":
            raise ArchiveError(
                f"handler {handler!r} lives in handlers.common, which is shared code"
            )
        return cls(module=".".join(parts[:-1]), attribute=parts[-1], system_package=parts[1])

    @property
    def function(self) -> str:
        """The entry module's own name (``webhook`` of ``handlers.x.functions.webhook``)."""
        return self.module.rsplit(".", 1)[1]


# Discovery ----------------------------------------------------------------------------------


def _defines(tree: ast.Module, name: str) -> bool:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return True
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return True
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == name
        ):
            return True
        if isinstance(node, ast.ImportFrom) and any(
            (alias.asname or alias.name) == name for alias in node.names
        ):
            return True
    return False


def discover_handlers(source_root: Path | None = None) -> list[str]:
    """Every entry point under ``source_root`` (default: the repo), as a handler string.

    Entry points are the modules of ``handlers/<system>/functions/`` (and, for fixtures, a
    system package's own modules) that define ``handler`` at top level. Found by reading the
    source, not importing it. Sorted, so builds and benchmarks run in a stable order.
    """
    root = (source_root or REPO_ROOT) / "handlers"
    found: list[str] = []
    if not root.is_dir():
        return found
    for package in sorted(p for p in root.iterdir() if p.is_dir()):
        if package.name in {"common", "__pycache__"} or not (package / "__init__.py").is_file():
            continue
        for directory, dotted in (
            (package / ENTRY_PACKAGE, f"handlers.{package.name}.{ENTRY_PACKAGE}"),
            (package, f"handlers.{package.name}"),
        ):
            for module in sorted(directory.glob("*.py")):
                if module.name == "__init__.py":
                    continue
                tree = ast.parse(module.read_bytes(), filename=str(module))
                if _defines(tree, "handler"):
                    found.append(f"{dotted}.{module.stem}.handler")
    return found


def function_name_for(handler: str) -> str:
    """A file-name-safe function name for a handler (``handlers.x_y.functions.z`` -> ``x-y-z``)."""
    ref = HandlerRef.parse(handler)
    return f"{ref.system_package}-{ref.function}".replace("_", "-").lower()


# Import analysis ----------------------------------------------------------------------------


def _module_file(source_root: Path, dotted: str) -> Path | None:
    base = source_root.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    names = {"ImportError", "ModuleNotFoundError"}
    kind = handler.type
    if isinstance(kind, ast.Name):
        return kind.id in names
    if isinstance(kind, ast.Tuple):
        return any(isinstance(e, ast.Name) and e.id in names for e in kind.elts)
    return False


def _cold_path_load(node: ast.AST) -> str | None:
    """The module a ``cold_path.load("name")`` call imports (handlers/common/cold_path.py):
    a late import is still an import the archive must provide."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "load"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "cold_path"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.args[0].value
    return None


def _imports(tree: ast.AST, package: str) -> Iterator[str]:
    """Absolute module names a module imports at run time (typing-only and optional ones skipped)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from (name for child in node.orelse for name in _imports(child, package))
            continue
        if isinstance(node, ast.Try) and any(_catches_import_error(h) for h in node.handlers):
            continue
        late = _cold_path_load(node)
        if late is not None:
            yield late
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
        else:
            yield from _imports(node, package)


@lru_cache(maxsize=4096)
def _module_imports(source: bytes, filename: str, package: str) -> tuple[str, ...]:
    """``_imports`` of one module's source, parsed once per content: every function's archive
    walks handlers.common again, and a plan builds about thirty archives."""
    return tuple(_imports(ast.parse(source, filename=filename), package))


def handler_imports(handler: str, *, source_root: Path | None = None) -> frozenset[str]:
    """Top-level modules the handler needs beyond the stdlib, the runtime and the layer.

    Follows the handler's imports through ``handlers.*`` (so a helper module's imports count),
    including imports inside functions and ``cold_path.load("module")`` calls; imports under ``if TYPE_CHECKING:`` and inside
    ``try: ... except ImportError:`` are not run-time needs and are skipped. The result is what
    must be vendored.
    """
    root = source_root or REPO_ROOT
    ref = HandlerRef.parse(handler)
    pending = [ref.module]
    seen: set[str] = set()
    external: set[str] = set()
    while pending:
        dotted = pending.pop()
        if dotted in seen:
            continue
        seen.add(dotted)
        path = _module_file(root, dotted)
        if path is None:
            if dotted == ref.module:
                raise ArchiveError(f"handler module {dotted} not found under {root}")
            continue  # "from handlers.common import x" also yields handlers.common.x; may be a name
        package = dotted if path.name == "__init__.py" else dotted.rpartition(".")[0]
        for name in _module_imports(path.read_bytes(), str(path), package):
            top = name.split(".")[0]
            if top == "handlers":
                parts = name.split(".")
                pending.extend(".".join(parts[:n]) for n in range(2, len(parts) + 1))
            elif top and top != "__future__":
                external.add(top)
    test_only = external & TEST_ONLY_PACKAGES
    if test_only:
        raise ArchiveError(
            f"{handler} imports {sorted(test_only)}: test-only code (fakes, generators) is "
            "never shipped; the handler must take the real client and tests inject the fake"
        )
    provided = STDLIB_MODULES | set(RUNTIME_PACKAGES) | set(LAYER_PACKAGES)
    removed = external & _REMOVED_BY_314
    if removed:
        raise ArchiveError(f"{handler} imports {sorted(removed)}, removed from Python 3.14")
    return frozenset(external - provided)


def distributions_for(modules: Iterable[str]) -> tuple[str, ...]:
    """The installed distributions that provide ``modules`` (top-level names) and what they
    need at run time that the runtime and the layer do not provide, sorted."""
    mapping = importlib.metadata.packages_distributions()
    names: set[str] = set()
    for module in modules:
        dists = mapping.get(module)
        if not dists:
            raise ArchiveError(f"no installed distribution provides {module!r}")
        names.update(dists)
    pending = sorted(names)
    while pending:
        name = pending.pop()
        dist = _installed(name)
        for needed in runtime_requirements(name, (dist.requires or []) if dist else []):
            if needed not in _PROVIDED_DISTRIBUTIONS and needed not in names:
                names.add(needed)
                pending.append(needed)
    return tuple(sorted(names))


# Vendoring ----------------------------------------------------------------------------------


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _installed(name: str) -> importlib.metadata.Distribution | None:
    try:
        return importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _is_pure(dist: importlib.metadata.Distribution) -> bool:
    """Whether an installed distribution's WHEEL file says pure Python (purelib, none-any)."""
    wheel = dist.read_text("WHEEL") or ""
    fields = [line.partition(":") for line in wheel.splitlines()]
    purelib = [v.strip().lower() for k, _, v in fields if k.strip() == "Root-Is-Purelib"]
    tags = [v.strip() for k, _, v in fields if k.strip() == "Tag"]
    return purelib == ["true"] and bool(tags) and all(t.endswith("-none-any") for t in tags)


def _installed_files(name: str, *, allow_binaries: bool) -> list[tuple[str, Path]]:
    """(archive name, installed file) for one installed distribution."""
    dist = _installed(name)
    if dist is None:
        raise ArchiveError(f"vendored distribution {name!r} is not installed; add it to pyproject")
    where = str(dist.locate_file(""))
    return list(_recorded_files(name, allow_binaries, where, dist.read_text("RECORD")))


@lru_cache(maxsize=64)
def _recorded_files(
    name: str, allow_binaries: bool, where: str, record: str | None
) -> tuple[tuple[str, Path], ...]:
    """``_installed_files`` once per installed RECORD (``where`` and ``record`` are the key): a
    plan vendors the same few distributions into many archives, each RECORD of many files."""
    dist = _installed(name)
    assert dist is not None and str(dist.locate_file("")) == where
    files = dist.files
    if files is None:
        raise ArchiveError(f"{name!r} has no file list (RECORD); reinstall it from a wheel")
    chosen: list[tuple[str, Path]] = []
    for entry in files:
        parts = PurePosixPath(str(entry)).parts
        if (
            not parts
            or parts[0] == ".."
            or "__pycache__" in parts
            or entry.name.endswith((".pyc", ".pyo"))
        ):
            continue
        if parts[0].endswith(".dist-info") and entry.name in _ENVIRONMENT_METADATA:
            continue
        if entry.name.endswith(_BINARY_SUFFIXES) and not allow_binaries:
            raise ArchiveError(f"{name!r} contains a compiled file {entry}; it is not pure Python")
        chosen.append(("/".join(parts), Path(str(dist.locate_file(entry)))))
    return tuple(chosen)


def _unpacked_files(directory: Path) -> list[tuple[str, Path]]:
    """(archive name, file) of an unpacked wheel, without its RECORD or compiled bytecode."""
    chosen: list[tuple[str, Path]] = []
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory)
        if (
            not path.is_file()
            or rel.as_posix() == ".complete"
            or "__pycache__" in rel.parts
            or path.name.endswith((".pyc", ".pyo"))
            or (rel.parts[0].endswith(".dist-info") and path.name in _ENVIRONMENT_METADATA)
        ):
            continue
        chosen.append((rel.as_posix(), path))
    return chosen


def _top_levels(arcnames: Iterable[str]) -> frozenset[str]:
    names: set[str] = set()
    for arcname in arcnames:
        first = arcname.split("/", 1)[0]
        if first in {"..", "__pycache__"} or first.endswith((".dist-info", ".data")):
            continue
        stem = first.split(".", 1)[0] if "/" not in arcname else first
        names.add(stem)
    return frozenset(n for n in names if _IDENTIFIER.match(n))


@dataclass(frozen=True)
class VendoredDistribution:
    """One distribution as it goes into an archive.

    Attributes:
        name: Normalised distribution name.
        files: (archive name, file) pairs.
        requires: Its run-time requirements (``Requires-Dist`` lines).
        modules: The top-level modules it provides.
        source: What was shipped, for the archive's digest: ``pure:<name>==<version>``,
            ``wheel:<file name>:<sha256>`` (the locked Lambda wheel) or ``host:<name>==<version>``.
    """

    name: str
    files: tuple[tuple[str, Path], ...]
    requires: tuple[str, ...]
    modules: frozenset[str]
    source: str


def vendored_distribution(
    name: str,
    *,
    native: wheels.NativeSource | None = None,
    lock_file: Path | None = None,
    wheel_cache: Path | None = None,
    downloader: wheels.Downloader | None = None,
) -> VendoredDistribution:
    """What ``name`` contributes to an archive.

    A pure-Python distribution (``Root-Is-Purelib: true``, ``*-none-any``) is copied from this
    environment: the same bytes load on any platform. Anything else has compiled code, so its
    files come from the wheel ``uv.lock`` pins for python3.14 arm64 (components/wheels.py),
    fetched into the wheel cache and checked by hash and tag; with ``native="host"`` (tests)
    from this environment instead, at the locked version only.
    """
    name = _normalise(name)
    dist = _installed(name)
    if dist is not None and _is_pure(dist):
        files = _installed_files(name, allow_binaries=False)
        return VendoredDistribution(
            name,
            tuple(files),
            tuple(dist.requires or ()),
            _top_levels(a for a, _ in files),
            f"pure:{name}=={dist.version}",
        )
    lock = lock_file or wheels.LOCK_FILE
    try:
        if (native or wheels.native_source()) == "host":
            if dist is None:
                raise ArchiveError(
                    f"vendored distribution {name!r} is not installed; add it to pyproject"
                )
            version = wheels.locked_version(name, lock)
            if dist.version != version:
                raise ArchiveError(
                    f"{name} {dist.version} is installed but {lock.name} pins {version}; "
                    "run `make install`"
                )
            files = _installed_files(name, allow_binaries=True)
            return VendoredDistribution(
                name,
                tuple(files),
                tuple(dist.requires or ()),
                _top_levels(a for a, _ in files),
                f"host:{name}=={version}",
            )
        try:
            wheel = wheels.locked_wheel(name, lock)
        except wheels.WheelError as err:
            if dist is None and not wheels.is_locked(name, lock):
                raise ArchiveError(
                    f"vendored distribution {name!r} is not installed; add it to pyproject"
                ) from err
            raise ArchiveError(
                f"{name!r} is not pure Python, and {err}. Vendor only what is pure Python or "
                "has a locked cp314 (or abi3) manylinux aarch64 wheel"
            ) from err
        _, unpacked = wheels.prepare(
            name,
            lock_file=lock,
            cache_dir=wheel_cache,
            downloader=downloader or wheels.pip_download,
        )
    except wheels.WheelError as err:
        raise ArchiveError(str(err)) from err
    files = _unpacked_files(unpacked)
    infos = sorted(unpacked.glob("*.dist-info"))
    if len(infos) != 1:
        raise ArchiveError(f"{wheel.filename} unpacked to {len(infos)} .dist-info directories")
    requires = importlib.metadata.PathDistribution(infos[0]).requires or []
    return VendoredDistribution(
        name,
        tuple(files),
        tuple(requires),
        _top_levels(a for a, _ in files),
        f"wheel:{wheel.filename}:{wheel.sha256}",
    )


UNUSED_REQUIREMENTS: Mapping[str, frozenset[str]] = {
    # email-validator imports dnspython only to check deliverability (MX lookups), lazily;
    # handlers.common.emails checks syntax only (check_deliverability=False), so the 1.5 MB
    # of dnspython would never load. tests/test_archive.py validates from an archive without it.
    "email-validator": frozenset({"dnspython"}),
}
"""Requirements a vendored distribution declares but never imports the way the handlers use it."""


_TARGET_ENVIRONMENT = {
    "python_version": "{}.{}".format(*TARGET_PYTHON_VERSION),
    "python_full_version": "{}.{}.0".format(*TARGET_PYTHON_VERSION),
    "platform_machine": "aarch64",
    "platform_system": "Linux",
    "sys_platform": "linux",
    "os_name": "posix",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "extra": "",
}


def runtime_requirements(name: str, requires: Iterable[str]) -> list[str]:
    """The distributions ``name`` needs at run time on Lambda (markers evaluated for
    python3.14 arm64 Linux, extras and ``UNUSED_REQUIREMENTS`` left out), normalised."""
    unused = UNUSED_REQUIREMENTS.get(_normalise(name), frozenset())
    needed: list[str] = []
    for requirement in requires:
        spec, _, marker = requirement.partition(";")
        if marker.strip():
            try:
                from packaging.markers import Marker
            except ImportError:  # pragma: no cover - packaging ships with pip/pytest
                if "extra" in marker:
                    continue
            else:
                if not Marker(marker.strip()).evaluate(_TARGET_ENVIRONMENT):
                    continue
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
        if match and _normalise(match.group(1)) not in unused:
            needed.append(_normalise(match.group(1)))
    return needed


def _check_requirements(vendored: Sequence[VendoredDistribution]) -> None:
    """Every run-time dependency of a vendored distribution must be vendored or provided."""
    have = {d.name for d in vendored} | _PROVIDED_DISTRIBUTIONS
    for dist in vendored:
        for needed in runtime_requirements(dist.name, dist.requires):
            if needed not in have:
                raise ArchiveError(
                    f"vendored {dist.name!r} requires {needed!r}, which is neither "
                    "vendored nor provided by the runtime or the layer; vendor it too"
                )


# Sources ------------------------------------------------------------------------------------


def _tree_files(directory: Path, prefix: str) -> list[tuple[str, Path]]:
    files: list[tuple[str, Path]] = []
    for current, dirs, names in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(names):
            if (
                name.startswith(".")
                or name.endswith(_SKIPPED_SUFFIXES)
                or name == "conftest.py"
                or (name.startswith("test_") and name.endswith(".py"))
            ):
                continue
            path = Path(current) / name
            rel = path.relative_to(directory).as_posix()
            files.append((f"{prefix}/{rel}", path))
    return files


def _source_files(ref: HandlerRef, root: Path) -> list[tuple[str, Path]]:
    handlers = root / "handlers"
    init = handlers / "__init__.py"
    common = handlers / "common"
    system = handlers / ref.system_package
    for required in (init, common / "__init__.py", system / "__init__.py"):
        if not required.is_file():
            raise ArchiveError(f"{required} is missing; cannot build {ref.module}")
    module = _module_file(root, ref.module)
    if module is None:
        raise ArchiveError(f"handler module {ref.module} not found under {root}")
    tree = ast.parse(module.read_bytes(), filename=str(module))
    if not _defines(tree, ref.attribute):
        raise ArchiveError(f"{ref.module} defines no top-level {ref.attribute!r}")
    return [
        ("handlers/__init__.py", init),
        *_tree_files(common, "handlers/common"),
        *_tree_files(system, f"handlers/{ref.system_package}"),
    ]


# Bytecode -----------------------------------------------------------------------------------


def _interpreter_version(interpreter: str) -> tuple[int, int] | None:
    try:
        # The interpreter is the operator's own choice (env var or PATH), run with a fixed script.
        done = subprocess.run(  # noqa: S603
            [interpreter, "-I", "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        major, minor = done.stdout.split()
        return int(major), int(minor)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None


@cache
def find_target_python() -> str | None:
    """A Python 3.14 interpreter to compile with: ``$CRM_TARGET_PYTHON``, else ``python3.14``.

    A ``$CRM_TARGET_PYTHON`` that is not Python 3.14 is an error, not a silent fallback.
    """
    explicit = os.environ.get(TARGET_PYTHON_ENV, "").strip()
    if explicit:
        version = _interpreter_version(explicit)
        if version != TARGET_PYTHON_VERSION:
            raise ArchiveError(
                f"{TARGET_PYTHON_ENV}={explicit} is Python {version}, not {{}}.{{}}".format(
                    *TARGET_PYTHON_VERSION
                )
            )
        return explicit
    found = shutil.which("python{}.{}".format(*TARGET_PYTHON_VERSION))
    if found and _interpreter_version(found) == TARGET_PYTHON_VERSION:
        return found
    return None


_COMPILE = """
import compileall, py_compile, sys
ok = compileall.compile_dir(
    sys.argv[1], quiet=1, stripdir=sys.argv[1], prependdir=sys.argv[2], workers=1,
    invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
)
sys.exit(0 if ok else 1)
"""


def compile_bytecode(staging: Path, interpreter: str) -> None:
    """Compile every ``.py`` under ``staging`` with ``interpreter`` into checked-hash pycs.

    Code objects record ``/var/task/...`` as their file name (tracebacks point at the deployed
    file) and the hash seed is fixed, so the same sources compile to the same bytes.
    """
    done = subprocess.run(  # noqa: S603 - the operator's interpreter, a fixed script
        [interpreter, "-s", "-c", _COMPILE, str(staging), TASK_ROOT],
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHONHASHSEED": "0", "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        check=False,
    )
    if done.returncode != 0:
        raise ArchiveError(
            f"{interpreter} could not compile the archive:\n{done.stdout}{done.stderr}"
        )


# Writing ------------------------------------------------------------------------------------


def _digest(
    entries: Sequence[tuple[str, Path]], vendored: Sequence[str], interpreter: str | None
) -> str:
    digest = hashlib.sha256(_FORMAT.encode())
    bytecode = "cpython-{}{}".format(*TARGET_PYTHON_VERSION) if interpreter else "sources-only"
    digest.update(f"\0bytecode={bytecode}".encode())
    digest.update(("\0vendored=" + ",".join(vendored)).encode())
    for arcname, path in entries:
        digest.update(b"\0" + arcname.encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _existing_comment(path: Path) -> bytes | None:
    try:
        with zipfile.ZipFile(path) as existing:
            return existing.comment
    except (OSError, zipfile.BadZipFile):
        return None


def write_deterministic_zip(
    files: Mapping[str, Path], destination: Path, comment: bytes = b""
) -> None:
    """Write ``files`` (archive name -> file) to ``destination`` so equal inputs give equal bytes."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{destination.name}.", dir=destination.parent)
    os.close(handle)
    try:
        with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
            for arcname in sorted(files):
                info = zipfile.ZipInfo(arcname, date_time=FIXED_DATE_TIME)
                info.create_system = 3
                info.external_attr = FILE_MODE << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, files[arcname].read_bytes(), compresslevel=6)
            archive.comment = comment
        os.chmod(temporary, 0o644)
        os.replace(temporary, destination)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def build_function_archive(
    function: str,
    handler: str,
    vendored: Sequence[str] = (),
    *,
    source_root: Path | None = None,
    out_dir: Path | None = None,
    target_python: str | Literal[False] | None = None,
    native: wheels.NativeSource | None = None,
    lock_file: Path | None = None,
    wheel_cache: Path | None = None,
    downloader: wheels.Downloader | None = None,
) -> Path:
    """Build ``build/archives/<function>.zip`` for ``handler`` and return its path.

    Args:
        function: The document's function name (``dm-block``); names the file.
        handler: ``handlers.<system>.<module>.<function>``; its system package is included.
        vendored: Pure-Python distributions to copy in (``phonenumbers``).
        source_root: The directory holding ``handlers/`` (tests point it at a fixture tree).
        out_dir: Where the zip goes (default ``<repo>/build/archives``).
        target_python: A Python 3.14 interpreter for bytecode; None finds one, False ships
            sources only.
        native: Where compiled distributions come from: ``"lock"`` (the locked python3.14
            arm64 wheel, fetched into the wheel cache) or ``"host"`` (this environment, for
            tests); None reads ``$CRM_NATIVE_WHEELS`` (default ``lock``).
        lock_file: The lock file pinning them (default ``uv.lock``).
        wheel_cache: Where fetched wheels are kept (default ``$CRM_WHEEL_CACHE`` or
            ``build/wheels``).
        downloader: How a missing wheel is fetched (default ``pip download``).
    """
    global _announced_sources_only
    if not _FUNCTION.match(function):
        raise ArchiveError(f"function name {function!r} must match {_FUNCTION.pattern}")
    root = (source_root or REPO_ROOT).resolve()
    ref = HandlerRef.parse(handler)
    vendored = tuple(sorted({_normalise(name) for name in vendored}))

    entries = _source_files(ref, root)
    provided: set[str] = set()
    distributions: list[VendoredDistribution] = []
    for name in vendored:
        if name in _PROVIDED_DISTRIBUTIONS:
            raise ArchiveError(
                f"{name!r} comes with the Lambda runtime or the layer; do not vendor it"
            )
        dist = vendored_distribution(
            name, native=native, lock_file=lock_file, wheel_cache=wheel_cache, downloader=downloader
        )
        if any(arcname.split("/", 1)[0] == "handlers" for arcname, _ in dist.files):
            raise ArchiveError(
                f"{name!r} ships a top-level 'handlers' package, which would shadow ours"
            )
        distributions.append(dist)
        entries += dist.files
        provided |= dist.modules
    _check_requirements(distributions)
    missing = handler_imports(handler, source_root=root) - provided
    if missing:
        raise ArchiveError(
            f"{handler} imports {sorted(missing)}, which neither the Lambda runtime, the "
            "Powertools layer nor its vendored distributions provide; add the distribution to "
            "vendored"
        )
    names = [arcname for arcname, _ in entries]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ArchiveError(f"two sources for {duplicates[:5]} in {function}")

    if target_python is None:
        interpreter = find_target_python()
    elif target_python is False:
        interpreter = None
    else:
        if _interpreter_version(target_python) != TARGET_PYTHON_VERSION:
            raise ArchiveError(
                f"{target_python} is not Python {'{}.{}'.format(*TARGET_PYTHON_VERSION)}"
            )
        interpreter = target_python
    if interpreter is None and not _announced_sources_only:
        _announced_sources_only = True
        log.warning(
            "no Python %d.%d found (set %s or put python%d.%d on PATH): function archives ship "
            "sources only, and Lambda compiles them on every cold start",
            *TARGET_PYTHON_VERSION,
            TARGET_PYTHON_ENV,
            *TARGET_PYTHON_VERSION,
        )

    destination = (out_dir or ARCHIVE_DIR) / f"{function}.zip"
    sources = [d.source for d in distributions]
    comment = f"{_FORMAT} sha256:{_digest(sorted(entries), sources, interpreter)}".encode()
    if any(source.startswith("host:") for source in sources):
        comment += b" native=host"  # compiled for this machine: tests only, not for Lambda
    if destination.is_file() and _existing_comment(destination) == comment:
        return destination

    if interpreter is None:
        write_deterministic_zip(dict(entries), destination, comment)
        return destination
    with tempfile.TemporaryDirectory(prefix=f"archive-{function}-") as scratch:
        staging = Path(scratch)
        for arcname, path in entries:
            target = staging / arcname
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        compile_bytecode(staging, interpreter)
        staged = {
            path.relative_to(staging).as_posix(): path
            for path in staging.rglob("*")
            if path.is_file()
        }
        write_deterministic_zip(staged, destination, comment)
    return destination


# Local runtime stand-in ---------------------------------------------------------------------


def stage_runtime_packages(destination: Path) -> Path:
    """Fill ``destination`` with symlinks to what Lambda and the layer provide, nothing else.

    Importing a handler with ``sys.path = [unpacked archive, destination]`` (and ``-I -S``)
    shows whether the archive is complete, and how long its imports take.
    """
    destination.mkdir(parents=True, exist_ok=True)
    owners = importlib.metadata.packages_distributions()
    for module in (*RUNTIME_PACKAGES, *LAYER_PACKAGES):
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            raise ArchiveError(f"{module} is not installed here; run `uv sync`")
        origin = Path(spec.origin)
        source = origin.parent if origin.name == "__init__.py" else origin
        link = destination / source.name
        if not link.exists():
            link.symlink_to(source, target_is_directory=source.is_dir())
        for name in owners.get(module, []):
            dist = importlib.metadata.distribution(name)
            for info in {PurePosixPath(str(f)).parts[0] for f in dist.files or []}:
                if info.endswith(".dist-info") and not (destination / info).exists():
                    (destination / info).symlink_to(
                        Path(str(dist.locate_file(info))), target_is_directory=True
                    )
    return destination
