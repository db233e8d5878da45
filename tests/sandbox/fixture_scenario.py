"""The fixture system's scripted day: every trigger kind, with checks of the end state."""

from __future__ import annotations

import json
from typing import Any

from sandbox.core import Sandbox, mime_message
from sandbox.report import Report

TOKEN = "fixture-token"


class FixtureDay:
    key = "tst"
    title = "Sandbox fixture"

    def prepare(self, sb: Sandbox) -> None:
        sb.set_secret("tst-key", TOKEN)
        # The model calls the fixture's mail tickets urgent and the rest not.
        # The model calls mail tickets (ids from SES message ids) urgent and the rest not.
        sb.model.by_tool["triage"] = lambda request: {
            "urgency": "low" if "ticket T" in json.dumps(request["messages"]) else "high",
            "summary": None,
        }

    def play(self, sb: Sandbox, report: Report) -> None:
        with report.step("A customer posts a ticket to the public URL") as step:
            answer = sb.http(
                "tst-intake",
                "POST",
                "/",
                body=json.dumps({"ticket_id": "T1", "text": "hi"}),
                headers={"x-token": TOKEN, "content-type": "application/json"},
            )
            step.note(f"HTTP {answer.status} {answer.text}")
            refused = sb.http("tst-intake", "POST", "/", body="{}", headers={"x-token": "wrong"})
            step.note(f"wrong token: HTTP {refused.status}")
            sb.drain()
        report.check(
            "the URL answered 202, and 401 to a wrong token",
            answer.status == 202 and refused.status == 401,
        )
        with report.step("A mail arrives for help@example.com") as step:
            keys = sb.drop_mail(
                mime_message("a@example.org", "help@example.com", "mail: printer", "x"),
                recipient="help@example.com",
            )
            step.note(f"stored {keys[0]}")
            sb.drain()
        with report.step("A poison message and an exploding ticket") as step:
            sb.http(
                "tst-intake",
                "POST",
                "/",
                body=json.dumps({"ticket_id": "P1", "text": "x"}),
                headers={"x-token": TOKEN},
            )
            sb.http(
                "tst-intake",
                "POST",
                "/",
                body=json.dumps({"ticket_id": "T2", "text": "explode"}),
                headers={"x-token": TOKEN},
            )
            sb.drain()
            step.state("dead letters", sb.queue_depth("tst-work-dlq"))
        with report.step("The hourly sweep schedules follow-ups; two hours pass") as step:
            sb.put_object(
                "tst-inbox", "upload/t3.json", json.dumps({"ticket_id": "T3", "text": "x"})
            )
            sb.drain()
            sb.fire("tst-hourly")
            sb.drain()
            pending = sb.triggers.pending_one_off() if sb.triggers else []
            step.state("pending follow-ups", [name for name, _ in pending])
            sb.advance(hours=2)
            sb.drain()
        report.check(
            "the sweep scheduled one follow-up, for the open poison ticket",
            [name for name, _ in pending] == ["followup-P1"],
        )
        tickets = {t["ticket_id"]: t for t in sb.items("tst-tickets")}
        report.check(
            "every other ticket is triaged",
            all(t["state"] == "triaged" for k, t in tickets.items() if k != "P1"),
            str(sorted(tickets)),
        )
        report.check(
            "the urgent mail ticket mailed and texted the customer",
            len(sb.outbox.messages) == 2,
            str([m.channel for m in sb.outbox.messages]),
        )
        report.check(
            "the poison ticket and its follow-up went to the DLQ after 3 receives each",
            sb.queue_depth("tst-work-dlq") == 2,
        )
        # (The fixture's sweep reads the real time, so its second follow-up is due at once on the
        # moved clock and fires too: only the DLQ count above pins the follow-ups.)
        report.check(
            "the exploding ticket's stream batch went to the failure queue",
            sb.queue_depth("tst-failures") == 1,
        )
        report.check(
            "audit copies of the non-exploding tickets",
            sorted(sb.objects("tst-inbox", "audit/"))
            == sorted(f"audit/{t}.json" for t in tickets if t != "T2"),
        )
        report.check("the poison ticket stayed open", tickets["P1"]["state"] == "open")
        report.check("no call was denied", not sb.denials())


def fixture_state(sb: Sandbox) -> dict[str, Any]:
    return {"tickets": sb.items("tst-tickets"), "messages": sb.outbox.messages}
