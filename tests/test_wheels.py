"""Compiled wheels for the Lambda target: chosen from the lock, fetched once, checked, vendored.

No test here reaches the network: a small wheel ("fxnative", one module and a stand-in
extension file) is built in a temporary directory, a lock file names it with its sha256, and a
downloader copies it where pip would put it. One test reads the real uv.lock (no fetch).
"""

from __future__ import annotations

import hashlib
import subprocess
import zipfile
from pathlib import Path

import pytest

from components import wheels
from components.archive import ArchiveError, build_function_archive
from components.wheels import LockedWheel, WheelError, WheelTags, target_rank
from tests.test_archive import HELLO, source_root  # noqa: F401 - the fixture is used below

AARCH64 = "cp314-cp314-manylinux_2_17_aarch64.manylinux2014_aarch64"
X86_64 = "cp314-cp314-manylinux_2_17_x86_64.manylinux2014_x86_64"
SO = "fxnative/_speed.cpython-314-aarch64-linux-gnu.so"


def elf(machine: int) -> bytes:
    """The first bytes of a 64-bit little-endian ELF shared object for ``machine``."""
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    return ident + (3).to_bytes(2, "little") + machine.to_bytes(2, "little") + b"stand-in"


AARCH64_SO, X86_64_SO = elf(183), elf(62)


def make_wheel(
    directory: Path, tag: str = AARCH64, wheel_tags: str | None = None, so: bytes = AARCH64_SO
) -> Path:
    """Write fxnative-1.0-<tag>.whl; ``wheel_tags`` overrides the tags in its WHEEL file."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"fxnative-1.0-{tag}.whl"
    python, abi, platforms = tag.split("-")
    inner = wheel_tags or "\n".join(f"Tag: {python}-{abi}-{p}" for p in platforms.split("."))
    with zipfile.ZipFile(path, "w") as zipped:
        zipped.writestr("fxnative/__init__.py", "VALUE = 42\n")
        zipped.writestr(SO, so)
        zipped.writestr(
            "fxnative-1.0.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: fxnative\nVersion: 1.0\n",
        )
        zipped.writestr(
            "fxnative-1.0.dist-info/WHEEL",
            f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n{inner}\n",
        )
        zipped.writestr("fxnative-1.0.dist-info/RECORD", "")
    return path


def write_lock(path: Path, *built: Path, version: str = "1.0") -> Path:
    """A uv.lock naming fxnative and its wheels with their sha256."""
    rows = "".join(
        f'    {{ url = "https://files.example/{w.name}", '
        f'hash = "sha256:{hashlib.sha256(w.read_bytes()).hexdigest()}" }},\n'
        for w in built
    )
    path.write_text(
        f'version = 1\n\n[[package]]\nname = "fxnative"\nversion = "{version}"\n'
        f'source = {{ registry = "https://pypi.org/simple" }}\nwheels = [\n{rows}]\n'
    )
    wheels._lock_packages.cache_clear()
    return path


class CopyDownloader:
    """Stands in for pip: copies the file from a local "index" and counts the calls."""

    def __init__(self, index: Path) -> None:
        self.index = index
        self.calls: list[str] = []

    def __call__(self, wheel: LockedWheel, directory: Path) -> None:
        self.calls.append(wheel.filename)
        (directory / wheel.filename).write_bytes((self.index / wheel.filename).read_bytes())


def refuse_download(wheel: LockedWheel, directory: Path) -> None:
    raise AssertionError(f"no download expected, asked for {wheel.filename}")


def build(root: Path, out: Path, lock: Path, cache: Path, downloader: object) -> Path:
    return build_function_archive(
        "fx-hello",
        HELLO,
        ("phonenumberslite", "fxnative"),
        source_root=root,
        out_dir=out,
        target_python=False,
        native="lock",
        lock_file=lock,
        wheel_cache=cache,
        downloader=downloader,  # type: ignore[arg-type]
    )


# Tags ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "fits"),
    [
        (f"x-1-{AARCH64}.whl", True),
        ("x-1-cp314-cp314-manylinux_2_34_aarch64.whl", True),
        ("x-1-cp39-abi3-manylinux_2_28_aarch64.whl", True),
        ("x-1-cp314-cp314-manylinux_2_39_aarch64.whl", False),  # newer glibc than AL2023's
        (f"x-1-{X86_64}.whl", False),
        ("x-1-cp313-cp313-manylinux_2_17_aarch64.whl", False),
        ("x-1-cp314-cp314t-manylinux_2_17_aarch64.whl", False),  # free-threaded build
        ("x-1-cp314-cp314-musllinux_1_1_aarch64.whl", False),
        ("x-1-cp314-cp314-macosx_11_0_arm64.whl", False),
    ],
)
def test_only_cp314_or_abi3_manylinux_aarch64_fits(filename: str, fits: bool) -> None:
    assert (target_rank(WheelTags.parse(filename)) is not None) is fits


def test_a_cp314_build_is_preferred_to_abi3_then_the_newer_glibc() -> None:
    ranks = {
        name: target_rank(WheelTags.parse(name))
        for name in (
            "x-1-cp39-abi3-manylinux_2_34_aarch64.whl",
            "x-1-cp314-cp314-manylinux_2_17_aarch64.whl",
            "x-1-cp314-cp314-manylinux_2_28_aarch64.whl",
        )
    }
    assert (
        max(ranks, key=lambda n: ranks[n] or (0,)) == "x-1-cp314-cp314-manylinux_2_28_aarch64.whl"
    )


def test_the_real_lock_pins_jellyfish_for_lambda() -> None:
    wheels._lock_packages.cache_clear()
    locked = wheels.locked_wheel("jellyfish")
    assert locked.filename == (
        f"jellyfish-{locked.version}-cp314-cp314-manylinux_2_17_aarch64.manylinux2014_aarch64.whl"
    )
    lock = wheels.LOCK_FILE.read_text()
    assert f'{locked.filename}", hash = "sha256:{locked.sha256}"' in lock


def test_pip_is_asked_for_exactly_the_locked_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: dict[str, object] = {}

    def fake_run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        requirements = Path(command[command.index("-r") + 1])
        seen["command"] = command
        seen["requirements"] = requirements.read_text()
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setenv("CRM_PIP", "pip")
    monkeypatch.setattr(subprocess, "run", fake_run)  # the module wheels runs pip through
    sha = "ab" * 32
    wheels.pip_download(
        LockedWheel("jellyfish", "1.3.0", f"jellyfish-1.3.0-{AARCH64}.whl", "u", sha), tmp_path
    )
    command = seen["command"]
    assert isinstance(command, list)
    joined = " ".join(command)
    for part in (
        "pip download",
        "--no-deps",
        "--only-binary=:all:",
        "--implementation cp",
        "--python-version 3.14",
        "--platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64",
        "--abi cp314",
        "--require-hashes",
        f"--dest {tmp_path}",
    ):
        assert part in joined, part
    assert seen["requirements"] == f"jellyfish==1.3.0 --hash=sha256:{sha}\n"
    assert not list(tmp_path.glob("*.txt"))  # the requirements file is cleaned up


# Vendoring a locked wheel -------------------------------------------------------------------


def test_the_locked_wheel_is_fetched_once_and_vendored_deterministically(
    source_root: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    index = tmp_path / "index"
    lock = write_lock(tmp_path / "uv.lock", make_wheel(index), make_wheel(index, X86_64))
    downloader = CopyDownloader(index)
    first = build(source_root, tmp_path / "one", lock, tmp_path / "cache", downloader)
    assert downloader.calls == [f"fxnative-1.0-{AARCH64}.whl"]  # the aarch64 one, not x86_64
    # A second build, another output: from the cache, no download, the same bytes.
    second = build(source_root, tmp_path / "two", lock, tmp_path / "cache", refuse_download)
    assert first.read_bytes() == second.read_bytes()
    # A fresh cache fetches again and still gives the same bytes.
    third = build(source_root, tmp_path / "three", lock, tmp_path / "cache2", CopyDownloader(index))
    assert third.read_bytes() == first.read_bytes()
    with zipfile.ZipFile(first) as zipped:
        names = set(zipped.namelist())
        assert zipped.read(SO) == AARCH64_SO
    assert {"fxnative/__init__.py", SO, "fxnative-1.0.dist-info/WHEEL"} <= names
    assert "fxnative-1.0.dist-info/RECORD" not in names
    assert not [n for n in names if n.startswith(".") or "/." in n]


def test_a_new_locked_wheel_changes_the_archive(source_root: Path, tmp_path: Path) -> None:  # noqa: F811
    index = tmp_path / "index"
    lock = write_lock(tmp_path / "uv.lock", make_wheel(index))
    before = build(
        source_root, tmp_path / "out", lock, tmp_path / "cache", CopyDownloader(index)
    ).read_bytes()
    other = tmp_path / "index2"
    built = make_wheel(other)
    with zipfile.ZipFile(built, "a") as zipped:
        zipped.writestr("fxnative/extra.py", "X = 1\n")
    lock = write_lock(tmp_path / "uv.lock", built)
    after = build(source_root, tmp_path / "out", lock, tmp_path / "cache2", CopyDownloader(other))
    assert after.read_bytes() != before


def test_a_cached_wheel_with_another_hash_is_refused_and_deleted(
    source_root: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    index = tmp_path / "index"
    lock = write_lock(tmp_path / "uv.lock", make_wheel(index))
    cache = tmp_path / "cache"
    cache.mkdir()
    tampered = cache / f"fxnative-1.0-{AARCH64}.whl"
    tampered.write_bytes(b"not the locked file")
    with pytest.raises(ArchiveError, match="sha256"):
        build(source_root, tmp_path / "out", lock, cache, refuse_download)
    assert not tampered.exists()
    assert not (tmp_path / "out" / "fx-hello.zip").exists()


def test_a_lock_without_a_lambda_wheel_is_refused(source_root: Path, tmp_path: Path) -> None:  # noqa: F811
    index = tmp_path / "index"
    lock = write_lock(
        tmp_path / "uv.lock",
        make_wheel(index, X86_64),
        make_wheel(index, "cp313-cp313-manylinux_2_17_aarch64"),
    )
    with pytest.raises(ArchiveError, match=r"no wheel of fxnative==1\.0 for CPython 3\.14"):
        build(source_root, tmp_path / "out", lock, tmp_path / "cache", refuse_download)


def test_a_renamed_wheel_is_refused_by_the_tags_inside(source_root: Path, tmp_path: Path) -> None:  # noqa: F811
    """The file name says aarch64, the WHEEL file inside says x86_64: not loadable on Lambda."""
    index = tmp_path / "index"
    renamed = make_wheel(index, wheel_tags="Tag: cp314-cp314-manylinux_2_17_x86_64")
    lock = write_lock(tmp_path / "uv.lock", renamed)
    with pytest.raises(ArchiveError, match="WHEEL tags"):
        build(source_root, tmp_path / "out", lock, tmp_path / "cache", CopyDownloader(index))


def test_a_failed_download_says_so(source_root: Path, tmp_path: Path) -> None:  # noqa: F811
    lock = write_lock(tmp_path / "uv.lock", make_wheel(tmp_path / "index"))

    def failing(wheel: LockedWheel, directory: Path) -> None:
        raise WheelError(f"pip could not fetch {wheel.filename}: no network")

    with pytest.raises(ArchiveError, match="pip could not fetch"):
        build(source_root, tmp_path / "out", lock, tmp_path / "cache", failing)


def test_a_distribution_in_no_lock_and_not_installed_is_refused(
    source_root: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    lock = write_lock(tmp_path / "uv.lock", make_wheel(tmp_path / "index"))
    with pytest.raises(ArchiveError, match="not installed"):
        build_function_archive(
            "fx-hello",
            HELLO,
            ("phonenumberslite", "no-such-distribution-xyz"),
            source_root=source_root,
            out_dir=tmp_path / "out",
            target_python=False,
            native="lock",
            lock_file=lock,
            wheel_cache=tmp_path / "cache",
            downloader=refuse_download,
        )


def test_host_mode_copies_the_installed_build_at_the_locked_version_only(
    source_root: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    import jellyfish  # noqa: F401 - installed here, compiled for this machine

    common = {"source_root": source_root, "target_python": False, "native": "host"}
    path = build_function_archive(
        "fx-hello",
        HELLO,
        ("phonenumberslite", "jellyfish"),
        out_dir=tmp_path / "a",
        **common,  # type: ignore[arg-type]
    )
    with zipfile.ZipFile(path) as zipped:
        assert any(n.startswith("jellyfish/") and n.endswith(".so") for n in zipped.namelist())
        assert zipped.comment.endswith(b" native=host")  # not loadable on Lambda, and says so
    other = tmp_path / "uv.lock"
    other.write_text(
        'version = 1\n\n[[package]]\nname = "jellyfish"\nversion = "0.0.1"\n'
        'source = { registry = "https://pypi.org/simple" }\n'
    )
    wheels._lock_packages.cache_clear()
    with pytest.raises(ArchiveError, match=r"pins 0\.0\.1"):
        build_function_archive(
            "fx-hello",
            HELLO,
            ("phonenumberslite", "jellyfish"),
            out_dir=tmp_path / "b",
            lock_file=other,
            **common,  # type: ignore[arg-type]
        )


def test_an_x86_64_extension_under_aarch64_tags_is_refused(
    source_root: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    index = tmp_path / "index"
    lock = write_lock(tmp_path / "uv.lock", make_wheel(index, so=X86_64_SO))
    with pytest.raises(ArchiveError, match="ELF machine 62, not AArch64"):
        build(source_root, tmp_path / "out", lock, tmp_path / "cache", CopyDownloader(index))
