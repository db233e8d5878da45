"""Structured model calls: forced tool, validated answer, nulls kept, bounded retries."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError
from botocore.stub import Stubber
from pydantic import BaseModel, ConfigDict, Field

from handlers.common.model_call import (
    ModelAnswer,
    NoAnswerReason,
    NoValidAnswer,
    RetryPolicy,
    build_request,
    call_structured,
    tool_schema,
)
from testsupport.common import FakeBedrockClient

MODEL = "global.anthropic.claude-haiku-4-5-20251001-v1:0"


class Address(BaseModel):
    model_config = ConfigDict(extra="forbid")
    country: str = Field(description="ISO 3166-1 alpha-2")
    city: str | None


class Resolution(BaseModel):
    model_config = ConfigDict(extra="forbid")
    company: str | None = Field(description="the company name, null when unknown")
    confidence: float = Field(ge=0, le=1)
    address: Address


def ask(client: Any, **overrides: Any) -> ModelAnswer[Resolution] | NoValidAnswer:
    sleeps: list[float] = []
    args: dict[str, Any] = {
        "model_id": MODEL,
        "prompt": "Resolve: ACME ltd, London",
        "output_model": Resolution,
        "tool_name": "record_resolution",
        "tool_description": "Record the resolved fields.",
        "client": client,
        "sleep": sleeps.append,
        "rng": lambda: 0.5,
    }
    args.update(overrides)
    result = call_structured(**args)
    ask.sleeps = sleeps  # type: ignore[attr-defined]
    return result


GOOD = {"company": "ACME Ltd", "confidence": 0.9, "address": {"country": "GB", "city": "London"}}


def test_valid_answer_is_typed() -> None:
    fake = FakeBedrockClient([GOOD])
    result = ask(fake)
    assert isinstance(result, ModelAnswer)
    assert isinstance(result.value, Resolution)
    assert result.value.address.city == "London"
    assert (result.attempts, result.model_id, result.stop_reason) == (1, MODEL, "tool_use")


def test_request_forces_the_one_tool_with_the_model_schema() -> None:
    fake = FakeBedrockClient([GOOD])
    ask(fake, system="You resolve company names.")
    (call,) = fake.calls
    assert call["modelId"] == MODEL
    assert call["toolConfig"]["toolChoice"] == {"tool": {"name": "record_resolution"}}
    (tool,) = call["toolConfig"]["tools"]
    schema = tool["toolSpec"]["inputSchema"]["json"]
    assert tool["toolSpec"]["name"] == "record_resolution"
    assert set(schema["required"]) == {"company", "confidence", "address"}
    assert schema["properties"]["company"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert schema["properties"]["address"]["properties"]["country"]["type"] == "string"
    assert "$defs" not in json.dumps(schema) and "$ref" not in json.dumps(schema)
    assert call["system"] == [{"text": "You resolve company names."}]
    assert call["inferenceConfig"]["temperature"] == 0.0


def test_null_allowed_fields_stay_null() -> None:
    answer = {"company": None, "confidence": 0.2, "address": {"country": "GB", "city": None}}
    result = ask(FakeBedrockClient([answer]))
    assert isinstance(result, ModelAnswer)
    assert result.value.company is None
    assert result.value.address.city is None
    assert result.value.model_dump() == answer


def test_null_in_a_required_field_is_a_schema_violation() -> None:
    answer = {"company": "ACME", "confidence": 0.5, "address": {"country": None, "city": None}}
    result = ask(FakeBedrockClient([answer]))
    assert isinstance(result, NoValidAnswer)
    assert result.reason is NoAnswerReason.SCHEMA_VIOLATION
    assert "address.country" in result.detail
    assert result.raw_input == answer


@pytest.mark.parametrize(
    "answer",
    [
        {"company": "ACME", "confidence": 7, "address": {"country": "GB", "city": None}},
        {"company": "ACME", "confidence": 0.5},
        {
            "company": "ACME",
            "confidence": 0.5,
            "address": {"country": "GB", "city": None},
            "extra": 1,
        },
    ],
)
def test_schema_violations(answer: dict[str, Any]) -> None:
    result = ask(FakeBedrockClient([answer]))
    assert isinstance(result, NoValidAnswer) and result.reason is NoAnswerReason.SCHEMA_VIOLATION
    assert not result.retryable


@pytest.mark.parametrize("answer", ['{"company": "ACME", ', "[1, 2]", 42])
def test_invalid_json(answer: Any) -> None:
    result = ask(FakeBedrockClient([answer]))
    assert isinstance(result, NoValidAnswer) and result.reason is NoAnswerReason.INVALID_JSON


def test_json_string_input_is_accepted() -> None:
    result = ask(FakeBedrockClient([json.dumps(GOOD)]))
    assert isinstance(result, ModelAnswer) and result.value.company == "ACME Ltd"


def test_no_tool_use() -> None:
    result = ask(FakeBedrockClient().add_text_answer("I think it is ACME."))
    assert isinstance(result, NoValidAnswer) and result.reason is NoAnswerReason.NO_TOOL_USE


def test_another_tool_name_is_no_tool_use() -> None:
    result = ask(FakeBedrockClient().add_tool_answer(GOOD, tool_name="something_else"))
    assert isinstance(result, NoValidAnswer) and result.reason is NoAnswerReason.NO_TOOL_USE


def test_throttling_retried_then_succeeds() -> None:
    fake = FakeBedrockClient().throttle(2).add_error("ModelNotReadyException").add_tool_answer(GOOD)
    result = ask(fake, retry=RetryPolicy(max_attempts=4, base_delay=1.0, max_delay=3.0))
    assert isinstance(result, ModelAnswer)
    assert result.attempts == 4
    assert len(fake.calls) == 4
    # full jitter with rng()=0.5: 0.5*min(3, 1*2**n) for n = 0, 1, 2
    assert ask.sleeps == [0.5, 1.0, 1.5]  # type: ignore[attr-defined]


def test_throttling_is_bounded() -> None:
    fake = FakeBedrockClient().throttle(3, code="ServiceUnavailableException").add_tool_answer(GOOD)
    result = ask(fake, retry=RetryPolicy(max_attempts=3))
    assert isinstance(result, NoValidAnswer)
    assert result.reason is NoAnswerReason.UNAVAILABLE and result.retryable
    assert result.attempts == 3 and len(fake.calls) == 3
    assert fake.pending == 1


def test_other_errors_raise() -> None:
    with pytest.raises(ClientError):
        ask(FakeBedrockClient().add_error("ValidationException"))


def test_a_refused_model_is_a_counted_fallback_not_silent(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh account's first Anthropic call: AccessDeniedException. The caller's rules decide
    (no answer, not retryable), and ModelRefused is counted for the system (EMF)."""
    from handlers.common.metrics import MODEL_REFUSED, emf_metrics

    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "rrs-sender")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "crm/dev")
    fake = FakeBedrockClient().add_error("AccessDeniedException")
    result = ask(fake)
    assert isinstance(result, NoValidAnswer)
    assert result.reason is NoAnswerReason.REFUSED and not result.retryable
    assert len(fake.calls) == 1  # asking again cannot help
    counted = [m for line in capsys.readouterr().out.splitlines() for m in emf_metrics(line)]
    assert counted == [
        ("crm/dev", MODEL_REFUSED, 1.0, {"service": "rrs", "function": "rrs-sender"}),
        # The one series the system's degraded alarm watches, whatever the kind.
        ("crm/dev", "Degraded", 1.0, {"service": "rrs"}),
    ]


def test_fake_with_empty_script_fails_loudly() -> None:
    with pytest.raises(AssertionError):
        ask(FakeBedrockClient())


def test_against_a_real_botocore_client_with_stubber() -> None:
    """The same code path against botocore's own request validation and error parsing."""
    import boto3

    client = boto3.client("bedrock-runtime", region_name="eu-west-2")
    request = build_request(
        model_id=MODEL,
        prompt="Resolve: ACME ltd, London",
        output_model=Resolution,
        tool_name="record_resolution",
        tool_description="Record the resolved fields.",
    )
    response = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": "t1", "name": "record_resolution", "input": GOOD}}
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 1},
    }
    with Stubber(client) as stub:
        stub.add_client_error(
            "converse", service_error_code="ThrottlingException", http_status_code=429
        )
        stub.add_response("converse", response, request)
        result = ask(client)
        stub.assert_no_pending_responses()
    assert isinstance(result, ModelAnswer) and result.attempts == 2
    assert result.usage["outputTokens"] == 5


def test_tool_schema_rejects_non_object_models() -> None:
    from pydantic import RootModel

    with pytest.raises(ValueError):
        tool_schema(RootModel[list[int]])


def test_bad_tool_name_refused() -> None:
    with pytest.raises(ValueError):
        ask(FakeBedrockClient([GOOD]), tool_name="has spaces")
