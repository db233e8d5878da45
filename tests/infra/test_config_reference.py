"""The configuration reference is generated from the schema (tests/infra/test_docs.py keeps
docs/configuration.md current)."""

from __future__ import annotations

from components.config import StackConfig
from components.config_reference import rows


def test_every_config_key_is_documented() -> None:
    undocumented = [key for key, _, _, doc in rows(StackConfig, "") if not doc.strip()]
    assert undocumented == []

