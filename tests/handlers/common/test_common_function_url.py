"""Function URL helpers: exact body bytes, strict parsing, one response and error shape."""

from __future__ import annotations

import base64
import json
from decimal import Decimal
from typing import Any

import pytest

from handlers.common import function_url
from handlers.common.function_url import (
    CHECK_HEADER,
    Request,
    RequestError,
    cors_headers,
    json_error,
    json_response,
    parse_form,
    parse_json,
    parse_json_object,
    preflight_response,
    raw_body,
    redirect,
)


def event(body: str | None = None, *, b64: bool = False, **extra: Any) -> dict[str, Any]:
    """A payload-format-2.0 Function URL event."""
    base: dict[str, Any] = {
        "version": "2.0",
        "rawPath": "/",
        "rawQueryString": "",
        "headers": {"content-type": "application/json", "x-shopify-hmac-sha256": "abc="},
        "requestContext": {
            "requestId": "req-1",
            "http": {"method": "POST", "sourceIp": "203.0.113.9"},
        },
        "isBase64Encoded": b64,
    }
    if body is not None:
        base["body"] = body
    base.update(extra)
    return base


def test_base64_body_recovered_exactly() -> None:
    payload = b"\x00\xff\xfe binary \xe9 not utf-8"
    assert raw_body(event(base64.b64encode(payload).decode(), b64=True)) == payload


def test_base64_json_body_recovered_and_parsed() -> None:
    doc = {"name": "Zoë", "amount": 12}
    data = json.dumps(doc, ensure_ascii=False).encode("utf-8")
    raw = raw_body(event(base64.b64encode(data).decode(), b64=True))
    assert raw == data
    assert parse_json_object(raw) == doc


def test_plain_body_is_utf8_bytes() -> None:
    assert raw_body(event('{"a":"é"}')) == '{"a":"é"}'.encode()


def test_missing_body_is_empty() -> None:
    assert raw_body(event(None)) == b""


def test_invalid_base64_is_400() -> None:
    with pytest.raises(RequestError) as caught:
        raw_body(event("***", b64=True))
    assert caught.value.status == 400


@pytest.mark.parametrize("b64", [False, True])
def test_oversized_body_is_413(b64: bool) -> None:
    data = b"x" * 1025
    body = base64.b64encode(data).decode() if b64 else data.decode()
    with pytest.raises(RequestError) as caught:
        raw_body(event(body, b64=b64), max_bytes=1024)
    assert caught.value.status == 413
    at_limit = base64.b64encode(data[:1024]).decode() if b64 else data[:1024].decode()
    assert raw_body(event(at_limit, b64=b64), max_bytes=1024) == data[:1024]


def test_header_names_are_lower_cased() -> None:
    e = event("{}", headers={"X-Shopify-Hmac-Sha256": "sig", "Content-Type": "text/plain"})
    request = Request.read(e)
    assert request.headers.get("x-shopify-hmac-sha256") == "sig"
    assert request.headers.get("content-type") == "text/plain"
    assert request.headers.get("origin") is None
    assert Request.read({"headers": None}).headers == {}


def test_request_fields() -> None:
    request = Request.read(event("{}", queryStringParameters={"t": "tok"}, rawPath="/confirm"))
    assert (request.method, request.path, request.request_id) == ("POST", "/confirm", "req-1")
    assert request.query.get("t") == "tok"
    assert request.query.get("missing") is None
    assert not request.check
    assert Request.read(event("{}", headers={CHECK_HEADER: "1"})).check


def test_cookies_from_the_list_else_the_header() -> None:
    listed = Request.read(event(None, cookies=["crm_v=abc", "other=1"]))
    assert (listed.cookie("crm_v"), listed.cookie("other"), listed.cookie("none")) == ("abc", "1", None)
    header_only = Request.read(event(None, headers={"Cookie": "a=1; crm_v=xyz"}))
    assert header_only.cookie("crm_v") == "xyz"


def test_a_form_is_parsed_once() -> None:
    request = Request.read(event("a=1&b=two&a=3"))
    assert request.form() == {"a": "3", "b": "two"}
    assert request.form() is request.form()


@pytest.mark.parametrize(
    "raw", [b"", b"   ", b"{", b'{"a": NaN}', b"\xff\xfe\x00", b'{"a": Infinity}']
)
def test_invalid_json_is_400(raw: bytes) -> None:
    with pytest.raises(RequestError) as caught:
        parse_json(raw)
    assert (caught.value.status, caught.value.code) == (400, "invalid_json")


def test_json_size_limit_is_413() -> None:
    with pytest.raises(RequestError) as caught:
        parse_json(b"[" + b"1," * 100 + b"1]", max_bytes=100)
    assert caught.value.status == 413


def test_json_object_required() -> None:
    assert parse_json(b"[1, 2]") == [1, 2]
    with pytest.raises(RequestError):
        parse_json_object(b"[1, 2]")


def test_form_body() -> None:
    assert parse_form(b"email=a%40b.com&name=Ann+Lee&name=Ann&empty=") == {
        "email": "a@b.com",
        "name": "Ann",
        "empty": "",
    }
    with pytest.raises(RequestError):
        parse_form(b"\xff=1")


def test_json_response_shape() -> None:
    response = json_response(
        200, {"count": Decimal("3"), "ratio": Decimal("0.5")}, {"X-Extra": "1"}
    )
    assert response["statusCode"] == 200
    assert response["isBase64Encoded"] is False
    assert response["headers"]["content-type"] == "application/json; charset=utf-8"
    assert response["headers"]["cache-control"] == "no-store"
    assert response["headers"]["x-extra"] == "1"
    assert json.loads(response["body"]) == {"count": 3, "ratio": 0.5}


def test_json_error_shape() -> None:
    response = json_error(401, "bad_signature", "the signature does not match")
    assert response["statusCode"] == 401
    assert json.loads(response["body"]) == {
        "error": {"code": "bad_signature", "message": "the signature does not match"}
    }
    with pytest.raises(ValueError):
        json_error(200, "ok", "not an error")


def test_request_error_renders_json_error() -> None:
    err = RequestError(413, "payload_too_large", "too big")
    assert err.response() == json_error(413, "payload_too_large", "too big")
    with pytest.raises(ValueError):
        RequestError(500, "boom", "server errors are not request errors")


def test_redirect() -> None:
    response = redirect("https://shop.example.com/cart/add?sku=A1")
    assert response["statusCode"] == 302
    assert response["headers"]["location"] == "https://shop.example.com/cart/add?sku=A1"
    assert response["body"] == ""


@pytest.mark.parametrize(
    "location",
    [
        "javascript:alert(1)",
        "//evil.example.com",
        "/relative",
        "http://shop.example.com",
        "https://a.example.com/\r\nSet-Cookie: x=1",
    ],
)
def test_redirect_refuses_unsafe_locations(location: str) -> None:
    with pytest.raises(ValueError):
        redirect(location)


def test_cors_allowlist() -> None:
    allowed = {"https://www.example.com"}
    headers = cors_headers("https://www.example.com", allowed)
    assert headers["access-control-allow-origin"] == "https://www.example.com"
    assert headers["vary"] == "origin"
    assert cors_headers("https://evil.example.com", allowed) == {}
    assert cors_headers(None, allowed) == {}
    assert cors_headers("null", {"null"}) == {}


def test_preflight() -> None:
    allowed = ["https://www.example.com"]
    ok = preflight_response(
        Request.read(event(None, headers={"Origin": "https://www.example.com"})), allowed
    )
    assert ok["statusCode"] == 204
    refused = preflight_response(
        Request.read(event(None, headers={"origin": "https://evil.example.com"})), allowed
    )
    assert refused["statusCode"] == 403
    assert "access-control-allow-origin" not in refused["headers"]


def test_a_request_is_read_once_and_its_body_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry reads the event into one Request; asking for the JSON twice parses it once."""
    parses: list[bytes] = []
    real = function_url.parse_json_object

    def counting(raw: bytes, **kwargs: Any) -> dict[str, Any]:
        parses.append(raw)
        return real(raw, **kwargs)

    monkeypatch.setattr(function_url, "parse_json_object", counting)
    sent = event('{"id": 1}', queryStringParameters={"t": "x"})
    sent["headers"] = {"X-Shopify-Topic": "orders/create", CHECK_HEADER: "1"}
    request = Request.read(sent)
    assert (request.method, request.body, dict(request.query)) == ("POST", b'{"id": 1}', {"t": "x"})
    assert request.headers == {"x-shopify-topic": "orders/create", CHECK_HEADER: "1"}
    assert request.check and not Request.read(event("{}")).check
    assert request.json_object() is request.json_object() == {"id": 1}
    assert parses == [b'{"id": 1}']


def test_a_request_too_large_or_not_json_is_refused_as_before() -> None:
    with pytest.raises(RequestError) as big:
        Request.read(event("x" * 11), max_bytes=10)
    assert big.value.status == 413
    with pytest.raises(RequestError) as bad:
        Request.read(event("[1]")).json_object()
    assert (bad.value.status, bad.value.code) == (400, "invalid_json")
