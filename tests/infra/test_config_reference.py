"""The README's configuration reference is generated from the schema and kept current."""

from __future__ import annotations

from components.config import StackConfig
from components.config_reference import README, render, rows


def test_every_config_key_is_documented() -> None:
    undocumented = [key for key, _, _, doc in rows(StackConfig, "") if not doc.strip()]
    assert undocumented == []


def test_readme_reference_is_current() -> None:
    assert render() in README.read_text(), (
        "README.md's config reference is stale: run `make docs`"
    )
