"""Function archives: deterministic bytes, only what the function needs, importable on its own.

The systems' handler packages appear over time, so the tests run on two sets: a fixture system
(tests/fixtures/archive_system, copied with the real handlers/common into a temporary source
tree) and every real handler found under handlers/ by ``discover_handlers``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from components import archive
from components.archive import (
    ArchiveError,
    HandlerRef,
    build_function_archive,
    compile_bytecode,
    discover_handlers,
    distributions_for,
    find_target_python,
    function_name_for,
    handler_imports,
    stage_runtime_packages,
)

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "archive_system"
HELLO = "handlers.archive_system.hello.handler"


@pytest.fixture
def source_root(tmp_path: Path) -> Path:
    """A source tree: the real handlers/common, the fixture system, a sibling and some junk."""
    root = tmp_path / "src"
    handlers = root / "handlers"
    handlers.mkdir(parents=True)
    shutil.copy(REPO / "handlers" / "__init__.py", handlers / "__init__.py")
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO / "handlers" / "common", handlers / "common", ignore=ignore)
    shutil.copytree(FIXTURE, handlers / "archive_system", ignore=ignore)
    other = handlers / "other_system"
    other.mkdir()
    (other / "__init__.py").write_text('"""Another system: must not ship with archive_system."""\n')
    (other / "job.py").write_text("def handler(event, context):\n    return None\n")
    system = handlers / "archive_system"
    (system / "tests").mkdir()
    (system / "tests" / "test_inside.py").write_text("def test_x():\n    pass\n")
    (system / "tests" / "factories.py").write_text("ORDER = {}\n")
    (system / "test_beside.py").write_text("def test_y():\n    pass\n")
    (system / "conftest.py").write_text("")
    (system / "__pycache__").mkdir()
    (system / "__pycache__" / "hello.cpython-311.pyc").write_bytes(b"stale local bytecode")
    (system / ".editor-swap").write_text("junk")
    (system / "templates").mkdir()
    (system / "templates" / "nudge.txt").write_text("Hi {name}\n")
    return root


@pytest.fixture(scope="module")
def runtime_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """boto3 & co. (the Lambda runtime) plus Powertools and pydantic (the layer), nothing else."""
    return stage_runtime_packages(tmp_path_factory.mktemp("runtime"))


def build(
    root: Path, out: Path, handler: str = HELLO, vendored: tuple[str, ...] = ("phonenumberslite",)
) -> Path:
    return build_function_archive(
        "fx-hello", handler, vendored, source_root=root, out_dir=out, target_python=False
    )


def unpack(path: Path, into: Path) -> Path:
    with zipfile.ZipFile(path) as zipped:
        zipped.extractall(into)
    return into


def run_isolated(code: str, *paths: Path) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a new interpreter that sees only the stdlib and ``paths``."""
    prelude = f"import sys; sys.path[:0] = {[str(p) for p in paths]!r}\n"
    env = {
        "PATH": "/usr/bin:/bin",
        "AWS_DEFAULT_REGION": "eu-west-2",
        "POWERTOOLS_SERVICE_NAME": "fixture",
    }
    return subprocess.run(
        [sys.executable, "-I", "-S", "-c", prelude + code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


# Determinism --------------------------------------------------------------------------------


def test_same_sources_give_the_same_bytes(source_root: Path, tmp_path: Path) -> None:
    first = build(source_root, tmp_path / "one").read_bytes()
    # New timestamps and modes on every source must not change a byte.
    for path in (source_root / "handlers").rglob("*"):
        if path.is_file():
            os.utime(path, (1_900_000_000, 1_900_000_000))
            path.chmod(0o755)
    second = build(source_root, tmp_path / "two").read_bytes()
    assert first == second


def test_a_changed_source_changes_the_archive(source_root: Path, tmp_path: Path) -> None:
    path = build(source_root, tmp_path)
    before = path.read_bytes()
    hello = source_root / "handlers" / "archive_system" / "hello.py"
    hello.write_text(hello.read_text() + "\n# changed\n")
    assert build(source_root, tmp_path).read_bytes() != before


def test_unchanged_inputs_leave_the_file_alone(source_root: Path, tmp_path: Path) -> None:
    path = build(source_root, tmp_path)
    os.utime(path, (1_000_000_000, 1_000_000_000))
    assert build(source_root, tmp_path) == path
    assert path.stat().st_mtime == 1_000_000_000


def test_entries_are_sorted_with_fixed_time_and_mode(source_root: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(build(source_root, tmp_path)) as zipped:
        infos = zipped.infolist()
    names = [info.filename for info in infos]
    assert names == sorted(names)
    assert {info.date_time for info in infos} == {(1980, 1, 1, 0, 0, 0)}
    assert {stat.S_IMODE(info.external_attr >> 16) for info in infos} == {0o644}
    assert all(not info.is_dir() for info in infos)


# Contents -----------------------------------------------------------------------------------


def test_archive_holds_common_its_own_system_and_vendored_code_only(
    source_root: Path, tmp_path: Path
) -> None:
    with zipfile.ZipFile(build(source_root, tmp_path)) as zipped:
        names = set(zipped.namelist())
    assert {
        "handlers/__init__.py",
        "handlers/common/__init__.py",
        "handlers/common/function_url.py",
        "handlers/common/link_tokens.py",
        "handlers/archive_system/__init__.py",
        "handlers/archive_system/hello.py",
        "handlers/archive_system/numbers.py",
        "handlers/archive_system/templates/nudge.txt",
        "phonenumbers/__init__.py",
    } <= names
    assert not [n for n in names if n.startswith("handlers/other_system")]
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert not [n for n in names if "/tests/" in n or "/test_" in n or n.endswith("conftest.py")]
    assert not [n for n in names if "/." in n]
    assert not [n for n in names if n.endswith(("/RECORD", "/INSTALLER", "/direct_url.json"))]
    tops = {n.split("/")[0] for n in names}
    assert tops == {
        "handlers",
        "phonenumbers",
        next(t for t in tops if t.startswith("phonenumberslite-")),
    }


def test_unpacked_archive_imports_and_runs_with_runtime_and_layer_only(
    source_root: Path, tmp_path: Path, runtime_dir: Path
) -> None:
    unpacked = unpack(build(source_root, tmp_path / "out"), tmp_path / "task")
    event = {
        "requestContext": {"requestId": "r-1", "http": {"method": "POST"}},
        "body": '{"phone": "020 7946 0018"}',
        "isBase64Encoded": False,
    }
    code = (
        "import importlib, importlib.util, json\n"
        "for absent in ('moto', 'hypothesis', 'pytest', 'components'):\n"
        "    assert importlib.util.find_spec(absent) is None, absent\n"
        f"module = importlib.import_module('handlers.archive_system.hello')\n"
        f"print(json.dumps(module.handler({event!r}, None)))\n"
    )
    done = run_isolated(code, unpacked, runtime_dir)
    assert done.returncode == 0, done.stderr
    response = json.loads(done.stdout.strip().splitlines()[-1])
    assert json.loads(response["body"]) == {"phone": "+442079460018"}


def test_without_the_vendored_package_the_handler_fails_to_import(
    source_root: Path, tmp_path: Path, runtime_dir: Path
) -> None:
    """The isolated interpreter is strict enough to catch a missing dependency."""
    unpacked = unpack(build(source_root, tmp_path / "out"), tmp_path / "task")
    shutil.rmtree(unpacked / "phonenumbers")
    code = "from handlers.archive_system.numbers import to_e164\nto_e164('020 7946 0018')\n"
    done = run_isolated(code, unpacked, runtime_dir)
    assert done.returncode != 0
    assert "No module named 'phonenumbers'" in done.stderr


def test_the_email_check_runs_from_an_archive_without_dnspython(
    source_root: Path, tmp_path: Path, runtime_dir: Path
) -> None:
    """email-validator declares dnspython but imports it only for deliverability checks,
    which handlers.common.emails never asks for (archive.UNUSED_REQUIREMENTS)."""
    (source_root / "handlers" / "archive_system" / "mail.py").write_text(
        "from handlers.common.emails import normalise_email\n"
        "def handler(event, context):\n    return normalise_email(event['email'])\n"
    )
    path = build_function_archive(
        "fx-mail",
        "handlers.archive_system.mail.handler",
        ("email-validator", "idna"),
        source_root=source_root,
        out_dir=tmp_path / "out",
        target_python=False,
    )
    with zipfile.ZipFile(path) as zipped:
        tops = {n.split("/")[0] for n in zipped.namelist()}
    assert {"email_validator", "idna"} <= tops and "dns" not in tops
    code = (
        "import sys\nfrom handlers.archive_system.mail import handler\n"
        "print(handler({'email': ' Jane.Doe@Example.COM '}, None), handler({'email': 'jane..doe@x.com'}, None))\n"
        "assert 'dns' not in sys.modules\n"
    )
    done = run_isolated(code, unpack(path, tmp_path / "task"), runtime_dir)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["jane.doe@example.com", "None"]


# Refusals -----------------------------------------------------------------------------------


def test_unvendored_third_party_import_is_refused(source_root: Path, tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="phonenumbers"):
        build(source_root, tmp_path, vendored=())


def test_compiled_distribution_without_a_locked_lambda_wheel_is_refused(
    source_root: Path, tmp_path: Path
) -> None:
    """PyYAML is compiled here; a lock that has no python3.14 arm64 wheel of it cannot serve."""
    lock = tmp_path / "uv.lock"
    lock.write_text(
        'version = 1\n\n[[package]]\nname = "pyyaml"\nversion = "6.0.2"\n'
        'wheels = [{ url = "https://x/PyYAML-6.0.2-cp311-cp311-manylinux_2_17_x86_64.whl", '
        'hash = "sha256:00" }]\n'
    )
    with pytest.raises(ArchiveError, match=r"not pure Python, and uv\.lock has no wheel"):
        build_function_archive(
            "fx-hello",
            HELLO,
            ("phonenumberslite", "PyYAML"),
            source_root=source_root,
            out_dir=tmp_path,
            target_python=False,
            native="lock",
            lock_file=lock,
            wheel_cache=tmp_path / "cache",
        )


def test_runtime_and_layer_packages_are_not_vendored(source_root: Path, tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="runtime or the layer"):
        build(source_root, tmp_path, vendored=("phonenumberslite", "boto3"))


def test_missing_requirements_of_a_vendored_distribution_are_refused(
    source_root: Path, tmp_path: Path
) -> None:
    with pytest.raises(ArchiveError, match="requires"):
        build(source_root, tmp_path, vendored=("phonenumberslite", "requests"))


def test_uninstalled_distribution_is_refused(source_root: Path, tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="not installed"):
        build(source_root, tmp_path, vendored=("phonenumberslite", "no-such-distribution-xyz"))


@pytest.mark.parametrize(
    "handler",
    [
        "handlers.archive_system.handler",
        "other.archive_system.hello.handler",
        "handlers.common.x.handler",
        "handlers.archive_system.hello.nope",
        "handlers.archive_system.absent.handler",
    ],
)
def test_bad_handlers_are_refused(handler: str, source_root: Path, tmp_path: Path) -> None:
    with pytest.raises(ArchiveError):
        build(source_root, tmp_path, handler=handler)


def test_bad_function_names_are_refused(source_root: Path, tmp_path: Path) -> None:
    with pytest.raises(ArchiveError):
        build_function_archive(
            "../escape",
            HELLO,
            ("phonenumberslite",),
            source_root=source_root,
            out_dir=tmp_path,
            target_python=False,
        )


def test_a_non_314_interpreter_is_refused_for_bytecode(source_root: Path, tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match=r"3\.14"):
        build_function_archive(
            "fx-hello",
            HELLO,
            ("phonenumberslite",),
            source_root=source_root,
            out_dir=tmp_path,
            target_python=sys.executable,
        )


def test_target_python_env_must_be_314(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRM_TARGET_PYTHON", sys.executable)
    find_target_python.cache_clear()
    try:
        with pytest.raises(ArchiveError, match="CRM_TARGET_PYTHON"):
            find_target_python()
    finally:
        find_target_python.cache_clear()


def test_sources_only_is_announced_once(
    source_root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(archive, "_announced_sources_only", False)
    monkeypatch.setattr(archive, "find_target_python", lambda: None)
    for out in ("a", "b"):
        build_function_archive(
            "fx-hello", HELLO, ("phonenumberslite",), source_root=source_root, out_dir=tmp_path / out
        )
    assert sum("sources only" in r.getMessage() for r in caplog.records) == 1


# Import analysis and discovery --------------------------------------------------------------


def test_imports_are_followed_through_handlers_modules(source_root: Path) -> None:
    assert handler_imports(HELLO, source_root=source_root) == {"phonenumbers"}


def test_typing_only_and_optional_imports_do_not_count(source_root: Path) -> None:
    module = source_root / "handlers" / "archive_system" / "typed.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "import json, boto3, pydantic, aws_lambda_powertools\n"
        "if TYPE_CHECKING:\n    from mypy_boto3_dynamodb import DynamoDBClient\n"
        "try:\n    import orjson\nexcept ImportError:\n    orjson = None\n"
        "def handler(event, context):\n    import jellyfish\n    from . import numbers\n"
    )
    assert handler_imports("handlers.archive_system.typed.handler", source_root=source_root) == {
        "jellyfish",
        "phonenumbers",
    }


def test_a_late_load_through_the_cold_path_helper_counts(source_root: Path) -> None:
    """``cold_path.load("x")`` (handlers/common/cold_path.py) is an import the archive vendors."""
    (source_root / "handlers" / "archive_system" / "late.py").write_text(
        "from handlers.common import cold_path\n"
        "def handler(event, context):\n    return cold_path.load('email_validator')\n"
    )
    found = handler_imports("handlers.archive_system.late.handler", source_root=source_root)
    assert "email_validator" in found


def test_modules_removed_from_314_are_refused(source_root: Path) -> None:
    (source_root / "handlers" / "archive_system" / "old.py").write_text(
        "import cgi\ndef handler(e, c):\n    pass\n"
    )
    with pytest.raises(ArchiveError, match="removed"):
        handler_imports("handlers.archive_system.old.handler", source_root=source_root)


def test_discovery_reads_sources(source_root: Path) -> None:
    assert discover_handlers(source_root) == [HELLO, "handlers.other_system.job.handler"]
    assert function_name_for(HELLO) == "archive-system-hello"
    assert HandlerRef.parse(HELLO) == HandlerRef(
        "handlers.archive_system.hello", "handler", "archive_system"
    )
    assert distributions_for({"phonenumbers"}) == ("phonenumberslite",)


# Bytecode mechanics (run with this interpreter; archives only ever use Python 3.14) --------


def test_bytecode_is_checked_hash_reproducible_and_points_at_var_task(
    source_root: Path, tmp_path: Path
) -> None:
    trees = []
    for name in ("one", "two"):
        staging = tmp_path / name
        shutil.copytree(source_root / "handlers" / "common", staging / "handlers" / "common")
        compile_bytecode(staging, sys.executable)
        trees.append(staging)
    pycs = sorted(p.relative_to(trees[0]) for p in trees[0].rglob("*.pyc"))
    assert len(pycs) >= 8
    for relative in pycs:
        data = (trees[0] / relative).read_bytes()
        assert data == (trees[1] / relative).read_bytes()
        assert int.from_bytes(data[4:8], "little") == 0b11  # hash-based, checked
    import marshal

    code = marshal.loads((trees[0] / pycs[0]).read_bytes()[16:])
    assert code.co_filename.startswith("/var/task/handlers/common/")


# Every real function ------------------------------------------------------------------------


def _real_handlers() -> Iterator[str]:
    yield from discover_handlers()


@pytest.mark.parametrize("handler", list(_real_handlers()))
def test_real_function_archive_is_deterministic_and_importable(
    handler: str, tmp_path: Path, runtime_dir: Path
) -> None:
    vendored = distributions_for(handler_imports(handler))
    name = function_name_for(handler)
    first = build_function_archive(
        name, handler, vendored, out_dir=tmp_path / "one", target_python=False
    )
    second = build_function_archive(
        name, handler, vendored, out_dir=tmp_path / "two", target_python=False
    )
    assert first.read_bytes() == second.read_bytes()
    with zipfile.ZipFile(first) as zipped:
        systems = {
            n.split("/")[1]
            for n in zipped.namelist()
            if n.startswith("handlers/") and n.count("/") > 1
        }
    assert systems == {"common", HandlerRef.parse(handler).system_package}
    unpacked = unpack(first, tmp_path / "task")
    ref = HandlerRef.parse(handler)
    done = run_isolated(
        f"import importlib\nassert callable(importlib.import_module({ref.module!r}).{ref.attribute})\n",
        unpacked,
        runtime_dir,
    )
    assert done.returncode == 0, done.stderr


def test_a_handler_importing_test_support_is_refused(source_root: Path, tmp_path: Path) -> None:
    """Fakes and generators live in testsupport/, which never ships (#16)."""
    system = source_root / "handlers" / "archive_system"
    (system / "faked.py").write_text(
        "from testsupport.common import FakeBedrockClient\n\n"
        "def handler(event, context):\n    return FakeBedrockClient\n"
    )
    with pytest.raises(ArchiveError, match="test-only code"):
        build(source_root, tmp_path, handler="handlers.archive_system.faked.handler")


def test_entry_points_under_functions_are_discovered(source_root: Path) -> None:
    functions = source_root / "handlers" / "archive_system" / "functions"
    functions.mkdir()
    (functions / "__init__.py").write_text('"""Entry points."""\n')
    (functions / "greet.py").write_text("def handler(event, context):\n    return None\n")
    found = discover_handlers(source_root)
    assert "handlers.archive_system.functions.greet.handler" in found
    assert function_name_for("handlers.archive_system.functions.greet.handler") == (
        "archive-system-greet"
    )
