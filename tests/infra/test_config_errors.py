"""Config errors as a deployer reads them: one line each, with file, line and column, the key,
what is allowed in words, a near key for a typo, and never the value given."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from components import config_source
from components.config import (
    PATTERN_WORDS,
    ConfigError,
    StackConfig,
    _model_in,
    from_pulumi_config,
    parse,
)
from components.offline import engine, plan

SECRET = "shpss_0123456789abcdef0123456789abcdef"
DEV = (engine.ROOT / "Pulumi.dev.yaml").read_text()


def _stack(tmp_path: Path, text: str, name: str = "t") -> Path:
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(text)
    return path


def _values(path: Path) -> dict[str, str]:
    raw = config_source.load(path)
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in raw.items()}


def _error(path: Path) -> ConfigError:
    with pytest.raises(ConfigError) as err:
        from_pulumi_config(_values(path), path)
    return err.value


def test_a_secret_pasted_under_a_wrong_key_is_named_not_echoed(tmp_path: Path) -> None:
    text = DEV.replace(
        "      storeDomain: example-shop.myshopify.com\n",
        f"      storeDomain: example-shop.myshopify.com\n      storeKey: {SECRET}\n",
    )
    path = _stack(tmp_path, text)
    err = _error(path)
    assert SECRET not in str(err) and "shpss_" not in str(err)
    line = text.splitlines().index(f"      storeKey: {SECRET}") + 1
    assert err.lines == (
        f"Pulumi.t.yaml:{line}:7: crm-automations:systems.upsr.storeKey: unknown key; secrets are "
        "not stack config: `make secrets STACK=<stack>` stores them (its value is not shown)",
    )


def _leaves(value: Any, loc: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, (*loc, k))]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, (*loc, i))]
    return [loc]


def test_no_key_echoes_a_secret_put_in_its_value() -> None:
    raw = {k.split(":", 1)[1]: v for k, v in yaml.safe_load(DEV)["config"].items() if k.startswith("crm-automations:")}
    refused = 0
    for loc in _leaves(raw):
        changed = json.loads(json.dumps(raw))
        holder = changed
        for part in loc[:-1]:
            holder = holder[part]
        holder[loc[-1]] = SECRET
        try:
            parse(changed)
        except ConfigError as err:
            refused += 1
            assert SECRET not in str(err), loc
            assert all(line.startswith("crm-automations:") for line in err.lines)
    assert refused > 60  # nearly every key refuses it; the check saw real messages


def test_a_typo_gets_the_near_key_and_its_position(tmp_path: Path) -> None:
    text = DEV.replace("      blockCap: 50", "      blockcap: 50").replace(
        "  crm-automations:alertEmail:", "  crm-automations:alertEmial:"
    )
    err = _error(_stack(tmp_path, text))
    joined = "\n".join(err.lines)
    assert "crm-automations:systems.dm.blockcap: unknown key; did you mean blockCap?" in joined
    assert "crm-automations:alertEmial: unknown key; did you mean alertEmail?" in joined
    row = text.splitlines().index("      blockcap: 50") + 1
    assert f"Pulumi.t.yaml:{row}:7: crm-automations:systems.dm.blockcap" in joined


def test_a_wrong_value_points_at_the_value(tmp_path: Path) -> None:
    text = DEV.replace("      phoneRegion: US", "      phoneRegion: usa")
    err = _error(_stack(tmp_path, text))
    row = text.splitlines().index("      phoneRegion: usa") + 1
    assert err.lines == (
        f"Pulumi.t.yaml:{row}:20: crm-automations:systems.dm.phoneRegion: should be a two-letter "
        "ISO country code in capitals such as GB or US",
    )


def _patterns(model: type[BaseModel], seen: set[type[BaseModel]]) -> set[str]:
    found: set[str] = set()
    if model in seen:
        return found
    seen.add(model)
    for field in model.model_fields.values():
        for meta in field.metadata:
            pattern = getattr(meta, "pattern", None)
            if isinstance(pattern, str):
                found.add(pattern)
        inner = _model_in(field.annotation)
        if inner is not None:
            found |= _patterns(inner, seen)
    return found


def test_every_pattern_of_the_schema_is_said_in_words() -> None:
    patterns = _patterns(StackConfig, set())
    assert len(patterns) >= 6
    assert patterns <= set(PATTERN_WORDS), patterns - set(PATTERN_WORDS)


@pytest.mark.parametrize(
    ("key", "value"),
    [("storeDomain", "shop.example.com"), ("smsOriginationIdentity", "+447700900000")],
)
def test_pattern_messages_show_no_regex(key: str, value: str) -> None:
    raw = {k.split(":", 1)[1]: v for k, v in yaml.safe_load(DEV)["config"].items() if k.startswith("crm-automations:")}
    raw["systems"]["upsr"][key] = value
    with pytest.raises(ConfigError) as err:
        parse(raw)
    assert not re.search(r"[\^$\\\[]", str(err.value)), str(err.value)


def test_a_yaml_syntax_error_is_one_line(tmp_path: Path) -> None:
    path = _stack(tmp_path, "config:\n  crm-automations:prefix: dev\n  crm-automations:systems: {dm: [1,\n")
    with pytest.raises(ConfigError) as err:
        config_source.load(path)
    assert len(err.value.lines) == 1
    assert err.value.lines[0].startswith("Pulumi.t.yaml:4:1: YAML syntax error: ")


def test_a_missing_stack_file_is_one_line(tmp_path: Path) -> None:
    _stack(tmp_path, DEV, "dev")
    with pytest.raises(ConfigError) as err:
        config_source.load(tmp_path / "Pulumi.staging.yaml")
    assert err.value.lines == ("Pulumi.staging.yaml: no such stack file (stacks here: dev)",)


def test_make_plan_prints_the_line_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _stack(tmp_path, "config:\n  crm-automations:prefix: [dev\n", "broken")
    monkeypatch.setattr(engine, "ROOT", tmp_path)
    assert plan.main(["--stack", "broken"]) == 2
    assert plan.main(["--stack", "absent"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("Pulumi.broken.yaml:3:1: YAML syntax error")
    assert err[1] == "Pulumi.absent.yaml: no such stack file (stacks here: broken)"
    assert len(err) == 2
