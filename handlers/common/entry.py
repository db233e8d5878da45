"""One shape for a Lambda entry point: wire once per container, run per invocation.

Every ``handlers/<system>/functions/<fn>.py`` is a composition root::

    def wire(config: XSettings, clock: Clock) -> Service:  # builds, reads nothing else
        ...
    def run(service: Service, event, context, clock: Clock) -> Answer:
        ...
    handler = entry.handler(__name__, XSettings, wire, run)  # batch="sqs" / "stream"

:func:`handler` reads the function's settings record, wires the service on the first
invocation and keeps it in :data:`registry`, gives ``wire`` and ``run`` the one clock, and
applies ``observability.logged`` (log keys, correlation id, the cold-start metric, tracing).
With ``batch=`` the event is a batch handled by ``handlers.common.batch`` and ``run`` gets one
record at a time; with ``url=True`` (a Function URL) ``run`` gets the event read once into a
``function_url.Request``, and a body too large (``max_body``) or undecodable is answered here.
A function whose Function URL shares it with other triggers (a schedule, a queue, S3) says
``url="beside_other_triggers"``: its Function URL calls arrive as a ``Request`` and every
other event as it came, so ``run`` tells them apart with ``isinstance(event, Request)``.

``wire`` may take keyword-only collaborators with defaults (``crm=None``): the real one is
built when the keyword is absent; tests and the sandbox give another through
:meth:`Registry.override`, the one way to swap a collaborator or move the time.

Whatever else a module keeps for the container's life (clients, settings records, the
cold-start mark, secrets, upsr's catalogue snapshot) is declared with :meth:`Registry.keeps`,
so :meth:`Registry.restart` (a new container) and :meth:`Registry.clear` forget all of it: the
one way tests and the sandbox start afresh.
"""

from __future__ import annotations

import datetime as dt
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Generic, Literal, TypeVar

from handlers.common import aws_clients, function_url, html_kit, observability, secrets, settings
from handlers.common.batch import sqs_batch, stream_batch
from handlers.common.clock import Clock, utc_now
from handlers.common.secrets import SecretThrottled

S = TypeVar("S", bound=settings.Settings)
T = TypeVar("T")

Function = str | ModuleType
"""A function, named by its ``functions/<fn>.py`` module or that module's dotted name."""


@dataclass(frozen=True)
class _Spec(Generic[S, T]):
    kind: type[S]
    wire: Callable[..., T]
    reads_requests: bool = False


def _key(function: Function) -> str:
    return function if isinstance(function, str) else function.__name__


class Registry:
    """This container's wired services (one per function), the time and the overrides."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._specs: dict[str, _Spec[Any, Any]] = {}
        self._services: dict[str, tuple[settings.Settings, Any]] = {}
        self._overrides: dict[str, dict[str, Any]] = {}
        self._clock: Clock = utc_now
        self._kept: dict[str, str] = {}

    def keeps(self, module: str, forget: str) -> None:
        """Declare that ``module`` keeps something per container and that its function
        ``forget`` forgets it. Named, not held: the copy of the module imported now is the one
        forgotten (the sandbox imports handler modules anew, then puts the originals back)."""
        self._kept[module] = forget

    def kept(self) -> dict[str, str]:
        """Module -> the function that forgets what it keeps."""
        return dict(self._kept)

    def register(
        self, function: Function, kind: type[S], wire: Callable[..., T], *, reads_requests: bool = False
    ) -> None:
        """Declare how ``function`` is wired (``handler`` does it at import) and whether its
        Function URL calls reach ``run`` as a ``function_url.Request``."""
        self._specs[_key(function)] = _Spec(kind, wire, reads_requests)

    def reads_requests(self, function: Function) -> bool:
        """Whether ``function`` reads its Function URL calls into a ``Request`` at the entry."""
        return self._specs[_key(function)].reads_requests

    def registrations(self) -> dict[str, Any]:
        """Every function's wiring as registered now, for :meth:`reregister` (the sandbox
        imports handler modules anew, and their imports register the new modules' ``wire``)."""
        with self._lock:
            return dict(self._specs)

    def reregister(self, saved: Mapping[str, Any]) -> None:
        """Go back to ``saved`` registrations: a handler module imported before keeps calling
        its own ``wire``, not the one of a copy imported since."""
        with self._lock:
            self._specs = dict(saved)
            self._services.clear()

    def now(self) -> dt.datetime:
        """The time every handler reads."""
        return self._clock()

    def service(self, function: Function) -> Any:
        """``function``'s wired service, wired on first use from its current settings record."""
        key = _key(function)
        spec = self._specs[key]
        config = settings.current(spec.kind)
        found = self._services.get(key)
        # Settings read anew (a test changed the environment) wire the service anew.
        if found is None or found[0] is not config:
            with self._lock:
                found = self._services.get(key)
                if found is None or found[0] is not config:
                    wired = spec.wire(config, self.now, **self._overrides.get(key, {}))
                    found = self._services[key] = (config, wired)
        return found[1]

    def fresh(self, function: Function) -> Any:
        """A newly wired service of ``function``, not kept: another container's (race tests)."""
        key = _key(function)
        spec = self._specs[key]
        return spec.wire(settings.current(spec.kind), self.now, **self._overrides.get(key, {}))

    def override(
        self, function: Function | None = None, *, clock: Clock | None = None, **collaborators: Any
    ) -> None:
        """Move the time (``clock=``, every function) and/or give ``function``'s ``wire`` these
        collaborators; its service is wired again on next use. Undone by :meth:`clear`."""
        with self._lock:
            if clock is not None:
                self._clock = clock
            if collaborators:
                if function is None:
                    raise ValueError("collaborators are given to one function")
                key = _key(function)
                self._overrides.setdefault(key, {}).update(collaborators)
                self._services.pop(key, None)

    def restart(self) -> None:
        """A new container: every wired service and everything a module keeps (see
        :meth:`keeps`) forgotten; the overrides and the time stay (a test changed the
        environment and goes on in the same world)."""
        with self._lock:
            self._services.clear()
            for name, forget in self._kept.items():
                module = sys.modules.get(name)
                if module is not None:
                    getattr(module, forget)()

    def clear(self, function: Function | None = None) -> None:
        """Forget ``function``'s wired service (its next invocation is a new container's), or
        with no function: :meth:`restart`, every override, and go back to the real time (the
        test fixture does it around each test, the sandbox around each run)."""
        if function is not None:
            with self._lock:
                self._services.pop(_key(function), None)
            return
        self.restart()
        with self._lock:
            self._overrides.clear()
            self._clock = utc_now


registry = Registry()
"""The one registry of the process (in Lambda: of the container)."""

# What the common modules keep (they sit below this module, which names them for them).
registry.keeps(aws_clients.__name__, "reset_clients")
registry.keeps(settings.__name__, "reset")
registry.keeps(observability.__name__, "forget_cold_start")
registry.keeps(secrets.__name__, "forget_all")


def is_function_url(event: Any) -> bool:
    """Whether ``event`` is a Function URL request (payload 2.0)."""
    return isinstance(event, Mapping) and "http" in (event.get("requestContext") or {})


def busy(request: function_url.Request, retry_after: int) -> dict[str, Any]:
    """503 with ``Retry-After``: a page to a person, the JSON error to a program."""
    answer = html_kit.answer(request, 503, "busy", "Busy for a moment",
                             "The service is busy for a moment. Try again in a few seconds.")
    answer["headers"] = {**answer.get("headers", {}), "retry-after": str(retry_after)}
    return answer


def handler(
    function: str,
    kind: type[S],
    wire: Callable[..., T],
    run: Callable[[T, Any, Any, Clock], Any],
    *,
    batch: Literal["sqs", "stream"] | None = None,
    url: bool | Literal["beside_other_triggers"] = False,
    max_body: int = function_url.DEFAULT_MAX_BODY_BYTES,
) -> Callable[[Any, Any], Any]:
    """The Lambda handler of ``function`` (its module's ``__name__``): see the module doc."""
    registry.register(function, kind, wire, reads_requests=bool(url))
    clock = registry.now

    def entry(event: Any, context: Any) -> Any:
        service = registry.service(function)
        if url is True or (url and is_function_url(event)):
            try:
                request = function_url.Request.read(event, max_bytes=max_body)
            except function_url.RequestError as err:
                return err.response()
            try:
                return run(service, request, context, clock)
            except SecretThrottled as err:
                return busy(request, err.retry_after_seconds)
        if batch is None:
            # A queue, stream or schedule retries a throttled secret read on its own.
            return run(service, event, context, clock)
        split = sqs_batch if batch == "sqs" else stream_batch
        return split(dict(event), context, lambda record: run(service, record, context, clock))

    entry.__module__ = function
    entry.__name__ = entry.__qualname__ = "handler"
    return observability.logged(entry)
