"""One AWS world per test process: the dev stack's data plane on moto, built from the graph.

``World.open(graph)`` starts moto (``mock_aws``) once and creates every table, queue, bucket,
topic, secret, SES identity, schedule group, schedule and event rule the program declares, with
``sandbox.deploy`` from ``sandbox.graph.Topology``: the same reading of the same graph the
sandbox deploys, so a test's tables have the stack's key schemas, indexes, TTL and streams,
and no conftest writes a table builder by hand. Each function's environment comes from the
graph too (:meth:`World.environment`), as Lambda gets it.

Between tests the world goes back to its just-deployed state (:meth:`World.restore`): moto's
in-memory backends are put back from a snapshot taken after the deployment (empty tables and
streams, empty queues and buckets, secrets without values, no mail sent), and whatever a test
created beside them is gone. Restoring costs milliseconds where building the resources again
cost about a second per test. :meth:`World.empty` gives a test an account with nothing in it
instead (the shared helpers' tests make their own tables).

moto keeps its state in plain objects per (service, account, region): ``BaseBackend.reset``
replaces a backend's ``__dict__`` with a fresh one (moto/core/base_backend.py); restoring puts
a deep copy of the snapshot there instead. Two things live outside a backend's ``__dict__`` and
are restored beside it: S3's bucket-name registry (``s3_backends.bucket_accounts``) and S3
objects' temporary files (closed by ``S3Backend.reset`` before the state is replaced).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from components.offline.engine import Graph
from sandbox.graph import FunctionSpec, Topology

BackendKey = tuple[str, str, str]  # (service, account, region)

PER_FUNCTION = frozenset({"POWERTOOLS_SERVICE_NAME"})
"""Variables every function sets to its own value: left out when functions are merged."""


def _backends() -> Iterator[tuple[BackendKey, Any]]:
    """Every moto backend instantiated so far."""
    from moto.core.base_backend import BackendDict

    for service in list(BackendDict._instances):  # type: ignore[misc]  # moto's registry, a class-level dict
        for account, regions in list(service.items()):
            for region, backend in list(regions.items()):
                yield (service.service_name, account, region), backend


def _copy(
    state: dict[str, Any],
    live: Mapping[BackendKey, Any],
    originals: Mapping[BackendKey, Any] | None = None,
) -> dict[str, Any]:
    """A deep copy of one backend's state whose references to backends point at the live ones
    (a backend may hold another: sesv2 sends through ses), also where the snapshot holds a
    backend object a moto-wide reset has since replaced (``originals``, by key); each SQS
    queue gets a new lock."""
    memo: dict[int, Any] = {id(b): b for b in live.values()}
    for key, original in (originals or {}).items():
        if key in live:
            memo[id(original)] = live[key]
    for queue in (state.get("queues") or {}).values():
        lock = getattr(queue, "_messages_lock", None)
        if lock is not None:
            memo[id(lock)] = threading.Condition()
    # moto's SSM parameter store is a defaultdict whose constructor takes the account and
    # region, which deepcopy cannot pass (an SSM backend exists once any test in the process
    # touched Parameter Store): copy it by hand.
    parameters = state.get("_parameters")
    if parameters is not None and hasattr(parameters, "region_name"):
        copied = type(parameters)(parameters.account_id, parameters.region_name)
        copied.__dict__.update(copy.deepcopy(parameters.__dict__, memo))
        memo[id(parameters)] = copied
        for name, versions in parameters.items():
            copied[name] = copy.deepcopy(versions, memo)
    return copy.deepcopy(state, memo)


@dataclass
class World:
    """The deployed dev stack on moto, for the tests of one process."""

    topology: Topology
    prefix: str
    _mock: Any = None
    _active: bool = False
    _snapshot: dict[BackendKey, dict[str, Any]] = field(default_factory=dict)
    _bucket_accounts: dict[str, Any] = field(default_factory=dict)
    _originals: dict[BackendKey, Any] = field(default_factory=dict)

    @classmethod
    def open(cls, graph: Graph) -> World:
        """Start moto and deploy ``graph``'s data plane; the caller sets fake credentials."""
        from moto import mock_aws

        from handlers.common.aws_clients import client, reset_clients
        from sandbox.deploy import deploy

        world = cls(Topology.from_graph(graph), graph.config.prefix)
        world._mock = mock_aws()
        world._mock.start()
        world._active = True
        deploy(world.topology, client)  # skips what moto's SES v1 receipt rules cannot hold
        reset_clients()  # no client outlives the deployment's credentials
        world._take_snapshot()
        return world

    def pause(self) -> None:
        """Stop intercepting AWS calls, keeping every backend's state (between tests, so a
        test that did not ask for moto runs without it)."""
        if self._active:
            self._mock.stop(remove_data=False)
            self._active = False

    def resume(self) -> None:
        """Intercept AWS calls again, on the state as it was left."""
        if not self._active:
            self._mock.start(reset=False)
            self._active = True

    def close(self) -> None:
        self.pause()
        self._mock = None

    # State between tests ------------------------------------------------------------------

    def _take_snapshot(self) -> None:
        from moto.s3.models import s3_backends

        live = dict(_backends())
        self._snapshot = {key: _copy(b.__dict__, live) for key, b in live.items()}
        self._originals = live  # the objects the snapshot refers to, kept alive
        self._bucket_accounts = dict(s3_backends.bucket_accounts)

    def restore(self) -> None:
        """Back to the state right after deployment: every test starts from the same world."""
        self._put_back(self._snapshot)

    def empty(self) -> None:
        """An account with nothing in it (moto's own reset), for tests that build their own."""
        self._put_back({})

    def _put_back(self, snapshot: Mapping[BackendKey, dict[str, Any]]) -> None:
        from moto.backends import get_backend
        from moto.s3.models import S3Backend, s3_backends

        # Look every snapshot backend up again: a moto-wide reset (the sandbox's in-process
        # server resets moto through /moto-api/reset) drops the backend objects themselves.
        restored = {key: get_backend(cast(Any, key[0]))[key[1]][key[2]] for key in snapshot}  # moto types the name as a Literal
        live = {**dict(_backends()), **restored}
        for key, backend in live.items():
            state = snapshot.get(key)
            if state is None:
                backend.reset()
                continue
            if isinstance(backend, S3Backend):
                backend.reset()  # closes the objects' temporary files
            backend.__dict__ = _copy(state, live, self._originals)
        s3_backends.bucket_accounts.clear()
        if snapshot:
            s3_backends.bucket_accounts.update(self._bucket_accounts)

    # Reading the graph --------------------------------------------------------------------

    def function(self, name: str) -> FunctionSpec:
        """The function named ``name`` in the seed (``rrs-webhook``) or in full (``dev-rrs-webhook``)."""
        functions = self.topology.functions
        found = functions.get(name) or functions.get(f"{self.prefix}-{name}")
        if found is None:
            known = sorted(n.removeprefix(f"{self.prefix}-") for n in functions)
            raise KeyError(f"no function {name!r} in the {self.prefix} graph; it has {known}")
        return found

    def functions_of(self, system: str) -> list[FunctionSpec]:
        """Every function of one system (``rrs``), by name."""
        start = f"{self.prefix}-{system}-"
        found = [f for n, f in sorted(self.topology.functions.items()) if n.startswith(start)]
        if not found:
            raise KeyError(f"no function of system {system!r} in the {self.prefix} graph")
        return found

    def environment(self, *names: str) -> dict[str, str]:
        """The environment Lambda gives the named functions (merged when several): their
        variables from the graph plus ``AWS_REGION`` / ``AWS_DEFAULT_REGION``.

        Merged functions must agree on every shared variable and on the region (ValueError
        otherwise); ``PER_FUNCTION`` variables are left out of a merge.
        """
        if not names:
            raise ValueError("name at least one function")
        specs = [self.function(n) for n in names]
        merged: dict[str, str] = {}
        for spec in specs:
            env = {"AWS_REGION": spec.region, "AWS_DEFAULT_REGION": spec.region}
            env.update(spec.environment)
            for variable, value in env.items():
                if len(specs) > 1 and variable in PER_FUNCTION:
                    continue
                if merged.get(variable, value) != value:
                    raise ValueError(
                        f"{variable} is {merged[variable]!r} for one of {names} and {value!r} "
                        f"for {spec.name}: read them one function at a time"
                    )
                merged[variable] = value
        return merged

    def system_environment(self, system: str) -> dict[str, str]:
        """Every function of ``system`` merged (a flow test drives several in one process)."""
        return self.environment(*(f.name for f in self.functions_of(system)))
