"""A version a user can pin, the license pyproject names, and a changelog that says both.

The repository is published as ``main`` without tags, so a release is a commit: the one that
gave the release's CHANGELOG heading its date. The README's pin instruction finds it with
``git log -S`` (the commits that change how often the heading occurs; the oldest added it),
and these tests run that instruction on this clone's history.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from testsupport import tools

ROOT = Path(__file__).resolve().parents[1]
RELEASE = re.compile(r"^## (?P<version>\d+\.\d+\.\d+) \((?P<date>\d{4}-\d\d-\d\d)[),]", re.M)
PIN = re.compile(r'git checkout "\$\((?P<find>git log [^`\n]*-S\'## (?P<version>[\d.]+) \((?P<date>[\d-]+)\'[^`\n]*)\)"')


def _version(pyproject: str) -> str:
    return str(tomllib.loads(pyproject)["project"]["version"])


def _releases() -> list[tuple[str, str]]:
    """(version, date) of each dated CHANGELOG heading, newest first."""
    return [(m["version"], m["date"]) for m in RELEASE.finditer((ROOT / "CHANGELOG.md").read_text())]


def _git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_version_license_and_changelog_agree() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", project["version"])
    assert project["license"] == {"text": "Apache-2.0"}
    license_text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert "END OF TERMS AND CONDITIONS" in license_text
    # The first release heading, below an "Unreleased" section of changes not released yet.
    first = re.search(r"^## (?!Unreleased)(\S+)", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert first is not None and first.group(1) == project["version"]


def _guide() -> str:
    """What a user reads: the README and the pages under docs/ (wherever the pin is told)."""
    return "\n".join(p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))])


def test_the_readme_pins_the_newest_release_by_commit_not_by_tag() -> None:
    guide = _guide()
    pins = list(PIN.finditer(guide))
    assert len(pins) == 1, "one pin instruction, `git checkout \"$(git log ... -S'## <version> (<date>' ...)\"`"
    assert (pins[0]["version"], pins[0]["date"]) == _releases()[0]
    assert "--branch v" not in guide and "git tag" not in guide, "the published repository has no tags"


@pytest.fixture(scope="module")
def history() -> None:
    """This clone's history, whole: the pin cannot be checked without the release commits."""
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"], capture_output=True, text=True
    )
    if done.returncode != 0:
        tools.skip_or_fail("release pin checks", "this copy is not a git clone (no history to pin to)")
    if done.stdout.strip() == "true":
        tools.skip_or_fail(
            "release pin checks", "a shallow clone holds no release commits: `git fetch --unshallow`"
        )


@pytest.mark.parametrize(("version", "date"), _releases(), ids=[v for v, _ in _releases()])
def test_the_pin_instruction_finds_each_releases_commit(history: None, version: str, date: str) -> None:
    """The README's command, for each release: one commit, whose pyproject.toml carries the
    version and whose CHANGELOG opens with the dated heading."""
    pin = PIN.search(_guide())
    assert pin is not None
    find = pin["find"].replace(f"## {pin['version']} ({pin['date']}", f"## {version} ({date}")
    done = subprocess.run(["bash", "-c", find], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    commit = done.stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{40}", commit), f"no commit dates {version}: {find}"
    assert _version(_git("show", f"{commit}:pyproject.toml")) == version
    first = RELEASE.search(_git("show", f"{commit}:CHANGELOG.md"))
    assert first is not None and (first["version"], first["date"]) == (version, date)
