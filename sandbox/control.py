"""A small control API for the running sandbox (``make sandbox``), on localhost.

GET  /                         what runs: Function URLs, schedules, the clock, pending one-offs
POST /schedules/<name>/fire    fire a recurring schedule of the graph now (physical name)
POST /clock/advance?hours=2    move the clock (schedules fire in order, the pump delivers)
                               (both answer what ran as a result: function, ok, error)
POST /budgets/notify?threshold=100   AWS Budgets reports the stack's budget over a threshold
POST /alarms/<name>/notify     a CloudWatch alarm enters ALARM (?state=OK for the other way)
GET  /refusals                 every delivery a trust, resource or key policy refused
GET  /outbox                   every email, SMS and SNS message "sent"
GET  /denials                  every AWS call a role did not allow
GET  /invocations              the last invocations (function, source, ok, error)
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from sandbox.local_http import LocalHttpServer

if TYPE_CHECKING:
    from sandbox.core import Sandbox


def state(sb: Sandbox) -> dict[str, Any]:
    """The overview ``GET /`` answers."""
    triggers = sb.triggers
    return {
        "clock": sb.clock.now().isoformat(),
        "emulator": sb.emulator.endpoint if sb.emulator else None,
        "function_urls": {name: server.url for name, server in sorted(sb.urls.items())},
        "schedules": [
            {"name": s.name, "expression": s.expression, "timezone": s.timezone, "region": s.region}
            for s in sb.topology.schedules
        ],
        "pending_one_off": [
            {"name": name, "due": when.isoformat()}
            for name, when in (triggers.pending_one_off() if triggers else [])
        ],
        "wiring": list(triggers.problems) if triggers else [],
    }


def _runs_since(sb: Sandbox, start: int) -> list[dict[str, Any]]:
    """The invocations from index ``start`` on: what a fire or a clock move set running."""
    runs = sb.runtime.invocations[start:] if sb.runtime else []
    return [
        {"function": i.function, "source": i.source, "ok": i.ok, "error": i.error} for i in runs
    ]


def _invocation_count(sb: Sandbox) -> int:
    return len(sb.runtime.invocations) if sb.runtime else 0


def answer(sb: Sandbox, method: str, target: str) -> tuple[int, Any]:
    """Status and JSON body for one control request."""
    parts = urlsplit(target)
    path = parts.path.rstrip("/") or "/"
    query = dict(parse_qsl(parts.query))
    if method == "GET" and path == "/":
        return 200, state(sb)
    if method == "GET" and path == "/outbox":
        return 200, [asdict(m) for m in sb.outbox.messages]
    if method == "GET" and path == "/denials":
        return 200, [
            {
                "function": c.function,
                "action": c.denied.requirement.action,
                "resource": c.denied.requirement.resource,
            }
            for c in sb.denials()
            if c.denied is not None
        ]
    if method == "GET" and path == "/invocations":
        runs = sb.runtime.invocations[-50:] if sb.runtime else []
        return 200, [
            {
                "function": i.function,
                "source": i.source,
                "ok": i.ok,
                "error": i.error,
                "ms": round(i.duration_s * 1000),
            }
            for i in runs
        ]
    if method == "POST" and path.startswith("/schedules/") and path.endswith("/fire"):
        name = path.removeprefix("/schedules/").removesuffix("/fire")
        with sb.pump_lock:
            start = _invocation_count(sb)
            try:
                sb.fire(name)
            except KeyError as err:
                return 404, {"error": str(err)}
            deliveries = sb.drain()
            # "deliveries" alone read as "nothing happened" when the fired function ran and
            # queued nothing: say what ran, and how it ended.
            return 200, {"fired": name, "ran": _runs_since(sb, start), "deliveries": deliveries}
    if method == "GET" and path == "/refusals":
        return 200, [
            {"source": x.source, "target": x.target, "reason": x.reason}
            for x in (sb.triggers.refusals if sb.triggers else [])
        ]
    if method == "POST" and path == "/budgets/notify":
        with sb.pump_lock:
            reached = sb.notify_budget(
                query.get("budget"),
                notification_type=query.get("type", "ACTUAL"),
                threshold=float(query.get("threshold", "80")),
            )
        return 200, {"reached": reached}
    if method == "POST" and path.startswith("/alarms/") and path.endswith("/notify"):
        name = path.removeprefix("/alarms/").removesuffix("/notify")
        with sb.pump_lock:
            try:
                reached = sb.notify_alarm(name, state=query.get("state", "ALARM"))
            except KeyError as err:
                return 404, {"error": str(err)}
        return 200, {"reached": reached}
    if method == "POST" and path == "/clock/advance":
        delta = {k: float(v) for k, v in query.items() if k in ("days", "hours", "minutes")}
        with sb.pump_lock:
            start = _invocation_count(sb)
            fired = sb.advance(**delta) if delta else []
            sb.drain()
            ran = _runs_since(sb, start)
        return 200, {"clock": sb.clock.now().isoformat(), "fired": fired, "ran": ran}
    return 404, {"error": "unknown control request", "see": __doc__}


class ControlServer:
    """The control API on one local port."""

    def __init__(self, sb: Sandbox, host: str = "127.0.0.1", port: int = 0) -> None:
        owner = sb

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def _serve(self) -> None:
                status, body = answer(owner, self.command, self.path)
                data = json.dumps(body, indent=2, default=_default).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _serve

        self.http = LocalHttpServer(Handler, host, port, name="control")

    @property
    def url(self) -> str:
        return self.http.url

    def start(self) -> None:
        self.http.start()

    def stop(self) -> None:
        self.http.stop()


def _default(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return str(value)
