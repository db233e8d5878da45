"""The sandbox: emulator + graph + deployed data plane + hooked handlers + triggers + URLs.

``Sandbox(graph).start()`` brings the whole thing up in this process; scenarios then act as
the outside world through its helpers (HTTP to a Function URL, a mail dropped into a lane, an
operator setting a secret, the clock moving) and read the state the handlers left.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from email import message_from_bytes
from email.message import EmailMessage
from email.utils import formatdate
from typing import Any

from boto3.dynamodb.types import TypeDeserializer
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from components.offline.engine import Graph
from handlers.common.entry import registry
from sandbox import emulator, records
from sandbox.account import arns
from sandbox.alerts import alarm_notification, budget_notification
from sandbox.clients import Clients
from sandbox.clock import Clock
from sandbox.deploy import DeployReport, deploy
from sandbox.graph import FunctionSpec, ReceiptRuleSpec, Topology
from sandbox.interceptor import Interceptor
from sandbox.lambda_api import LambdaApi
from sandbox.modules import ModuleSwap
from sandbox.runtime import Resolver, Runtime
from sandbox.service_requests import Refusal, ses_invokes, ses_puts_object
from sandbox.standins import ModelStandIn, Outbox, sms_stand_in
from sandbox.takeover import Takeover
from sandbox.traces import Trace
from sandbox.triggers import Triggers
from sandbox.urls import FunctionUrlServer


@dataclass(frozen=True)
class HttpAnswer:
    """What a Function URL answered."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


class Sandbox:
    """The local environment for one graph."""

    def __init__(
        self,
        graph: Graph,
        *,
        resolver: Resolver | None = None,
        emulator_port: int | None = None,
        url_base_port: int | None = None,
        takeover: Takeover | None = None,
    ) -> None:
        self.graph = graph
        self.topology = Topology.from_graph(graph)
        self.prefix = graph.config.prefix
        self.clock = Clock()
        self.model = ModelStandIn()
        self.outbox = Outbox()
        self.interceptor = Interceptor(
            policies=self.topology.policies,
            ses_identities=[i for i, _ in self.topology.identities],
            partition_keys={
                str(t.inputs["name"]): str(t.inputs["hashKey"])
                for t in graph.of_type("aws:dynamodb/table:Table")
                if t.inputs.get("name") and t.inputs.get("hashKey")
            },
            stand_ins={
                ("bedrock", "Converse"): self.model,
                ("sms-voice", "SendTextMessage"): sms_stand_in,
            },
        )
        self._resolver = resolver
        self._emulator_port = emulator_port
        self._url_base_port = url_base_port
        self._takeover = takeover
        self.emulator: emulator.Emulator | emulator.Attached | None = None
        self.internal = Clients(internal=True)
        self.external = Clients(internal=False)
        self.runtime: Runtime | None = None
        self.triggers: Triggers | None = None
        self.deployed: DeployReport | None = None
        self.urls: dict[str, FunctionUrlServer] = {}
        self._pump: threading.Thread | None = None
        self._stop = threading.Event()
        self._patches: list[tuple[Any, str, Any]] = []
        self.pump_lock = threading.RLock()
        """Held by the background pump and by control requests, one at a time."""
        self._modules = ModuleSwap()
        self._saved_env: dict[str, str] = {}

    # Lifecycle -----------------------------------------------------------------------------

    def start(self) -> Sandbox:
        self._saved_env = dict(os.environ)
        if self._takeover is not None:  # an upgrade: the old release's state, its clock
            self.emulator = emulator.attach(self._takeover.endpoint)
            self.clock.jump_to(self._takeover.clock)
        else:
            self.emulator = emulator.start(port=self._emulator_port)
        self._fresh_handler_modules()
        # New containers on the sandbox's time: no service wired or collaborator given before.
        registry.clear()
        registry.override(clock=self.clock.now)
        self.interceptor.install()
        self.deployed = deploy(self.topology, self.internal, existing=self._takeover is not None)
        self.runtime = Runtime(self.topology, self.interceptor, resolver=self._resolver)
        self.runtime.install_log_routing()
        self.triggers = Triggers(self.topology, self.runtime, self.internal, self.clock)
        self.triggers.setup()
        if self._takeover is not None:
            self._takeover.resume(self.triggers)
        lambda_api = LambdaApi(self.triggers)
        self.interceptor.stand_ins[("lambda", "Invoke")] = lambda_api.invoke
        self.interceptor.stand_ins[("lambda", "GetFunctionUrlConfig")] = (
            lambda_api.get_function_url_config
        )
        self.interceptor.listeners.append(self.outbox.observe)
        self.interceptor.listeners.append(
            lambda record, _params: self.triggers.note_call(record.service, record.operation)  # type: ignore[union-attr]
        )
        port = self._url_base_port
        for spec in self.topology.functions.values():
            if spec.url_auth is None:
                continue
            server = FunctionUrlServer(
                spec,
                lambda name, event: self._runtime.invoke(name, event, source="url"),
                port=port or 0,
            )
            server.start()
            self.urls[spec.name] = server
            self._triggers.local_urls[spec.name] = server.url
            for resource in self.graph.of_type("aws:lambda/functionUrl:FunctionUrl"):
                deployed = resource.outputs.get("functionUrl")
                if resource.inputs.get("functionName") == spec.name and deployed:
                    self._runtime.url_aliases[str(deployed).rstrip("/") + "/"] = server.url
            if port:
                port += 1
        return self

    def _fresh_handler_modules(self) -> None:
        """A new deployment starts new containers: forget the graph's handler packages (their
        module-level caches may hold clients of an earlier sandbox), except handlers.common,
        whose caches the runtime swaps per function (``sandbox.modules``)."""
        resolve = self._resolver or (lambda dotted: dotted)
        self._modules.start(
            # handlers.<system>[.functions].<function>.handler -> the whole system package
            ".".join(resolve(spec.handler).split(".")[:-2]).removesuffix(".functions")
            for spec in self.topology.functions.values()
        )

    def stop(self) -> None:
        self._stop.set()
        if self._pump is not None:
            self._pump.join(timeout=5)
        for server in self.urls.values():
            server.stop()
        if self.runtime is not None:
            self.runtime.uninstall_log_routing()
        self.interceptor.uninstall()
        for owner, attribute, original in reversed(self._patches):
            setattr(owner, attribute, original)
        self._patches.clear()
        registry.clear()
        self._modules.restore()
        if self.emulator is not None:
            self.emulator.stop()
            os.environ.clear()
            os.environ.update(self._saved_env)

    def patch(self, owner: Any, attribute: str, value: Any) -> None:
        """Replace ``owner.attribute`` until the sandbox stops (a scenario's fakes)."""
        self._patches.append((owner, attribute, getattr(owner, attribute)))
        setattr(owner, attribute, value)

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(self, *_: Any) -> None:
        self.stop()

    def run_pump(self, interval_s: float = 0.5, *, speed: float = 1.0, recurring: bool = True) -> None:
        """Keep delivering in the background (``make sandbox``): a full poll every few rounds
        (so changes made with ``aws --endpoint-url`` are seen), recurring schedules firing as
        the clock passes them (unless not ``recurring``: tests that compare state before and
        after), the clock running ``speed`` times faster than real time."""

        def loop() -> None:
            rounds = 0
            last = self.clock.now()
            while not self._stop.wait(interval_s):
                rounds += 1
                try:
                    with self.pump_lock:
                        if speed > 1:
                            self.clock.offset += dt.timedelta(seconds=(speed - 1) * interval_s)
                        now = self.clock.now()
                        if recurring:
                            self._triggers.fire_recurring(last, now)
                        last = now
                        self._triggers.poll_once(full=rounds % 4 == 0)
                        self._triggers.drain()
                except Exception as err:  # keep serving; report the pump's problem
                    self._triggers.problems.append(f"pump: {err}")

        self._pump = threading.Thread(target=loop, name="sandbox-pump", daemon=True)
        self._pump.start()

    @property
    def _runtime(self) -> Runtime:
        assert self.runtime is not None, "start() the sandbox first"
        return self.runtime

    @property
    def _triggers(self) -> Triggers:
        assert self.triggers is not None, "start() the sandbox first"
        return self.triggers

    # Names ---------------------------------------------------------------------------------

    def name(self, seed: str) -> str:
        """The physical name of a document's resource name: ``ler-intake`` -> ``dev-ler-intake``."""
        return seed if seed.startswith(f"{self.prefix}-") else f"{self.prefix}-{seed}"

    def function(self, seed: str) -> FunctionSpec:
        return self.topology.functions[self.name(seed)]

    def bucket(self, seed: str) -> str:
        wanted = self.name(seed)
        for b in self.topology.buckets:
            if b.name == wanted or b.name.startswith(wanted + "-"):
                return b.name
        raise KeyError(f"no bucket {seed}")

    def region_of(self, seed: str) -> str:
        name = self.name(seed)
        for collection in (self.topology.tables, self.topology.queues, self.topology.buckets):
            for item in collection:
                if item.name == name or item.name.startswith(name + "-"):
                    return item.region
        if name in self.topology.functions:
            return self.topology.functions[name].region
        for secret, region, _ in self.topology.secrets:
            if secret in (name, self.secret_name(seed)):
                return region
        raise KeyError(f"nothing named {seed}")

    def aws(self, service: str, region: str) -> Any:
        """A client acting as the outside world (recorded, never IAM-checked)."""
        return self.external(service, region)

    # Acting as the outside world -----------------------------------------------------------

    def url(self, seed: str) -> str:
        return self.urls[self.name(seed)].url

    def http(
        self,
        seed: str,
        method: str = "GET",
        path: str = "/",
        *,
        body: bytes | str = b"",
        headers: Mapping[str, str] | None = None,
        sign: bool = False,
    ) -> HttpAnswer:
        """A real HTTP request to a function's local URL (SigV4-signed with ``sign``)."""
        data = body.encode() if isinstance(body, str) else body
        target = self.url(seed).rstrip("/") + path
        sent = dict(headers or {})
        if sign:
            sent.update(self._sigv4(method, target, data, sent, self.function(seed).region))
        request = urllib.request.Request(  # noqa: S310 - the local Function URL, http only
            target, data=data or None, method=method, headers=sent
        )
        try:
            with _NO_REDIRECTS.open(request, timeout=30) as answer:
                return HttpAnswer(answer.status, dict(answer.headers.items()), answer.read())
        except urllib.error.HTTPError as err:
            return HttpAnswer(err.code, dict(err.headers.items()), err.read())

    @staticmethod
    def _sigv4(
        method: str, url: str, data: bytes, headers: Mapping[str, str], region: str
    ) -> dict[str, str]:
        request = AWSRequest(method=method, url=url, data=data, headers=dict(headers))
        SigV4Auth(Credentials("sandbox", "sandbox", "sandbox"), "lambda", region).add_auth(request)
        return {k: str(v) for k, v in request.headers.items()}

    def secret_name(self, seed: str) -> str:
        """A secret's name in its store: ``dev-dm-crm-read``, or ``/dev/dm-crm-read`` for a
        parameter (``secretStore: ssm``)."""
        parameter = f"/{self.prefix}/{seed}"
        return parameter if parameter in self.topology.parameters else self.name(seed)

    def set_secret(self, seed: str, value: str) -> None:
        """The operator sets a secret's value (as after ``pulumi up`` and ``make secrets``)."""
        name = self.secret_name(seed)
        if name in self.topology.parameters:
            self.aws("ssm", self.region_of(seed)).put_parameter(
                Name=name, Value=value, Type="SecureString", Overwrite=True
            )
            return
        self.aws("secretsmanager", self.region_of(seed)).put_secret_value(
            SecretId=name, SecretString=value
        )

    def put_object(self, bucket_seed: str, key: str, body: bytes | str, **extra: Any) -> None:
        """Someone uploads a file (the S3 notification fires on the next drain)."""
        data = body.encode() if isinstance(body, str) else body
        self.aws("s3", self.region_of(bucket_seed)).put_object(
            Bucket=self.bucket(bucket_seed), Key=key, Body=data, **extra
        )

    def drop_mail(self, mime: bytes | str, *, recipient: str) -> list[str]:
        """SES receives a mail for ``recipient``: each matching receipt rule's S3 action stores
        it under its prefix (the object key is the SES message id), if the bucket's policy
        admits SES writing for that rule (``sandbox.service_requests.ses_puts_object``; a write
        refused is recorded in ``triggers.refusals`` and stores nothing). Returns the keys
        stored."""
        data = mime.encode() if isinstance(mime, str) else mime
        message_id = uuid.uuid4().hex
        keys = []
        matched = False
        for rule in self.topology.receipt_rules:
            domain = recipient.rpartition("@")[2]
            if not any(r.lower() in (recipient.lower(), domain.lower()) for r in rule.recipients):
                continue
            matched = True
            if not rule.active:
                # An account has one active rule set per region; a stack that does not activate
                # its own (dev, by config) receives no mail in AWS. The lane still delivers here
                # so the day can be played, and says so.
                self._triggers.traces.append(
                    Trace(
                        "inactive",
                        f"ses:{rule.name}",
                        rule.rule_set,
                        "this stack does not activate its receipt rule set: in AWS, SES applies "
                        "only the account's active set in the region",
                    )
                )
            for bucket, prefix in rule.s3_actions:
                key = f"{prefix}{message_id}"
                put = ses_puts_object(rule.region, rule.rule_set, rule.name, bucket, key)
                decision, where = self._triggers.access.resource(
                    arns(rule.region).bucket(bucket), put
                )
                if not decision.allowed:
                    self._triggers.refuse(
                        Refusal(
                            f"ses:{rule.name}",
                            f"s3://{bucket}/{prefix}",
                            put,
                            where,
                            decision.explicit_deny,
                        )
                    )
                    continue
                self.aws("s3", rule.region).put_object(Bucket=bucket, Key=key, Body=data)
                keys.append(f"s3://{bucket}/{key}")
            for function_arn, invocation_type in rule.lambda_actions:
                self._invoke_for_mail(
                    rule, message_id, data, recipient, function_arn, invocation_type
                )
        if not matched:
            raise KeyError(f"no receipt rule accepts mail for {recipient}")
        return keys

    def _invoke_for_mail(
        self,
        rule: ReceiptRuleSpec,
        message_id: str,
        data: bytes,
        recipient: str,
        function_arn: str,
        invocation_type: str,
    ) -> None:
        """A receipt rule's Lambda action: SES invokes the function as ``ses.amazonaws.com``,
        which the function's policy must admit for this rule (``ses_invokes``)."""
        parsed = message_from_bytes(data)
        event = records.ses_record(
            message_id=message_id,
            sender=str(parsed.get("From", "")),
            recipients=[recipient],
            subject=str(parsed.get("Subject", "")),
            function_arn=function_arn,
            invocation_type=invocation_type,
            now=self.clock.now(),
        )
        request = ses_invokes(rule.region, rule.rule_set, rule.name, function_arn)
        self._triggers.deliver(function_arn, event, f"ses:{rule.name}", request)

    def notify_budget(
        self, budget: str | None = None, *, notification_type: str = "ACTUAL", threshold: float = 80
    ) -> list[str]:
        """AWS Budgets reports a budget over ``threshold`` percent (every budget of the graph,
        or the one named): the notification is published to its topics if their topic and key
        policies admit Budgets. Returns the topic ARNs reached; refusals are in
        ``triggers.refusals``."""
        budgets = [b for b in self.topology.budgets if budget in (None, b.name)]
        if not budgets:
            raise KeyError(f"no budget {budget or ''} in the graph".replace("  ", " "))
        reached: list[str] = []
        for spec in budgets:
            reached += budget_notification(
                self._triggers,
                self.outbox,
                spec,
                notification_type=notification_type,
                threshold=threshold,
            )
        return reached

    def notify_alarm(self, alarm: str, *, state: str = "ALARM") -> list[str]:
        """A CloudWatch alarm of the graph (physical name) enters ``state``: its SNS actions
        publish if their topic and key policies admit CloudWatch. Returns the topics reached."""
        spec = next((a for a in self.topology.alarms if a.name == alarm), None)
        if spec is None:
            raise KeyError(f"no alarm {alarm} in the graph")
        return alarm_notification(self._triggers, self.outbox, spec, state=state)

    def fire(self, schedule_seed: str) -> None:
        """A recurring schedule fires now."""
        self._triggers.fire_schedule(self.name(schedule_seed))

    def advance(self, **delta: float) -> list[str]:
        """Move the sandbox clock (``hours=2``); fires what became due; returns schedule names."""
        return self._triggers.advance(dt.timedelta(**delta))

    def drain(self) -> int:
        return self._triggers.drain()

    def invoke(self, seed: str, event: Any, *, source: str = "manual") -> Any:
        return self._runtime.invoke(self.name(seed), event, source=source)

    # Reading state -------------------------------------------------------------------------

    def items(self, table_seed: str) -> list[dict[str, Any]]:
        """Every item of a table, as plain Python values."""
        ddb = self.internal("dynamodb", self.region_of(table_seed))
        found: list[dict[str, Any]] = []
        d = TypeDeserializer()
        for page in ddb.get_paginator("scan").paginate(TableName=self.name(table_seed)):
            for item in page.get("Items", []):
                found.append({k: _plain(d.deserialize(v)) for k, v in item.items()})
        return found

    def objects(self, bucket_seed: str, prefix: str = "") -> list[str]:
        s3 = self.internal("s3", self.region_of(bucket_seed))
        keys: list[str] = []
        for page in s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket(bucket_seed), Prefix=prefix
        ):
            keys += [o["Key"] for o in page.get("Contents", [])]
        return keys

    def queue_depth(self, queue_seed: str) -> int:
        name = self.name(queue_seed)
        queue = next(q for q in self.topology.queues if q.name == name)
        sqs = self.internal("sqs", queue.region)
        url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
        attributes = sqs.get_queue_attributes(
            QueueUrl=url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"]) + int(
            attributes["ApproximateNumberOfMessagesNotVisible"]
        )

    def denials(self) -> list[Any]:
        return self.interceptor.denials()


class _KeepRedirects(urllib.request.HTTPRedirectHandler):
    """Hand a 3xx back to the caller (a Function URL's redirect is part of its answer)."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_NO_REDIRECTS = urllib.request.build_opener(_KeepRedirects)


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, set):
        return sorted(_plain(v) for v in value)
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    return value


def mime_message(sender: str, to: str, subject: str, text: str) -> bytes:
    """A plain-text RFC 5322 message, as SES stores an inbound mail."""
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = formatdate(usegmt=True)
    message["Message-ID"] = f"<{uuid.uuid4().hex}@sandbox.local>"
    message.set_content(text)
    return bytes(message)
