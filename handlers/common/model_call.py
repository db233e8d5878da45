"""One structured Bedrock call: Converse with a single forced tool, the answer validated.

The model never writes free text that code then scrapes. The caller describes the answer as a
pydantic model; its JSON schema becomes the input schema of the one tool the model is forced to
call (``toolChoice: {"tool": {"name": ...}}``), and the tool input is validated with the same
model. A field the schema allows to be null stays None: nothing here fills gaps.

Every outcome is a value. ``ModelAnswer`` carries the validated answer; ``NoValidAnswer`` says
why there is none (no tool use, invalid JSON, schema violation, the service stayed throttled
through the bounded retries, or the day's model-call cap is spent), so the caller falls back to its deterministic path. Only
programming and permission errors (AccessDenied, ValidationException, ...) raise.

Throttling-type errors are retried here with capped exponential backoff and full jitter; the
client from ``aws_clients.bedrock_runtime`` has SDK retries off so the two never multiply.
The model id is an argument: each callsite reads its own from configuration.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from pydantic import ValidationError

from handlers.common import metrics
from handlers.common.aws_clients import bedrock_runtime as bedrock_runtime  # patched by tests
from handlers.common.spend import CapReached

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")

RETRYABLE_ERROR_CODES = frozenset(
    {
        "ThrottlingException",
        "TooManyRequestsException",
        "ServiceUnavailableException",
        "ServiceUnavailable",
        "ModelNotReadyException",
        "InternalServerException",
    }
)
REFUSED_CODE = "AccessDeniedException"
"""Bedrock's answer while model access is not granted in the account and Region."""
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
PROFILE_PREFIXES = ("global.", "us.", "eu.", "apac.", "jp.", "au.")
"""How a cross-Region inference profile id begins (``global.anthropic...``)."""


def foundation_model(model_id: str) -> str:
    """The model id behind a cross-Region inference profile id: the one access is granted for."""
    for prefix in PROFILE_PREFIXES:
        if model_id.startswith(prefix):
            return model_id.removeprefix(prefix)
    return model_id


class ConverseClient(Protocol):
    """The one method of a ``bedrock-runtime`` client this module calls."""

    def converse(self, **kwargs: Any) -> Mapping[str, Any]:
        """Bedrock Converse."""
        ...


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries for throttling: at most ``max_attempts`` calls in all.

    The n-th retry sleeps a uniform random time in ``[0, min(max_delay, base_delay * 2**n))``
    ("full jitter"), so concurrent functions that were throttled together spread out.
    """

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0

    def delay(self, retry_number: int, rng: Callable[[], float]) -> float:
        """Seconds to sleep before retry ``retry_number`` (0-based)."""
        cap = min(self.max_delay, self.base_delay * (2.0**retry_number))
        return float(rng()) * cap


DEFAULT_RETRY = RetryPolicy()


class NoAnswerReason(StrEnum):
    """Why a call produced no usable answer."""

    NO_TOOL_USE = "no_tool_use"
    INVALID_JSON = "invalid_json"
    SCHEMA_VIOLATION = "schema_violation"
    UNAVAILABLE = "unavailable"
    REFUSED = "refused"
    """Bedrock refused the call for access (AccessDeniedException): model access is not granted
    in this account and Region (a fresh account until its Marketplace subscription and, for
    Anthropic, the use-case form). Counted as ``ModelRefused`` so the fallback is never silent."""
    CAPPED = "capped"
    """The system's daily model-call cap is spent (handlers/common/spend.py): the call was not
    made, and was counted there; the caller takes its rules path."""


@dataclass(frozen=True)
class ModelAnswer(Generic[M]):
    """A validated answer.

    Attributes:
        value: The tool input, validated by the caller's pydantic model.
        model_id: The model or inference profile that answered.
        attempts: Calls made, retries included.
        stop_reason: Converse ``stopReason`` (``tool_use`` normally).
        usage: Converse token usage (``inputTokens``, ``outputTokens``, ...).
    """

    value: M
    model_id: str
    attempts: int
    stop_reason: str | None = None
    usage: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NoValidAnswer:
    """No usable answer; the caller takes its deterministic fallback.

    Attributes:
        reason: What went wrong.
        detail: A short human explanation for the log (no prompt text).
        model_id: The model that was asked.
        attempts: Calls made, retries included.
        raw_input: The tool input as received, when there was one (for the log).
    """

    reason: NoAnswerReason
    detail: str
    model_id: str
    attempts: int
    raw_input: Any = None

    @property
    def retryable(self) -> bool:
        """True when asking again later may help (the service was unavailable)."""
        return self.reason is NoAnswerReason.UNAVAILABLE


def _inline_refs(node: Any, defs: Mapping[str, Any], depth: int = 0) -> Any:
    """Replace ``$ref`` to ``#/$defs/...`` by the definition, so the tool schema is flat."""
    if depth > 32:
        raise ValueError("output model is recursive; the tool schema must be finite")
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = dict(defs[ref.removeprefix("#/$defs/")])
            target.update({k: v for k, v in node.items() if k != "$ref"})
            return _inline_refs(target, defs, depth + 1)
        return {k: _inline_refs(v, defs, depth) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline_refs(item, defs, depth) for item in node]
    return node


def tool_schema(output_model: type[BaseModel]) -> dict[str, Any]:
    """The tool's input JSON schema: the model's ``model_json_schema()`` with refs inlined."""
    schema = output_model.model_json_schema()
    flat: dict[str, Any] = _inline_refs(schema, schema.get("$defs", {}))
    if flat.get("type") != "object":
        raise ValueError("the output model must serialise to a JSON object schema")
    return flat


def build_request(
    *,
    model_id: str,
    prompt: str,
    output_model: type[BaseModel],
    tool_name: str,
    tool_description: str,
    system: str | None = None,
    max_tokens: int = 1024,
    temperature: float = 0.0,
) -> dict[str, Any]:
    """The Converse request: one user message, one tool, that tool forced."""
    if not _TOOL_NAME.match(tool_name):
        raise ValueError(f"tool name {tool_name!r} must match {_TOOL_NAME.pattern}")
    request: dict[str, Any] = {
        "modelId": model_id,
        "messages": [{"role": "user", "content": [{"text": prompt}]}],
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": tool_name,
                        "description": tool_description,
                        "inputSchema": {"json": tool_schema(output_model)},
                    }
                }
            ],
            "toolChoice": {"tool": {"name": tool_name}},
        },
        "inferenceConfig": {"maxTokens": max_tokens, "temperature": temperature},
    }
    if system:
        request["system"] = [{"text": system}]
    return request


def error_code(err: Exception) -> str | None:
    """The AWS error code of a botocore ``ClientError`` (None for anything else)."""
    response = getattr(err, "response", None)
    if isinstance(response, Mapping):
        code = response.get("Error", {}).get("Code")
        return None if code is None else str(code)
    return None


def _tool_input(response: Mapping[str, Any], tool_name: str) -> tuple[bool, Any]:
    content = ((response.get("output") or {}).get("message") or {}).get("content") or []
    for block in content:
        use = block.get("toolUse") if isinstance(block, Mapping) else None
        if isinstance(use, Mapping) and use.get("name") == tool_name:
            return True, use.get("input")
    return False, None


def call_structured(
    *,
    model_id: str,
    prompt: str,
    output_model: type[M],
    tool_name: str,
    tool_description: str,
    system: str | None = None,
    client: ConverseClient | None = None,
    max_tokens: int = 1024,
    temperature: float = 0.0,
    retry: RetryPolicy = DEFAULT_RETRY,
    sleep: Callable[[float], None] | None = None,
    rng: Callable[[], float] = random.random,
) -> ModelAnswer[M] | NoValidAnswer:
    """Ask ``model_id`` to answer by calling ``tool_name`` with an ``output_model`` as input.

    ``client`` defaults to the cached ``bedrock-runtime`` client of the function's region.
    ``sleep`` and ``rng`` are injectable so tests neither wait nor depend on chance; without
    ``sleep``, ``time.sleep`` is looked up when a retry waits (so a patched one is honoured).
    """
    request = build_request(
        model_id=model_id,
        prompt=prompt,
        output_model=output_model,
        tool_name=tool_name,
        tool_description=tool_description,
        system=system,
        max_tokens=max_tokens,
        temperature=temperature,
    )
    if client is None:
        client = bedrock_runtime()
    attempts = 0
    while True:
        attempts += 1
        try:
            response = client.converse(**request)
            break
        except CapReached as err:
            return NoValidAnswer(NoAnswerReason.CAPPED, str(err), model_id, attempts - 1)
        except Exception as err:
            code = error_code(err)
            if code == REFUSED_CODE:

                metrics.degraded(metrics.MODEL_REFUSED)
                return NoValidAnswer(
                    NoAnswerReason.REFUSED,
                    "AccessDeniedException: model access not granted (make preflight names the fix)",
                    model_id,
                    attempts,
                )
            if code not in RETRYABLE_ERROR_CODES:
                raise
            if attempts >= retry.max_attempts:
                return NoValidAnswer(
                    NoAnswerReason.UNAVAILABLE,
                    f"{code} after {attempts} attempts",
                    model_id,
                    attempts,
                )
            (sleep or time.sleep)(retry.delay(attempts - 1, rng))

    found, raw = _tool_input(response, tool_name)
    if not found:
        return NoValidAnswer(
            NoAnswerReason.NO_TOOL_USE,
            f"no {tool_name} tool use (stopReason {response.get('stopReason')})",
            model_id,
            attempts,
        )
    value = raw
    if isinstance(value, str | bytes):
        try:
            value = json.loads(value)
        except ValueError:
            return NoValidAnswer(
                NoAnswerReason.INVALID_JSON, "tool input is not JSON", model_id, attempts, raw
            )
    if not isinstance(value, dict):
        return NoValidAnswer(
            NoAnswerReason.INVALID_JSON, "tool input is not a JSON object", model_id, attempts, raw
        )
    try:
        validated = output_model.model_validate(value)
    except ValidationError as err:
        fields = sorted({".".join(str(p) for p in e["loc"]) or "<root>" for e in err.errors()})
        return NoValidAnswer(
            NoAnswerReason.SCHEMA_VIOLATION,
            f"invalid fields: {', '.join(fields)}",
            model_id,
            attempts,
            raw,
        )
    return ModelAnswer(
        value=validated,
        model_id=model_id,
        attempts=attempts,
        stop_reason=response.get("stopReason"),
        usage=dict(response.get("usage") or {}),
    )
