"""``make verify STACK=<stack>``: after `pulumi up`, does each system answer as it should?

Per system, first every secret it reads must hold a value (DescribeSecret or
DescribeParameters: metadata, no value read), then one synthetic request per public surface,
signed with the stack's own secret and marked as a check, goes through the real Function
URL, the real authenticity check and the real parsing:

- dm: a review link for the pair ``check-a#check-b-<id>``, signed with dm-link-key: dm-merge verifies the
  token, reads dm-pairs, and answers 410 (no such proposal); a forged link answers 403.
- ler: the intake secret with a body of an unsupported type: 415 once the secret matched (a
  wrong secret answers 401); nothing is stored.
- ls: an arrival from a search engine with the stack's first site origin: 200, its touch is in
  ls-touches and is then deleted; a foreign origin answers 403; the report, SigV4-signed, 200;
  where the report is mailed, last week's page link signed with ls-report-link-key opens (200)
  on ls-report-page and a forged one answers 403.
- upsr: a webhook signed with the app's client secret for the store, topic ``app/uninstalled``
  (not an order): 400 once signature and shop matched (a wrong signature answers 401).
- rrs: an event signed with the job tool's secret, of type ``verify.check``: 400 once the
  signature matched (a wrong one answers 401).

Names come from the offline plan's graph; Function URLs from Lambda GetFunctionUrlConfig.
``--sandbox http://127.0.0.1:8700`` points the same command at a running ``make sandbox`` (its
control API lists the local URLs and the AWS emulator), which is how the tests run it.
Prints ``ok`` or ``failed: <reason>`` per system; exits 1 if any failed.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

from components.offline.engine import Graph
from components.operate import plan_graph, stack_command
from components.operate.stack_secrets import StackSecret, has_value, read_value, secrets_in

CHECK_HEADER = "x-crm-check"
"""Marks every request of this command (visible in the functions' logs)."""


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
        if sandbox:
            with urllib.request.urlopen(sandbox.rstrip("/") + "/", timeout=10) as answer:  # noqa: S310
                overview = json.loads(answer.read())
            self.endpoint = overview["emulator"]
            self.urls = dict(overview["function_urls"])
            # The sandbox runs its own clock (its scenarios move it): links are issued on it.
            import datetime as dt

            self.offset = dt.datetime.fromisoformat(overview["clock"]).timestamp() - time.time()

    def now(self) -> float:
        """The stack's time: real time on AWS, the sandbox clock's on a sandbox."""
        return time.time() + self.offset

    def client(self, service: str, region: str) -> Any:
        if (service, region) not in self.clients:
            self.clients[service, region] = boto3.client(  # type: ignore[call-overload]
                service, region_name=region, endpoint_url=self.endpoint
            )
        return self.clients[service, region]

    def url(self, function: str, region: str) -> str:
        if function not in self.urls:
            got = self.client("lambda", region).get_function_url_config(FunctionName=function)
            self.urls[function] = str(got["FunctionUrl"])
        return self.urls[function].rstrip("/")

    def http(
        self, function: str, region: str, method: str, path: str, body: bytes = b"",
        headers: Mapping[str, str] | None = None, sign: bool = False,
    ) -> Answer:
        url = self.url(function, region) + path
        sent = {CHECK_HEADER: "1", **(headers or {})}
        if sign:  # an AWS_IAM Function URL: SigV4 for service lambda
            credentials = boto3.Session().get_credentials()
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


@dataclass
class Context:
    target: Target
    graph: Graph
    secrets: dict[str, StackSecret]

    def name(self, seed: str) -> str:
        return f"{self.graph.config.prefix}-{seed}"

    def region(self, system: str) -> str:
        return str(self.graph.config.systems.enabled()[system].region)


def verify_dm(c: Context) -> str:
    from handlers.common.link_tokens import Keyring, issue_token

    keyring = Keyring.from_secret_string(c.target.secret(c.secrets["dm-link-key"]))
    subject = f"check-a#check-b-{uuid.uuid4().hex[:12]}"  # low < high, as pair keys are
    token = issue_token(keyring, subject=subject, action="review", ttl_seconds=600, now=c.target.now())
    fn, region = c.name("dm-merge"), c.region("dm")
    expect(c.target.http(fn, region, "GET", "/review?t=forged"), 403, "invalid_link", "a forged link")
    expect(
        c.target.http(fn, region, "GET", f"/review?t={token}"), 410, "proposal_expired",
        "a link signed with dm-link-key (the pair does not exist)",
    )
    return "signed link verified, dm-pairs read, forged link refused"


def verify_ler(c: Context) -> str:
    fn, region = c.name("ler-intake"), c.region("ler")
    ler = c.graph.config.systems.ler
    assert ler is not None
    body = b"check"
    if ler.intake_auth == "iam":
        answer = c.target.http(fn, region, "POST", "/", body, {"content-type": "text/csv"}, sign=True)
    else:
        secret = c.target.secret(c.secrets["ler-intake-secret"])
        wrong = c.target.http(fn, region, "POST", "/", body, {"content-type": "text/csv", "x-ler-intake-secret": "check-wrong"})
        expect(wrong, 401, "unauthorized", "a wrong intake secret")
        answer = c.target.http(fn, region, "POST", "/", body, {"content-type": "text/csv", "x-ler-intake-secret": secret})
    expect(answer, 415, "unsupported_media_type", "the intake secret with a body it does not take")
    return "intake secret accepted, wrong secret refused, nothing stored"


def verify_ls(c: Context) -> str:
    ls = c.graph.config.systems.ls
    assert ls is not None
    fn, region = c.name("ls-capture"), c.region("ls")
    site = ls.site_origins[0]
    arrival = json.dumps(
        {"kind": "arrival", "url": f"{site}/?check=1", "referrer": "https://www.google.com/"}
    ).encode()
    browser = {"content-type": "text/plain;charset=UTF-8", "user-agent": "Mozilla/5.0 (crm-automations verify)"}
    foreign = c.target.http(fn, region, "POST", "/", arrival, {**browser, "origin": "https://check.invalid"})
    expect(foreign, 403, "origin_not_allowed", "a beacon from a foreign origin")
    answer = c.target.http(fn, region, "POST", "/", arrival, {**browser, "origin": site})
    expect(answer, 200, "", "an arrival from a search engine")
    visitor = str(json.loads(answer.body)["visitor_id"])
    table = c.target.client("dynamodb", region)
    touches = c.name("ls-touches")
    found = table.query(
        TableName=touches, KeyConditionExpression="visitor_id = :v",
        ExpressionAttributeValues={":v": {"S": visitor}},
    )["Items"]
    for item in found:  # the check removes what it wrote
        table.delete_item(TableName=touches, Key={"visitor_id": item["visitor_id"], "at": item["at"]})
    if len(found) != 1:
        raise Failed(f"the arrival answered 200 but {len(found)} touches were recorded in {touches}")
    report = c.target.http(c.name("ls-report"), region, "GET", "/?mode=lenient", sign=True)
    expect(report, 200, "", "the report, SigV4-signed")
    if "ls-report-link-key" not in c.secrets:  # the report is not mailed: no page
        return "touch recorded in ls-touches and removed, foreign origin refused, report read"
    from handlers.common.link_tokens import Keyring
    from handlers.source_attributor import report_link, report_mail

    keyring = Keyring.from_secret_string(c.target.secret(c.secrets["ls-report-link-key"]))
    page = c.name("ls-report-page")
    forged = c.target.http(page, region, "GET", f"{report_link.PATH}?t=forged", headers={"accept": "application/json"})
    expect(forged, 403, "invalid_link", "a forged report page link")
    today = dt.datetime.fromtimestamp(c.target.now(), dt.UTC).date()
    link = report_link.signer("", keyring, days=1, now=c.target.now())(*report_mail.last_week(today))
    opened = c.target.http(page, region, "GET", link.url, headers={"accept": "text/html"})
    expect(opened, 200, "", "last week's report page link, signed with ls-report-link-key")
    return (
        "touch recorded in ls-touches and removed, foreign origin refused, report read, "
        "report page link opened, forged link refused"
    )


def verify_upsr(c: Context) -> str:
    upsr = c.graph.config.systems.upsr
    assert upsr is not None
    fn, region = c.name("upsr-order"), c.region("upsr")
    value = c.target.secret(c.secrets["upsr-webhook-secret"])
    secret = str(json.loads(value)["client_secret"]) if value.startswith("{") else value
    body = json.dumps({"id": 0, "check": True}).encode()

    def sent(key: str) -> dict[str, str]:
        mac = base64.b64encode(hmac.new(key.encode(), body, hashlib.sha256).digest()).decode()
        return {
            "content-type": "application/json", "x-shopify-topic": "app/uninstalled",
            "x-shopify-shop-domain": upsr.store_domain, "x-shopify-hmac-sha256": mac,
            "x-shopify-webhook-id": f"check-{uuid.uuid4().hex[:12]}",
        }

    expect(c.target.http(fn, region, "POST", "/", body, sent("check-wrong")), 401, "invalid_signature", "a wrong signature")
    expect(
        c.target.http(fn, region, "POST", "/", body, sent(secret)), 400, "unsupported_topic",
        "a webhook signed with upsr-webhook-secret for the store (not an order)",
    )
    return "webhook signature and shop verified, wrong signature refused, nothing stored"


def verify_rrs(c: Context) -> str:
    from handlers.common.webhook_signatures import sign_timestamped

    fn, region = c.name("rrs-webhook"), c.region("rrs")
    secret = c.target.secret(c.secrets["rrs-webhook-secret"])
    body = json.dumps({"type": "verify.check", "id": f"check-{uuid.uuid4().hex[:12]}"}).encode()
    headers = {"content-type": "application/json"}
    now = int(c.target.now())  # the target's clock: the sandbox's may be moved
    wrong = c.target.http(fn, region, "POST", "/", body, {**headers, "x-rrs-signature": sign_timestamped(body, "check-wrong", now)})
    expect(wrong, 401, "invalid_signature", "a wrong signature")
    answer = c.target.http(fn, region, "POST", "/", body, {**headers, "x-rrs-signature": sign_timestamped(body, secret, now)})
    if answer.status != 400:
        raise Failed(f"an event signed with rrs-webhook-secret (not a job event): expected HTTP 400, got {answer.said()}")
    return "webhook signature verified, wrong signature refused, nothing stored"


PROBES: dict[str, Callable[[Context], str]] = {
    "dm": verify_dm, "ler": verify_ler, "ls": verify_ls, "upsr": verify_upsr, "rrs": verify_rrs,
}


def _unset(c: Context, system: str) -> list[str]:
    empty = []
    for s in c.secrets.values():
        if s.system != system:
            continue
        if not has_value(c.target.client(s.store, s.region), s):
            empty.append(s.physical)
    return empty


def verify(target: Target, graph: Graph) -> Iterator[tuple[str, bool, str]]:
    """(system, ok, what was seen or why it failed) per enabled system."""
    context = Context(target, graph, {s.name: s for s in secrets_in(graph)})
    for system in graph.config.systems.enabled():
        try:
            empty = _unset(context, system)
            if empty:
                yield system, False, f"secrets without a value: {', '.join(empty)} (make secrets)"
                continue
            yield system, True, PROBES[system](context)
        except Failed as err:
            yield system, False, str(err)
        except Exception as err:  # an unreachable URL, a denied call: named, not a traceback
            yield system, False, f"{type(err).__name__}: {err}"


def main(argv: list[str] | None = None) -> int:
    parser = stack_command(__doc__ or "")
    parser.add_argument("--sandbox", help="a running sandbox's control API, http://127.0.0.1:8700")
    options = parser.parse_args(argv)
    graph = plan_graph(options.stack)
    if graph is None:
        return 2
    results = list(verify(Target(graph, options.sandbox), graph))
    for system, ok, detail in results:
        print(f"{system:<5} {'ok' if ok else 'failed'}: {detail}")
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
