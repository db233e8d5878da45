"""Where the programs a test or ``make demo`` runs are: found here, by one lookup each, where
``make install`` put them or where the system keeps them. No test guesses a path.

A missing tool is one line saying what to do. Outside CI a check that needs it is skipped with
that line; with ``CI=true`` it fails instead, so CI never passes by skipping.

Run as ``python -m testsupport.tools browser [--install] [--quiet]`` (what ``make browser``,
``make unit`` and ``make demo`` run first): prints the browser found, or installs Debian's
``chromium`` where that is allowed (root, apt-get), or says in one line how to get one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parents[1]
BOOTSTRAPPED_UV = ROOT / ".tools" / "uv" / "bin" / "uv"
"""Where the Makefile bootstraps uv when none is on PATH (its ``UV`` variable)."""

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""A fresh machine's PATH: the system directories only (``.ci/run`` runs ``make test`` with it)."""

BROWSER_VARIABLES = ("CHROME", "CHROMIUM")
# The usual install locations, then names on PATH. macOS keeps the binary inside the app bundle
# (https://developer.chrome.com/docs/chromium/headless, "Use Headless Chrome").
BROWSER_LOCATIONS = (
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
    "/snap/bin/chromium",
    "/opt/google/chrome/chrome",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "~/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "~/Applications/Chromium.app/Contents/MacOS/Chromium",
)
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
GET_A_BROWSER = (
    "install Chromium or Google Chrome (as root on Debian/Ubuntu: `make browser`), "
    "or set CHROMIUM to its binary"
)


class ToolMissing(RuntimeError):
    """A program is not where it is looked for; the message says how to get it, in one line."""


def in_ci() -> bool:
    """``CI=true`` (as CI services set it, and ``.ci/run``): a missing tool fails a check."""
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


SKIPPED = " skipped: "
"""In the reason of a check skipped for want of a tool; the run sums them up (tests/conftest.py)."""


def skip_or_fail(what: str, missing: ToolMissing | str) -> NoReturn:
    """Skip the calling test, saying ``<what> skipped: <missing>``, or fail it under ``CI=true``."""
    import pytest  # `make demo` and `make browser` run this module without pytest

    if in_ci():
        pytest.fail(f"{what} cannot run, and CI=true never skips them: {missing}", pytrace=False)
    pytest.skip(f"{what}{SKIPPED}{missing}")


def _runnable(path: str | Path) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def uv() -> str:
    """uv as the Makefile picks it: on PATH, else the copy ``make install`` bootstraps."""
    found = shutil.which("uv") or str(BOOTSTRAPPED_UV)
    if not _runnable(found):
        raise ToolMissing("uv is missing: run `make install` (it bootstraps .tools/uv/bin/uv)")
    return found


def browser() -> str:
    """A Chromium or Chrome binary: ``$CHROME`` or ``$CHROMIUM``, the usual install
    locations, then PATH. A variable that names no runnable file is an error, not skipped."""
    for name in BROWSER_VARIABLES:
        given = os.environ.get(name, "").strip()
        if given:
            if not _runnable(given):
                raise ToolMissing(f"{name} names no runnable file: set it to the browser's binary")
            return given
    installed = browsers_installed()
    if installed:
        return installed[0]
    raise ToolMissing(f"no Chromium or Chrome found: {GET_A_BROWSER}")


def browsers_installed(path: str | None = None) -> list[str]:
    """Every browser binary the lookup would take after the variables, in its order: the usual
    locations, then the names on ``path`` (default ``$PATH``)."""
    places = [os.path.expanduser(location) for location in BROWSER_LOCATIONS]
    places += [found for name in BROWSER_NAMES if (found := shutil.which(name, path=path))]
    return [place for place in dict.fromkeys(places) if _runnable(place)]


def may_install_browser() -> bool:
    """Debian's package manager, run by root: the one place a browser is installed for you."""
    return os.geteuid() == 0 and Path("/etc/debian_version").is_file() and bool(shutil.which("apt-get"))


def install_browser() -> None:
    apt = shutil.which("apt-get") or "apt-get"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run([apt, "update", "-qq"], check=True, env=env)  # noqa: S603 - fixed arguments
    subprocess.run(  # noqa: S603 - fixed arguments
        [apt, "install", "-y", "-qq", "--no-install-recommends", "chromium"], check=True, env=env
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Find a tool the tests and make demo run.")
    parser.add_argument("tool", choices=["browser"])
    parser.add_argument("--install", action="store_true", help="install it where that is allowed")
    parser.add_argument("--quiet", action="store_true", help="print nothing: whoever needs the browser says what is missing")
    options = parser.parse_args(argv)
    chosen = any(os.environ.get(name, "").strip() for name in BROWSER_VARIABLES)
    try:
        found = browser()
    except ToolMissing as missing:
        if not (options.install and not chosen and may_install_browser()):
            if not options.quiet:
                print(f"{missing} (the browser checks and make demo's screenshots need it)", file=sys.stderr)
            return 0  # not an error here: whoever needs the browser says so (skip, or fail in CI)
        install_browser()
        try:
            found = browser()
        except ToolMissing as still:
            print(f"{still} (installing Debian's chromium did not provide one)", file=sys.stderr)
            return 0
    if not options.quiet:
        print(found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
