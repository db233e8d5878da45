"""Settings records: one declaration read by the infra and the handler, no defaults."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from handlers.common import settings
from handlers.common.settings import MissingSetting, Settings


@dataclass(frozen=True)
class ExampleSettings(Settings):
    requests_table: str
    batch_cap: int
    link_score: float
    tracing: bool
    intake_secret_id: str | None


ENV = {
    "REQUESTS_TABLE": "dev-rrs-requests",
    "BATCH_CAP": "50",
    "LINK_SCORE": "0.9",
    "TRACING": "false",
    "INTAKE_SECRET_ID": "dev-ler-intake",
}


def test_fields_are_read_and_typed() -> None:
    record = ExampleSettings.from_environ(ENV)
    assert record == ExampleSettings("dev-rrs-requests", 50, 0.9, False, "dev-ler-intake")
    assert ExampleSettings.variables() == tuple(ENV)


@pytest.mark.parametrize("name", ["REQUESTS_TABLE", "BATCH_CAP", "LINK_SCORE", "TRACING"])
def test_a_missing_variable_is_named_not_defaulted(name: str) -> None:
    env = {k: v for k, v in ENV.items() if k != name}
    with pytest.raises(MissingSetting, match=name):
        ExampleSettings.from_environ(env)


def test_an_optional_variable_may_be_absent() -> None:
    env = {k: v for k, v in ENV.items() if k != "INTAKE_SECRET_ID"}
    assert ExampleSettings.from_environ(env).intake_secret_id is None


@pytest.mark.parametrize(
    ("name", "value", "what"),
    [
        ("BATCH_CAP", "fifty", "integer"),
        ("LINK_SCORE", "high", "number"),
        ("TRACING", "on?", "boolean"),
    ],
)
def test_a_malformed_variable_is_named(name: str, value: str, what: str) -> None:
    with pytest.raises(MissingSetting, match=f"{name} is not .*{what}"):
        ExampleSettings.from_environ({**ENV, name: value})


def test_the_infra_side_renders_the_same_variables() -> None:
    values = {
        "requests_table": "dev-rrs-requests",
        "batch_cap": 50,
        "link_score": 0.9,
        "tracing": False,
        "intake_secret_id": None,
        "unrelated": "another function's",
    }
    env = ExampleSettings.environment(values)
    assert env == {k: v for k, v in ENV.items() if k != "INTAKE_SECRET_ID"}
    # What the infra writes, the handler reads back.
    assert ExampleSettings.from_environ(env).batch_cap == 50


def test_the_infra_side_refuses_a_missing_field() -> None:
    with pytest.raises(KeyError, match="batch_cap"):
        ExampleSettings.environment({"requests_table": "t", "link_score": 0.9, "tracing": True})
    with pytest.raises(KeyError, match="required"):
        ExampleSettings.environment(
            {
                "requests_table": None,
                "batch_cap": 1,
                "link_score": 0.9,
                "tracing": True,
                "intake_secret_id": None,
            }
        )


def test_current_reads_once_until_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    settings.reset()
    first = settings.current(ExampleSettings)
    monkeypatch.setenv("BATCH_CAP", "7")
    assert settings.current(ExampleSettings) is first
    settings.reset()
    assert settings.current(ExampleSettings).batch_cap == 7
    settings.reset()


@dataclass(frozen=True)
class KeyedSettings(Settings):
    webhook_secret_id: str
    crm_read_secret: str


@pytest.mark.parametrize("name", ["WEBHOOK_SECRET_ID", "CRM_READ_SECRET"])
def test_a_secret_value_pasted_in_place_of_its_name_is_refused(name: str) -> None:
    env = {"WEBHOOK_SECRET_ID": "dev-rrs-webhook-secret", "CRM_READ_SECRET": "dev-dm-crm-read"}
    assert KeyedSettings.from_environ(env).crm_read_secret == "dev-dm-crm-read"
    with pytest.raises(MissingSetting, match=f"{name} must hold a secret name or ARN"):
        KeyedSettings.from_environ({**env, name: '{"token": "pat-na1-123"}'})
