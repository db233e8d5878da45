"""Run a function's handler in-process, as Lambda would: its environment, its role, its logs.

One invocation at a time (a lock), because the environment is process-wide: for the duration
of a call ``os.environ`` holds exactly the function's declared variables plus what the Lambda
runtime sets (region, function name, memory...) plus the emulator's endpoint and fake
credentials. The context variable ``CURRENT`` names the function, so the interceptor checks
its AWS calls against its role. Each function keeps its own "container" state: the cached
boto3 clients and secret values of ``handlers.common`` are swapped in and out per function, so
one function never reuses a secret another function was allowed to read.
"""

from __future__ import annotations

import importlib
import io
import os
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from sandbox.graph import FunctionSpec, Topology
from sandbox.interceptor import CURRENT, Caller, CallRecord, Interceptor, set_active

Resolver = Callable[[str], str]
_PROCESS_VARIABLES = frozenset(
    {
        "PATH",
        "HOME",
        "LANG",
        "LC_ALL",
        "TMPDIR",
        "PYTHONPATH",
        "PYTHONDONTWRITEBYTECODE",
        "VIRTUAL_ENV",
    }
)
"""Variables of the host process a handler may still see; nothing else leaks into it, so a
handler reading a variable its infra does not declare fails here as it would in Lambda."""
_LOG_BUFFER: ContextVar[io.StringIO | None] = ContextVar("sandbox_log_buffer", default=None)
_ACTIVE_BUFFER: list[tuple[io.StringIO, frozenset[threading.Thread]] | None] = [None]
"""The running invocation's log, and the threads that were alive when it began: a thread the
handler starts (a thread pool) does not carry the context variable, and writes to the log;
any other thread (a test printing, the pump between deliveries) writes where it writes.
Threads, not their ids: an id is reused as soon as its thread ends."""


@dataclass
class LambdaContext:
    """The parts of the Lambda context object handlers use."""

    function_name: str
    memory_limit_in_mb: int
    invoked_function_arn: str
    log_group_name: str
    timeout_s: int
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    log_stream_name: str = "sandbox/[$LATEST]0"
    _started: float = field(default_factory=time.monotonic)

    def get_remaining_time_in_millis(self) -> int:
        left = self.timeout_s - (time.monotonic() - self._started)
        return max(0, int(left * 1000))


@dataclass
class Invocation:
    """One run of one handler."""

    function: str
    source: str
    event: Any
    started: float
    result: Any = None
    error: str | None = None
    error_type: str | None = None
    traceback: str | None = None
    duration_s: float = 0.0
    logs: str = ""
    calls: list[CallRecord] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def denied(self) -> list[CallRecord]:
        return [c for c in self.calls if c.denied is not None]


class _Router(io.TextIOBase):
    """A stdout/stderr that writes into the running invocation's log buffer, if any."""

    def __init__(self, real: Any) -> None:
        self.real = real

    def write(self, text: str) -> int:
        buffer = _LOG_BUFFER.get()
        active = _ACTIVE_BUFFER[0]
        if buffer is None and active is not None and threading.current_thread() not in active[1]:
            buffer = active[0]
        if buffer is not None:
            return buffer.write(text)
        return int(self.real.write(text))

    def flush(self) -> None:
        self.real.flush()

    def isatty(self) -> bool:
        return bool(getattr(self.real, "isatty", lambda: False)())

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.real, "encoding", "utf-8"))


def _container_modules() -> list[tuple[Any, tuple[str, ...]]]:
    """Module-level caches that belong to one Lambda container (one function)."""
    found: list[tuple[Any, tuple[str, ...]]] = []
    try:
        from handlers.common import aws_clients, observability, secrets, settings

        found.append((aws_clients, ("_sessions", "_clients", "_tables", "_resources")))
        found.append((settings, ("_cache",)))  # each function reads its own environment
        found.append((observability, ("_container",)))  # each function has its cold start
        found.append((secrets.default_cache, ("_entries",)))
    except ImportError:  # pragma: no cover
        pass
    return found


class Runtime:
    """Invokes handlers in-process with their environment and role."""

    def __init__(
        self,
        topology: Topology,
        interceptor: Interceptor,
        *,
        resolver: Resolver | None = None,
        base_env: Mapping[str, str] | None = None,
    ) -> None:
        self.topology = topology
        self.interceptor = interceptor
        self.resolver = resolver or (lambda dotted: dotted)
        self.base_env = dict(base_env if base_env is not None else os.environ)
        self.invocations: list[Invocation] = []
        self.url_aliases: dict[str, str] = {}
        """Deployed Function URL -> local URL, applied to environment values (a function that
        links to another function's URL gets the local one)."""
        self.listeners: list[Callable[[Invocation], None]] = []
        self.lock = threading.RLock()
        self._containers: dict[str, dict[tuple[int, str], Any]] = {}
        self._warm: str | None = None
        self._streams: tuple[Any, Any] = (sys.stdout, sys.stderr)
        self._routers: tuple[_Router, _Router] | None = None

    def install_log_routing(self) -> None:
        """Send handler output to each invocation's buffer instead of the terminal."""
        if self._routers is None:
            self._streams = (sys.stdout, sys.stderr)
            self._routers = (_Router(sys.stdout), _Router(sys.stderr))
            sys.stdout, sys.stderr = self._routers

    def uninstall_log_routing(self) -> None:
        if self._routers is not None:
            # Put back what was there, unless someone (pytest's capture) replaced it since.
            if isinstance(sys.stdout, _Router):
                sys.stdout = self._streams[0]
            if isinstance(sys.stderr, _Router):
                sys.stderr = self._streams[1]
            self._routers = None

    def handler(self, spec: FunctionSpec) -> Callable[[Any, Any], Any]:
        module_name, _, attribute = self.resolver(spec.handler).rpartition(".")
        module = importlib.import_module(module_name)
        found: Callable[[Any, Any], Any] = getattr(module, attribute)
        return found

    def environment(self, spec: FunctionSpec) -> dict[str, str]:
        """What ``os.environ`` holds while ``spec`` runs."""
        env = {
            k: v
            for k, v in self.base_env.items()
            if k.startswith(("AWS_", "MOTO_")) or k in _PROCESS_VARIABLES
        }
        env.update(
            {
                "AWS_REGION": spec.region,
                "AWS_DEFAULT_REGION": spec.region,
                "AWS_LAMBDA_FUNCTION_NAME": spec.name,
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory_mb),
                "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
                "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{spec.name}",
                "AWS_EXECUTION_ENV": "AWS_Lambda_python3.14",
                "_HANDLER": spec.handler,
            }
        )
        env.update(
            {k: self.url_aliases.get(v.rstrip("/") + "/", v) for k, v in spec.environment.items()}
        )
        return env

    def _switch_container(self, function: str) -> None:
        if self._warm == function:
            return
        modules = _container_modules()
        if self._warm is not None:
            saved = self._containers.setdefault(self._warm, {})
            for owner, names in modules:
                for name in names:
                    saved[(id(owner), name)] = dict(getattr(owner, name))
        wanted = self._containers.get(function, {})
        for owner, names in modules:
            for name in names:
                current = getattr(owner, name)
                current.clear()
                current.update(wanted.get((id(owner), name), {}))
        self._warm = function

    def invoke(self, function: str, event: Any, *, source: str) -> Invocation:
        """Run ``function``'s handler on ``event`` synchronously; never raises."""
        spec = self.topology.functions[function]
        with self.lock:
            invocation = Invocation(function, source, event, time.time())
            context = LambdaContext(
                function_name=spec.name,
                memory_limit_in_mb=spec.memory_mb,
                invoked_function_arn=spec.arn,
                log_group_name=f"/aws/lambda/{spec.name}",
                timeout_s=spec.timeout_s,
            )
            saved_env = dict(os.environ)
            buffer = io.StringIO()
            caller = Caller(
                spec.name, spec.role_name, self.topology.policies.get(spec.role_name, [])
            )
            ledger_start = len(self.interceptor.ledger)
            token = CURRENT.set(caller)
            set_active(caller)
            _ACTIVE_BUFFER[0] = (buffer, frozenset(threading.enumerate()))
            log_token = _LOG_BUFFER.set(buffer)
            streams = (sys.stdout, sys.stderr)
            if self._routers is not None:
                # The handler's stdout is its log, even where someone replaced sys.stdout since
                # the sandbox started (pytest's capture, between a module fixture and a test);
                # other threads' output goes on where it went.
                for router, stream in zip(self._routers, streams, strict=True):
                    if stream is not router:
                        router.real = stream
                sys.stdout, sys.stderr = self._routers
            started = time.monotonic()
            try:
                os.environ.clear()
                os.environ.update(self.environment(spec))
                self._switch_container(spec.name)
                handler = self.handler(spec)
                # A cold start's imports are Lambda's Init phase, outside the function's
                # timeout ("Understanding the Lambda execution environment lifecycle", Lambda
                # Developer Guide, https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html):
                # a machine slow to import must not time a handler out.
                started = context._started = time.monotonic()
                invocation.result = handler(event, context)
            except Exception as err:
                invocation.error = str(err) or type(err).__name__
                invocation.error_type = type(err).__name__
                invocation.traceback = traceback.format_exc()
            finally:
                invocation.duration_s = time.monotonic() - started
                _LOG_BUFFER.reset(log_token)
                _ACTIVE_BUFFER[0] = None
                set_active(None)
                CURRENT.reset(token)
                os.environ.clear()
                os.environ.update(saved_env)
                sys.stdout, sys.stderr = streams
            if invocation.error is None and invocation.duration_s > spec.timeout_s:
                invocation.error = f"Task timed out after {spec.timeout_s}.00 seconds"
                invocation.error_type = "Sandbox.Timedout"
            invocation.logs = buffer.getvalue()
            invocation.calls = [
                c for c in self.interceptor.ledger[ledger_start:] if c.function == spec.name
            ]
            self.invocations.append(invocation)
        for listener in list(self.listeners):
            listener(invocation)
        return invocation
