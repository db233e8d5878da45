"""``make verify``'s probe of ler: a JSON lead (``verify-check@example.com``) with the intake
secret (or SigV4 in ``iam`` mode): ler-intake stores the raw body in ler-raw under ``form/``,
pre-screens it and queues it on ler-intake-queue marked ``check`` (``Lead.is_check``), answering
where it stored it. The lead then travels the whole chain, each stage doing its real work:
ler-normalize cleans it and stores its record under ``normalized/`` in ler-records, ler-enrich
reads the cache (and calls no paid provider for a check), ler-dedupe reads ler-identity,
ler-filter passes it by being a check, and ler-push makes the CRM search every push makes (the
Service Key and its read scope proved) but creates no contact and notes ``check#<lead id>`` in
ler-enrich-cache (TTL one hour). verify polls for that note for at most ``--wait`` seconds and
says which stage it last saw otherwise; a junk record for the lead fails it at once. No check is
counted in ler's business metrics. Removed: every version of the raw object, the normalized
record, a junk record if any, and the note. A wrong secret answers 401. A rescue link signed
with ler-rescue-link-key naming no junk record: 400 before any read; a forged one 403.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from components.operate.probing import Context, Failed, expect
from handlers.common.link_tokens import Keyring, issue_token
from handlers.lead_enricher import check_arrivals
from handlers.lead_enricher.contract import CACHE_KEY, FORM_PREFIX, NORMALIZED_PREFIX
from handlers.lead_enricher.junk_log import day_prefix
from handlers.lead_enricher.lead import lead_id_for


def probe(c: Context) -> str:
    fn, region = c.name("ler-intake"), c.region("ler")
    ler = c.graph.config.systems.ler
    assert ler is not None
    if not c.target.trigger_on(c.name("ler-normalize"), region):
        # The check lead would wait in the queue: say so before writing anything.
        raise Failed(f"{c.name('ler-intake-queue')} does not trigger ler-normalize on this stack "
                     "(queueTriggers: paused), so no lead travels the chain: set queueTriggers "
                     "to on, pulumi up, and verify again (nothing was sent)")
    # A synthetic lead (unique, so a new lead id) with a reserved example.com address (RFC 2606).
    body = json.dumps({
        "name": "Verify Check", "email": "verify-check@example.com",
        "message": f"make verify {uuid.uuid4().hex[:12]}",
    }).encode()
    headers = {"content-type": "application/json"}
    # Where the chain keeps what it writes for this lead (bucket names end with the account id):
    # removed below even when the check fails part way.
    account = c.target.client("sts", region).get_caller_identity()["Account"]
    day = dt.datetime.fromtimestamp(c.target.now(), dt.UTC).date()
    lead_id = lead_id_for("form", hashlib.sha256(body).hexdigest())
    trail = LerTrail(
        c, region, lead_id,
        raw=(f"{c.name('ler-raw')}-{account}", f"{FORM_PREFIX}{day.isoformat()}/{lead_id}.json"),
        normalized=(f"{c.name('ler-records')}-{account}", f"{NORMALIZED_PREFIX}{lead_id}.json"),
        junk=(f"{c.name('ler-junk')}-{account}", f"{day_prefix(day)}{lead_id}.json"),
    )
    sent = time.monotonic()
    try:
        if ler.intake_auth == "iam":
            answer = c.target.http(fn, region, "POST", "/", body, headers, sign=True)
        else:
            secret = c.target.secret(c.secrets["ler-intake-secret"])
            wrong = c.target.http(fn, region, "POST", "/", body, {**headers, "x-ler-intake-secret": "check-wrong"})
            expect(wrong, 401, "unauthorized", "a wrong intake secret")
            answer = c.target.http(fn, region, "POST", "/", body, {**headers, "x-ler-intake-secret": secret})
        expect(answer, 202, "", "a check lead with the intake secret")
        written = json.loads(answer.body).get("check") or {}
        raw, key = trail.raw
        if (written.get("bucket"), written.get("raw_key")) != (raw, key):
            raise Failed(f"the check lead answered 202 but was not stored as {raw}/{key} (answer {written})")
        trail.s3.head_object(Bucket=raw, Key=key)  # the raw original is really there
        if written.get("queued") != 1:
            raise Failed(f"the check lead was not queued on {c.name('ler-intake-queue')} (answer {written})")
        stages = trail.arrival(c.wait_s)
        took = time.monotonic() - sent
    finally:
        trail.remove()
    # The digest's rescue links: a link signed with the stack's key for a subject that names
    # no junk record passes the signature and is refused before any read; a forged one is not.
    keyring = Keyring.from_secret_string(c.target.secret(c.secrets["ler-rescue-link-key"]))
    token = issue_token(
        keyring, subject=f"check-{uuid.uuid4().hex[:12]}", action="rescue",
        ttl_seconds=600, now=c.target.now(),
    )
    rescue = c.name("ler-rescue")
    expect(c.target.http(rescue, region, "GET", "/rescue?t=forged"), 403, "invalid_link", "a forged rescue link")
    expect(c.target.http(rescue, region, "GET", f"/rescue?t={token}"), 400, "invalid_subject",
           "a rescue link signed with ler-rescue-link-key")
    seen = "; ".join(f"{stage.removeprefix('ler-')} {what}" for stage, what in stages.items())
    return (f"intake secret verified; check lead stored in ler-raw, queued and carried to ler-push "
            f"in {took:.1f} s ({seen}) with no contact created, all it wrote removed; rescue link key verified, "
            "forged link refused")


@dataclass
class LerTrail:
    """What the chain writes for ler's check lead, read and removed by (bucket, key)."""

    c: Context
    region: str
    lead_id: str
    raw: tuple[str, str]
    normalized: tuple[str, str]
    junk: tuple[str, str]

    @property
    def s3(self) -> Any:
        return self.c.target.client("s3", self.region)

    @property
    def arrival_key(self) -> dict[str, Any]:
        """ler-push's note in ler-enrich-cache that the check lead arrived (``check_arrivals``)."""
        return {CACHE_KEY: {"S": check_arrivals.key(self.lead_id)}}

    def arrival(self, wait_s: float) -> dict[str, str]:
        """What each stage made of the lead, once ler-push noted it; polled for at most
        ``wait_s`` (the chain is asynchronous: a queue, then four EventBridge rules)."""
        db, table = self.c.target.client("dynamodb", self.region), self.c.name("ler-enrich-cache")
        deadline = time.monotonic() + wait_s
        while True:
            found = db.get_item(TableName=table, Key=self.arrival_key, ConsistentRead=True).get("Item")
            if found:
                stages = {k: str(v.get("S", "")) for k, v in found.get("stages", {}).get("M", {}).items()}
                if not found.get("crm_ok", {}).get("BOOL"):
                    raise Failed(f"the check lead reached ler-push, but the {stages.get('ler-push', 'CRM search failed')}: "
                                 "ler-crm-key must hold a HubSpot Service Key with crm.objects.contacts.read "
                                 "(make secrets REPLACE=ler-crm-key)")
                return stages
            dropped = self._read_json(*self.junk)
            if dropped is not None:
                raise Failed(f"ler-{dropped.get('stage', 'filter')} dropped the check lead as junk "
                             f"({dropped.get('reason', 'no reason')}): it never reached ler-push")
            if time.monotonic() >= deadline:
                raise Failed(f"the check lead did not reach ler-push within {wait_s:g} s "
                             f"(last stage seen: {self._last_stage()})")
            time.sleep(self.c.target.poll_s)

    def _last_stage(self) -> str:
        if self._read_json(*self.normalized) is not None:
            return (f"ler-normalize, which stored {self.normalized[1]}; the later stages write "
                    f"nothing before ler-push's note: the logs of ler-enrich, ler-dedupe, ler-filter "
                    f"and ler-push name lead {self.lead_id}")
        return f"ler-intake, which queued it; ler-normalize stored nothing for lead {self.lead_id}"

    def _read_json(self, bucket: str, key: str) -> dict[str, Any] | None:
        try:
            found = json.loads(self.s3.get_object(Bucket=bucket, Key=key)["Body"].read())
        except self.s3.exceptions.NoSuchKey:
            return None
        return found if isinstance(found, dict) else {}

    def remove(self) -> None:
        """Every object the chain wrote for the lead and ler-push's note, whichever exist."""
        for bucket, key in (self.raw, self.normalized, self.junk):
            _remove_object(self.s3, bucket, key)
        self.c.target.client("dynamodb", self.region).delete_item(
            TableName=self.c.name("ler-enrich-cache"), Key=self.arrival_key
        )


def _remove_object(s3: Any, bucket: str, key: str) -> None:
    """Every version of ``key`` (ler-raw is versioned: a plain delete would only hide it)."""
    versions = s3.list_object_versions(Bucket=bucket, Prefix=key)
    for found in (*versions.get("Versions", []), *versions.get("DeleteMarkers", [])):
        if found["Key"] == key:
            s3.delete_object(Bucket=bucket, Key=key, VersionId=found["VersionId"])
