"""A scripted HubSpot on 127.0.0.1 for contract tests: it records every request and answers
from a script of (status, body, headers). No network leaves the machine."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from sandbox.local_http import LocalHttpServer


@dataclass
class Stub:
    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    script: list[tuple[int, Any, dict[str, str]]] = field(default_factory=list)

    def answer(self, status: int, body: Any = None, **headers: str) -> None:
        self.script.append((status, body, {k.replace("_", "-"): v for k, v in headers.items()}))

    @property
    def last(self) -> dict[str, Any]:
        return self.requests[-1]


@contextmanager
def running() -> Iterator[Stub]:
    state = Stub()

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            parts = urlsplit(self.path)
            state.requests.append(
                {
                    "method": self.command,
                    "path": parts.path,
                    "query": {k: v[0] for k, v in parse_qs(parts.query).items()},
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": json.loads(raw) if raw else None,
                }
            )
            status, body, headers = (
                state.script.pop(0) if state.script else (500, {"message": "unscripted"}, {})
            )
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

        def log_message(self, *args: Any) -> None:
            pass

    httpd = LocalHttpServer(Handler, name="hubspot-stub").start()
    state.url = f"http://127.0.0.1:{httpd.port}"
    try:
        yield state
    finally:
        httpd.stop()
