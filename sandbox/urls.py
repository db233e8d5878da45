"""Function URLs on localhost: one HTTP server per function, speaking payload format 2.0.

A request to ``http://127.0.0.1:<port>/<path>?<query>`` reaches the function as the event a
Lambda Function URL delivers: ``version`` 2.0, ``rawPath``, ``rawQueryString``, lower-cased
``headers`` (repeated values joined by commas), ``cookies``, ``queryStringParameters``,
``requestContext`` (``http.method``, ``requestId``, ``domainName``, ``timeEpoch``...), and the
``body`` as text, or base64 with ``isBase64Encoded`` for binary content types. The response
dict (``statusCode``, ``headers``, ``cookies``, ``body``, ``isBase64Encoded``) is written back;
a plain return value becomes a 200 JSON body, as with a real Function URL.

``AWS_IAM`` URLs demand a SigV4 ``Authorization`` header for service ``lambda`` (its
signature is not verified: the sandbox has one fake credential) and answer 403 without it.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from components.offline.engine import ACCOUNT_ID
from sandbox.account import arns
from sandbox.graph import FunctionSpec
from sandbox.local_http import LocalHttpServer
from sandbox.runtime import Invocation

Invoke = Callable[[str, Any], Invocation]

_TEXT_TYPES = ("text/", "application/json", "application/xml", "application/javascript")


def is_text(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind.startswith(_TEXT_TYPES) or kind.endswith("+json") or kind.endswith("+xml")


def url_event(
    spec: FunctionSpec,
    method: str,
    target: str,
    headers: list[tuple[str, str]],
    body: bytes,
    *,
    host: str,
    source_ip: str = "127.0.0.1",
    now: dt.datetime | None = None,
) -> dict[str, Any]:
    """The Function URL (payload 2.0) event for one HTTP request."""
    moment = now or dt.datetime.now(dt.UTC)
    parts = urlsplit(target)
    merged: dict[str, str] = {}
    cookies: list[str] = []
    for name, value in headers:
        key = name.lower()
        if key == "cookie":
            cookies.extend(c.strip() for c in value.split(";") if c.strip())
            continue
        merged[key] = f"{merged[key]},{value}" if key in merged else value
    query: dict[str, str] = {}
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        query[name] = f"{query[name]},{value}" if name in query else value
    url_id = spec.name
    domain = f"{url_id}.lambda-url.{spec.region}.on.aws"
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": parts.path or "/",
        "rawQueryString": parts.query,
        "headers": merged,
        "requestContext": {
            "accountId": "anonymous" if spec.url_auth == "NONE" else ACCOUNT_ID,
            "apiId": url_id,
            "domainName": domain,
            "domainPrefix": url_id,
            "http": {
                "method": method.upper(),
                "path": parts.path or "/",
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": merged.get("user-agent", ""),
            },
            "requestId": str(uuid.uuid4()),
            "routeKey": "$default",
            "stage": "$default",
            "time": moment.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(moment.timestamp() * 1000),
        },
        "isBase64Encoded": False,
    }
    if cookies:
        event["cookies"] = cookies
    if query:
        event["queryStringParameters"] = query
    if spec.url_auth == "AWS_IAM":
        event["requestContext"]["authorizer"] = {
            "iam": {
                "accessKey": "sandbox",
                "accountId": ACCOUNT_ID,
                "callerId": "SANDBOX",
                "cognitoIdentity": None,
                "principalOrgId": None,
                "userArn": arns("").user("sandbox"),
                "userId": "SANDBOX",
            }
        }
    if body:
        if is_text(merged.get("content-type", "")):
            try:
                event["body"] = body.decode("utf-8")
            except UnicodeDecodeError:
                event["body"] = base64.b64encode(body).decode("ascii")
                event["isBase64Encoded"] = True
        else:
            event["body"] = base64.b64encode(body).decode("ascii")
            event["isBase64Encoded"] = True
    return event


def response_parts(invocation: Invocation) -> tuple[int, list[tuple[str, str]], bytes]:
    """Status, headers and body bytes for what the handler returned (or raised)."""
    if not invocation.ok:
        body = json.dumps({"Message": "Internal Server Error"}).encode()
        return 502, [("content-type", "application/json")], body
    result = invocation.result
    if not (isinstance(result, dict) and "statusCode" in result):
        text = result if isinstance(result, str) else json.dumps(result, default=str)
        return 200, [("content-type", "application/json")], text.encode()
    headers = [(str(k), str(v)) for k, v in (result.get("headers") or {}).items()]
    headers += [("set-cookie", str(c)) for c in result.get("cookies") or []]
    raw = result.get("body") or ""
    data = base64.b64decode(raw) if result.get("isBase64Encoded") else str(raw).encode("utf-8")
    return int(result["statusCode"]), headers, data


class FunctionUrlServer:
    """One ThreadingHTTPServer serving one function's URL."""

    def __init__(
        self, spec: FunctionSpec, invoke: Invoke, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.spec = spec
        self.invoke = invoke
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                if owner.spec.url_auth == "AWS_IAM" and not _signed(
                    self.headers.get("authorization")
                ):
                    self._reply(
                        403,
                        [("content-type", "application/json")],
                        json.dumps({"Message": "Forbidden"}).encode(),
                    )
                    return
                event = url_event(
                    owner.spec,
                    self.command,
                    self.path,
                    list(self.headers.items()),
                    body,
                    host=owner.url,
                    source_ip=self.client_address[0],
                )
                status, headers, data = response_parts(owner.invoke(owner.spec.name, event))
                self._reply(status, headers, data)

            def _reply(self, status: int, headers: list[tuple[str, str]], data: bytes) -> None:
                self.send_response(status)
                for name, value in headers:
                    if name.lower() not in ("content-length", "connection"):
                        self.send_header(name, value)
                self.send_header("x-amzn-requestid", str(uuid.uuid4()))
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = _serve

        self.http = LocalHttpServer(Handler, host, port, name=f"url-{spec.name}")

    @property
    def url(self) -> str:
        return self.http.url

    def start(self) -> None:
        self.http.start()

    def stop(self) -> None:
        self.http.stop()


def _signed(authorization: str | None) -> bool:
    """A SigV4 Authorization header for service lambda (signature itself not verified)."""
    return bool(
        authorization
        and authorization.startswith("AWS4-HMAC-SHA256 ")
        and "/lambda/aws4_request" in authorization
    )
