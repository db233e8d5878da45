"""Compiled wheels for the Lambda target: pinned by uv.lock, fetched once, checked, unpacked.

Lambda runs the functions on Python 3.14, arm64 (Amazon Linux 2023, glibc 2.34), so a
distribution with compiled code must be shipped as the wheel built for that target, not copied
from this machine's environment. AWS's page "Working with .zip file archives for Python Lambda
functions" (https://docs.aws.amazon.com/lambda/latest/dg/python-package.html, the section on
dependencies with native code) has ``pip install --platform manylinux2014_aarch64
--only-binary=:all: --implementation cp --python-version ...`` do exactly that; Powertools'
"Cross-platform builds" recipe
(https://docs.aws.amazon.com/powertools/python/latest/build_recipes/cross-platform/) and SAM's
"Default build with AWS SAM"
(https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/serverless-sam-cli-using-build.html,
``--use-container`` for natively compiled packages) say the same for their tools.

Here the wheel is chosen from ``uv.lock``: the locked version's wheel list names each file with
its sha256, so the build takes the one file whose tags fit the target (``cp314-cp314`` or an
``abi3`` build for an older CPython, ``manylinux*_aarch64`` at glibc 2.34 or below; the most
specific first), fetches it with pip (``--require-hashes``, so pip itself refuses any other
file), checks the sha256 again and the tags in the wheel's own ``WHEEL`` file, and unpacks it
into the cache. The cache (``build/wheels``, or ``$CRM_WHEEL_CACHE``) is reused by later builds,
which then need no network; a file whose hash does not match is deleted and refused.

``$CRM_NATIVE_WHEELS=host`` copies the compiled distributions from this environment instead
(the locked version only). Such archives load on this machine, not on Lambda; the tests use it
so that they never need the network, and the zip comment records the mode.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path, PurePosixPath
from typing import Literal, Protocol

REPO_ROOT = Path(__file__).resolve().parents[1]
LOCK_FILE = REPO_ROOT / "uv.lock"
DEFAULT_CACHE = REPO_ROOT / "build" / "wheels"
CACHE_ENV = "CRM_WHEEL_CACHE"
SOURCE_ENV = "CRM_NATIVE_WHEELS"
PIP_ENV = "CRM_PIP"

TARGET_CPYTHON = (3, 14)
TARGET_MACHINE = "aarch64"
TARGET_GLIBC = (2, 34)
"""python3.14 runs on Amazon Linux 2023, whose glibc is 2.34: manylinux_2_17 ... 2_34 load."""

NativeSource = Literal["lock", "host"]
_LEGACY_MANYLINUX = {"manylinux2014": (2, 17), "manylinux2010": (2, 12), "manylinux1": (2, 5)}
_SAFE_NAME = re.compile(r"^[A-Za-z0-9._+-]+$")


class WheelError(Exception):
    """A compiled wheel that cannot be used as asked; the message says what to change."""


def normalise(name: str) -> str:
    """A distribution name as the lock file and indexes compare it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def native_source() -> NativeSource:
    """Where compiled distributions come from: ``lock`` (default) or ``host`` (tests)."""
    value = os.environ.get(SOURCE_ENV, "lock").strip() or "lock"
    if value not in ("lock", "host"):
        raise WheelError(f"{SOURCE_ENV}={value!r}: use 'lock' (default) or 'host'")
    return "host" if value == "host" else "lock"


def wheel_cache() -> Path:
    """The wheel cache directory: ``$CRM_WHEEL_CACHE`` or ``build/wheels``."""
    explicit = os.environ.get(CACHE_ENV, "").strip()
    return Path(explicit) if explicit else DEFAULT_CACHE


# Tags ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WheelTags:
    """The parts of a wheel file name (``name-version[-build]-python-abi-platform.whl``)."""

    name: str
    version: str
    pythons: tuple[str, ...]
    abis: tuple[str, ...]
    platforms: tuple[str, ...]

    @classmethod
    def parse(cls, filename: str) -> WheelTags:
        """Split a wheel file name; compressed tag sets (``a.b``) become tuples."""
        if not filename.endswith(".whl") or not _SAFE_NAME.match(filename):
            raise WheelError(f"{filename!r} is not a wheel file name")
        parts = filename[: -len(".whl")].split("-")
        if len(parts) not in (5, 6):
            raise WheelError(f"{filename!r} is not a wheel file name")
        name, version, python, abi, platform = parts[0], parts[1], *parts[-3:]
        return cls(
            name,
            version,
            tuple(python.split(".")),
            tuple(abi.split(".")),
            tuple(platform.split(".")),
        )


def _glibc_of(platform: str) -> tuple[int, int] | None:
    """(2, 17) for ``manylinux2014_aarch64`` or ``manylinux_2_17_aarch64``; None otherwise."""
    if not platform.endswith(f"_{TARGET_MACHINE}"):
        return None
    stem = platform[: -len(TARGET_MACHINE) - 1]
    if stem in _LEGACY_MANYLINUX:
        return _LEGACY_MANYLINUX[stem]
    match = re.fullmatch(r"manylinux_(\d+)_(\d+)", stem)
    return (int(match.group(1)), int(match.group(2))) if match else None


def target_rank(tags: WheelTags) -> tuple[int, int, int] | None:
    """How well a wheel fits Lambda's python3.14 arm64, higher is better; None: it does not.

    A ``cp314-cp314`` build beats an ``abi3`` one (stable ABI, built for 3.x <= 3.14); then the
    newest glibc at or below 2.34 wins (newer builds, same loader).
    """
    own = "cp{}{}".format(*TARGET_CPYTHON)
    best: tuple[int, int, int] | None = None
    for python in tags.pythons:
        for abi in tags.abis:
            if python == own and abi == own:
                abi_rank = 2
            elif abi == "abi3" and re.fullmatch(r"cp3(\d+)", python):
                abi_rank = 1 if int(python[3:]) <= TARGET_CPYTHON[1] else 0
            else:
                abi_rank = 0
            if not abi_rank:
                continue
            for platform in tags.platforms:
                glibc = _glibc_of(platform)
                if glibc is None or glibc > TARGET_GLIBC:
                    continue
                rank = (abi_rank, *glibc)
                best = rank if best is None or rank > best else best
    return best


# The lock file ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LockedWheel:
    """The one wheel of a locked distribution that the Lambda target loads."""

    name: str
    version: str
    filename: str
    url: str
    sha256: str

    @property
    def tags(self) -> WheelTags:
        return WheelTags.parse(self.filename)


@cache
def _lock_packages(lock_file: Path) -> dict[str, dict[str, object]]:
    try:
        document = tomllib.loads(lock_file.read_text())
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise WheelError(f"cannot read the lock file {lock_file}: {err}") from err
    packages: dict[str, dict[str, object]] = {}
    for package in document.get("package", []):
        if isinstance(package, dict) and isinstance(package.get("name"), str):
            packages[normalise(package["name"])] = package
    return packages


def is_locked(name: str, lock_file: Path = LOCK_FILE) -> bool:
    """Whether ``uv.lock`` has a package called ``name``."""
    return normalise(name) in _lock_packages(lock_file)


def locked_version(name: str, lock_file: Path = LOCK_FILE) -> str:
    """The version ``uv.lock`` pins for ``name``."""
    package = _lock_packages(lock_file).get(normalise(name))
    if package is None or not isinstance(package.get("version"), str):
        raise WheelError(f"{name!r} is not in {lock_file.name}; add it to pyproject and `uv lock`")
    return str(package["version"])


def locked_wheel(name: str, lock_file: Path = LOCK_FILE) -> LockedWheel:
    """The locked wheel of ``name`` built for python3.14 arm64, with its url and sha256."""
    version = locked_version(name, lock_file)
    package = _lock_packages(lock_file)[normalise(name)]
    candidates: list[tuple[tuple[int, int, int], str, LockedWheel]] = []
    wheels = package.get("wheels", [])
    for wheel in wheels if isinstance(wheels, list) else []:
        url, digest = str(wheel.get("url", "")), str(wheel.get("hash", ""))
        filename = PurePosixPath(url.split("#", 1)[0]).name
        try:
            rank = target_rank(WheelTags.parse(filename))
        except WheelError:
            continue
        if rank is None or not digest.startswith("sha256:"):
            continue
        candidates.append(
            (rank, filename, LockedWheel(name, version, filename, url, digest[len("sha256:") :]))
        )
    if not candidates:
        raise WheelError(
            f"{lock_file.name} has no wheel of {name}=={version} for CPython "
            "{}.{} on manylinux {}".format(*TARGET_CPYTHON, TARGET_MACHINE)
            + "; Lambda cannot load it"
        )
    # Best rank first; the file name breaks ties so the choice never depends on lock order.
    candidates.sort(key=lambda c: (tuple(-x for x in c[0]), c[1]))
    return candidates[0][2]


# Fetching -----------------------------------------------------------------------------------


class Downloader(Protocol):
    """Puts ``wheel.filename`` into ``directory`` (or fails)."""

    def __call__(self, wheel: LockedWheel, directory: Path) -> None: ...


def _pip_command() -> list[str]:
    explicit = os.environ.get(PIP_ENV, "").strip()
    if explicit:
        return explicit.split()
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    found = shutil.which("pip3") or shutil.which("pip")
    if found is None:
        raise WheelError(f"no pip found to fetch wheels; set {PIP_ENV} (e.g. 'python3 -m pip')")
    return [found]


def pip_download(wheel: LockedWheel, directory: Path) -> None:
    """``pip download`` of exactly the locked file: target tags, no deps, hash required."""
    tags = wheel.tags
    requirements = directory / f".{wheel.filename}.requirements.txt"
    requirements.write_text(f"{wheel.name}=={wheel.version} --hash=sha256:{wheel.sha256}\n")
    command = [
        *_pip_command(),
        "download",
        "--quiet",
        "--no-deps",
        "--only-binary=:all:",
        "--implementation",
        "cp",
        "--python-version",
        "{}.{}".format(*TARGET_CPYTHON),
        *[arg for platform in tags.platforms for arg in ("--platform", platform)],
        *[arg for abi in tags.abis for arg in ("--abi", abi)],
        "--require-hashes",
        "--dest",
        str(directory),
        "-r",
        str(requirements),
    ]
    try:
        done = subprocess.run(  # noqa: S603 - pip with fixed arguments and the locked pin
            command, capture_output=True, text=True, timeout=600, check=False
        )
    finally:
        requirements.unlink(missing_ok=True)
    if done.returncode != 0:
        raise WheelError(
            f"pip could not fetch {wheel.filename}:\n{done.stdout}{done.stderr}".rstrip()
        )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(wheel: LockedWheel, cache_dir: Path, downloader: Downloader = pip_download) -> Path:
    """The locked wheel file in ``cache_dir``, downloaded when absent; its sha256 checked."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / wheel.filename
    if not path.is_file():
        with tempfile.TemporaryDirectory(prefix=".fetch-", dir=cache_dir) as scratch:
            downloader(wheel, Path(scratch))
            fetched = Path(scratch) / wheel.filename
            if not fetched.is_file():
                raise WheelError(f"fetching {wheel.filename} produced no such file")
            os.replace(fetched, path)
    actual = _sha256(path)
    if actual != wheel.sha256:
        path.unlink(missing_ok=True)
        raise WheelError(
            f"{wheel.filename}: sha256 {actual} is not the locked {wheel.sha256}; "
            "the cached file was deleted"
        )
    return path


def _wheel_metadata(zipped: zipfile.ZipFile, filename: str) -> list[tuple[str, str]]:
    infos = [n for n in zipped.namelist() if re.fullmatch(r"[^/]+\.dist-info/WHEEL", n)]
    if len(infos) != 1:
        raise WheelError(f"{filename} has {len(infos)} .dist-info/WHEEL files, not one")
    text = zipped.read(infos[0]).decode("utf-8")
    return [
        (k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in text.splitlines())
    ]


_EM_AARCH64 = 183


def _check_elf(header: bytes, what: str) -> None:
    """A shared object must be a 64-bit little-endian ELF file for AArch64 (``e_machine``
    183): the last word on what the tags claim."""
    if len(header) < 20 or header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
        raise WheelError(f"{what} is not a 64-bit little-endian ELF shared object")
    machine = int.from_bytes(header[18:20], "little")
    if machine != _EM_AARCH64:
        raise WheelError(f"{what} is built for ELF machine {machine}, not AArch64 ({_EM_AARCH64})")


def unpack(wheel_file: Path, cache_dir: Path) -> Path:
    """The wheel's files unpacked under ``cache_dir/unpacked/``, after checking its tags.

    The ``WHEEL`` file inside must carry a tag the target loads (the file name alone could be
    renamed), and every shared object must be an AArch64 ELF file. Paths that would leave the directory, and ``.data`` parts other than
    ``purelib``/``platlib`` (scripts, headers), are refused: a function archive has no use
    for them and they would not be where the wheel meant them to be.
    """
    target = cache_dir / "unpacked" / wheel_file.name[: -len(".whl")]
    if (target / ".complete").is_file():
        return target
    with zipfile.ZipFile(wheel_file) as zipped:
        fields = _wheel_metadata(zipped, wheel_file.name)
        tags = [v for k, v in fields if k == "Tag"]
        fits = [t for t in tags if target_rank(WheelTags.parse(f"x-0-{t}.whl")) is not None]
        if not fits:
            raise WheelError(
                f"{wheel_file.name}: its WHEEL tags {tags} do not fit CPython "
                "{}.{} on manylinux {}".format(*TARGET_CPYTHON, TARGET_MACHINE)
            )
        names = zipped.namelist()
        for name in names:
            parts = PurePosixPath(name).parts
            if name.startswith("/") or ".." in parts or "\\" in name:
                raise WheelError(f"{wheel_file.name}: unsafe path {name!r}")
            if (
                len(parts) > 1
                and parts[0].endswith(".data")
                and parts[1] not in ("purelib", "platlib")
            ):
                raise WheelError(f"{wheel_file.name}: ships {parts[0]}/{parts[1]}, not supported")
        for name in names:
            if re.search(r"\.so(\.[0-9.]+)?$", name):
                _check_elf(zipped.read(name)[:20], f"{wheel_file.name}: {name}")
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            for name in names:
                if name.endswith("/"):
                    continue
                parts = PurePosixPath(name).parts
                if parts[0].endswith(".data"):
                    parts = parts[2:]  # purelib/platlib install at the root
                destination = scratch.joinpath(*parts)
                destination.parent.mkdir(parents=True, exist_ok=True)
                destination.write_bytes(zipped.read(name))
            (scratch / ".complete").write_text(wheel_file.name + "\n")
            shutil.rmtree(target, ignore_errors=True)
            os.replace(scratch, target)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
    return target


def prepare(
    name: str,
    *,
    lock_file: Path = LOCK_FILE,
    cache_dir: Path | None = None,
    downloader: Downloader = pip_download,
) -> tuple[LockedWheel, Path]:
    """Lock entry and unpacked directory of ``name``'s Lambda wheel, fetching it if needed."""
    wheel = locked_wheel(name, lock_file)
    directory = cache_dir or wheel_cache()
    return wheel, unpack(fetch(wheel, directory, downloader), directory)
