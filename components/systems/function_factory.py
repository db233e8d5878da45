"""FunctionFactory: the one way a system declares its functions.

Every function of every system is one call: its seed name, what it does, its grants, its
environment (built from its settings record in ``handlers/<system>/contract.py``) and every
way into it (URL, queues, streams, event rules, bucket, schedules), at the call site. The entry module follows from the name: ``rrs-webhook`` runs
``handlers.review_requests.functions.webhook.handler``. Memory and timeout come from the
system's table of sizes (the document's, where it gives them), so a function cannot be declared
without one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi

from components.deployment import Deployment
from components.grants import Grant
from components.personal_data import Holding
from components.scheduled_job import (
    Schedule,
    ScheduledJob,
    ScheduledJobArgs,
    ScheduleGroupRef,
    schedule_group,
)
from components.scoped_lambda import (
    BucketTrigger,
    EventRuleTrigger,
    FunctionCode,
    FunctionUrl,
    QueueTrigger,
    ScopedLambda,
    ScopedLambdaArgs,
    StreamTrigger,
)
from components.work_queue import WorkQueue


def entry_point(package: str, name: str) -> str:
    """``handlers.<system>.functions.<function>.handler`` of a seed function name.

    The system prefix (``rrs-``) goes, dashes become underscores: ``ler-junk-writer`` ->
    ``junk_writer``.
    """
    _, _, function = name.partition("-")
    if not function:
        raise ValueError(f"function name {name!r} must be <system>-<function>")
    return f"{package}.functions.{function.replace('-', '_')}.handler"


@dataclass(frozen=True)
class FunctionFactory:
    """Declares the ScopedLambdas of one system.

    Attributes:
        deployment: Where the functions live.
        package: The system's handler package, e.g. ``handlers.review_requests``.
        sizes: Memory (MB) and timeout (s) per function name.
        opts: Options for every function (parented to the system component).
        vendored: Distributions every function of the system vendors (a module they all
            import needs them), on top of each function's own.
        logs: What the system's log lines hold about people (components/personal_data.py).
        failed_events: What a failed asynchronous event of the system holds about people
            (the failure queues of functions without an ``on_failure`` of their own).

    The system's schedule group (``<prefix>-<system>``) is declared with its first schedule, so
    a system without schedules has none.
    """

    deployment: Deployment
    package: str
    sizes: Mapping[str, tuple[int, int]]
    opts: pulumi.ResourceOptions
    vendored: tuple[str, ...] = ()
    logs: Holding = field(kw_only=True)
    failed_events: Holding | None = field(default=None, kw_only=True)
    _groups: dict[str, ScheduleGroupRef] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def schedule_group(self) -> ScheduleGroupRef:
        """The system's schedule group, declared on first use."""
        d = self.deployment
        if d.system not in self._groups:
            self._groups[d.system] = schedule_group(
                f"{d.system}-schedules", d, d.system, self.opts
            )
        return self._groups[d.system]

    def timeout(self, name: str) -> int:
        """The function's timeout in seconds (a consumed queue's visibility follows from it)."""
        return self.sizes[name][1]

    def __call__(
        self,
        name: str,
        description: str,
        grants: Sequence[Grant],
        env: Mapping[str, pulumi.Input[str]],
        *,
        url: FunctionUrl | None = None,
        queues: Sequence[QueueTrigger] = (),
        streams: Sequence[StreamTrigger] = (),
        events: Sequence[EventRuleTrigger] = (),
        bucket: BucketTrigger | None = None,
        schedules: Sequence[Schedule] = (),
        on_failure: WorkQueue | None = None,
        invoked_async: bool = False,
        async_max_retries: int | None = None,
        reserved_concurrency: int | None = None,
        vendored: tuple[str, ...] = (),
    ) -> ScopedLambda:
        """One function of the document, with every way into it.

        ``schedules``: each becomes a :class:`ScheduledJob` in the system's schedule group
        invoking this function; Scheduler invokes asynchronously, so the function gets an
        on-failure destination. ``invoked_async``: something not declared here invokes it
        asynchronously (another function). A flag a trigger already implies is refused.
        """
        if invoked_async and schedules:
            raise ValueError(f"{name}: invoked_async is implied by its schedules")
        implied = bool(events) or bucket is not None
        memory, timeout = self.sizes[name]
        function = ScopedLambda(
            name,
            ScopedLambdaArgs(
                self.deployment,
                name,
                description,
                FunctionCode(
                    entry_point(self.package, name), vendored=(*self.vendored, *vendored)
                ),
                memory,
                timeout,
                grants=tuple(grants),
                environment=dict(env),
                url=url,
                queue_triggers=tuple(queues),
                stream_triggers=tuple(streams),
                event_rules=tuple(events),
                bucket_trigger=bucket,
                on_failure=on_failure,
                invoked_async=invoked_async or (bool(schedules) and not implied),
                async_max_retries=async_max_retries,
                reserved_concurrency=reserved_concurrency,
                logs=self.logs,
                failed_events=self.failed_events,
            ),
            self.opts,
        )
        for schedule in schedules:
            ScheduledJob(
                schedule.resource_name(name),
                ScheduledJobArgs(
                    self.deployment,
                    schedule.name,
                    schedule.expression,
                    function,
                    self.schedule_group(),
                    timezone=schedule.timezone,
                    payload=schedule.payload,
                    description=schedule.description,
                ),
                self.opts,
            )
        return function
