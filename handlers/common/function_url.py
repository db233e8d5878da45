"""Lambda Function URL events in, Function URL responses out: one way for every public handler.

A Function URL delivers payload format 2.0: lower-cased ``headers``, ``rawPath``,
``queryStringParameters``, ``requestContext`` and a ``body`` string that is base64 when
``isBase64Encoded`` is true (binary or non-UTF-8 bodies). Signatures are computed over the
exact bytes sent, so ``raw_body`` recovers those bytes, and parsing happens only afterwards.

A function whose trigger is its Function URL reads the event once, at the entry
(``entry.handler(..., url=True)``), into a :class:`Request`: method, headers, query, the exact
body bytes and the check mark. Its body is parsed (``Request.json_object``) only when the code
asks, after any signature check, and at most once.

Bad input raises ``RequestError``; a handler turns it into a 4xx JSON error with
``err.response()`` and changes no state.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qs, urlsplit

DEFAULT_MAX_BODY_BYTES = 256 * 1024
"""Webhooks and forms are small; anything larger is refused before it is parsed."""

_BASE_HEADERS = {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
}


class RequestError(Exception):
    """Bad input, carried to the one place that answers it with a JSON error."""

    def __init__(self, status: int, code: str, message: str) -> None:
        if not 400 <= status <= 499:
            raise ValueError(f"RequestError is for 4xx answers, not {status}")
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message

    def response(self, headers: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The Function URL response for this error."""
        return json_error(self.status, self.code, self.message, headers)


def _headers(event: Mapping[str, Any]) -> dict[str, str]:
    """The request headers with lower-cased names (Function URLs already lower-case them)."""
    raw = event.get("headers") or {}
    return {str(name).lower(): str(value) for name, value in raw.items()}


CHECK_HEADER = "x-crm-check"
"""Marks a request of ``make verify``. Read only AFTER the request proved authentic: it never
skips a check; it only holds the outside world back (no customer, no CRM) and marks what the
request writes as a check, to be removed."""


def _method(event: Mapping[str, Any]) -> str:
    """The request method in upper case ("GET", "POST", "OPTIONS", ...)."""
    http = (event.get("requestContext") or {}).get("http") or {}
    return str(http.get("method", "")).upper()


def _request_id(event: Mapping[str, Any]) -> str | None:
    """The Function URL request id, the correlation id of everything this request causes."""
    value = (event.get("requestContext") or {}).get("requestId")
    return None if value is None else str(value)


def raw_body(event: Mapping[str, Any], *, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> bytes:
    """The exact body bytes the client sent, base64 undone; 413 beyond ``max_bytes``."""
    body = event.get("body")
    if body is None:
        return b""
    if not isinstance(body, str):
        raise RequestError(400, "invalid_body", "the request body is not text")
    if event.get("isBase64Encoded"):
        # Refuse by the encoded length first, so an oversized body is never decoded.
        if len(body) > (max_bytes + 2) // 3 * 4 + 4:
            raise RequestError(413, "payload_too_large", f"the body exceeds {max_bytes} bytes")
        try:
            data = base64.b64decode(body.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError) as err:
            raise RequestError(400, "invalid_body", "the body is not valid base64") from err
    else:
        data = body.encode("utf-8")
    if len(data) > max_bytes:
        raise RequestError(413, "payload_too_large", f"the body exceeds {max_bytes} bytes")
    return data


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(raw: bytes, *, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> Any:
    """Strict JSON from body bytes: 413 when too large, 400 when not JSON (NaN included)."""
    if len(raw) > max_bytes:
        raise RequestError(413, "payload_too_large", f"the body exceeds {max_bytes} bytes")
    if not raw.strip():
        raise RequestError(400, "invalid_json", "the body is empty")
    try:
        return json.loads(raw, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as err:
        raise RequestError(400, "invalid_json", "the body is not valid JSON") from err


def parse_json_object(raw: bytes, *, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> dict[str, Any]:
    """Like ``parse_json`` but the document must be a JSON object (every webhook is one)."""
    value = parse_json(raw, max_bytes=max_bytes)
    if not isinstance(value, dict):
        raise RequestError(400, "invalid_json", "the body must be a JSON object")
    return value


def parse_form(raw: bytes, *, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body; a repeated field keeps its last value."""
    if len(raw) > max_bytes:
        raise RequestError(413, "payload_too_large", f"the body exceeds {max_bytes} bytes")
    try:
        text = raw.decode("utf-8")
        fields = parse_qs(
            text, keep_blank_values=True, strict_parsing=bool(text), max_num_fields=200
        )
    except (UnicodeDecodeError, ValueError) as err:
        raise RequestError(400, "invalid_form", "the body is not a valid form") from err
    return {name: values[-1] for name, values in fields.items()}


@dataclass(frozen=True)
class Request:
    """One Function URL call, read once from its event (see the module doc)."""

    method: str
    """Upper case: "GET", "POST", "OPTIONS"..."""
    headers: Mapping[str, str]
    """Names lower-cased: ``request.headers.get("x-shopify-topic")``."""
    query: Mapping[str, str]
    body: bytes
    """The exact bytes the client sent (base64 undone): what a signature covers."""
    path: str = "/"
    check: bool = False
    """A ``make verify`` check (``CHECK_HEADER``): to be read only once the request proved
    authentic."""
    max_bytes: int = DEFAULT_MAX_BODY_BYTES
    request_id: str | None = None
    """The Function URL request id, the correlation id of everything this request causes."""
    cookies: tuple[str, ...] = ()
    """Payload 2.0 ``cookies`` ("name=value" each); a ``cookie`` header when the list is absent."""
    _parsed: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def read(cls, event: Mapping[str, Any], *, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> Request:
        """The request of a Function URL event; ``RequestError`` (413, 400) for a body too
        large or not decodable."""
        query = {str(k): str(v) for k, v in (event.get("queryStringParameters") or {}).items()}
        body = raw_body(event, max_bytes=max_bytes)
        names = _headers(event)
        path = str(event.get("rawPath") or "/")
        cookies = tuple(str(c).strip() for c in event.get("cookies") or ())
        if not cookies and "cookie" in names:
            cookies = tuple(piece.strip() for piece in names["cookie"].split(";"))
        return cls(
            _method(event), names, query, body, path, CHECK_HEADER in names, max_bytes,
            _request_id(event), cookies,
        )

    def cookie(self, name: str) -> str | None:
        """One cookie's value; None when the request does not carry it."""
        for piece in self.cookies:
            key, _, value = piece.partition("=")
            if key.strip() == name:
                return value.strip()
        return None

    def form(self) -> dict[str, str]:
        """The body as an urlencoded form, parsed on the first call (``RequestError`` 400/413)."""
        if "form" not in self._parsed:
            self._parsed["form"] = parse_form(self.body, max_bytes=self.max_bytes)
        value: dict[str, str] = self._parsed["form"]
        return value

    def json_object(self) -> dict[str, Any]:
        """The body as a JSON object, parsed on the first call (``RequestError`` 400/413)."""
        if "json" not in self._parsed:
            self._parsed["json"] = parse_json_object(self.body, max_bytes=self.max_bytes)
        value: dict[str, Any] = self._parsed["json"]
        return value


def _json_default(value: object) -> Any:
    # DynamoDB hands numbers back as Decimal; timestamps are often datetimes.
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, set | frozenset):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _merge(base: Mapping[str, str], extra: Mapping[str, str] | None) -> dict[str, str]:
    merged = dict(base)
    for name, value in (extra or {}).items():
        merged[name.lower()] = value
    return merged


def json_response(
    status: int, body: Any, headers: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A Function URL response with a compact JSON body and no-store, nosniff headers."""
    return {
        "statusCode": status,
        "headers": _merge(_BASE_HEADERS, headers),
        "body": json.dumps(body, separators=(",", ":"), ensure_ascii=False, default=_json_default),
        "isBase64Encoded": False,
    }


def json_error(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The one error shape: ``{"error": {"code": ..., "message": ...}}`` with a 4xx/5xx status."""
    if not 400 <= status <= 599:
        raise ValueError(f"json_error needs an error status, not {status}")
    return json_response(status, {"error": {"code": code, "message": message}}, headers)


def redirect(
    location: str,
    *,
    status: int = 302,
    headers: Mapping[str, str] | None = None,
    allowed_schemes: Collection[str] = ("https",),
) -> dict[str, Any]:
    """A redirect to an absolute URL; refuses other schemes and header-splitting characters."""
    if status not in (301, 302, 303, 307, 308):
        raise ValueError(f"{status} is not a redirect status")
    if any(ch in location for ch in "\r\n\x00"):
        raise ValueError("redirect location contains control characters")
    parts = urlsplit(location)
    if parts.scheme not in allowed_schemes or not parts.netloc:
        raise ValueError(f"redirect location must be an absolute {'/'.join(allowed_schemes)} URL")
    base = {"location": location, "cache-control": "no-store", "referrer-policy": "no-referrer"}
    return {
        "statusCode": status,
        "headers": _merge(base, headers),
        "body": "",
        "isBase64Encoded": False,
    }


def cors_headers(
    origin: str | None,
    allowed_origins: Collection[str],
    *,
    methods: Collection[str] = ("POST", "OPTIONS"),
    allow_headers: Collection[str] = ("content-type",),
    max_age: int = 600,
) -> dict[str, str]:
    """CORS headers echoing ``origin`` when it is on the allowlist, else none at all.

    Only exact origins are honoured (no ``*``), and ``vary: origin`` keeps caches honest.
    """
    if not origin or origin == "null" or origin not in allowed_origins:
        return {}
    return {
        "access-control-allow-origin": origin,
        "access-control-allow-methods": ", ".join(methods),
        "access-control-allow-headers": ", ".join(allow_headers),
        "access-control-max-age": str(max_age),
        "vary": "origin",
    }


def preflight_response(
    request: Request,
    allowed_origins: Collection[str],
    *,
    methods: Collection[str] = ("POST", "OPTIONS"),
    allow_headers: Collection[str] = ("content-type",),
) -> dict[str, Any]:
    """The answer to an ``OPTIONS`` preflight: 204 for an allowed origin, 403 otherwise."""
    cors = cors_headers(
        request.headers.get("origin"), allowed_origins, methods=methods, allow_headers=allow_headers
    )
    if not cors:
        return json_error(403, "origin_not_allowed", "this origin may not call this endpoint")
    return {"statusCode": 204, "headers": cors, "body": "", "isBase64Encoded": False}
