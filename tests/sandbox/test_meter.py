"""What activity cost (``sandbox.meter``), and ``make bench-abuse``'s verdicts on two batches."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from benchmarks.bench_abuse import grows, spent
from sandbox.interceptor import CallRecord
from sandbox.meter import Cost, Meter, cost_of


def call(service: str, operation: str, function: str | None = "dev-x") -> CallRecord:
    return CallRecord(function, service, operation, "eu-west-2", {})


def test_each_call_a_function_made_is_counted_once_in_its_column() -> None:
    calls = [
        call("dynamodb", "GetItem"), call("dynamodb", "Query"), call("dynamodb", "PutItem"),
        call("dynamodb", "TransactWriteItems"), call("s3", "PutObject"),
        call("ssm", "GetParameter"), call("bedrock", "Converse"),
        call("sms-voice", "SendTextMessage"), call("ses", "SendEmail"),
        call("sqs", "SendMessage"), call("scheduler", "CreateSchedule"),
    ]
    assert cost_of(calls, provider=3, invoked=1) == Cost(
        reads=2, writes=2, s3=1, secrets=1, model=1, provider=3, sent=2, other=2, invoked=1
    )


def _sandbox(ledger: list[CallRecord], **more: Any) -> Any:
    """A stand-in for the records a stretch reads (no runtime, no pump, an empty outbox)."""
    return SimpleNamespace(interceptor=SimpleNamespace(ledger=ledger), runtime=None,
                           triggers=None, outbox=SimpleNamespace(messages=[]), **more)


def test_a_stretch_counts_what_the_functions_did_after_it_began() -> None:
    sb = _sandbox([call("dynamodb", "GetItem")])
    meter = Meter(sb)
    mark = meter.mark()
    sb.interceptor.ledger += [
        call("dynamodb", "PutItem"),
        call("dynamodb", "PutItem", function=None),  # the outside world: not the stack's cost
    ]
    assert meter.since(mark) == Cost(writes=1)
    assert mark.stretch.calls() == [call("dynamodb", "PutItem")]


class Crm:
    def __init__(self) -> None:
        self.created: list[str] = []

    def create(self, email: str) -> None:
        self.created.append(email)

    def create_all(self, emails: list[str]) -> None:
        for email in emails:
            self.create(email)


def test_a_stand_in_calling_its_own_methods_is_one_provider_call() -> None:
    patched: list[tuple[Any, str, Any]] = []

    def patch(owner: Any, name: str, value: Any) -> None:  # as Sandbox.patch, undone below
        patched.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    sb = _sandbox([], patch=patch)
    meter = Meter(sb)
    crm = Crm()
    meter.watch(crm)
    try:
        mark = meter.mark()
        crm.create("a@example.org")
        crm.create_all(["b@example.org", "c@example.org"])
        assert meter.since(mark).provider == 2
        assert crm.created == ["a@example.org", "b@example.org", "c@example.org"]
    finally:
        for owner, name, original in reversed(patched):
            setattr(owner, name, original)


def test_a_cost_per_request_that_grows_with_n_is_named_and_one_that_falls_is_not() -> None:
    small = Cost(reads=4, writes=1).per(10)  # 0.4 reads a request
    assert grows(small, Cost(reads=40, writes=10).per(100)) == []
    assert grows(small, Cost(reads=30, writes=10).per(100)) == []  # a cold start spread thinner
    assert grows(small, Cost(reads=400, writes=10).per(100)) == ["reads 0.40 -> 4.00"]


def test_a_forged_request_may_read_but_not_write_send_or_call_out() -> None:
    assert spent(Cost(reads=1, secrets=1)) == []
    assert spent(Cost(reads=1, writes=1, model=0.5)) == ["writes 1.00", "model 0.50"]
