"""``make demo`` for a user who is not root and has no browser: its lookup installs nothing and
says so in one line, and every page, mail and SMS is still written (the screenshots left out).

The browser of this machine is hidden, not removed: in a private mount namespace an empty
device is mounted over each binary the lookup would take (``unshare -m``, then ``mount
--bind``); as root the command then drops to an unprivileged uid (``setpriv``), and as
another user it runs in nested user namespaces. A fake ``apt-get`` first on PATH records any
attempt to install.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from testsupport import gallery, tools

NOBODY = 65534
SETPRIV = (
    f"setpriv --reuid={NOBODY} --regid={NOBODY} --clear-groups"
    # Reading through directories only (CAP_DAC_READ_SEARCH): the venv's interpreter may live
    # under a 0700 home (pyenv in /root); writing, and apt-get, stay refused.
    " --inh-caps=+dac_read_search --ambient-caps=+dac_read_search --"
)


@pytest.fixture
def place() -> Iterator[Path]:
    """A HOME and output folder the unprivileged user may write (pytest's own are 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="no-browser-"))
    folder.chmod(0o777)
    (folder / "bin").mkdir(mode=0o777)
    apt = folder / "bin" / "apt-get"
    apt.write_text(f"#!/bin/sh\necho \"$@\" >> {folder}/apt-get-was-run\nexit 0\n")
    apt.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _hidden(argv: list[str], *, drop_root: bool) -> list[str]:
    """``argv`` where no browser is to be found, as root or (``drop_root``) as a plain user."""
    hide = "".join(f"mount --bind /dev/null {shlex.quote(b)} && " for b in tools.browsers_installed(tools.SYSTEM_PATH))
    if os.geteuid() == 0:
        run = f"{hide}exec {SETPRIV if drop_root else ''} \"$@\""
        return ["unshare", "-m", "sh", "-c", run, "sh", *argv]
    if not hide:
        return argv  # this user already has none
    # Root of a user namespace may mount in its own mount namespace; a nested one maps this
    # user back so the command does not run as (namespace) root.
    run = f"{hide}exec unshare --user --map-user={os.getuid()} --map-group={os.getgid()} -- \"$@\""
    return ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", run, "sh", *argv]


def _run(argv: list[str], place: Path, *, drop_root: bool = True) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{place / 'bin'}:{tools.SYSTEM_PATH}", "HOME": str(place), "PYTHONDONTWRITEBYTECODE": "1"}
    if not shutil.which("unshare"):
        tools.skip_or_fail("the no-browser checks", "unshare (util-linux) is missing")
    done = subprocess.run(_hidden(argv, drop_root=drop_root), capture_output=True, text=True, env=env, cwd=tools.ROOT)
    if "unshare:" in done.stderr:
        tools.skip_or_fail("the no-browser checks", f"cannot hide the browser here: {done.stderr.strip()}")
    return done


def test_the_lookup_installs_nothing_and_says_how_in_one_line(place: Path) -> None:
    whoami = _run([sys.executable, "-c", "import os; print(os.geteuid())"], place)
    assert whoami.returncode == 0 and int(whoami.stdout) != 0, whoami.stderr
    done = _run([sys.executable, "-m", "testsupport.tools", "browser", "--install"], place)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    said = done.stderr.splitlines()
    assert len(said) == 1 and said[0].startswith("no Chromium or Chrome found") and "CHROMIUM" in said[0]
    assert not (place / "apt-get-was-run").exists(), "apt-get run by a user who is not root"


def test_make_demo_writes_every_page_mail_and_sms_and_says_the_screenshots_were_skipped(place: Path) -> None:
    out = place / "see"
    done = _run([sys.executable, "-m", "testsupport.gallery", str(out)], place)
    assert done.returncode == 0, done.stderr
    skipped = [line for line in done.stdout.splitlines() if "screenshot" in line]
    assert len(skipped) == 1 and skipped[0].startswith("screenshots skipped: no Chromium or Chrome found")
    assert "make browser" in skipped[0] and "CHROMIUM" in skipped[0], "how to get them"
    expected = {f"{d.name}.html" for d in gallery.documents()} | {f"{m.name}.txt" for m in gallery.sms()}
    written = {p.name for p in out.iterdir()}
    assert expected | {"index.html"} <= written
    assert not [name for name in written if name.endswith(".png")]


def test_root_on_debian_is_the_one_place_it_is_installed(place: Path) -> None:
    """The same lookup as root on Debian runs apt-get (here the fake): the check above would
    see an install attempt."""
    if os.geteuid() != 0 or not tools.may_install_browser():
        pytest.skip("runs as root on Debian only")
    done = _run([sys.executable, "-m", "testsupport.tools", "browser", "--install"], place, drop_root=False)
    assert done.returncode == 0, done.stderr
    assert (place / "apt-get-was-run").read_text().splitlines()[-1].startswith("install -y")
