"""Pulumi.yaml's ``template:`` section: `pulumi new` prompts for exactly the keys the stack config
requires, with the config model's own descriptions, and the answers it defaults to make a stack
that passes validation.

Pulumi project file reference, ``template.config`` (description, default, secret per key):
https://www.pulumi.com/docs/iac/concepts/projects/project-file/ and "Creating Pulumi templates"
(https://www.pulumi.com/docs/iac/guides/building-extending/creating-templates/).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from components.config import PROJECT, StackConfig, from_pulumi_config

ROOT = Path(__file__).resolve().parents[2]


def _template() -> dict[str, Any]:
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())
    assert project["name"] == PROJECT  # the config namespace: a renamed project loses its keys
    template: dict[str, Any] = project["template"]
    return template


def _required() -> dict[str, str]:
    """Required top-level keys of the config model (camelCase) and their descriptions."""
    return {
        field.alias or name: field.description or ""
        for name, field in StackConfig.model_fields.items()
        if field.is_required()
    }


def _plain(text: str) -> str:
    """A docstring as a prompt shows it: ``code`` as `code`, one line."""
    return re.sub(r"\s+", " ", text.replace("``", "`")).strip()


def test_template_asks_for_exactly_the_required_keys() -> None:
    config = _template()["config"]
    namespaced = {key.partition(":")[2]: spec for key, spec in config.items()}
    assert all(key.startswith(f"{PROJECT}:") for key in config), sorted(config)
    assert set(namespaced) == set(_required())


def test_each_prompt_carries_the_models_description() -> None:
    config = _template()["config"]
    for key, description in _required().items():
        assert description, f"{key} has no docstring in components/config.py"
        assert _plain(config[f"{PROJECT}:{key}"]["description"]) == _plain(description), key


def test_the_defaults_and_one_answer_make_a_valid_stack() -> None:
    config = _template()["config"]
    answers = {key: str(spec["default"]) for key, spec in config.items() if "default" in spec}
    unanswered = {key for key in config if key not in answers}
    assert unanswered == {f"{PROJECT}:alertEmail"}  # no sensible default for an address
    answers[f"{PROJECT}:alertEmail"] = "ops@example.com"
    parsed = from_pulumi_config(answers)
    assert parsed.prefix == "dev" and parsed.environment == "dev"
    assert parsed.systems.enabled() == {}  # systems are added afterwards, one section each
