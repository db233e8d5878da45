"""`make verify` pointed at the sandbox: the command a deployer runs after `pulumi up`, run here
against the whole dev stack on this machine, must print ok for all five systems, leave nothing
behind and send nothing; it fails, naming the system and the reason, when a secret holds another
value or when a role loses a grant its system's check writes through (the sandbox evaluates
every call against the role policies of the plan, as IAM would)."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from components.offline import engine
from components.operate import probing, verify
from components.operate.stack_secrets import StackSecret
from handlers.common.hubspot import HubSpotError
from sandbox import scenarios
from sandbox.control import ControlServer
from sandbox.core import Sandbox
from sandbox.interceptor import outside
from sandbox.play import enabled_systems
from testsupport.graphs import shared

DEV = shared().program("dev")
LOST_S = 3
"""verify's bound where ler's check lead is lost on the way: here the lead reaches ler-push in
0.3-0.7 s (the pump delivers every 0.2 s, verify reads every 0.1 s on a sandbox), so a lead
missing after LOST_S was lost, not slow."""


@pytest.fixture(scope="module")
def running() -> Iterator[tuple[Sandbox, str]]:
    """`make sandbox`: the dev stack with its scenarios' secrets and data, the control API and
    the pump delivering in the background, as queues, rules and S3 would (ler's check lead
    travels its chain on it); no recurring schedule fires, so state compares before and after."""
    with Sandbox(DEV) as sb:
        for key in enabled_systems(sb.graph):
            scenario = scenarios.load(key)
            if scenario is not None:
                scenario.prepare(sb)
        sb.run_pump(interval_s=0.2, recurring=False)
        control = ControlServer(sb, port=0)
        control.start()
        try:
            yield sb, control.url
        finally:
            control.stop()


def _verify(
    url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *only: str,
    wait: float = 60,
) -> tuple[int, dict[str, str]]:
    monkeypatch.setattr(engine, "run", lambda stack, overrides=None: DEV)
    with outside():  # the deployer's command, run here in the sandbox's process
        code = verify.main(["--stack", "dev", "--sandbox", url, f"--wait={wait:g}", *(f"--system={s}" for s in only)])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.split(None, 1)[0:1] in (["dm"], ["ler"], ["ls"], ["upsr"], ["rrs"])]
    return code, {line.split()[0]: line.split(None, 1)[1] for line in lines}


def _failed(
    running: tuple[Sandbox, str], before: object, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], system: str, *, wait: float,
) -> str:
    """Verify ``system`` under the test's patches: it fails, alone, and once the patches are
    undone the sandbox holds what it held ``before`` (what the check wrote before it failed is
    removed too). Its line."""
    sb, url = running
    code, seen = _verify(url, monkeypatch, capsys, system, wait=wait)
    assert code == 1 and set(seen) == {system}, seen
    monkeypatch.undo()
    assert _state(sb) == before
    return seen[system]


def test_verify_against_the_sandbox_prints_ok_for_all_five(
    running: tuple[Sandbox, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, url = running
    code, seen = _verify(url, monkeypatch, capsys)
    assert set(seen) == {"dm", "ler", "ls", "upsr", "rrs"}
    assert all(line.startswith("ok: ") for line in seen.values()), seen
    assert code == 0


CHECKED_STATE = (
    "ls-touches", "dm-pairs", "dm-decisions", "dm-merges", "upsr-orders", "upsr-customers",
    "rrs-requests", "rrs-jobs", "rrs-audit", "ler-enrich-cache", "ler-identity",
)


def _state(sb: Sandbox) -> dict[str, object]:
    """Every row the five checks write through, ler-raw's objects, pending schedules, the outbox."""
    found: dict[str, object] = {table: sb.items(table) for table in CHECKED_STATE}
    for bucket in ("ler-raw", "ler-records", "ler-junk"):
        found[bucket] = sb.objects(bucket)
    found["one-offs"] = sb.triggers.pending_one_off() if sb.triggers else []
    found["outbox"] = len(sb.outbox.messages)
    return found


def test_verify_writes_through_each_system_and_leaves_nothing_behind(
    running: tuple[Sandbox, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sb, url = running
    before = _state(sb)
    start = len(sb.interceptor.ledger)
    _, seen = _verify(url, monkeypatch, capsys)
    assert all(line.startswith("ok: ") for line in seen.values()), seen
    assert _state(sb) == before
    # ...and the functions themselves wrote (each check goes through its real write path).
    writes = [(r.function, r.service, r.operation) for r in sb.interceptor.ledger[start:] if r.function]
    for function, operation in (
        ("dev-ls-capture", "PutItem"), ("dev-dm-merge", "TransactWriteItems"),
        ("dev-ler-intake", "PutObject"), ("dev-ler-intake", "SendMessageBatch"),
        ("dev-upsr-order", "PutItem"), ("dev-rrs-webhook", "PutItem"),
        ("dev-rrs-webhook", "CreateSchedule"),
    ):
        assert any(w[0] == function and w[2] == operation for w in writes), (function, operation, writes)
    # ler's check lead travelled the whole chain, each stage once and without error...
    runs = [i for i in (sb.runtime.invocations if sb.runtime else []) if i.function.startswith("dev-ler-")]
    chain = ("dev-ler-normalize", "dev-ler-enrich", "dev-ler-dedupe", "dev-ler-filter", "dev-ler-push")
    for stage in chain:
        assert [i.error for i in runs if i.function == stage][-1:] == [None], (stage, runs)
    assert ("dev-ler-normalize", "s3", "PutObject") in writes and ("dev-ler-push", "dynamodb", "PutItem") in writes
    # ...ler-push searched the CRM for it and created nothing; no junk record, no clean record.
    crm = scenarios.load("ler").crm  # type: ignore[union-attr]
    assert ("email", "verify-check@example.com") in crm.searches, crm.searches
    assert not [c for c in crm.calls if c[0] in ("create", "update")], crm.calls
    assert sb.queue_depth("ler-intake-queue") == 0 and sb.queue_depth("ler-dlq") == 0


def _without(sb: Sandbox, function: str, action: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``function``'s role loses ``action`` (a grant the deploy forgot)."""
    role = sb.function(function).role_name
    kept = []
    for statement in sb.topology.policies[role]:
        actions = statement["Action"]
        rest = [a for a in ([actions] if isinstance(actions, str) else actions) if a != action]
        if rest:
            kept.append({**statement, "Action": rest})
    monkeypatch.setitem(sb.topology.policies, role, kept)


@pytest.mark.parametrize(
    ("system", "function", "action"),
    [
        ("dm", "dm-merge", "dynamodb:PutItem"),  # the claim
        ("dm", "dm-merge", "dynamodb:DeleteItem"),  # its release
        ("ler", "ler-intake", "s3:PutObject"),  # the raw original
        ("ler", "ler-intake", "sqs:SendMessage"),  # the queue into the chain
        ("ler", "ler-push", "dynamodb:PutItem"),  # the check's arrival at the end of the chain
        ("ls", "ls-capture", "dynamodb:PutItem"),  # the touch
        ("upsr", "upsr-order", "dynamodb:PutItem"),  # the order marker
        ("rrs", "rrs-webhook", "dynamodb:PutItem"),  # the request
        ("rrs", "rrs-webhook", "scheduler:CreateSchedule"),  # its schedule
    ],
)
def test_a_missing_write_grant_fails_its_system(
    running: tuple[Sandbox, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    system: str, function: str, action: str,
) -> None:
    sb = running[0]
    before = _state(sb)
    _without(sb, function, action, monkeypatch)
    line = _failed(running, before, monkeypatch, capsys, system, wait=LOST_S)
    assert line.startswith("failed: "), line


def test_a_check_grant_scoped_to_other_keys_fails_ler(
    running: tuple[Sandbox, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ler-push's PutItem reaches only ``check#`` keys (``dynamodb:LeadingKeys``, evaluated by
    the sandbox as by IAM): scoped to any other prefix, the note is denied and ler fails."""
    sb = running[0]
    role = sb.function("ler-push").role_name
    scoped = [
        {**st, "Condition": {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["checks/*"]}}}
        if st.get("Sid") == "NoteCheckArrival" else st
        for st in sb.topology.policies[role]
    ]
    assert scoped != sb.topology.policies[role]
    before = _state(sb)
    monkeypatch.setitem(sb.topology.policies, role, scoped)
    line = _failed(running, before, monkeypatch, capsys, "ler", wait=LOST_S)
    assert line.startswith(f"failed: the check lead did not reach ler-push within {LOST_S} s"), line


def _stage_module(name: str) -> Any:
    """The sandbox's own copy of a ler module (it imports the handlers afresh)."""
    return importlib.import_module(f"handlers.lead_enricher.{name}")


def test_a_stage_that_drops_the_check_fails_ler_naming_the_last_stage_seen(
    running: tuple[Sandbox, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Last session's ler-normalize, which dropped a check lead on arrival: verify waits its
    bound and says how far the lead got; nothing is left behind."""
    sb, _ = running
    normalizing = _stage_module("normalizing")
    real = normalizing.Normalizer.process

    def dropping(self: Any, body: str) -> Any:
        lead = normalizing.Lead.from_json(json.loads(body))
        return lead if lead.is_check else real(self, body)

    before = _state(sb)
    monkeypatch.setattr(normalizing.Normalizer, "process", dropping)
    line = _failed(running, before, monkeypatch, capsys, "ler", wait=LOST_S)
    assert line.startswith(f"failed: the check lead did not reach ler-push within {LOST_S} s "
                           "(last stage seen: ler-intake, which queued it"), line


def test_a_filter_that_junks_the_check_fails_ler_at_once(
    running: tuple[Sandbox, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ler-filter weighing the check like any lead junks its example.com address: ler fails
    with the junk reason, and the junk record is removed with the rest."""
    sb, _ = running
    screening = _stage_module("screening")
    real = screening.JunkFilter.screen

    def as_any_lead(self: Any, lead: Any) -> Any:
        return real(self, dataclasses.replace(lead, signals={}))

    before = _state(sb)
    monkeypatch.setattr(screening.JunkFilter, "screen", as_any_lead)
    line = _failed(running, before, monkeypatch, capsys, "ler", wait=30)
    assert line.startswith("failed: ler-filter dropped the check lead as junk (placeholder_email)"), line


def test_a_crm_key_hubspot_refuses_fails_ler_naming_the_key(
    running: tuple[Sandbox, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """ler-push's search answered 401 (a wrong or revoked Service Key): ler fails naming the
    secret, and the note is removed with the rest."""
    sb = running[0]
    crm = scenarios.load("ler").crm  # type: ignore[union-attr]

    def refused(email: str) -> None:
        raise HubSpotError("unauthorized", status=401)

    before = _state(sb)
    monkeypatch.setattr(crm, "find_by_email", refused)
    line = _failed(running, before, monkeypatch, capsys, "ler", wait=30)
    assert line.startswith("failed: the check lead reached ler-push, but the CRM search refused "
                           "(HTTP 401): ler-crm-key must hold"), line


def test_a_paused_queue_trigger_fails_ler_before_anything_is_sent(
    running: tuple[Sandbox, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dev stack with ``queueTriggers: paused``: the lead would wait in the queue, so verify
    says so and sends nothing (the sandbox's pump delivers every queue, so Lambda's answer is
    what changes here)."""
    sb, url = running
    before, start = _state(sb), len(sb.interceptor.ledger)
    monkeypatch.setattr(probing.Target, "trigger_on", lambda self, function, region: False)
    code, seen = _verify(url, monkeypatch, capsys, "ler")
    assert code == 1
    assert seen["ler"].startswith("failed: dev-ler-intake-queue does not trigger ler-normalize on this "
                                  "stack (queueTriggers: paused)"), seen
    assert not [r for r in sb.interceptor.ledger[start:] if r.function == "dev-ler-intake"]
    assert _state(sb) == before


def test_a_secret_that_differs_fails_its_system_by_name(
    running: tuple[Sandbox, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The job tool holds another secret than the stack: rrs fails, named, and the rest pass."""
    _, url = running
    real = probing.Target.secret

    def other(self: probing.Target, secret: StackSecret) -> str:
        return "a-secret-the-stack-does-not-hold" if secret.name == "rrs-webhook-secret" else real(self, secret)

    monkeypatch.setattr(probing.Target, "secret", other)
    code, seen = _verify(url, monkeypatch, capsys)
    assert code == 1
    assert seen["rrs"].startswith("failed: ") and "got HTTP 401 invalid_signature" in seen["rrs"], seen
    assert all(seen[k].startswith("ok: ") for k in ("dm", "ler", "ls", "upsr"))


def test_verify_needs_no_aws_credentials_to_check_a_sandbox(
    running: tuple[Sandbox, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`make verify SANDBOX=...` from a machine with no AWS account (the emulator takes any)."""
    _, url = running
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    code, seen = _verify(url, monkeypatch, capsys, "ls", "dm")
    assert code == 0 and all(line.startswith("ok: ") for line in seen.values()), seen

