"""The three lanes into the enricher (ler-intake's logic; the entry is ``functions/intake.py``).

* Function URL (form / webhook JSON or url-encoded): authenticity first (shared secret or
  SigV4 by the URL itself), then the raw body is kept under ``form/`` in ler-raw.
* S3 ``inbound/`` (SES stored a mail) and ``upload/`` (a CSV, one lead per row): the object
  in ler-raw is itself the raw original. An upload of any size is read in chunks with its
  progress in ``reports/<key>.json`` (which ends as the file's report), continuing in a new
  invocation when time runs short; an unreadable mail or row becomes a junk record with
  its reason (and row number).

Each lead then meets the cheap pre-screen: certain junk goes straight to ler-junk with its
reason, the rest to ler-intake-queue. Intake writes only under ``form/``, which triggers
nothing, so its own writes can never re-invoke it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import unquote_plus

from botocore.exceptions import ClientError

from handlers.common import function_url as url
from handlers.common.aws_clients import client
from handlers.common.observability import get_logger
from handlers.common.secrets import get_secret
from handlers.common.webhook_signatures import SignatureError, verify_timestamped
from handlers.lead_enricher import lead_metrics
from handlers.lead_enricher.contract import (
    FORM_PREFIX,
    MAIL_PREFIX,
    REPORT_PREFIX,
    UPLOAD_CONTINUE,
    UPLOAD_PREFIX,
    IntakeSettings,
)
from handlers.lead_enricher.inputs import RawLead, UnreadableMail, from_mapping, from_mime
from handlers.lead_enricher.intake_queue import LeadQueue
from handlers.lead_enricher.junk_log import junk_entry, keep_junk
from handlers.lead_enricher.lead import Lane, Lead, lead_id_for
from handlers.lead_enricher.prescreen import prescreen
from handlers.lead_enricher.storage import ObjectStore
from handlers.lead_enricher.uploads import csv_rows

SECRET_HEADER = "x-ler-intake-secret"
SIGNATURE_HEADER = "x-ler-signature"
MAX_BODY_BYTES = 64 * 1024
UPLOAD_CHUNK_ROWS = 500
"""Rows read between two progress records of an upload."""
UPLOAD_SAFETY_MS = 15_000
"""Time left at which an upload goes on in a new invocation (intake's timeout is 60 s)."""
MAX_REPORTED_ROWS = 10_000
"""Refused rows listed by number in an upload's report (each also has its junk record)."""
SES_SETUP_NOTIFICATION = "AMAZON_SES_SETUP_NOTIFICATION"
"""The object SES puts under the S3 action's prefix when the receipt rule is created (Amazon
SES Developer Guide, "Deliver to S3 bucket action")."""


class Intake:
    """Turns raw leads into queued leads or junk-log entries."""

    def __init__(
        self,
        config: IntakeSettings,
        clock: Callable[[], float],
        store: ObjectStore | None = None,
        queue: LeadQueue | None = None,
    ) -> None:
        self.config = config
        self.store = store or ObjectStore()
        self.queue = queue or LeadQueue(config.intake_queue_url)
        self.clock = clock
        self.remaining_ms: Callable[[], int] = lambda: 10**9
        """The invocation's remaining time (the Lambda context's); tests shorten it."""
        self.function_name = ""
        """This function's name, from the invocation's Lambda context (set by the entry point)."""
        self.invoke_self: Callable[[Mapping[str, Any]], None] = self._invoke_self
        """Starts a new invocation of this function; tests record the events instead."""

    def admit(self, leads: Iterable[tuple[Lead, RawLead]]) -> dict[str, int]:
        """Pre-screen each lead: junk to ler-junk now, survivors to the queue."""
        now = self.clock()
        survivors: list[Lead] = []
        junk = 0
        for lead, raw in leads:
            lead_metrics.count(lead, "Leads", lead.lane)
            reason = prescreen(raw, now=now, min_submit_seconds=self.config.min_submit_seconds)
            if reason is None:
                survivors.append(lead)
                continue
            self._junk(lead, reason)
            junk += 1
            lead_metrics.count(lead, "LeadsJunked", reason)
        queued = self.queue.send(survivors)
        return {"queued": queued, "junk": junk}

    # Function URL -------------------------------------------------------------------------

    def form(self, request: url.Request) -> dict[str, Any]:
        """One form/webhook POST; 202 for every accepted lead, junk or not (bots learn nothing)."""
        try:
            self._check_authentic(request)
            if request.method != "POST":
                raise url.RequestError(405, "method_not_allowed", "POST a lead")
            payload = self._payload(request)
        except url.RequestError as err:
            get_logger().info("intake request refused", code=err.code, status=err.status)
            return err.response()
        raw = from_mapping(payload)
        if not any(raw.fields.get(k) for k in ("email", "phone", "name", "first_name")):
            return url.json_error(400, "no_contact", "a lead needs an email, a phone or a name")
        now = self.clock()
        received = dt.datetime.fromtimestamp(now, dt.UTC)
        body = request.body
        lead_id = lead_id_for("form", hashlib.sha256(body).hexdigest())
        is_json = "json" in (request.headers.get("content-type") or "application/json")
        raw_key = (
            f"{FORM_PREFIX}{received.date().isoformat()}/{lead_id}{'.json' if is_json else '.txt'}"
        )
        # A url-encoded body is kept as text/plain: the bytes are what matter, not the type.
        content_type = "application/json" if is_json else "text/plain; charset=utf-8"
        version = self.store.put_bytes(self.config.raw_bucket, raw_key, body, content_type)
        lead = _lead(lead_id, "form", received, raw, self.config.raw_bucket, raw_key, version)
        lead.signals["request_id"] = request.request_id
        if request.check:
            # make verify's lead (the request proved authentic above): stored and queued like
            # any other, marked so that no stage lets it reach a person, a paid call or a
            # metric; the answer names what was written so verify can remove it.
            lead.mark_check()
            counts = self.admit([(lead, raw)])
            return url.json_response(202, {
                "lead_id": lead_id, "status": "accepted",
                "check": {"bucket": self.config.raw_bucket, "raw_key": raw_key, "version_id": version, **counts},
            })
        self.admit([(lead, raw)])
        return url.json_response(202, {"lead_id": lead_id, "status": "accepted"})

    def _check_authentic(self, request: url.Request) -> None:
        """Refuses (401) a request that does not come from a holder of the secret."""
        if self.config.intake_auth == "iam":
            return  # The Function URL is AWS_IAM: AWS checked the SigV4 signature before invoking us.
        if not self.config.intake_secret_id:
            raise RuntimeError("INTAKE_SECRET_ID is not set in shared_secret mode")

        secret = get_secret(self.config.intake_secret_id)
        given = request.headers.get(SECRET_HEADER)
        signature = request.headers.get(SIGNATURE_HEADER)
        if given is not None:
            if not hmac.compare_digest(given.encode("utf-8"), secret.encode("utf-8")):
                raise url.RequestError(401, "unauthorized", "the intake secret is wrong")
            return
        if signature is None:
            raise url.RequestError(401, "unauthorized", "send the intake secret or a signature")
        try:
            verify_timestamped(request.body, signature, secret, now=self.clock())
        except SignatureError as err:
            raise url.RequestError(401, "unauthorized", "the signature does not match") from err

    @staticmethod
    def _payload(request: url.Request) -> dict[str, Any]:
        content_type = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
        if content_type == "application/x-www-form-urlencoded":
            return request.form()
        if content_type in ("application/json", ""):
            return request.json_object()
        raise url.RequestError(415, "unsupported_media_type", "send JSON or a url-encoded form")

    # S3 lanes -----------------------------------------------------------------------------

    def objects(self, event: Mapping[str, Any]) -> dict[str, int]:
        """Mail and CSV objects that landed under the trigger prefixes."""
        totals = {"queued": 0, "junk": 0, "ignored": 0}
        for record in event.get("Records") or []:
            s3 = record.get("s3") or {}
            bucket = str((s3.get("bucket") or {}).get("name", ""))
            key = unquote_plus(str((s3.get("object") or {}).get("key", "")))
            received = _event_time(record, self.clock)
            if key.rsplit("/", 1)[-1] == SES_SETUP_NOTIFICATION:
                # SES writes this test object when the receipt rule's S3 action is created: it
                # is no mail, and read as one it would become a junk lead on every deploy.
                totals["ignored"] += 1
                continue
            if key.startswith(MAIL_PREFIX):
                counts = self._mail(bucket, key, received)
            elif key.startswith(UPLOAD_PREFIX):
                counts = self._upload(bucket, key, received)
            else:
                # Only the trigger prefixes are wired to this function; anything else (our own
                # form/ writes included) is never read, so intake cannot loop on itself.
                get_logger().warning("object outside the lane prefixes ignored", key=key)
                totals["ignored"] += 1
                continue
            for name, value in counts.items():
                totals[name] += value
        return totals

    def _mail(self, bucket: str, key: str, received: dt.datetime) -> dict[str, int]:
        stored = self.store.get(bucket, key)
        lead_id = lead_id_for("mail", bucket, key)
        try:
            raw = from_mime(stored.body)
        except UnreadableMail as err:
            # Junk with the reason, like any other unreadable lead: a retry would fail alike.
            lead = _lead(lead_id, "mail", received, RawLead(), bucket, key, stored.version_id)
            self._junk(lead, str(err))
            return {"queued": 0, "junk": 1}
        lead = _lead(lead_id, "mail", received, raw, bucket, key, stored.version_id)
        return self.admit([(lead, raw)])

    def _junk(self, lead: Lead, reason: str) -> None:
        """The lead's junk record, unless a delivery before this one wrote it (``keep_junk``)."""
        dropped_at = dt.datetime.fromtimestamp(self.clock(), dt.UTC)
        entry = junk_entry(lead, reason=reason, stage="intake", dropped_at=dropped_at)
        keep_junk(self.store, self.config.junk_bucket, lead, entry)
        get_logger().info("lead dropped at intake", lead_id=lead.lead_id, reason=reason)

    def _upload(self, bucket: str, key: str, received: dt.datetime) -> dict[str, int]:
        """Read a CSV upload from its report's cursor, in chunks, until done or out of time.

        Each chunk's leads are queued (and its refused rows junked) before the cursor moves
        past them in the report, so a crash or timeout anywhere resumes at the last recorded
        chunk: rows are never skipped, and a chunk read twice sends the same lead ids again,
        which push's per-lead claim absorbs. Near the end of the invocation intake invokes
        itself (asynchronously) to go on; a retried S3 event resumes the same way.
        """
        stored = self.store.get(bucket, key)
        report_key = upload_report_key(key)
        report, report_etag = self._report(bucket, report_key)
        if report is not None and report.get("etag") != stored.etag:
            report = None  # a new file under the same key starts over
        if report is not None and report.get("state") == "done":
            return {"queued": 0, "junk": 0}
        if report is None:
            report = {
                "bucket": bucket, "key": key, "etag": stored.etag, "version_id": stored.version_id,
                "received_at": received.isoformat(), "state": "reading", "cursor": 0,
                "rows": 0, "leads": 0, "junk": 0, "empty": 0, "refused": [], "invocations": 0,
            }
        report["invocations"] = int(report.get("invocations", 0)) + 1
        totals = {"queued": 0, "junk": 0}
        chunk: list[tuple[Lead, RawLead]] = []
        held = {"etag": report_etag}

        def flush(cursor: int) -> bool:
            """Queue the chunk, then move the cursor; False when another runner of this
            upload wrote the report since this one read it (this one stops; the other goes
            on, and the chunk both read is absorbed by push's per-lead claim)."""
            counts = self.admit(chunk)
            chunk.clear()
            totals["queued"] += counts["queued"]
            totals["junk"] += counts["junk"]
            report["leads"] += counts["queued"]
            report["junk"] += counts["junk"]
            report["cursor"] = cursor
            etag = self.store.put_json_if(bucket, report_key, report, etag=held["etag"])
            if etag is None:
                get_logger().warning("another run of this upload moved on; this one stops", key=key)
                return False
            held["etag"] = etag
            return True

        cursor = int(report["cursor"])
        pending = 0
        for row in csv_rows(stored.body, start_after=cursor):
            cursor = row.row
            report["rows"] = max(int(report["rows"]), row.row)
            lead_id = lead_id_for("upload", bucket, key, stored.etag, str(row.row))
            if row.raw is not None:
                lead = _lead(lead_id, "upload", received, row.raw, bucket, key, stored.version_id)
                lead.raw["row"] = str(row.row)
                chunk.append((lead, row.raw))
            elif row.reason == "empty_row":
                report["empty"] += 1
            else:
                reason = f"{row.reason} (row {row.row}, line {row.line})"
                junk = _lead(lead_id, "upload", received, RawLead(message=row.snippet), bucket, key,
                             stored.version_id)
                junk.raw["row"] = str(row.row)
                self._junk(junk, reason)
                report["junk"] += 1
                totals["junk"] += 1
                if len(report["refused"]) < MAX_REPORTED_ROWS:
                    report["refused"].append({"row": row.row, "line": row.line, "reason": row.reason})
            pending += 1
            if pending >= UPLOAD_CHUNK_ROWS:
                if not flush(cursor):
                    return totals
                pending = 0
                if self.remaining_ms() < UPLOAD_SAFETY_MS:
                    self.continue_later(bucket, key, received)
                    return totals
        report["state"] = "done"
        report["finished_at"] = dt.datetime.fromtimestamp(self.clock(), dt.UTC).isoformat()
        flush(cursor)
        return totals

    def _report(self, bucket: str, key: str) -> tuple[dict[str, Any] | None, str | None]:
        """The upload's report and its ETag (the version later writes are conditioned on)."""
        try:
            stored = self.store.get(bucket, key)
        except ClientError as err:
            if err.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None, None
            raise
        found = json.loads(stored.body)
        return (dict(found), stored.etag) if isinstance(found, dict) else (None, stored.etag)

    def continue_later(self, bucket: str, key: str, received: dt.datetime) -> None:
        """Invoke this function again, asynchronously, to go on reading the upload."""
        event = {UPLOAD_CONTINUE: {"bucket": bucket, "key": key, "received_at": received.isoformat()}}
        self.invoke_self(event)
        get_logger().info("upload continues in a new invocation", key=key)

    def _invoke_self(self, event: Mapping[str, Any]) -> None:
        if not self.function_name:
            raise RuntimeError("Intake.function_name is unset: the entry point sets it per call")
        invoke_async(self.function_name, event)

    def resume(self, event: Mapping[str, Any]) -> dict[str, int]:
        """The continuation event: read on from the report's cursor."""
        spec = event[UPLOAD_CONTINUE]
        key = str(spec["key"])
        if not key.startswith(UPLOAD_PREFIX):
            raise ValueError("only uploads continue")
        received = dt.datetime.fromisoformat(str(spec["received_at"]))
        return self._upload(str(spec["bucket"]), key, received)


def upload_report_key(key: str) -> str:
    """``reports/upload/leads.csv.json``: the upload's report, beside it under ``reports/``."""
    return f"{REPORT_PREFIX}{key}.json"


def invoke_async(function_name: str, event: Mapping[str, Any]) -> None:
    """Invoke ``function_name`` asynchronously with ``event`` (an upload's continuation).

    By name, not by ``invoked_function_arn``: that ARN carries the qualifier when an alias or
    version was invoked, and the role's grant names the unqualified function. AWS Lambda
    Developer Guide, "AWS Lambda context object in Python":
    https://docs.aws.amazon.com/lambda/latest/dg/python-context-object.html
    """
    client("lambda").invoke(
        FunctionName=function_name,
        InvocationType="Event",
        Payload=json.dumps(event).encode("utf-8"),
    )





def _lead(
    lead_id: str,
    lane: Lane,
    received: dt.datetime,
    raw: RawLead,
    bucket: str,
    key: str,
    version: str | None,
) -> Lead:
    reference = {"bucket": bucket, "key": key}
    if version:
        reference["version_id"] = version
    return Lead(
        lead_id=lead_id,
        lane=lane,
        received_at=received.isoformat(),
        raw=reference,
        fields=dict(raw.fields),
        message=raw.message,
        signals=dict(raw.signals),
    )


def _event_time(record: Mapping[str, Any], clock: Callable[[], float]) -> dt.datetime:
    """The S3 event's own time: the same on a redelivery, so the lead is the same lead; the
    invocation's time when the event has none."""
    text = str(record.get("eventTime") or "")
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(dt.UTC)
    except ValueError:
        return dt.datetime.fromtimestamp(clock(), dt.UTC)
