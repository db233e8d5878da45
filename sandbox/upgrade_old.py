"""The old release's half of ``make upgrade-check``: run inside a checkout of that release.

``python upgrade_old.py --endpoint URL --stack dev --handoff FILE`` (copied into the old tree's
root by ``sandbox.upgrade_check`` and run there, so every ``sandbox``, ``handlers`` and
``components`` import is the old release's): the old code deploys into the AWS emulator that
the check started (attached, not reset), plays every system's scripted day, then leaves work in
flight, and writes what its pump held in memory (clock, stream positions, messages returned to
a queue) to ``FILE`` for the new code to take over, as a deploy keeps a Lambda event source
mapping's position and a queue's in-flight messages.

Work is left in flight by holding every consumed queue (its mapping disabled, as during a
deploy that replaces the function) and running the day's producers once more: every recurring
schedule fires, and each held queue is released one message at a time while another held queue
is still empty, so the messages a consumer writes onward (dm-score to dm-merges, rrs-sender to
rrs-escalations) are written by the old code too. Only the old release's public sandbox API is
used (it is the same since 0.1.0).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import sys
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--stack", default="dev")
    parser.add_argument("--handoff", required=True)
    args = parser.parse_args(argv)

    # runs in the old release's tree: its modules, imported once its path is this process's
    from components.offline.program import program_graph
    from sandbox import emulator
    from sandbox.core import Sandbox
    from sandbox.play import enabled_systems, play

    class Attached:
        """The check's emulator: kept running (and its state) when this sandbox stops."""

        endpoint = args.endpoint

        def stop(self) -> None:
            return None

    def attach(host: str = "127.0.0.1", port: int | None = None) -> Attached:
        os.environ.update(emulator.FAKE_ENV)
        os.environ.pop("AWS_PROFILE", None)
        os.environ["AWS_ENDPOINT_URL"] = args.endpoint
        return Attached()

    emulator.start = attach  # type: ignore[assignment]
    graph = program_graph(args.stack)
    sb = Sandbox(graph)
    sb.start()
    try:
        results = play(sb, enabled_systems(graph))
        triggers = sb.triggers
        assert triggers is not None
        held = _hold_queues(triggers)
        _depths("after the days", triggers, held)
        # The next day's work, which the new release finds waiting: the outside world acts again
        # and every recurring schedule fires, while no consumed queue is delivered.
        play(sb, enabled_systems(graph), out=open(os.devnull, "w"))  # noqa: SIM115
        _new_orders_and_jobs(sb)
        _depths("after a second day, queues held", triggers, held)
        for schedule in sb.topology.schedules:
            triggers.fire_schedule(schedule.name)
            triggers.drain()
        _depths("after every schedule fired", triggers, held)
        _release_until_every_queue_holds_work(sb, triggers, held)
        _depths("handed over", triggers, held)
        _write_handoff(sb, triggers, Path(args.handoff), [r.ok for r in results])
    finally:
        sb.stop()
    return 0


def _hold_queues(triggers: Any) -> set[str]:
    """Stop delivering from every consumed queue; the set of held queue ARNs."""
    held = {m.queue_arn for m in triggers.t.queue_mappings}
    poll = triggers._poll_queue
    release: set[str] = set()

    def held_poll(m: Any) -> int:
        if m.queue_arn in held and m.queue_arn not in release:
            return 0
        release.discard(m.queue_arn)
        return int(poll(m))

    triggers._poll_queue = held_poll
    triggers._release = release
    return held


def _depth(triggers: Any, arn: str) -> int:
    queue = triggers.t.queue_by_arn(arn)
    sqs = triggers.client("sqs", queue.region)
    attributes = sqs.get_queue_attributes(
        QueueUrl=triggers._queue_urls[arn], AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


def _new_orders_and_jobs(sb: Any) -> None:
    """What the second day's replay cannot bring (its orders and jobs are the first day's, each
    taken once): a new Shopify order for upsr, and new completed jobs for rrs, whose one-off
    schedules come due (two unhappy customers, so one reaches rrs-escalations whichever
    rrs-sender takes first), and one more whose schedule is still pending at the cut-over."""
    # the old release's modules (this file runs in its tree), as main imports them
    from sandbox import scenarios
    from sandbox.scenarios import upsr

    shop = scenarios.load("upsr")
    shop._webhook(sb, upsr._order(6001, sb.clock.now() - dt.timedelta(minutes=1)))  # type: ignore[union-attr]
    rrs: Any = scenarios.load("rrs")
    # In the business's opening hours, whatever the hour the days ended at (the asks and the
    # owner's handovers wait for them), as the rrs day does.
    from sandbox.scenarios.rrs import _next_working_morning

    _next_working_morning(sb)
    for completion, customer, rating in (("up-1", "c-bob", 1), ("up-2", "c-dan", 2)):
        rrs._event(sb, rrs._completion(sb, f"cmp-{completion}", customer, rating, "upgrade day"))
    sb.drain()
    sb.advance(hours=3)  # every at() schedule of these jobs fires: rrs-work holds their sends
    rrs._event(sb, rrs._completion(sb, "cmp-up-3", "c-ann", 5, "before the cut-over"))
    sb.drain()


def _depths(when: str, triggers: Any, held: set[str]) -> None:
    depths = ", ".join(f"{a.rsplit(':', 1)[-1]} {_depth(triggers, a)}" for a in sorted(held))
    print(f"queues {when}: {depths}; at() schedules {len(triggers.pending_one_off())}", flush=True)


def _release_until_every_queue_holds_work(sb: Any, triggers: Any, held: set[str]) -> None:
    """Deliver one message of each held queue with more than one while another is empty."""

    for _ in range(20):
        empty = [a for a in held if _depth(triggers, a) == 0]
        spare = [a for a in sorted(held) if _depth(triggers, a) > 1]
        if not empty or not spare:
            return
        for arn in spare:
            triggers._release.add(arn)
            for m in triggers.t.queue_mappings:
                if m.queue_arn == arn:
                    triggers._poll_queue(dataclasses.replace(m, batch_size=1))
            triggers.drain()


def _write_handoff(sb: Any, triggers: Any, path: Path, played: list[bool]) -> None:
    state = {
        "clock": sb.clock.now().isoformat(),
        "origin": triggers.origin.isoformat(),
        "played": played,
        "fired": sorted(list(k) for k in triggers._fired),
        "redeliveries": [
            [when.isoformat(), arn, receipt] for when, arn, receipt in triggers.redeliveries.waiting
        ],
        "streams": {s.arn: s.iterators for s in triggers._streams},
        "seen_objects": {b: sorted(list(k) for k in keys) for b, keys in triggers._seen_objects.items()},
        "problems": triggers.problems,
    }
    path.write_text(json.dumps(state, indent=1))


if __name__ == "__main__":
    sys.exit(main())
