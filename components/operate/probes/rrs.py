"""``make verify``'s probe of rrs: a ``job.completed`` event for a synthetic customer
(``verify-check@example.com``) signed with the job tool's secret: rrs-webhook writes the request
(marked ``check``, TTL one day), the job and the intake audit, and creates the request's one-off
schedule; rrs-sender suppresses a check request should the schedule ever fire. Removed: the
schedule, the request, its job and audit rows. A wrong signature answers 401.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import uuid

from components.operate.probing import Context, Failed, expect
from handlers.common.webhook_signatures import sign_timestamped
from handlers.review_requests.domain import request_id_for


def probe(c: Context) -> str:
    fn, region = c.name("rrs-webhook"), c.region("rrs")
    secret = c.target.secret(c.secrets["rrs-webhook-secret"])
    check = f"check-{uuid.uuid4().hex[:12]}"
    now = c.target.now()  # the target's clock: the sandbox's may be moved
    # A synthetic job: its own customer id and a reserved example.com address (RFC 2606).
    body = json.dumps({
        "type": "job.completed", "id": check, "completion_id": check, "customer_id": check,
        "completed_at": dt.datetime.fromtimestamp(now, dt.UTC).isoformat(),
        "job": {"id": check, "title": "make verify"},
        "customer": {"name": "Verify Check", "email": "verify-check@example.com"},
    }).encode()
    headers = {"content-type": "application/json"}
    wrong = c.target.http(fn, region, "POST", "/", body, {**headers, "x-rrs-signature": sign_timestamped(body, "check-wrong", int(now))})
    expect(wrong, 401, "invalid_signature", "a wrong signature")
    request_id = request_id_for(check)  # what rrs-webhook names the request and its schedule
    db, tables = c.target.client("dynamodb", region), {t: c.name(f"rrs-{t}") for t in ("requests", "jobs", "audit")}
    try:
        answer = c.target.http(fn, region, "POST", "/", body, {**headers, "x-rrs-signature": sign_timestamped(body, secret, int(now))})
        expect(answer, 200, "", "a check job event signed with rrs-webhook-secret")
        result = json.loads(answer.body)
        if result.get("request_id") != request_id:
            raise Failed(f"the check job became request {result.get('request_id')}, not {request_id}")
        row = db.get_item(TableName=tables["requests"], Key={"request_id": {"S": request_id}}).get("Item") or {}
        if not row.get("check", {}).get("BOOL"):
            raise Failed(f"the check job answered 200 but no check request is in {tables['requests']}")
        if result.get("state") != "scheduled" or not result.get("schedule_created"):
            raise Failed(f"the check request was not scheduled (state {result.get('state')}, schedule_created {result.get('schedule_created')})")
    finally:
        _remove_rrs_check(c, region, request_id, check, tables)
    return "signature verified, check request scheduled in rrs-requests and its schedule created, then both removed (nothing sent)"


def _remove_rrs_check(c: Context, region: str, request_id: str, customer_id: str, tables: dict[str, str]) -> None:
    """The schedule (the only thing that would ever send), the request, its job and audit."""
    scheduler = c.target.client("scheduler", region)
    with contextlib.suppress(scheduler.exceptions.ResourceNotFoundException):  # never scheduled
        scheduler.delete_schedule(Name=request_id, GroupName=c.name("rrs-requests"))
    db = c.target.client("dynamodb", region)
    for table, key, value in (("audit", "request_id", request_id), ("jobs", "customer_id", customer_id)):
        found = db.query(TableName=tables[table], KeyConditionExpression=f"{key} = :v",
                         ExpressionAttributeValues={":v": {"S": value}})["Items"]
        schema = {"audit": ("request_id", "ts"), "jobs": ("customer_id", "job_ts")}[table]
        for item in found:
            db.delete_item(TableName=tables[table], Key={k: item[k] for k in schema})
    db.delete_item(TableName=tables["requests"], Key={"request_id": {"S": request_id}})
