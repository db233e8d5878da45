"""``make verify STACK=<stack>``: after `pulumi up`, does each system work, past authentication?

Per system, first every secret it reads must hold a value (DescribeSecret or
DescribeParameters: metadata, no value read), then one synthetic request, signed with the
stack's own secret exactly as the real sender signs and marked ``x-crm-check`` (``handlers.common.function_url.CHECK_HEADER``), goes through the real
Function URL, the real authenticity check and parsing, and the real writes. The mark is read
only after the request proved authentic: it skips no check (every probe first sends a forged
one, with the mark, and expects it refused), it only holds the outside world back. What each
check touches, and removes (in ``finally``, also when the check failed part way):

- dm: puts a proposal ``check-a-<id>#check-b-<id>`` marked ``check`` (TTL one hour) in
  dm-pairs; GET /review renders it; POST /confirm, twice: dm-merge claims the pair (its
  TransactWriteItems on dm-decisions and dm-merges), sees the mark, releases claim and link
  before the CRM is read, and answers 409 ``check`` both times. Removed: the proposal and any
  claim, lock or link marker left by a failed release. A forged link answers 403.
- ler: a JSON lead (``verify-check@example.com``) with the intake secret (or SigV4 in ``iam``
  mode): ler-intake stores the raw body in ler-raw under ``form/``, pre-screens it and queues it
  on ler-intake-queue marked ``check`` (``Lead.is_check``), answering where it stored it. The
  lead then travels the whole chain, each stage doing its real work: ler-normalize cleans it
  and stores its record under ``normalized/`` in ler-records, ler-enrich reads the cache (and
  calls no paid provider for a check), ler-dedupe reads ler-identity, ler-filter passes it by
  being a check, and ler-push makes the CRM search every push makes (the Service Key and its
  read scope proved) but creates no contact and notes ``check#<lead id>`` in ler-enrich-cache
  (TTL one hour). verify polls for that note for at most ``--wait`` seconds and says which stage
  it last saw otherwise; a junk record for the lead fails it at once. No check is counted in
  ler's business metrics. Removed: every version of the raw object, the normalized record, a
  junk record if any, and the note. A wrong secret answers 401. A rescue link signed with
  ler-rescue-link-key naming no junk record: 400 before any read; a forged one 403.
- ls: an arrival from a search engine with the stack's first site origin: its touch is in
  ls-touches and is then deleted; a foreign origin answers 403; the report, SigV4-signed, 200;
  where the report is mailed, last week's page link signed with ls-report-link-key opens (200)
  on ls-report-page and a forged one answers 403.
- upsr: an ``orders/create`` webhook for a synthetic order (negative id, no customer, one line)
  signed with the app's client secret for the store: signature, shop, topic, parse and replay
  horizon, then the marker in upsr-orders marked ``check`` with no job (no nudge, no history:
  upsr-order drops the customer of any check order). Removed: the marker. A wrong signature
  answers 401.
- rrs: a ``job.completed`` event for a synthetic customer (``verify-check@example.com``)
  signed with the job tool's secret: rrs-webhook writes the request (marked ``check``, TTL one
  day), the job and the intake audit, and creates the request's one-off schedule; rrs-sender
  suppresses a check request should the schedule ever fire. Removed: the schedule, the
  request, its job and audit rows. A wrong signature answers 401.

Names come from the offline plan's graph; Function URLs from Lambda GetFunctionUrlConfig.
``--sandbox http://127.0.0.1:8700`` points the same command at a running ``make sandbox`` (its
control API lists the local URLs and the AWS emulator), which is how the tests run it.
Prints ``ok`` or ``failed: <reason>`` per system; exits 1 if any failed.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import hashlib
import hmac
import json
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

from components.offline.engine import Graph
from components.operate import no_credentials, plan_graph, stack_command
from components.operate.stack_secrets import StackSecret, has_value, read_value, secrets_in
from handlers.common.function_url import CHECK_HEADER
from handlers.common.link_tokens import Keyring, issue_token, verify_token
from handlers.common.webhook_signatures import sign_timestamped
from handlers.lead_enricher import check_arrivals
from handlers.lead_enricher.contract import CACHE_KEY, FORM_PREFIX, NORMALIZED_PREFIX
from handlers.lead_enricher.junk_log import day_prefix
from handlers.lead_enricher.lead import lead_id_for
from handlers.review_requests.domain import request_id_for


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


def verify_dm(c: Context) -> str:
    keyring = Keyring.from_secret_string(c.target.secret(c.secrets["dm-link-key"]))
    check = uuid.uuid4().hex[:12]
    low, high = f"check-a-{check}", f"check-b-{check}"  # low < high, as pair keys are
    pair = f"{low}#{high}"
    now = c.target.now()

    def link(action: str) -> str:
        return issue_token(keyring, subject=pair, action=action, ttl_seconds=600, now=now)

    fn, region = c.name("dm-merge"), c.region("dm")
    expect(c.target.http(fn, region, "GET", "/review?t=forged"), 403, "invalid_link", "a forged link")
    pairs, token = c.target.client("dynamodb", region), ""
    # The synthetic proposal: marked check (dm-merge refuses to merge it) and expiring in an
    # hour by dm-pairs' TTL should this command die before it removes it.
    pairs.put_item(TableName=c.name("dm-pairs"), Item={
        "pair_key": {"S": pair}, "band": {"S": "propose"}, "run_id": {"S": "check"},
        "check": {"BOOL": True}, "ttl": {"N": str(int(now) + 3600)},
        "explanation": {"S": "A check by make verify: nothing will be merged."},
    })
    try:
        page = c.target.http(fn, region, "GET", f"/review?t={link('review')}", headers={"accept": "text/html"})
        expect(page, 200, "", "the review page of a check proposal")
        token = link("confirm")
        confirm = f"/confirm?t={token}"
        json_ = {"accept": "application/json"}
        expect(c.target.http(fn, region, "POST", confirm, headers=json_), 409, "check", "confirming a check proposal")
        # The claim was written and released with its link: the same link is refused the same way.
        expect(c.target.http(fn, region, "POST", confirm, headers=json_), 409, "check", "the same confirm link again")
        decision = pairs.get_item(TableName=c.name("dm-decisions"), Key={"pair_key": {"S": pair}})
        if "Item" in decision:
            raise Failed(f"confirming a check proposal left a decision in {c.name('dm-decisions')}")
    finally:
        # The proposal, and whatever a claim that was never released left (a failed check).
        pairs.delete_item(TableName=c.name("dm-pairs"), Key={"pair_key": {"S": pair}})
        pairs.delete_item(TableName=c.name("dm-decisions"), Key={"pair_key": {"S": pair}})
        token_id = verify_token(token, keyring, action="confirm", now=now).token_id if token else ""
        for held in (f"lock#{low}", f"lock#{high}", f"link#{token_id}"):
            pairs.delete_item(TableName=c.name("dm-merges"), Key={"merge_id": {"S": held}})
    return "review page served, confirm claimed and released a check proposal (nothing merged), forged link refused"


def verify_ler(c: Context) -> str:
    fn, region = c.name("ler-intake"), c.region("ler")
    ler = c.graph.config.systems.ler
    assert ler is not None
    if not c.target.trigger_on(c.name("ler-normalize"), region):
        # The check lead would wait in the queue: say so before writing anything.
        raise Failed(f"{c.name('ler-intake-queue')} does not trigger ler-normalize on this stack "
                     "(queueTriggers: paused), so no lead travels the chain: set queueTriggers "
                     "to on, pulumi up, and verify again (nothing was sent)")
    # A synthetic lead (unique, so a new lead id) with a reserved example.com address (RFC 2606).
    body = json.dumps({
        "name": "Verify Check", "email": "verify-check@example.com",
        "message": f"make verify {uuid.uuid4().hex[:12]}",
    }).encode()
    headers = {"content-type": "application/json"}
    # Where the chain keeps what it writes for this lead (bucket names end with the account id):
    # removed below even when the check fails part way.
    account = c.target.client("sts", region).get_caller_identity()["Account"]
    day = dt.datetime.fromtimestamp(c.target.now(), dt.UTC).date()
    lead_id = lead_id_for("form", hashlib.sha256(body).hexdigest())
    trail = LerTrail(
        c, region, lead_id,
        raw=(f"{c.name('ler-raw')}-{account}", f"{FORM_PREFIX}{day.isoformat()}/{lead_id}.json"),
        normalized=(f"{c.name('ler-records')}-{account}", f"{NORMALIZED_PREFIX}{lead_id}.json"),
        junk=(f"{c.name('ler-junk')}-{account}", f"{day_prefix(day)}{lead_id}.json"),
    )
    sent = time.monotonic()
    try:
        if ler.intake_auth == "iam":
            answer = c.target.http(fn, region, "POST", "/", body, headers, sign=True)
        else:
            secret = c.target.secret(c.secrets["ler-intake-secret"])
            wrong = c.target.http(fn, region, "POST", "/", body, {**headers, "x-ler-intake-secret": "check-wrong"})
            expect(wrong, 401, "unauthorized", "a wrong intake secret")
            answer = c.target.http(fn, region, "POST", "/", body, {**headers, "x-ler-intake-secret": secret})
        expect(answer, 202, "", "a check lead with the intake secret")
        written = json.loads(answer.body).get("check") or {}
        raw, key = trail.raw
        if (written.get("bucket"), written.get("raw_key")) != (raw, key):
            raise Failed(f"the check lead answered 202 but was not stored as {raw}/{key} (answer {written})")
        trail.s3.head_object(Bucket=raw, Key=key)  # the raw original is really there
        if written.get("queued") != 1:
            raise Failed(f"the check lead was not queued on {c.name('ler-intake-queue')} (answer {written})")
        stages = trail.arrival(c.wait_s)
        took = time.monotonic() - sent
    finally:
        trail.remove()
    # The digest's rescue links: a link signed with the stack's key for a subject that names
    # no junk record passes the signature and is refused before any read; a forged one is not.
    keyring = Keyring.from_secret_string(c.target.secret(c.secrets["ler-rescue-link-key"]))
    token = issue_token(
        keyring, subject=f"check-{uuid.uuid4().hex[:12]}", action="rescue",
        ttl_seconds=600, now=c.target.now(),
    )
    rescue = c.name("ler-rescue")
    expect(c.target.http(rescue, region, "GET", "/rescue?t=forged"), 403, "invalid_link", "a forged rescue link")
    expect(c.target.http(rescue, region, "GET", f"/rescue?t={token}"), 400, "invalid_subject",
           "a rescue link signed with ler-rescue-link-key")
    seen = "; ".join(f"{stage.removeprefix('ler-')} {what}" for stage, what in stages.items())
    return (f"intake secret verified; check lead stored in ler-raw, queued and carried to ler-push "
            f"in {took:.1f} s ({seen}) with no contact created, all it wrote removed; rescue link key verified, "
            "forged link refused")


@dataclass
class LerTrail:
    """What the chain writes for ler's check lead, read and removed by (bucket, key)."""

    c: Context
    region: str
    lead_id: str
    raw: tuple[str, str]
    normalized: tuple[str, str]
    junk: tuple[str, str]

    @property
    def s3(self) -> Any:
        return self.c.target.client("s3", self.region)

    @property
    def arrival_key(self) -> dict[str, Any]:
        """ler-push's note in ler-enrich-cache that the check lead arrived (``check_arrivals``)."""
        return {CACHE_KEY: {"S": check_arrivals.key(self.lead_id)}}

    def arrival(self, wait_s: float) -> dict[str, str]:
        """What each stage made of the lead, once ler-push noted it; polled for at most
        ``wait_s`` (the chain is asynchronous: a queue, then four EventBridge rules)."""
        db, table = self.c.target.client("dynamodb", self.region), self.c.name("ler-enrich-cache")
        deadline = time.monotonic() + wait_s
        while True:
            found = db.get_item(TableName=table, Key=self.arrival_key, ConsistentRead=True).get("Item")
            if found:
                stages = {k: str(v.get("S", "")) for k, v in found.get("stages", {}).get("M", {}).items()}
                if not found.get("crm_ok", {}).get("BOOL"):
                    raise Failed(f"the check lead reached ler-push, but the {stages.get('ler-push', 'CRM search failed')}: "
                                 "ler-crm-key must hold a HubSpot Service Key with crm.objects.contacts.read "
                                 "(make secrets REPLACE=ler-crm-key)")
                return stages
            dropped = self._read_json(*self.junk)
            if dropped is not None:
                raise Failed(f"ler-{dropped.get('stage', 'filter')} dropped the check lead as junk "
                             f"({dropped.get('reason', 'no reason')}): it never reached ler-push")
            if time.monotonic() >= deadline:
                raise Failed(f"the check lead did not reach ler-push within {wait_s:g} s "
                             f"(last stage seen: {self._last_stage()})")
            time.sleep(self.c.target.poll_s)

    def _last_stage(self) -> str:
        if self._read_json(*self.normalized) is not None:
            return (f"ler-normalize, which stored {self.normalized[1]}; the later stages write "
                    f"nothing before ler-push's note: the logs of ler-enrich, ler-dedupe, ler-filter "
                    f"and ler-push name lead {self.lead_id}")
        return f"ler-intake, which queued it; ler-normalize stored nothing for lead {self.lead_id}"

    def _read_json(self, bucket: str, key: str) -> dict[str, Any] | None:
        try:
            found = json.loads(self.s3.get_object(Bucket=bucket, Key=key)["Body"].read())
        except self.s3.exceptions.NoSuchKey:
            return None
        return found if isinstance(found, dict) else {}

    def remove(self) -> None:
        """Every object the chain wrote for the lead and ler-push's note, whichever exist."""
        for bucket, key in (self.raw, self.normalized, self.junk):
            _remove_object(self.s3, bucket, key)
        self.c.target.client("dynamodb", self.region).delete_item(
            TableName=self.c.name("ler-enrich-cache"), Key=self.arrival_key
        )


def _remove_object(s3: Any, bucket: str, key: str) -> None:
    """Every version of ``key`` (ler-raw is versioned: a plain delete would only hide it)."""
    versions = s3.list_object_versions(Bucket=bucket, Prefix=key)
    for found in (*versions.get("Versions", []), *versions.get("DeleteMarkers", [])):
        if found["Key"] == key:
            s3.delete_object(Bucket=bucket, Key=key, VersionId=found["VersionId"])


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
    # A synthetic order: a negative id no Shopify order has, no customer, one line.
    order_id = -int(uuid.uuid4().int % 10**12) - 1
    created = dt.datetime.fromtimestamp(c.target.now(), dt.UTC).isoformat()
    body = json.dumps({
        "id": order_id, "name": "#check", "created_at": created, "currency": "USD", "customer": None,
        "line_items": [{"sku": "check", "title": "make verify", "quantity": 1, "price": "1.00"}],
    }).encode()

    def sent(key: str) -> dict[str, str]:
        mac = base64.b64encode(hmac.new(key.encode(), body, hashlib.sha256).digest()).decode()
        return {
            "content-type": "application/json", "x-shopify-topic": "orders/create",
            "x-shopify-shop-domain": upsr.store_domain, "x-shopify-hmac-sha256": mac,
            "x-shopify-webhook-id": f"check-{uuid.uuid4().hex[:12]}",
        }

    expect(c.target.http(fn, region, "POST", "/", body, sent("check-wrong")), 401, "invalid_signature", "a wrong signature")
    orders, key = c.target.client("dynamodb", region), {"order_id": {"S": str(order_id)}}
    try:
        answer = c.target.http(fn, region, "POST", "/", body, sent(secret))
        expect(answer, 200, "", "a check order signed with upsr-webhook-secret for the store")
        found = orders.get_item(TableName=c.name("upsr-orders"), Key=key).get("Item")
        if not found or not found.get("check", {}).get("BOOL"):
            raise Failed(f"the check order answered 200 but no check marker is in {c.name('upsr-orders')}")
        if found.get("job_state", {}).get("S") != "none":
            raise Failed(f"the check order was given a job ({found.get('job_state')}): it could reach a customer")
    finally:
        orders.delete_item(TableName=c.name("upsr-orders"), Key=key)
    return "signature and shop verified, check order parsed and marked in upsr-orders (no job, no nudge) and removed"


def verify_rrs(c: Context) -> str:
    fn, region = c.name("rrs-webhook"), c.region("rrs")
    secret = c.target.secret(c.secrets["rrs-webhook-secret"])
    check = f"check-{uuid.uuid4().hex[:12]}"
    now = c.target.now()  # the target's clock: the sandbox's may be moved
    # A synthetic job: its own customer id and a reserved example.com address (RFC 2606).
    body = json.dumps({
        "type": "job.completed", "id": check, "completion_id": check, "customer_id": check,
        "completed_at": dt.datetime.fromtimestamp(now, dt.UTC).isoformat(),
        "job": {"id": check, "title": "make verify"},
        "customer": {"name": "Verify Check", "email": "verify-check@example.com"},
    }).encode()
    headers = {"content-type": "application/json"}
    wrong = c.target.http(fn, region, "POST", "/", body, {**headers, "x-rrs-signature": sign_timestamped(body, "check-wrong", int(now))})
    expect(wrong, 401, "invalid_signature", "a wrong signature")
    request_id = request_id_for(check)  # what rrs-webhook names the request and its schedule
    db, tables = c.target.client("dynamodb", region), {t: c.name(f"rrs-{t}") for t in ("requests", "jobs", "audit")}
    try:
        answer = c.target.http(fn, region, "POST", "/", body, {**headers, "x-rrs-signature": sign_timestamped(body, secret, int(now))})
        expect(answer, 200, "", "a check job event signed with rrs-webhook-secret")
        result = json.loads(answer.body)
        if result.get("request_id") != request_id:
            raise Failed(f"the check job became request {result.get('request_id')}, not {request_id}")
        row = db.get_item(TableName=tables["requests"], Key={"request_id": {"S": request_id}}).get("Item") or {}
        if not row.get("check", {}).get("BOOL"):
            raise Failed(f"the check job answered 200 but no check request is in {tables['requests']}")
        if result.get("state") != "scheduled" or not result.get("schedule_created"):
            raise Failed(f"the check request was not scheduled (state {result.get('state')}, schedule_created {result.get('schedule_created')})")
    finally:
        _remove_rrs_check(c, region, request_id, check, tables)
    return "signature verified, check request scheduled in rrs-requests and its schedule created, then both removed (nothing sent)"


def _remove_rrs_check(c: Context, region: str, request_id: str, customer_id: str, tables: dict[str, str]) -> None:
    """The schedule (the only thing that would ever send), the request, its job and audit."""
    scheduler = c.target.client("scheduler", region)
    with contextlib.suppress(scheduler.exceptions.ResourceNotFoundException):  # never scheduled
        scheduler.delete_schedule(Name=request_id, GroupName=c.name("rrs-requests"))
    db = c.target.client("dynamodb", region)
    for table, key, value in (("audit", "request_id", request_id), ("jobs", "customer_id", customer_id)):
        found = db.query(TableName=tables[table], KeyConditionExpression=f"{key} = :v",
                         ExpressionAttributeValues={":v": {"S": value}})["Items"]
        schema = {"audit": ("request_id", "ts"), "jobs": ("customer_id", "job_ts")}[table]
        for item in found:
            db.delete_item(TableName=tables[table], Key={k: item[k] for k in schema})
    db.delete_item(TableName=tables["requests"], Key={"request_id": {"S": request_id}})


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


def verify(
    target: Target, graph: Graph, only: Collection[str] = (), wait_s: float = WAIT_S
) -> Iterator[tuple[str, bool, str]]:
    """(system, ok, what was seen or why it failed) per enabled system (those in ``only``)."""
    context = Context(target, graph, {s.name: s for s in secrets_in(graph)}, wait_s)
    for system in graph.config.systems.enabled():
        if only and system not in only:
            continue
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
    parser.add_argument("--system", action="append", choices=sorted(PROBES), default=[],
                        help="check only this system (repeatable); all enabled ones by default")
    parser.add_argument("--wait", type=float, default=WAIT_S, metavar="SECONDS",
                        help=f"how long ler's check lead may take to reach ler-push (default {WAIT_S:g})")
    options = parser.parse_args(argv)
    if not options.sandbox and no_credentials("verify"):
        return 2
    graph = plan_graph(options.stack)
    if graph is None:
        return 2
    results = list(verify(Target(graph, options.sandbox), graph, options.system, options.wait))
    for system, ok, detail in results:
        print(f"{system:<5} {'ok' if ok else 'failed'}: {detail}")
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
