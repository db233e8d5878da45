"""What a store holds about people: the declaration every table, bucket, queue and log group takes.

Each store component (GuardedTable, PrivateBucket, WorkQueue, the log group of a ScopedLambda)
is built with one :data:`Holding`, a required argument, so a store cannot be added without
saying what it keeps about people:

- :class:`PersonalData`: which fields, why, for how long (a :class:`Retention`, a config key
  or a fixed period with its reason) and how a person's request erases it;
- :class:`Suppression`: the minimum kept without an end so an objection stays honoured (an
  opt-out list; ICO direct marketing guidance, "Respect people's preferences": put their
  details "onto a suppression or 'do not contact' list, instead of deleting them",
  https://ico.org.uk/for-organisations/direct-marketing-and-privacy-and-electronic-communications/direct-marketing-guidance/respect-peoples-preferences/);
- :class:`NoPersonalData`: what it holds instead.

The component tags its resource ``crm:personal-data`` (``held``, ``suppression`` or ``none``),
which the policy pack's personal-data-retained rule reads, and records the declaration as the
component's input, which ``make docs`` reads from the graph to write docs/personal-data.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic.alias_generators import to_camel

from components.config import SystemSettings

TAG: Final = "crm:personal-data"
"""The resource tag the policy pack reads: ``held``, ``suppression`` or ``none``."""
PROPERTY: Final = "personalData"
"""The component input holding the declaration (what the data map reads)."""
FORGET: Final = "make forget erases the person's items"


@dataclass(frozen=True)
class Retention:
    """How long a store keeps what it holds.

    Attributes:
        days: The period, in days (DynamoDB TTL, S3 lifecycle, log or message retention).
        key: The config key that sets it (``systems.rrs.retentionDays``), or ``""`` for a
            period the program fixes.
        why: Why that long (an undo window, a report period, a repeat-order window).
    """

    days: float
    key: str
    why: str

    @classmethod
    def setting(cls, system: str, settings: SystemSettings, field: str, why: str) -> Retention:
        """The period a system setting (in days) sets; the key is the setting's config key."""
        days = getattr(settings, field)
        if field not in type(settings).model_fields or not isinstance(days, int):
            raise ValueError(f"{type(settings).__name__} has no setting {field} in days")
        return cls(days, f"systems.{system}.{to_camel(field)}", why)

    @classmethod
    def fixed(cls, days: float, why: str) -> Retention:
        """A period the program fixes (a document's window, the service's maximum)."""
        return cls(days, "", why)

    def said(self) -> str:
        days = f"{self.days:g} days" if self.days >= 1 else f"{self.days * 24:g} hours"
        return f"{days} (`{self.key}`)" if self.key else f"{days} (fixed)"


@dataclass(frozen=True)
class PersonalData:
    """A store holding personal data, and the end of it.

    Attributes:
        fields: What it holds about a person ("email", "phone", "order contents"...).
        why: Why it is kept.
        retention: How long.
        on_request: How a person's erasure request reaches it (default: ``make forget``).
    """

    fields: tuple[str, ...]
    why: str
    retention: Retention
    on_request: str = FORGET

    def __post_init__(self) -> None:
        if not self.fields or not self.why:
            raise ValueError("personal data names its fields and why it is kept")


@dataclass(frozen=True)
class Suppression:
    """The minimum kept without an end so a person's objection stays honoured.

    Attributes:
        fields: What it holds (an id or a contact, nothing else).
        why: Why it must outlive the person's other data.
    """

    fields: tuple[str, ...]
    why: str
    on_request: str = "kept: it is what stops the person being contacted or re-created again"


@dataclass(frozen=True)
class NoPersonalData:
    """A store holding nothing about people.

    Attributes:
        holds: What it holds instead ("schedule payloads: a fixed action").
    """

    holds: str


Holding = PersonalData | Suppression | NoPersonalData
"""What a store declares it holds about people."""


def tag_value(holding: Holding) -> str:
    """The ``crm:personal-data`` tag value of a store with this declaration."""
    if isinstance(holding, PersonalData):
        return "held"
    return "suppression" if isinstance(holding, Suppression) else "none"


def tags(holding: Holding | None) -> dict[str, str]:
    """The store's marker tag; none for a store this program does not map (the package)."""
    return {} if holding is None else {TAG: tag_value(holding)}


def component_inputs(holding: Holding | None) -> dict[str, Any] | None:
    """The component's inputs recording the declaration in the graph."""
    if holding is None:
        return None
    body: dict[str, Any] = {"kind": tag_value(holding)}
    if isinstance(holding, NoPersonalData):
        body["holds"] = holding.holds
    else:
        body.update(fields=list(holding.fields), why=holding.why, onRequest=holding.on_request)
    if isinstance(holding, PersonalData):
        r = holding.retention
        body["retention"] = {"days": r.days, "key": r.key, "why": r.why}
    return {PROPERTY: body}


def from_inputs(inputs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The declaration a component recorded (``component_inputs``), or None."""
    found = inputs.get(PROPERTY)
    return found if isinstance(found, dict) else None


LOG_DAYS: Final = 7
"""CloudWatch Logs retention of every function's log group (ScopedLambda; the log-retention
rule of the policy pack refuses any other)."""
QUEUE_DAYS: Final = 14
"""The longest an SQS message lives: a dead-letter queue's retention, SQS's maximum. A standard
queue's message keeps its original enqueue time when it moves to the dead-letter queue, so
14 days from the send bounds it in both (SQS Developer Guide, "Setting-up dead-letter queue
retention":
https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/setting-up-dead-letter-queue-retention.html)."""


SCHEDULE_EVENTS: Final = NoPersonalData(
    "schedule events: the action name the program fixes, and the invocation's error details"
)
"""What a schedule's failed event holds, in a function's failure queue or a schedule's
dead-letter queue (Scheduler sends the invocation's details and the target's response:
EventBridge Scheduler User Guide, "Configuring a schedule's dead-letter queue",
https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html)."""


def function_logs(*fields: str) -> PersonalData:
    """What a system's log lines hold: ids and the errors of failed runs, for 7 days."""
    return PersonalData(
        ("record ids", *fields, "error messages of failed runs"),
        "to diagnose a failed run",
        Retention.fixed(LOG_DAYS, "a failure is diagnosed within the week it is alarmed"),
        on_request="not erased on request (a log line cannot be edited): it expires in 7 days",
    )


def messages(*fields: str, why: str) -> PersonalData:
    """What the messages of a queue (and its dead-letter queue) hold, at most 14 days."""
    return PersonalData(
        fields,
        why,
        Retention.fixed(
            QUEUE_DAYS,
            "SQS's longest retention: a failed message waits in the dead-letter queue for "
            "the owner to redrive it",
        ),
        on_request="not erased on request: a message is consumed within minutes, and a dead "
        "letter expires in 14 days",
    )
