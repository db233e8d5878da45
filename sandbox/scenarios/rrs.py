"""Review request sender: completed jobs, a graded review ask, and an escalation.

The customer sheet is a static CSV handed to rrs-sync in place of the CSV URL. The handlers
read the time from the one clock (``handlers.common.clock``), which the sandbox drives and the day first moves to the next weekday 10:00 in London (opening hours) without
firing anything. The model stand-in grades by the job's rating (4-5 happy, 1-2 unhappy) and
writes a short link-free ask; the code injects the review link, as the document requires.
The per-request ``at()`` schedules the webhook creates are read back from the emulator's
Scheduler and fire when the clock reaches them, sending to rrs-work through their own role;
rrs-sender consumes rrs-work and rrs-escalator rrs-escalations, one unfiltered mapping each, so
no message is lost to another mapping's filter (the day checks it).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from zoneinfo import ZoneInfo

from sandbox.core import Sandbox
from sandbox.report import Report

WEBHOOK_SECRET = "whsec_sandbox_0123456789abcdefghijklmnop"
KEYRING = json.dumps({"active_kid": "k1", "keys": {"k1": "sandbox-link-key-" + "r" * 32}})
SHEET = """customer_id,name,email,phone,timezone,channel,prior_sentiment,past_complaints
c-ann,Ann Smith,ann@example.org,+447911123456,Europe/London,email,positive,0
c-bob,Bob Jones,bob@example.org,+447911654321,Europe/London,sms,neutral,1
c-cat,Cat Brown,cat@example.org,,Europe/London,email,positive,0
c-dan,Dan Green,dan@example.org,,Europe/London,email,positive,0
"""
ASK = (
    "Hi, thank you for having us round today. If you were pleased with the work, a short "
    "review would mean a lot to our small team."
)


def requests(sb: Sandbox) -> dict[str, str]:
    """Each request's state by customer; the table's other items (degradation notes, the day's
    spend counters) have no state."""
    return {r["customer_id"]: r["state"] for r in sb.items("rrs-requests") if "state" in r}


def _grade(request: Any) -> dict[str, Any]:
    prompt = " ".join(b.get("text", "") for m in request["messages"] for b in m["content"])
    facts = json.loads(prompt.split("\n", 1)[1])
    rating = facts.get("rating_out_of_5") or 3
    band = "happy" if rating >= 4 else "unhappy" if rating <= 2 else "neutral"
    return {"band": band, "confidence": 0.95, "reasons": [f"rated {rating} out of 5"]}


def _draft(request: Any) -> dict[str, Any]:
    return {"subject": "How did we do?", "body": ASK}


def _next_working_morning(sb: Sandbox) -> None:
    """Move the clock, firing nothing, to the next weekday 10:00 in London (opening hours)."""
    london = ZoneInfo("Europe/London")
    day = sb.clock.now().astimezone(london) + dt.timedelta(days=1)
    while day.weekday() >= 5:
        day += dt.timedelta(days=1)
    sb.clock.jump_to(day.replace(hour=10, minute=0, second=0, microsecond=0))


class ReviewDay:
    key = "rrs"
    title = "Review request sender"

    def __init__(self, sheet: str = SHEET) -> None:
        self.sheet = sheet
        """The customer sheet rrs-sync reads (a CSV)."""

    def prepare(self, sb: Sandbox) -> None:
        # the run's own copy: the sandbox imports handler modules anew (sandbox.modules)
        from handlers.common.entry import registry
        from handlers.review_requests.functions import sync
        from testsupport.rrs import StaticSheet

        sb.set_secret("rrs-webhook-secret", WEBHOOK_SECRET)
        sb.set_secret("rrs-messaging-key", KEYRING)
        sb.set_secret("rrs-forget-salt", "sandbox-rrs-forget-salt-" + "s" * 40)
        registry.override(sync, source=StaticSheet(self.sheet))
        sb.model.by_tool["record_grade"] = _grade
        sb.model.by_tool["write_ask"] = _draft
        _next_working_morning(sb)

    def _event(self, sb: Sandbox, event: dict[str, Any], *, secret_ok: bool = True) -> int:
        # the run's own copy: the sandbox imports handler modules anew (sandbox.modules)
        from handlers.common.webhook_signatures import sign_timestamped

        body = json.dumps(event).encode()
        # Signature freshness is checked against the one clock, which the sandbox moves.
        now = int(sb.clock.now().timestamp())
        signature = sign_timestamped(body, WEBHOOK_SECRET if secret_ok else "wrong-secret", now)
        answer = sb.http(
            "rrs-webhook",
            "POST",
            "/",
            body=body,
            headers={"content-type": "application/json", "x-rrs-signature": signature},
        )
        return answer.status

    def _completion(
        self, sb: Sandbox, completion: str, customer: str, rating: int, notes: str
    ) -> dict[str, Any]:
        done = sb.clock.now() - dt.timedelta(minutes=30)
        return {
            "type": "job.completed",
            "id": f"evt-{completion}",
            "completion_id": completion,
            "customer_id": customer,
            "completed_at": done.isoformat().replace("+00:00", "Z"),
            "job": {"id": f"job-{completion}", "title": "Boiler service"},
            "signal": {"rating": rating, "notes": notes, "complaint": rating <= 2},
        }

    def play(self, sb: Sandbox, report: Report) -> None:
        with report.step("The customer sheet syncs (rrs-sync, every 15 minutes)") as step:
            sb.fire("rrs-sync")
            sb.drain()
            step.state("rrs-customers", sorted(c["customer_id"] for c in sb.items("rrs-customers")))
        with report.step(
            "Cat opts out; then three jobs complete (Ann's webhook delivered twice)"
        ) as step:
            opted = self._event(
                sb, {"type": "contact.opted_out", "id": "evt-opt-1", "contact": "cat@example.org"}
            )
            ann = self._completion(sb, "cmp-ann", "c-ann", 5, "Customer delighted, boiler purring")
            statuses = [self._event(sb, ann), self._event(sb, ann)]
            statuses.append(
                self._event(sb, self._completion(sb, "cmp-bob", "c-bob", 1, "Late, left a mess"))
            )
            statuses.append(
                self._event(sb, self._completion(sb, "cmp-cat", "c-cat", 5, "All good"))
            )
            forged = self._event(sb, self._completion(sb, "cmp-x", "c-ann", 5, ""), secret_ok=False)
            step.note(f"opt-out HTTP {opted}; completions {statuses}; forged HTTP {forged}")
            sb.drain()
            pending = sb.triggers.pending_one_off() if sb.triggers else []
            step.state("one-off schedules", [(n, w.strftime("%H:%M")) for n, w in pending])
            step.state(
                "rrs-requests",
                sorted((r["request_id"][:12], r["state"]) for r in sb.items("rrs-requests")),
            )
        report.check(
            "one request per completion (the retry changed nothing), forgery refused",
            len(sb.items("rrs-requests")) == 3 and forged == 401,
            f"forged {forged}",
        )
        with report.step(
            "Two hours pass: the schedules fire; rrs-work feeds the sender, "
            "rrs-escalations the escalator"
        ) as step:
            sb.advance(hours=2, minutes=5)
            sb.drain()
            step.state("rrs-requests", requests(sb))
        with report.step("The afternoon: the 15-minute sweep catches any straggler") as step:
            for _ in range(4):
                sb.advance(minutes=30)
            states = requests(sb)
            step.state("rrs-requests", states)
        asks = sb.outbox.to("ann@example.org")
        owner = sb.graph.config.systems.rrs.owner_email if sb.graph.config.systems.rrs else ""
        handovers = [m for m in sb.outbox.to(owner) if m.function == sb.name("rrs-escalator")]
        report.check(
            "Ann (happy) got one email ask carrying the review link",
            len(asks) == 1 and "g.page" in asks[0].text,
            asks[0].text[:80] if asks else "none",
        )
        report.check(
            "Bob (unhappy) was diverted, not asked for a public review",
            states.get("c-bob") == "diverted"
            and not any("g.page" in m.text for m in sb.outbox.to("bob@example.org")),
        )
        report.check(
            "Cat (opted out) was suppressed",
            states.get("c-cat") == "suppressed",
            str(states.get("c-cat")),
        )
        report.check(
            "the owner got Bob's escalation handover",
            len(handovers) == 1,
            f"{len(handovers)} handover(s)",
        )
        self._refused_model(sb, report, owner)
        lost = [
            t
            for t in (sb.triggers.traces if sb.triggers else [])
            if t.kind in ("lost", "filtered") and t.source.startswith(sb.name("rrs-"))
        ]
        report.check(
            "no rrs message was deleted by an event source filter",
            not lost,
            f"{len(lost)} lost",
        )
        report.check(
            "no call was denied",
            not [d for d in sb.denials() if (d.function or "").startswith(sb.name("rrs-"))],
        )

    def _refused_model(self, sb: Sandbox, report: Report, owner: str) -> None:
        """Bedrock refuses the model (as on a fresh account): Dan is asked by the rules, the
        refusal is noted, and the next sweep asks rrs-escalator for the owner's notice."""
        settings = sb.graph.config.systems.rrs
        assert settings is not None
        models = {settings.grade_model.active, settings.compose_model.active}
        escalator = sb.name("rrs-escalator")
        before = len([m for m in sb.outbox.to(owner) if m.function == escalator])
        with report.step(
            "The next working day Bedrock refuses the model: Dan's job is asked by the rules, "
            "and the sweep asks rrs-escalator for the owner's notice"
        ) as step:
            # The other systems' days may have moved the clock past closing time.
            _next_working_morning(sb)
            sb.model.refused |= models
            self._event(sb, self._completion(sb, "cmp-dan", "c-dan", 5, "All fine"))
            sb.drain()
            for _ in range(4):  # Dan's schedule fires at 11:30; the next sweeps ask and mail
                sb.advance(minutes=30)
            sb.model.refused -= models
            states = requests(sb)
            step.state("rrs-requests", states)
        notices = [
            m
            for m in sb.outbox.to(owner)[before:]
            if m.function == escalator and "standard wording" in m.subject
        ]
        fixes = [m for m in sb.outbox.messages if m.function == escalator and "Bedrock refuses" in m.subject]
        report.check(
            "Dan (model refused) was not asked for a public review; the owner got one notice "
            "saying what it changes, and alertEmail one naming the model and the fix",
            states.get("c-dan") == "diverted"
            and len(notices) == 1
            and "Bedrock" not in notices[0].text
            and len(fixes) == 1
            and all(model.split(".", 1)[-1] in fixes[0].text for model in models)
            and "model-catalog" in fixes[0].text,
            f"{states.get('c-dan')}, {len(notices)} notice(s), {len(fixes)} fix(es)",
        )


SCENARIO = ReviewDay()
