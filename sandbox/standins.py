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
import io
import json
import urllib.error
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.message import Message as Headers
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from handlers.lead_enricher.http_json import HttpAnswer
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
    refused: set[str] = field(default_factory=set)
    """Model ids answered as Bedrock answers a model without access in the account: HTTP 403
    ``AccessDeniedException`` (Bedrock User Guide, "Troubleshooting Amazon Bedrock API error
    codes": https://docs.aws.amazon.com/bedrock/latest/userguide/troubleshooting-api-error-codes.html)."""

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
        if str(params.get("modelId")) in self.refused:
            self.calls.append(ModelCall(function, str(params.get("modelId")), forced, prompt, None))
            return {
                "Error": {
                    "Code": "AccessDeniedException",
                    "Message": "You don't have access to the model with the specified model ID.",
                },
                "ResponseMetadata": {"HTTPStatusCode": 403, "RequestId": str(uuid.uuid4())},
            }
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
    html: str = ""
    """An email's HTML part, when it has one (``make demo`` writes it out)."""


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
                str((body.get("Html") or {}).get("Data", "")),
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
        str((body.get("Html") or {}).get("Data", "")),
    )


def _mime(function: str | None, raw: Any, to: Any) -> Message:
    data = raw if isinstance(raw, bytes) else str(raw).encode()
    parsed = email.message_from_bytes(data, policy=email.policy.default)
    part = parsed.get_body(preferencelist=("plain", "html")) if parsed.is_multipart() else parsed
    text = part.get_content() if part is not None else ""
    html_part = parsed.get_body(preferencelist=("html",)) if parsed.is_multipart() else None
    html = html_part.get_content() if html_part is not None else ""
    recipients = tuple(to or ()) or tuple(a.strip() for a in str(parsed.get("To", "")).split(","))
    return Message(
        "email",
        function,
        str(parsed.get("From", "")),
        recipients,
        str(parsed.get("Subject", "")),
        str(text),
        str(html),
    )


# External services as the providers document them ------------------------------------------


@dataclass
class FirmographicsStandIn:
    """People Data Labs and Apollo as documented, answering the real adapters' HTTP calls.

    A transport for ``handlers.lead_enricher.providers.factory.make_provider``: it answers
    ``GET /v5/company/enrich?website=`` with a PDL company record (fields at the top level,
    ``status`` 200, ``likelihood``; 404 ``not_found`` for an unknown website) and
    ``GET /api/v1/organizations/enrich?domain=`` with ``{"organization": {...}}`` (200 with no
    organization for an unknown domain). A call without the expected ``X-Api-Key`` gets 401,
    as both providers answer a missing or wrong key. ``companies`` maps a domain to a neutral
    profile: name, industry, employees, city, region, country, founded, linkedin slug.
    """

    key: str
    companies: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def __call__(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 10.0,
    ) -> Any:
        parts = urlsplit(url)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        self.calls.append(f"{method} {parts.path}?{parts.query}")
        rate = {"x-ratelimit-remaining": '{"minute": 99}', "x-minute-requests-left": "99"}
        sent = {k.lower(): v for k, v in (headers or {}).items()}
        if sent.get("x-api-key") != self.key:
            error = {"type": "authentication_error", "message": "missing or invalid key"}
            return HttpAnswer(401, rate, {"status": 401, "error": error})
        if parts.path.endswith("/company/enrich"):
            found = self.companies.get(query.get("website", ""))
            if found is None:
                error = {
                    "type": "not_found",
                    "message": "No records were found matching your request",
                }
                return HttpAnswer(404, rate, {"status": 404, "error": error})
            return HttpAnswer(200, rate, self._pdl(query["website"], found))
        if parts.path.endswith("/organizations/enrich"):
            found = self.companies.get(query.get("domain", ""))
            body = {} if found is None else {"organization": self._apollo(query["domain"], found)}
            return HttpAnswer(200, rate, body)
        return HttpAnswer(404, rate, {"error": f"no such endpoint {parts.path}"})

    @staticmethod
    def _pdl(domain: str, c: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "status": 200,
            "id": domain.split(".")[0],
            "name": str(c["name"]).lower(),
            "display_name": c["name"],
            "website": domain,
            "size": c.get("size"),
            "employee_count": c.get("employees"),
            "founded": c.get("founded"),
            "industry": c.get("industry"),
            "location": {
                "locality": c.get("city"),
                "region": c.get("region"),
                "country": c.get("country"),
            },
            "linkedin_url": f"linkedin.com/company/{c['linkedin']}" if c.get("linkedin") else None,
            "inferred_revenue": c.get("revenue"),
            "likelihood": 8,
        }

    @staticmethod
    def _apollo(domain: str, c: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "id": "5e66b6381e05b4008c8331b8",
            "name": c["name"],
            "website_url": f"http://www.{domain}",
            "primary_domain": domain,
            "linkedin_url": (
                f"http://www.linkedin.com/company/{c['linkedin']}" if c.get("linkedin") else None
            ),
            "founded_year": c.get("founded"),
            "industry": c.get("industry"),
            "estimated_num_employees": c.get("employees"),
            "annual_revenue_printed": c.get("revenue"),
            "city": c.get("city"),
            "state": c.get("region"),
            "country": c.get("country"),
        }


class _Answer:
    """What ``urllib.request.urlopen`` returns, as much as the Shopify adapter reads."""

    def __init__(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        self.status = status
        self._data = json.dumps(body).encode()
        self.headers = dict(headers or {})

    def read(self) -> bytes:
        return self._data

    def __enter__(self) -> _Answer:
        return self

    def __exit__(self, *_: Any) -> None:
        return None


@dataclass
class ShopifyStandIn:
    """A Shopify store as documented today, answering the real adapter's ``urllib`` calls.

    - ``POST /admin/oauth/access_token`` (client-credentials grant, form-encoded): 200
      ``{"access_token", "scope", "expires_in": 86399}`` for the app's client id and secret,
      400 ``invalid_client`` otherwise. Tokens expire 86399 s after they are issued, on
      ``clock`` (the sandbox clock).
    - ``POST /admin/api/<version>/graphql.json``: the products query, ten per page with
      cursors, from ``products`` (catalogue rows); 401 for an unknown or expired
      ``X-Shopify-Access-Token``.
    """

    client_id: str
    client_secret: str
    products: list[Any]
    clock: Callable[[], float]
    issued: dict[str, float] = field(default_factory=dict)
    grants: int = 0
    api_calls: list[str] = field(default_factory=list)
    refused: int = 0

    def __call__(self, request: Any, timeout: float) -> Any:
        def refuse(status: int, body: Any) -> Exception:
            data = io.BytesIO(json.dumps(body).encode())
            return urllib.error.HTTPError(request.full_url, status, "refused", Headers(), data)

        path = urlsplit(request.full_url).path
        if path == "/admin/oauth/access_token":
            form = {k: v[0] for k, v in parse_qs(request.data.decode()).items()}
            if (
                form.get("grant_type") != "client_credentials"
                or form.get("client_id") != self.client_id
                or form.get("client_secret") != self.client_secret
            ):
                raise refuse(400, {"error": "invalid_client", "error_description": "bad client"})
            self.grants += 1
            token = f"shpat_sandbox_{self.grants}"
            self.issued[token] = self.clock() + 86399
            answer = {
                "access_token": token,
                "scope": "read_products,read_inventory,read_orders",
                "expires_in": 86399,
            }
            return _Answer(200, answer)
        token = request.get_header("X-shopify-access-token") or ""
        self.api_calls.append(path)
        if self.issued.get(token, 0) <= self.clock():
            self.refused += 1
            raise refuse(401, {"errors": "[API] Invalid API key or access token"})
        cursor = json.loads(request.data).get("variables", {}).get("cursor")
        start = int(cursor or 0)
        chunk = self.products[start : start + 10]
        more = start + 10 < len(self.products)
        page = {
            "pageInfo": {"hasNextPage": more, "endCursor": str(start + 10) if more else None},
            "nodes": [self._node(p) for p in chunk],
        }
        cost = {
            "requestedQueryCost": 452,
            "actualQueryCost": 30,
            "throttleStatus": {
                "maximumAvailable": 2000.0,
                "currentlyAvailable": 1970.0,
                "restoreRate": 100.0,
            },
        }
        return _Answer(200, {"data": {"products": page}, "extensions": {"cost": cost}})

    @staticmethod
    def _node(item: Any) -> dict[str, Any]:
        tags = [f"complements:{c}" for c in sorted(item.complements)]
        return {
            "id": f"gid://shopify/Product/{item.product_id}",
            "title": item.title,
            "productType": item.category,
            "tags": tags,
            "status": "ACTIVE" if item.available else "ARCHIVED",
            "variants": {
                "pageInfo": {"hasNextPage": False},
                "nodes": [
                    {
                        "id": f"gid://shopify/ProductVariant/{item.variant_id}",
                        "sku": item.sku,
                        "title": "Default Title",
                        "price": str(item.price),
                        "availableForSale": item.available,
                        "inventoryQuantity": item.stock if item.stock is not None else 0,
                        "inventoryItem": {"tracked": item.stock is not None},
                    }
                ],
            },
        }


def write_messages(messages: list[Message], folder: str) -> list[str]:
    """Every message that left the sandbox as files a person opens: ``NN-<function>.txt``
    (the text, or the SMS), and ``.html`` beside it when the mail has an HTML part."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for n, m in enumerate(messages, 1):
        stem = f"{n:02d}-{m.function or m.channel}-{m.channel}"
        head = f"To: {', '.join(m.to)}\nFrom: {m.sender}\nSubject: {m.subject}\n\n"
        (out / f"{stem}.txt").write_text(head + m.text, encoding="utf-8")
        written.append(f"{stem}.txt")
        if m.html:
            (out / f"{stem}.html").write_text(m.html, encoding="utf-8")
            written.append(f"{stem}.html")
    return written
