"""Schedules: recurring ones from the graph, one-off ``at()`` ones handlers create, and the
clock that fires them.

Recurring schedules fire on demand (``fire_schedule``), when a running sandbox's clock passes
an occurrence (``fire_recurring``), or when a scenario moves the clock (``advance``, which
walks the skipped time in order). One-off schedules are read back from the emulator's
Scheduler, fired when due, and deleted after firing when they ask for it.

Every firing goes through the schedule's own role, as EventBridge Scheduler does: Scheduler
first assumes the role, so the role's trust policy must admit ``scheduler.amazonaws.com`` with
the context Scheduler sends (``aws:SourceAccount``, and ``aws:SourceArn`` = the schedule
*group*'s ARN; see ``sandbox.service_requests.scheduler_assume_role``); then the role must be
allowed ``lambda:InvokeFunction`` on the target (or ``sqs:SendMessage`` to the target queue,
whose policy must not deny it). A firing refused at either step delivers nothing, and is
recorded as a refused delivery (no schedule here has a dead-letter queue, so in AWS the
invocation is dropped after the retry policy).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sandbox.clock import Clock, at_time, last_occurrence
from sandbox.iam import Requirement
from sandbox.service_requests import (
    Refusal,
    ServiceAccess,
    scheduler_assume_role,
    scheduler_target_action,
)
from sandbox.traces import Trace

if TYPE_CHECKING:
    from sandbox.graph import Topology
    from sandbox.triggers import Redeliveries

REDELIVERY = "(a returned SQS message is visible again)"
"""What ``advance`` moves the clock to besides schedules (not a schedule name)."""


class ScheduleSource:
    """The schedule half of :class:`sandbox.triggers.Triggers` (a mixin)."""

    t: Topology
    clock: Clock
    origin: dt.datetime
    traces: list[Trace]
    dirty: set[str]
    client: Callable[[str, str], Any]
    access: ServiceAccess
    redeliveries: Redeliveries
    _fired: set[tuple[str, str, str]]

    def refuse(self, refusal: Refusal) -> None:
        raise NotImplementedError

    def drain(self, max_rounds: int = 200) -> int:
        raise NotImplementedError

    def _send_to_queue(self, arn: str, body: str) -> None:
        raise NotImplementedError

    def _deliver_async(
        self,
        target: str,
        event: Any,
        source: str,
        request: Requirement | None,
        dead_letter: Requirement | None,
    ) -> None:
        raise NotImplementedError

    def fire_schedule(self, name: str) -> bool:
        """Fire a recurring schedule of the graph now (by physical name)."""
        spec = next((s for s in self.t.schedules if s.name == name), None)
        if spec is None:
            raise KeyError(f"no schedule {name} in the graph")
        self._fire(spec.region, spec.group, spec.name, spec.target_arn, spec.role_arn, spec.input)
        return True

    def fire_recurring(self, start: dt.datetime, end: dt.datetime) -> list[str]:
        """Fire each recurring schedule that has an occurrence in ``(start, end]`` once (the
        running sandbox's clock ticking; the clock itself is not moved)."""
        fired = []
        for s in self.t.schedules:
            if last_occurrence(s.expression, s.timezone, start, end, self.origin):
                self.fire_schedule(s.name)
                fired.append(s.name)
        self.dirty.add("schedules")
        return fired

    def advance(self, delta: dt.timedelta) -> list[str]:
        """Move the clock through ``delta`` in time order: each recurring schedule fires once at
        its last occurrence in the interval, each one-off schedule at its due time, each message
        a function returned when its visibility timeout ends, and the pump drains after each.
        Returns the schedule names fired, in order."""
        start = self.clock.now()
        end = start + delta
        recurring = sorted(
            (when, s.name)
            for s in self.t.schedules
            if (when := last_occurrence(s.expression, s.timezone, start, end, self.origin))
        )
        fired: list[str] = []
        seen: set[str] = set()
        while True:
            one_off = sorted(
                (when, name)
                for name, when in self.pending_one_off()
                if when <= end and name not in seen
            )
            returned = self.redeliveries.next_time()
            redelivery = [(returned, REDELIVERY)] if returned is not None and returned <= end else []
            upcoming = sorted(recurring[:1] + one_off[:1] + redelivery)
            if not upcoming:
                break
            when, name = upcoming[0]
            self.clock.jump_to(when)
            if name == REDELIVERY:  # a returned message's visibility timeout ran out
                self.dirty.add("queues")
                self.drain()
                continue
            if recurring and recurring[0] == (when, name):
                recurring.pop(0)
                self.fire_schedule(name)
            else:
                seen.add(name)
                self.dirty.add("schedules")
            fired.append(name)
            self.drain()
        self.clock.jump_to(end)
        self.dirty.add("schedules")
        return fired

    def _poll_one_off_schedules(self) -> int:
        done = 0
        declared = {(s.region, s.group, s.name) for s in self.t.schedules}
        for region in sorted({f.region for f in self.t.functions.values()}):
            scheduler = self.client("scheduler", region)
            for page in scheduler.get_paginator("list_schedules").paginate():
                for item in page.get("Schedules", []):
                    key = (region, item.get("GroupName", "default"), item["Name"])
                    if key in declared or key in self._fired:
                        continue
                    full = scheduler.get_schedule(Name=item["Name"], GroupName=key[1])
                    when = at_time(
                        full["ScheduleExpression"], full.get("ScheduleExpressionTimezone", "UTC")
                    )
                    if when is None or when > self.clock.now() or full.get("State") == "DISABLED":
                        continue
                    self._fired.add(key)
                    target = full["Target"]
                    self._fire(
                        region,
                        key[1],
                        key[2],
                        target["Arn"],
                        target.get("RoleArn", ""),
                        target.get("Input", "{}"),
                    )
                    if full.get("ActionAfterCompletion") == "DELETE":
                        scheduler.delete_schedule(Name=key[2], GroupName=key[1])
                    done += 1
        return done

    def pending_one_off(self) -> list[tuple[str, dt.datetime]]:
        """One-off schedules not fired yet, with their due time (for the report)."""
        found = []
        declared = {(s.region, s.group, s.name) for s in self.t.schedules}
        for region in sorted({f.region for f in self.t.functions.values()}):
            scheduler = self.client("scheduler", region)
            for item in scheduler.list_schedules().get("Schedules", []):
                key = (region, item.get("GroupName", "default"), item["Name"])
                if key in declared or key in self._fired:
                    continue
                full = scheduler.get_schedule(Name=item["Name"], GroupName=key[1])
                when = at_time(
                    full["ScheduleExpression"], full.get("ScheduleExpressionTimezone", "UTC")
                )
                if when is not None:
                    found.append((item["Name"], when))
        return found

    def _fire(
        self, region: str, group: str, name: str, target: str, role_arn: str, payload: str
    ) -> None:
        source = f"schedule:{name}"
        action = scheduler_target_action(target)
        if action is None:
            self.traces.append(_trace("unsupported", source, target))
            return
        assume = scheduler_assume_role(region, group, role_arn)
        decision, where = self.access.trust(role_arn, assume)
        if not decision.allowed:
            self.refuse(Refusal(source, target, assume, where, decision.explicit_deny))
            return
        role = role_arn.rsplit("/", 1)[-1]
        call = Requirement(action, target)
        decision, where = self.access.same_account(
            self.t.policies.get(role, []), role_arn, target, call
        )
        if not decision.allowed:
            self.refuse(Refusal(source, target, call, where, decision.explicit_deny))
            return
        if action == "sqs:SendMessage":
            self._send_to_queue(target, payload)
            self.traces.append(_trace("schedule", name, target.rsplit(":", 1)[-1], "message sent"))
            return
        event: Any = json.loads(payload) if payload else {}
        self._deliver_async(target, event, source, None, None)


def _trace(kind: str, source: str, target: str, detail: str = "") -> Trace:
    return Trace(kind, source, target, detail)
