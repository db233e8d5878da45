"""Lead enricher: a form post, a mail, a CSV upload and two junk leads through the chain.

The CRM is ``testsupport.ler.FakeCrm`` (HubSpot's rules that matter: unique email,
409 on a repeat). Enrichment runs the real adapter of the stack's ``enrichmentProvider``
(People Data Labs or Apollo) with its key from ``ler-enrichment-key``, over
``sandbox.standins.FirmographicsStandIn``, which answers as the provider documents (a record,
a 404 or an empty 200 for an unknown company, a 401 for a wrong key). Both go in through the
collaborators the entry points' ``wire`` takes (``crm`` of ler-push, the provider's
``transport`` of ler-enrich), given with ``entry.registry.override``. Leads enter by the three
lanes as in AWS: the Function URL (shared secret header), a mail dropped into the SES lane
(stored under ``inbound/`` of ler-raw, whose notification invokes ler-intake), and a CSV
uploaded under ``upload/``. The chain runs over
the default bus by the graph's rules. The digest is run for today by hand, as an operator
would, without moving the clock to tomorrow (which would fire every other system's schedules).
The owner then rescues the link spammer from the digest, as a browser would: the link's page
(GET, which changes nothing), its button (POST to ler-rescue's Function URL), and the lead
walks the chain again to the CRM; a second click is refused.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any
from urllib.parse import urlsplit

from sandbox.core import HttpAnswer, Sandbox, mime_message
from sandbox.report import Report

INTAKE_SECRET = "sandbox-intake-shared-secret-0123456789"
ENRICHMENT_KEY = "sandbox-enrichment-key"
RESCUE_KEYRING = json.dumps({"active_kid": "k1", "keys": {"k1": "sandbox-rescue-link-key-" + "l" * 24}})
BROWSER = {"accept": "text/html,application/xhtml+xml,*/*;q=0.8", "user-agent": "Mozilla/5.0 Firefox/140.0"}
SPAMMER = "outreach@rank-agency.co.uk"
ACME = {
    "name": "Acme Widgets",
    "employees": 40,
    "size": "11-50",
    "city": "Leeds",
    "region": "West Yorkshire",
    "country": "United Kingdom",
    "industry": "Manufacturing",
    "founded": 1999,
    "linkedin": "acme-widgets",
}
JANE = {
    "email": "Jane.Doe@Acme-Widgets.co.uk",
    "name": "jane doe",
    "phone": "07400 123456",
    "company": "Acme Widgets Ltd",
    "message": "Could you send me a quote for 200 widgets?",
}
CSV = (
    "First Name;Surname;E-mail Address;Telephone;Organisation;Country\n"
    "ada;LOVELACE;ada@analytical-engines.co.uk;020 7946 0018;Analytical Engines;England\n"
    "Grace;Hopper;grace@cobol.example.io;(415) 555-2671;Cobol Inc;USA\n"
)
MAIL_TEXT = (
    "Hello,\n\nWe need 50 units delivered to our Leeds office.\n\n"
    "Phone: 07700 123456\nCompany: Brightside Bakery Ltd\n"
)


class LeadEnricherDay:
    key = "ler"
    title = "Lead enricher"

    def __init__(self) -> None:
        self.crm: Any = None
        self.provider: Any = None

    def prepare(self, sb: Sandbox) -> None:
        # the run's own copy: the sandbox imports handler modules anew (sandbox.modules)
        from handlers.common.entry import registry
        from handlers.lead_enricher.functions import enrich, push
        from sandbox.standins import FirmographicsStandIn
        from testsupport.ler import FakeCrm

        sb.set_secret("ler-intake-secret", INTAKE_SECRET)
        sb.set_secret("ler-enrichment-key", ENRICHMENT_KEY)
        sb.set_secret("ler-crm-key", "sandbox-crm-token")
        sb.set_secret("ler-rescue-link-key", RESCUE_KEYRING)
        sb.set_secret("ler-forget-salt", "sandbox-ler-forget-salt-" + "s" * 40)
        self.crm = FakeCrm()
        self.provider = FirmographicsStandIn(ENRICHMENT_KEY, {"acme-widgets.co.uk": ACME})
        registry.override(enrich, transport=self.provider)
        registry.override(push, crm=self.crm)

    def _post(self, sb: Sandbox, payload: dict[str, Any], secret: str = INTAKE_SECRET) -> int:
        answer = sb.http(
            "ler-intake",
            "POST",
            "/",
            body=json.dumps(payload),
            headers={"content-type": "application/json", "x-ler-intake-secret": secret},
        )
        return answer.status

    def _follow(self, sb: Sandbox, url: str, method: str) -> HttpAnswer:
        parts = urlsplit(url.replace("&amp;", "&"))
        return sb.http("ler-rescue", method, f"{parts.path}?{parts.query}", headers=BROWSER)

    def _junk(self, sb: Sandbox) -> list[dict[str, Any]]:
        s3 = sb.internal("s3", sb.region_of("ler-junk"))
        return [
            json.loads(s3.get_object(Bucket=sb.bucket("ler-junk"), Key=key)["Body"].read())
            for key in sb.objects("ler-junk", "junk/")
        ]

    def _created(self) -> list[str]:
        return [p.get("email", "") for method, _, p in self.crm.calls if method == "create"]

    def play(self, sb: Sandbox, report: Report) -> None:
        with report.step("Jane fills in the web form (Function URL, shared secret)") as step:
            status = self._post(sb, JANE)
            refused = self._post(sb, JANE, secret="wrong")
            step.note(f"HTTP {status}; with a wrong secret HTTP {refused}")
            sb.drain()
        report.check(
            "the form lead reached the CRM, enriched; a wrong secret changed nothing",
            self._created() == ["jane.doe@acme-widgets.co.uk"] and refused in (401, 403),
            str(self._created()),
        )
        jane: dict[str, Any] = next((p for m, _, p in self.crm.calls if m == "create"), {})
        asked = [c for c in self.provider.calls if "acme-widgets.co.uk" in c]
        report.check(
            "the configured provider's documented endpoint enriched her company (city, size)",
            bool(asked)
            and jane.get("city") == "Leeds"
            and str(jane.get("numberofemployees")) == "40",
            f"{asked[:1]} -> city={jane.get('city')} employees={jane.get('numberofemployees')}",
        )
        with report.step("Sam emails hello@example.com (SES lane -> ler-raw inbound/)") as step:
            inbound = (
                sb.graph.config.systems.ler.inbound_address if sb.graph.config.systems.ler else ""
            )
            mime = mime_message(
                "Sam O'Brien <sam.obrien@brightside-bakery.co.uk>",
                inbound,
                "Wholesale enquiry",
                MAIL_TEXT,
            )
            step.note(f"stored {sb.drop_mail(mime, recipient=inbound)[0]}")
            sb.drain()
        with report.step("Someone uploads a CSV from an expo under upload/") as step:
            sb.put_object("ler-raw", "upload/2026-11-expo.csv", CSV)
            sb.drain()
        with report.step("A bot (honeypot field) and a link spammer post the form") as step:
            bot = self._post(
                sb, {"email": "sales@growth-hackers.co.uk", "name": "Max", "_gotcha": "x"}
            )
            spam = self._post(
                sb,
                {
                    "email": "outreach@rank-agency.co.uk",
                    "name": "Mike Rank",
                    "message": "Get your site on the first page of Google! http://a.example "
                    "https://b.example http://c.example www.d.example",
                },
            )
            step.note(f"HTTP {bot}, {spam}")
            sb.drain()
        with report.step(
            "Jane posts the form again: the identity index links, no duplicate"
        ) as step:
            self._post(sb, {**JANE, "message": "Following up on my quote"})
            sb.drain()
            step.state("ler-identity", len(sb.items("ler-identity")))
        with report.step("The operator runs the junk digest for today") as step:
            today = sb.clock.now().date() + dt.timedelta(days=1)
            answer = sb.invoke("ler-digest", {"day": today.isoformat()}, source="operator")
            step.note(f"digest: {answer.result}")
            sb.drain()
        created = self._created()
        junk = sb.objects("ler-junk", "junk/")
        digest = [m for m in sb.outbox.messages if m.function == sb.name("ler-digest")]
        report.check(
            "four real leads created once each (form, mail, two CSV rows; Jane not twice)",
            sorted(created)
            == sorted(
                [
                    "jane.doe@acme-widgets.co.uk",
                    "sam.obrien@brightside-bakery.co.uk",
                    "ada@analytical-engines.co.uk",
                    "grace@cobol.example.io",
                ]
            ),
            str(created),
        )
        report.check(
            "both junk leads are in ler-junk with their reasons", len(junk) == 2, str(junk)
        )
        report.check(
            "the digest mailed the two junk leads",
            len(digest) == 1 and "2 junk" in digest[0].subject,
            digest[0].subject if digest else "none",
        )
        links = {
            who: url
            for who, url in re.findall(
                r"  - (.+?), by .*\n    Not junk: send .+? to the CRM: (\S+)",
                digest[0].text if digest else "",
            )
        }
        report.check(
            "each dropped lead in the digest has its own rescue link",
            len(links) == 2 and SPAMMER in str(links),
            ", ".join(sorted(links)),
        )
        link = next((url for who, url in links.items() if SPAMMER in who), "")
        with report.step("The owner thinks Mike Rank is real: opens his link, then sends him back") as step:
            page = self._follow(sb, link, "GET") if link else None
            step.note(f"confirm page: HTTP {page.status if page else '-'}")
            untouched = not [r for r in self._junk(sb) if "rescue" in r]
            action = re.search(r"action='([^']*/rescue\?t=[^']+)'", page.text) if page else None
            # A person reads the page before pressing (a scanner's immediate POST is refused).
            sb.clock.jump_to(sb.clock.now() + dt.timedelta(seconds=20))
            done = self._follow(sb, action.group(1), "POST") if action else None
            step.note(f"rescue: HTTP {done.status if done else '-'}")
            sb.drain()
            again = self._follow(sb, action.group(1), "POST") if action else None
            step.note(f"the same link again: HTTP {again.status if again else '-'}")
        rescued = [r for r in self._junk(sb) if SPAMMER in json.dumps(r)]
        report.check(
            "the page named him and changed nothing; the rescue recorded who and when",
            page is not None and page.status == 200 and "Mike Rank" in page.text and untouched
            and done is not None and done.status == 200
            and bool(rescued) and '"rescue"' in json.dumps(rescued[0]),
            f"GET {page.status if page else '-'}, POST {done.status if done else '-'}",
        )
        report.check(
            "the rescued lead went through the chain again and reached the CRM; a second click "
            "was refused",
            SPAMMER in self._created() and self._created().count(SPAMMER) == 1
            and again is not None and again.status == 409,
            str(self._created()),
        )
        report.check(
            "every clean lead has its record in ler-records",
            len(sb.objects("ler-records", "records/")) >= 4,
        )
        report.check(
            "no call was denied",
            not [d for d in sb.denials() if (d.function or "").startswith(sb.name("ler-"))],
        )


SCENARIO = LeadEnricherDay()
