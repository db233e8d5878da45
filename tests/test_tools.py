"""The one lookup for the programs tests and ``make demo`` run (testsupport/tools.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testsupport import tools


def _program(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def nowhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No browser variable, no usual location, an empty PATH: each test adds what it finds."""
    for name in tools.BROWSER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(tools, "BROWSER_LOCATIONS", (str(tmp_path / "usual" / "chromium"),))
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    return tmp_path


def test_the_browser_is_taken_from_the_variables_then_the_usual_places_then_path(
    nowhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(tools.ToolMissing, match="no Chromium or Chrome found: install"):
        tools.browser()
    on_path = _program(nowhere / "path", "google-chrome")
    assert tools.browser() == str(on_path)
    usual = _program(nowhere / "usual", "chromium")
    assert tools.browser() == str(usual)
    chosen = _program(nowhere / "chosen", "my chrome")
    monkeypatch.setenv("CHROMIUM", str(chosen))
    assert tools.browser() == str(chosen)
    assert tools.browsers_installed() == [str(usual), str(on_path)]


def test_a_variable_naming_no_browser_is_an_error_that_does_not_echo_it(
    nowhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _program(nowhere / "usual", "chromium")
    monkeypatch.setenv("CHROME", str(nowhere / "secret-looking-value"))
    with pytest.raises(tools.ToolMissing) as missing:
        tools.browser()
    assert str(missing.value).startswith("CHROME names no runnable file")
    assert "secret-looking-value" not in str(missing.value)


def test_uv_is_the_one_on_path_else_the_one_make_install_bootstrapped(
    nowhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tools, "BOOTSTRAPPED_UV", nowhere / ".tools" / "uv" / "bin" / "uv")
    with pytest.raises(tools.ToolMissing, match="run `make install`"):
        tools.uv()
    bootstrapped = _program(nowhere / ".tools" / "uv" / "bin", "uv")
    assert tools.uv() == str(bootstrapped)
    on_path = _program(nowhere / "path", "uv")
    assert tools.uv() == str(on_path)


def test_the_makefile_bootstraps_uv_where_the_lookup_finds_it() -> None:
    makefile = (tools.ROOT / "Makefile").read_text()
    assert "UV_HOME := .tools/uv" in makefile and "$(UV_HOME)/bin/uv:" in makefile
    assert tools.BOOTSTRAPPED_UV == tools.ROOT / ".tools" / "uv" / "bin" / "uv"


@pytest.mark.parametrize(("value", "strict"), [("true", True), ("1", True), ("", False), ("false", False)])
def test_ci_is_strict(monkeypatch: pytest.MonkeyPatch, value: str, strict: bool) -> None:
    monkeypatch.setenv("CI", value)
    assert tools.in_ci() is strict
