"""Stack config: both stacks validate; a bad value names its key and declares nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.config import ConfigError, from_pulumi_config, parse
from components.offline.engine import stack_config_values


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_stack_files_validate(stack: str) -> None:
    config = from_pulumi_config(stack_config_values(stack))
    assert config.prefix == stack
    assert (config.environment == "prod") is (stack == "prod")


def _raw(**changes: object) -> dict[str, Any]:
    values = stack_config_values("dev")
    raw: dict[str, Any] = {
        k.split(":", 1)[1]: json.loads(v) if v[:1] in "{[0123456789" else v
        for k, v in values.items()
        if k.startswith("crm-automations:")
    }
    raw.update(changes)
    return raw


def test_bad_prefix_names_the_key() -> None:
    with pytest.raises(ConfigError) as err:
        parse(_raw(prefix="Dev_Stack"))
    assert "crm-automations:prefix" in str(err.value)
    assert "Dev_Stack" not in str(err.value)  # a value is never echoed


def test_unknown_key_is_refused_by_name() -> None:
    raw = _raw()
    raw["systems"]["dm"]["blockcap"] = 10
    with pytest.raises(ConfigError) as err:
        parse(raw)
    assert "crm-automations:systems.dm.blockcap" in str(err.value)


def test_bad_region_and_email_each_named() -> None:
    raw = _raw(alertEmail="not-an-address")
    raw["systems"]["ler"]["region"] = "london"
    with pytest.raises(ConfigError) as err:
        parse(raw)
    message = str(err.value)
    assert "crm-automations:alertEmail" in message
    assert "crm-automations:systems.ler.region" in message


def test_thresholds_must_be_ordered() -> None:
    raw = _raw()
    raw["systems"]["dm"]["thresholds"] = {"automatic": 3, "propose": 5}
    with pytest.raises(ConfigError, match=r"systems\.dm\.thresholds"):
        parse(raw)


def test_bad_schedule_expression_named() -> None:
    raw = _raw()
    raw["systems"]["ler"]["retrySchedule"] = "every 15 minutes"
    with pytest.raises(ConfigError, match=r"systems\.ler\.retrySchedule"):
        parse(raw)


def test_missing_required_key_named() -> None:
    raw = _raw()
    del raw["alertEmail"]
    with pytest.raises(ConfigError, match="crm-automations:alertEmail"):
        parse(raw)


def test_model_choice_uses_heavy_only_when_flagged() -> None:
    raw = _raw()
    raw["systems"]["ler"]["dedupeModel"]["useHeavy"] = True
    config = parse(raw)
    assert config.systems.ler is not None
    assert config.systems.ler.dedupe_model.active == config.systems.ler.dedupe_model.heavy_model_id
    assert config.systems.ler.normalize_model.granted == (
        config.systems.ler.normalize_model.model_id,
    )


def test_program_declares_nothing_on_bad_config() -> None:
    from components.offline.engine import run

    with pytest.raises(ConfigError, match="crm-automations:monthlyBudgetUsd"):
        run("dev", {"monthlyBudgetUsd": -5})


def test_an_unpublished_hubspot_version_names_the_key() -> None:
    with pytest.raises(ConfigError) as err:
        parse(_raw(hubspotApiVersion="2025-13"))
    assert "crm-automations:hubspotApiVersion" in str(err.value)
    assert "2026-09" in str(err.value)  # the published versions are listed
    assert parse(_raw(hubspotApiVersion="2026-03")).hubspot_api_version == "2026-03"


def test_ls_report_mail_needs_both_sender_and_recipient() -> None:
    raw = _raw()
    del raw["systems"]["ls"]["reportRecipient"]
    with pytest.raises(ConfigError, match=r"systems\.ls") as err:
        parse(raw)
    assert "senderEmail and reportRecipient" in str(err.value)
    assert "crm-bot@example.com" not in str(err.value)
    raw["systems"]["ls"]["reportSchedule"] = "weekly"
    del raw["systems"]["ls"]["senderEmail"]
    with pytest.raises(ConfigError, match=r"systems\.ls\.reportSchedule"):
        parse(raw)


def test_prod_refuses_paused_queue_triggers_by_key() -> None:
    with pytest.raises(ConfigError) as err:
        parse(_raw(environment="prod", queueTriggers="paused"))
    assert "crm-automations:queueTriggers" in str(err.value)
    assert parse(_raw(queueTriggers="paused")).queue_triggers == "paused"  # dev may


def test_secret_store_is_one_of_two() -> None:
    with pytest.raises(ConfigError) as err:
        parse(_raw(secretStore="vault"))
    assert "crm-automations:secretStore" in str(err.value)
