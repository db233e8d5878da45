"""Stand-ins for what the emulator lacks, and the outbox of messages "sent".

- The model: Bedrock Runtime ``Converse`` is answered locally and deterministically. A
  scenario may register an answer function per function name (or per forced tool name);
  otherwise the answer is built from the forced tool's JSON schema (first enum value, empty
  strings, zeros, nulls where allowed), which is valid input for the caller's validation.
- SMS: AWS End User Messaging SMS (``pinpoint-sms-voice-v2``) ``SendTextMessage`` is accepted
  and recorded (moto does not emulate it).
- The outbox records every message that left the sandbox: SES (v1 and v2) emails, SMS, and SNS
  publishes, with sender, recipients, subject and text, for the report and the tests.
"""

from __future__ import annotations

import email
import email.policy
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sandbox.interceptor import CallRecord

Responder = Callable[[Mapping[str, Any]], Any]


@dataclass(frozen=True)
class ModelCall:
    """One Converse request the stand-in answered."""

    function: str | None
    model_id: str
    tool: str | None
    prompt: str
    answer: Any


def schema_example(schema: Mapping[str, Any]) -> Any:
    """A deterministic value valid against a (flattened) JSON schema."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for combinator in ("anyOf", "oneOf"):
        if combinator in schema:
            options = list(schema[combinator])
            if any(o.get("type") == "null" for o in options):
                return None
            return schema_example(options[0])
    kind = schema.get("type")
    if isinstance(kind, list):
        if "null" in kind:
            return None
        kind = kind[0]
    if "default" in schema:
        return schema["default"]
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: schema_example(props[name]) for name in props}
    if kind == "array":
        count = int(schema.get("minItems", 0))
        return [schema_example(schema.get("items") or {}) for _ in range(count)]
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return False
    if kind == "string":
        return "x" * int(schema.get("minLength", 0))
    return None


@dataclass
class ModelStandIn:
    """Answers Converse with a forced tool use, deterministically."""

    by_function: dict[str, Responder] = field(default_factory=dict)
    by_tool: dict[str, Responder] = field(default_factory=dict)
    calls: list[ModelCall] = field(default_factory=list)

    def __call__(
        self, service: str, operation: str, params: Mapping[str, Any], function: str | None
    ) -> dict[str, Any]:
        tool_config = params.get("toolConfig") or {}
        forced = ((tool_config.get("toolChoice") or {}).get("tool") or {}).get("name")
        tools = {
            t["toolSpec"]["name"]: t["toolSpec"]
            for t in tool_config.get("tools", [])
            if "toolSpec" in t
        }
        prompt = " ".join(
            block.get("text", "")
            for message in params.get("messages", [])
            for block in message.get("content", [])
            if isinstance(block, Mapping)
        )
        responder = (function and self.by_function.get(function)) or (
            forced and self.by_tool.get(forced)
        )
        if responder is not None:
            answer = responder(params)
        elif forced and forced in tools:
            answer = schema_example(tools[forced].get("inputSchema", {}).get("json", {}))
        else:
            answer = None
        self.calls.append(ModelCall(function, str(params.get("modelId")), forced, prompt, answer))
        if forced is None or (answer is None and forced not in tools):
            content: list[dict[str, Any]] = [{"text": "(sandbox model stand-in)"}]
            stop = "end_turn"
        else:
            content = [
                {
                    "toolUse": {
                        "toolUseId": f"tooluse_{uuid.uuid4().hex[:12]}",
                        "name": forced,
                        "input": answer,
                    }
                }
            ]
            stop = "tool_use"
        return {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": stop,
            "usage": {
                "inputTokens": len(prompt) // 4,
                "outputTokens": 20,
                "totalTokens": len(prompt) // 4 + 20,
            },
            "metrics": {"latencyMs": 1},
        }


def sms_stand_in(
    service: str, operation: str, params: Mapping[str, Any], function: str | None
) -> dict[str, Any]:
    """End User Messaging SMS: accept the message (the outbox records it)."""
    return {"MessageId": str(uuid.uuid4())}


@dataclass(frozen=True)
class Message:
    """A message that left the sandbox."""

    channel: str  # email | sms | sns
    function: str | None
    sender: str
    to: tuple[str, ...]
    subject: str
    text: str


@dataclass
class Outbox:
    """Every email, SMS and SNS publish that succeeded."""

    messages: list[Message] = field(default_factory=list)

    def observe(self, record: CallRecord, params: Mapping[str, Any]) -> None:
        """Interceptor listener: keep successful sends."""
        if record.status >= 300:
            return
        key = (record.service, record.operation)
        found: Message | None = None
        if key == ("ses", "SendEmail") and "FromEmailAddress" in params:
            found = _sesv2(record.function, params)
        elif key == ("ses", "SendEmail"):
            message = params.get("Message") or {}
            body = message.get("Body") or {}
            found = Message(
                "email",
                record.function,
                str(params.get("Source", "")),
                tuple((params.get("Destination") or {}).get("ToAddresses", [])),
                str((message.get("Subject") or {}).get("Data", "")),
                str((body.get("Text") or body.get("Html") or {}).get("Data", "")),
            )
        elif key == ("ses", "SendRawEmail"):
            raw = (params.get("RawMessage") or {}).get("Data", b"")
            found = _mime(record.function, raw, params.get("Destinations"))
        elif key == ("sms-voice", "SendTextMessage"):
            found = Message(
                "sms",
                record.function,
                str(params.get("OriginationIdentity", "")),
                (str(params.get("DestinationPhoneNumber", "")),),
                "",
                str(params.get("MessageBody", "")),
            )
        elif key == ("sns", "Publish"):
            found = Message(
                "sns",
                record.function,
                str(params.get("TopicArn") or ""),
                (
                    str(
                        params.get("PhoneNumber")
                        or params.get("TopicArn")
                        or params.get("TargetArn")
                    ),
                ),
                str(params.get("Subject") or ""),
                str(params.get("Message") or ""),
            )
        if found is not None:
            self.messages.append(found)

    def to(self, address: str) -> list[Message]:
        return [m for m in self.messages if address in m.to]


def _sesv2(function: str | None, params: Mapping[str, Any]) -> Message:
    content = params.get("Content") or {}
    destination = params.get("Destination") or {}
    to = tuple(destination.get("ToAddresses", []))
    if "Raw" in content:
        return _mime(function, content["Raw"].get("Data", b""), to)
    simple = content.get("Simple") or {}
    body = simple.get("Body") or {}
    if "Template" in content:
        template = content["Template"]
        return Message(
            "email",
            function,
            str(params.get("FromEmailAddress", "")),
            to,
            f"template {template.get('TemplateName', '')}",
            str(template.get("TemplateData", "")),
        )
    return Message(
        "email",
        function,
        str(params.get("FromEmailAddress", "")),
        to,
        str((simple.get("Subject") or {}).get("Data", "")),
        str((body.get("Text") or body.get("Html") or {}).get("Data", "")),
    )


def _mime(function: str | None, raw: Any, to: Any) -> Message:
    data = raw if isinstance(raw, bytes) else str(raw).encode()
    parsed = email.message_from_bytes(data, policy=email.policy.default)
    part = parsed.get_body(preferencelist=("plain", "html")) if parsed.is_multipart() else parsed
    text = part.get_content() if part is not None else ""
    recipients = tuple(to or ()) or tuple(a.strip() for a in str(parsed.get("To", "")).split(","))
    return Message(
        "email",
        function,
        str(parsed.get("From", "")),
        recipients,
        str(parsed.get("Subject", "")),
        str(text),
    )
