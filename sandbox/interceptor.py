"""The hook on every boto3 client in the process: IAM check, stand-ins, and a call ledger.

``Interceptor.install()`` wraps ``botocore.session.Session.create_client`` so every client made
afterwards (by the handlers' own ``boto3.session.Session()``, boto3 resources, paginators)
carries three handlers:

- ``before-parameter-build``: while a function runs (a context variable names it), the call's
  IAM requirements are evaluated against that function's role policy from the graph;
- ``before-call``: a denied call is answered with the 403 AWS would give (so botocore raises
  its real ``ClientError`` / modeled ``AccessDeniedException``), and calls to services the
  emulator lacks (Bedrock Runtime, End User Messaging SMS) are answered by stand-ins;
- ``after-call``: every call is written to the ledger the demo report reads.

Calls made outside a function (the sandbox itself, a scenario playing the outside world) are
recorded but not checked: they stand for the operator and the customers, not for a role.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import botocore.session
from botocore.awsrequest import AWSResponse, HTTPHeaders
from botocore.errorfactory import ClientExceptionsFactory
from botocore.loaders import create_loader

from sandbox.actions import requirements
from sandbox.clients import creating_internal
from sandbox.iam import Decision, denial_message, evaluate


@dataclass(frozen=True)
class Caller:
    """The function on whose behalf the current thread calls AWS."""

    function: str
    role: str
    statements: Sequence[Mapping[str, Any]]


CURRENT: contextvars.ContextVar[Caller | None] = contextvars.ContextVar(
    "sandbox_caller", default=None
)
_ACTIVE: list[Caller | None] = [None]


def set_active(caller: Caller | None) -> None:
    """The caller of the one running invocation, for threads a handler starts itself (a
    ThreadPoolExecutor does not carry context variables): their calls are that function's."""
    _ACTIVE[0] = caller


_OUTSIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("sandbox_outside", default=False)


@contextlib.contextmanager
def outside() -> Iterator[None]:
    """Calls made in this block come from outside the stack, even while a function runs on
    another thread (the pump's): a deployer's command run in the sandbox's own process, as the
    tests run ``make verify``, is not the running function."""
    token = _OUTSIDE.set(True)
    try:
        yield
    finally:
        _OUTSIDE.reset(token)


def current_caller() -> Caller | None:
    if _OUTSIDE.get():
        return CURRENT.get()
    return CURRENT.get() or _ACTIVE[0]


@dataclass
class CallRecord:
    """One AWS call as the ledger keeps it."""

    function: str | None
    service: str
    operation: str
    region: str
    params: dict[str, Any]
    denied: Decision | None = None
    status: int = 200
    error: str | None = None
    unevaluated: tuple[str, ...] = ()


StandIn = Callable[[str, str, Mapping[str, Any], str | None], dict[str, Any]]
"""(service, operation, params, function) -> parsed response of a service the emulator lacks."""


@dataclass
class Interceptor:
    """Installs the hooks; holds the ledger and the stand-ins."""

    policies: Mapping[str, Sequence[Mapping[str, Any]]]
    ses_identities: Iterable[str] = ()
    partition_keys: Mapping[str, str] = field(default_factory=dict)
    """Each table's partition key (``dynamodb:LeadingKeys`` of a one-item request)."""
    stand_ins: dict[tuple[str, str], StandIn] = field(default_factory=dict)
    ledger: list[CallRecord] = field(default_factory=list)
    listeners: list[Callable[[CallRecord, Mapping[str, Any]], None]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _original: Any = None

    # Installation ---------------------------------------------------------------------------

    def install(self) -> None:
        """Hook every botocore client created from now on (and forget cached handler clients)."""
        if self._original is not None:
            return
        original = botocore.session.Session.create_client
        interceptor = self

        def create_client(session: Any, *args: Any, **kwargs: Any) -> Any:
            _share_models(session)
            client = original(session, *args, **kwargs)
            if not creating_internal():
                interceptor.attach(client)
            return client

        self._original = original
        setattr(botocore.session.Session, "create_client", create_client)  # noqa: B010
        _reset_handler_caches()

    def uninstall(self) -> None:
        if self._original is not None:
            setattr(botocore.session.Session, "create_client", self._original)  # noqa: B010
            self._original = None
        _reset_handler_caches()

    def attach(self, client: Any) -> None:
        """Register the three handlers on one client."""
        events = client.meta.events
        events.register("before-parameter-build", self._before_parameter_build)
        events.register("before-call", self._before_call)
        events.register("after-call", self._after_call)

    # Hooks ---------------------------------------------------------------------------------

    def _before_parameter_build(
        self, params: Mapping[str, Any], model: Any, context: dict[str, Any], **_: Any
    ) -> None:
        service = model.service_model.signing_name or model.service_model.endpoint_prefix
        region = str(context.get("client_region") or "us-east-1")
        caller = current_caller()
        record = CallRecord(
            function=caller.function if caller else None,
            service=service,
            operation=model.name,
            region=region,
            params=_summary(params),
        )
        context["sandbox_record"] = record
        context["sandbox_params"] = dict(params)
        if caller is None:
            return
        unevaluated: list[str] = []
        for requirement in requirements(
            service,
            model.name,
            params,
            region,
            ses_identities=self.ses_identities,
            partition_keys=self.partition_keys,
        ):
            decision = evaluate(caller.statements, requirement)
            unevaluated.extend(decision.unevaluated)
            if not decision.allowed:
                record.denied = decision
                break
        record.unevaluated = tuple(unevaluated)

    def _before_call(self, model: Any, context: dict[str, Any], **_: Any) -> Any:
        record: CallRecord | None = context.get("sandbox_record")
        if record is None:
            return None
        caller = current_caller()
        if record.denied is not None and caller is not None:
            protocol = model.service_model.protocol
            code = _denied_code(record.service, protocol)
            message = denial_message(caller.role, caller.function, record.denied)
            parsed = {
                "Error": {"Code": code, "Message": message},
                "ResponseMetadata": {"HTTPStatusCode": 403, "RequestId": str(uuid.uuid4())},
            }
            return AWSResponse("http://sandbox/denied", 403, HTTPHeaders(), None), parsed
        stand_in = self.stand_ins.get((record.service, model.name))
        if stand_in is not None:
            parsed = stand_in(
                record.service, model.name, context.get("sandbox_params", {}), record.function
            )
            parsed.setdefault(
                "ResponseMetadata", {"HTTPStatusCode": 200, "RequestId": str(uuid.uuid4())}
            )
            metadata: Any = parsed["ResponseMetadata"]
            status = int(metadata.get("HTTPStatusCode", 200))
            return AWSResponse("http://sandbox/stand-in", status, HTTPHeaders(), None), parsed
        return None

    def _after_call(
        self, http_response: Any, parsed: Mapping[str, Any], context: dict[str, Any], **_: Any
    ) -> None:
        record: CallRecord | None = context.get("sandbox_record")
        if record is None:
            return
        record.status = int(getattr(http_response, "status_code", 200) or 200)
        if record.status >= 300:
            record.error = str((parsed.get("Error") or {}).get("Code") or record.status)
        record.params = {**record.params, **_response_summary(parsed)}
        with self._lock:
            self.ledger.append(record)
        params = context.get("sandbox_params", {})
        for listener in list(self.listeners):
            listener(record, params)

    # Reading the ledger ----------------------------------------------------------------------

    def denials(self, function: str | None = None) -> list[CallRecord]:
        return [
            r
            for r in self.ledger
            if r.denied is not None and (function is None or r.function == function)
        ]


_SHARED: dict[str, Any] = {}


def _share_models(session: Any) -> None:
    """Let every botocore session of the process share one model loader and exceptions
    factory: each function's container makes its own clients (as Lambda does), and parsing the
    service models again for each would cost a tenth of a second a client."""
    if getattr(session, "_sandbox_shared", False):
        return

    if "loader" not in _SHARED:
        _SHARED["loader"] = create_loader()
        _SHARED["exceptions"] = ClientExceptionsFactory()
    session.register_component("data_loader", _SHARED["loader"])
    session._internal_components.register_component("exceptions_factory", _SHARED["exceptions"])
    session._sandbox_shared = True


def _denied_code(service: str, protocol: str) -> str:
    if service == "s3":
        return "AccessDenied"
    if service == "sns":
        return "AuthorizationError"
    if protocol == "query":
        return "AccessDenied"
    return "AccessDeniedException"


def _summary(params: Mapping[str, Any]) -> dict[str, Any]:
    """The identifying parameters of a call (names, keys), never bodies."""
    keep = (
        "TableName",
        "IndexName",
        "Bucket",
        "Key",
        "QueueUrl",
        "SecretId",
        "TopicArn",
        "Name",
        "GroupName",
        "FromEmailAddress",
        "Source",
        "modelId",
        "OriginationIdentity",
        "DestinationPhoneNumber",
        "EventBusName",
    )
    found = {k: params[k] for k in keep if k in params and isinstance(params[k], str)}
    tables: set[str] = set()
    for item in params.get("TransactItems") or []:
        for body in item.values() if isinstance(item, Mapping) else []:
            if isinstance(body, Mapping) and "TableName" in body:
                tables.add(str(body["TableName"]))
    tables.update(str(t) for t in params.get("RequestItems") or {})
    if tables:
        found["TableName"] = ",".join(sorted(tables))
    if "Entries" in params:
        found["DetailTypes"] = [
            e.get("DetailType") for e in params["Entries"] if isinstance(e, Mapping)
        ]
    return found


def _response_summary(parsed: Mapping[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if "MessageId" in parsed:
        found["MessageId"] = parsed["MessageId"]
    return found


def _reset_handler_caches() -> None:
    """Handler clients cached before the hook was installed would escape it."""
    try:
        from handlers.common.aws_clients import reset_clients
        from handlers.common.secrets import default_cache
    except ImportError:  # pragma: no cover - handlers/common is part of the project
        return
    reset_clients()
    default_cache.invalidate()
