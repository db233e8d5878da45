"""What ``make verify`` probes a stack with: the target it runs on (AWS or a sandbox), its answers,
and the context each system's probe (``components/operate/probes/``) is given.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

from components.offline.engine import Graph
from components.operate.stack_secrets import StackSecret, read_value
from handlers.common.function_url import CHECK_HEADER


@dataclass(frozen=True)
class Answer:
    status: int
    body: str
    headers: Mapping[str, str] = field(default_factory=dict)

    def code(self) -> str:
        """The JSON error code (``{"error": {"code": ...}}``), if any."""
        try:
            return str(json.loads(self.body).get("error", {}).get("code", ""))
        except (ValueError, AttributeError):
            return ""

    def said(self) -> str:
        return f"HTTP {self.status}" + (f" {self.code()}" if self.code() else "")


class Target:
    """Where the stack runs: AWS (credentials from the environment) or a local sandbox."""

    def __init__(self, graph: Graph, sandbox: str | None = None) -> None:
        self.graph = graph
        self.endpoint: str | None = None
        self.urls: dict[str, str] = {}
        self.clients: dict[tuple[str, str], Any] = {}
        self.offset = 0.0
        # A sandbox's emulator takes any credential, so none from this machine is needed.
        fake = "sandbox" if sandbox else None
        self.session = boto3.Session(aws_access_key_id=fake, aws_secret_access_key=fake, aws_session_token=fake)
        if sandbox:
            with urllib.request.urlopen(sandbox.rstrip("/") + "/", timeout=10) as answer:  # noqa: S310
                overview = json.loads(answer.read())
            self.endpoint = overview["emulator"]
            self.urls = dict(overview["function_urls"])
            # The sandbox runs its own clock (its scenarios move it): links are issued on it.
            self.offset = dt.datetime.fromisoformat(overview["clock"]).timestamp() - time.time()

    @property
    def poll_s(self) -> float:
        """How often an asynchronous chain's progress is read: every second on AWS, ten times
        as often on a sandbox (local reads cost nothing; its pump delivers every 0.2-0.5 s)."""
        return POLL_S / 10 if self.endpoint else POLL_S

    def now(self) -> float:
        """The stack's time: real time on AWS, the sandbox clock's on a sandbox."""
        return time.time() + self.offset

    def client(self, service: str, region: str) -> Any:
        if (service, region) not in self.clients:
            self.clients[service, region] = self.session.client(  # type: ignore[call-overload]
                service, region_name=region, endpoint_url=self.endpoint
            )
        return self.clients[service, region]

    def url(self, function: str, region: str) -> str:
        if function not in self.urls:
            got = self.client("lambda", region).get_function_url_config(FunctionName=function)
            self.urls[function] = str(got["FunctionUrl"])
        return self.urls[function].rstrip("/")

    def trigger_on(self, function: str, region: str) -> bool:
        """Whether Lambda polls ``function``'s queue: one of its event source mappings is
        ``Enabled`` (or turning on). ``queueTriggers: paused`` declares them ``Disabled`` (Lambda
        API Reference, ListEventSourceMappings, ``State``:
        https://docs.aws.amazon.com/lambda/latest/api/API_ListEventSourceMappings.html). A
        sandbox's pump delivers every queue, whatever the plan declares."""
        if self.endpoint:
            return True
        found = self.client("lambda", region).list_event_source_mappings(FunctionName=function)
        return any(m.get("State") in ("Enabled", "Enabling", "Updating") for m in found["EventSourceMappings"])

    def http(
        self, function: str, region: str, method: str, path: str, body: bytes = b"",
        headers: Mapping[str, str] | None = None, sign: bool = False,
    ) -> Answer:
        url = self.url(function, region) + path
        sent = {CHECK_HEADER: "1", **(headers or {})}
        if sign:  # an AWS_IAM Function URL: SigV4 for service lambda
            credentials = self.session.get_credentials()
            if credentials is None:
                raise Failed("no AWS credentials to sign the request with")
            request = AWSRequest(method=method, url=url, data=body, headers=sent)
            SigV4Auth(credentials, "lambda", region).add_auth(request)
            sent = dict(request.headers.items())
        request_ = urllib.request.Request(url, data=body or None, method=method, headers=sent)  # noqa: S310
        try:
            with urllib.request.urlopen(request_, timeout=30) as answer:  # noqa: S310
                return Answer(answer.status, answer.read().decode(), dict(answer.headers.items()))
        except urllib.error.HTTPError as err:
            return Answer(err.code, err.read().decode(), dict(err.headers.items()))

    def secret(self, secret: StackSecret) -> str:
        return read_value(self.client(secret.store, secret.region), secret)


class Failed(Exception):
    """A system did not answer as it should; the message says what and why."""


def expect(answer: Answer, status: int, code: str, what: str) -> None:
    if answer.status != status or (code and answer.code() != code):
        wanted = f"HTTP {status}" + (f" {code}" if code else "")
        raise Failed(f"{what}: expected {wanted}, got {answer.said()}")


WAIT_S = 120.0
"""How long an asynchronous chain may take to carry a check (ler: a queue and four rules,
five cold starts, one CRM search)."""
POLL_S = 1.0


@dataclass
class Context:
    target: Target
    graph: Graph
    secrets: dict[str, StackSecret]
    wait_s: float = WAIT_S

    def name(self, seed: str) -> str:
        return f"{self.graph.config.prefix}-{seed}"

    def region(self, system: str) -> str:
        return str(self.graph.config.systems.enabled()[system].region)
