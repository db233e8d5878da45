"""`make install` from a system Python that follows PEP 668, and what `pulumi preview` runs.

PEP 668's marker is a file named EXTERNALLY-MANAGED in the interpreter's stdlib directory; pip
refuses installs into that interpreter (``--user`` included) and ignores the marker inside a
venv (https://packaging.python.org/en/latest/specifications/externally-managed-environments/).
A venv of the test's own Python would not show the refusal, so the test builds a real base
interpreter: a copy of the base binary beside its stdlib (entries linked, not copied) with the
marker added. pip installs a stand-in ``uv`` wheel from a local directory: no network.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from testsupport import tools

ROOT = Path(__file__).resolve().parents[1]
VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"
STUB_UV_VERSION = "0.13.9"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _stub_uv_wheel(folder: Path) -> Path:
    """A wheel named uv whose console script prints a uv-shaped version line."""
    dist = f"uv-{STUB_UV_VERSION}.dist-info"
    files = {
        "uv_stub.py": f"def main():\n    print('uv {STUB_UV_VERSION} (stub)')\n".encode(),
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: uv\nVersion: {STUB_UV_VERSION}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{dist}/entry_points.txt": b"[console_scripts]\nuv = uv_stub:main\n",
    }
    record = [_record_line(name, data) for name, data in files.items()] + [f"{dist}/RECORD,,"]
    path = folder / f"uv-{STUB_UV_VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
        wheel.writestr(f"{dist}/RECORD", "\n".join(record) + "\n")
    return path


def _marked_interpreter(root: Path) -> Path:
    """A base interpreter (not a venv) whose stdlib directory holds EXTERNALLY-MANAGED."""
    base = Path(sys.base_prefix)
    binary = Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
    (root / "bin").mkdir(parents=True)
    shutil.copy2(binary, root / "bin" / VERSION)
    (root / "bin" / "python3").symlink_to(VERSION)
    (root / "lib" / VERSION).mkdir(parents=True)
    for entry in (base / "lib").iterdir():  # libpython for a shared build
        if entry.name != VERSION:
            (root / "lib" / entry.name).symlink_to(entry)
    for entry in (base / "lib" / VERSION).iterdir():
        if entry.name != "EXTERNALLY-MANAGED":  # a system Python's own: written through a link, it would be replaced
            (root / "lib" / VERSION / entry.name).symlink_to(entry)
    (root / "lib" / VERSION / "EXTERNALLY-MANAGED").write_text(
        "[externally-managed]\nError=this Python is managed by the system\n"
    )
    return root / "bin" / "python3"


@pytest.fixture(scope="module")
def marked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("install")
    python = _marked_interpreter(root / "py")
    wheels = root / "wheels"
    wheels.mkdir()
    _stub_uv_wheel(wheels)
    env = {
        "PATH": f"{python.parent}:/usr/bin:/bin",
        "HOME": str(root / "home"),
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    probe = subprocess.run(
        [python, "-c", "import sys, sysconfig; print(sys.prefix == sys.base_prefix, sysconfig.get_path('stdlib'))"],
        capture_output=True, text=True, env=env, check=True,
    )
    assert probe.stdout.split() == ["True", str(root / "py" / "lib" / VERSION)]
    return python, env


def test_the_marked_interpreter_refuses_the_old_user_install(marked: tuple[Path, dict[str, str]]) -> None:
    """The recipe `make install` used before (pip --user, then pip) fails on it: the marker is real."""
    python, env = marked
    old = subprocess.run(
        ["bash", "-c", f"{python} -m pip install --quiet --user uv || {python} -m pip install --quiet uv"],
        capture_output=True, text=True, env=env,
    )
    assert old.returncode != 0
    assert "externally-managed-environment" in old.stderr or "No module named pip" in old.stderr


def test_make_bootstraps_uv_into_a_project_venv_under_pep_668(
    marked: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    python, env = marked
    done = subprocess.run(
        ["make", "--no-print-directory", "-f", str(ROOT / "Makefile"), ".tools/uv/bin/uv", f"PYTHON={python}"],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    version = subprocess.run(
        [tmp_path / ".tools/uv/bin/uv", "--version"], capture_output=True, text=True, env=env, check=True
    )
    assert version.stdout.startswith(f"uv {STUB_UV_VERSION}")
    assert not (Path(env["HOME"]) / ".local").exists(), "nothing written outside the project"


def test_make_says_in_one_line_what_to_install_when_venv_is_missing(tmp_path: Path) -> None:
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\necho 'No module named venv' >&2\nexit 1\n")
    fake.chmod(0o755)
    done = subprocess.run(
        ["make", "--no-print-directory", "-f", str(ROOT / "Makefile"), ".tools/uv/bin/uv", f"PYTHON={fake}"],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert done.returncode != 0
    said = [line for line in done.stderr.splitlines() if line.startswith("make install:")]
    assert len(said) == 1 and "python3-venv" in said[0]
    assert not (tmp_path / ".tools" / "uv").exists(), "a broken half venv is not left behind"


def test_make_install_uses_the_bootstrapped_uv_when_none_is_on_path(tmp_path: Path) -> None:
    path = "/usr/bin:/bin"
    if shutil.which("uv", path=path):
        pytest.skip("a uv on the system PATH takes precedence here")
    dry = subprocess.run(
        ["make", "-n", "-B", "--no-print-directory", "-f", str(ROOT / "Makefile"), "install"],
        capture_output=True, text=True, cwd=ROOT, env={"PATH": path, "HOME": str(tmp_path)},
    )
    assert ".tools/uv/bin/uv sync --frozen" in dry.stdout
    assert ".local/bin" not in dry.stdout


def test_pulumi_runs_the_venv_make_install_builds_without_uv_on_path() -> None:
    """Pulumi's uv toolchain looks uv up on PATH at every command ("Could not find `uv`"); the
    pip toolchain runs <virtualenv>/bin/python and lists packages with its pip
    (pulumi/pulumi sdk/python/toolchain: uv.go, pip.go)."""
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    options = project["runtime"]["options"]
    assert options == {"toolchain": "pip", "virtualenv": ".venv"}
    import tomllib

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    groups = pyproject["tool"]["uv"]["default-groups"]
    assert any(
        spec.startswith("pip") for group in groups for spec in pyproject["dependency-groups"][group]
        if isinstance(spec, str)
    ), "make install's .venv must hold pip for the pip toolchain's package listing"


def test_ci_runs_the_readmes_test_command_as_a_fresh_machine(tmp_path: Path) -> None:
    """`.ci/run` runs the Quick start's test command with an empty HOME and only the system
    directories on PATH, the rest of the environment kept: a uv in ~/.local/bin or a pyenv shim
    cannot hide a missing install step. Make reads the makefiles named in ``MAKEFILES`` first;
    this one prints what make sees, and ``-n`` runs nothing."""
    quick = (ROOT / "README.md").read_text().split("## Quick start", 1)[1].split("```", 2)[1]
    command = next(line.split("#")[0].strip() for line in quick.splitlines() if "pytest" in line)
    assert command == "make test"
    probe = tmp_path / "probe.mk"
    probe.write_text(
        "ifeq ($(MAKELEVEL),0)\n$(info seen goals=$(MAKECMDGOALS)|home=$(HOME)"
        "|in-home=$(shell ls -A $(HOME))|path=$(PATH)|ci=$(CI)|kept=$(KEPT))\nendif\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in {"CI", "MAKELEVEL"}}  # run by make test, too
    env |= {"MAKEFILES": str(probe), "MAKEFLAGS": "-n", "KEPT": "yes", "HOME": str(tmp_path)}
    done = subprocess.run(
        ["bash", str(ROOT / ".ci" / "run")], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    seen = dict(
        part.split("=", 1) for part in done.stdout.split("seen ", 1)[1].splitlines()[0].split("|")
    )
    assert seen["goals"] == command.removeprefix("make ")
    assert seen["home"] != str(tmp_path) and seen["in-home"] == ""
    assert not Path(seen["home"]).exists(), "the empty HOME is removed afterwards"
    assert seen["path"] == tools.SYSTEM_PATH
    assert seen["ci"] == "true" and seen["kept"] == "yes"
