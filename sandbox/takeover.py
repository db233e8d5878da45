"""An upgrade in the sandbox: the new release's sandbox takes over an older one's state.

The AWS state (tables, queues and their in-flight messages, one-off schedules, objects) lives in
the emulator, which the check keeps running between the two releases. What lived in the old
sandbox's pump is written by ``sandbox/upgrade_old.py`` to a hand-off file and resumed here, as
a deploy keeps it in AWS: the clock, each stream mapping's position ("Lambda ... keeps the
position of the stream" when a function is updated; an event source mapping belongs to the
function, not its code), the messages a function returned (invisible until their visibility
timeout on the sandbox clock), the objects already notified and the ``at()`` schedules fired.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandbox.triggers import Triggers


@dataclass(frozen=True)
class Takeover:
    """What the new sandbox resumes: the emulator's endpoint and the old pump's state."""

    endpoint: str
    clock: dt.datetime
    origin: dt.datetime
    fired: frozenset[tuple[str, str, str]] = frozenset()
    redeliveries: tuple[tuple[dt.datetime, str, str], ...] = ()
    streams: dict[str, dict[str, str]] = field(default_factory=dict)
    seen_objects: dict[str, frozenset[tuple[str, str]]] = field(default_factory=dict)

    @classmethod
    def from_handoff(cls, endpoint: str, path: Path) -> Takeover:
        """Read the file ``sandbox/upgrade_old.py`` wrote."""
        data = json.loads(path.read_text())
        return cls(
            endpoint=endpoint,
            clock=dt.datetime.fromisoformat(data["clock"]),
            origin=dt.datetime.fromisoformat(data["origin"]),
            fired=frozenset((r, g, n) for r, g, n in data["fired"]),
            redeliveries=tuple(
                (dt.datetime.fromisoformat(w), arn, receipt)
                for w, arn, receipt in data["redeliveries"]
            ),
            streams={arn: dict(shards) for arn, shards in data["streams"].items()},
            seen_objects={
                bucket: frozenset((k, v) for k, v in keys)
                for bucket, keys in data["seen_objects"].items()
            },
        )

    def resume(self, triggers: Triggers) -> None:
        """Put the old pump's state into the new one, right after its ``setup``."""
        triggers.origin = self.origin
        triggers._fired |= set(self.fired)
        triggers.redeliveries.waiting = list(self.redeliveries)
        for stream in triggers._streams:
            # A shard the old pump never read stays at the trim horizon setup opened it at.
            stream.iterators.update(self.streams.get(stream.arn, {}))
        for bucket, seen in self.seen_objects.items():
            triggers._seen_objects[bucket] = set(seen)
        triggers.dirty.update({"queues", "streams", "buckets", "schedules"})
