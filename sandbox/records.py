"""Event and record shapes as AWS services deliver them to Lambda, built from emulator data.

Pure functions: the SQS record, the DynamoDB-stream record, the S3 notification record, the
two on-failure destination records (stream batch, asynchronous invocation), and how a batch
response names its failed items.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from typing import Any
from urllib.parse import quote_plus

from sandbox.account import arns
from sandbox.runtime import Invocation


def failed_ids(invocation: Invocation, ids: list[str], report_failures: bool) -> set[str]:
    """Which records failed: all of them on an error, else the reported batch item failures."""
    if invocation.error:
        return set(ids)
    result = invocation.result
    if not report_failures or not isinstance(result, dict):
        return set()
    failures = result.get("batchItemFailures") or []
    failed = {str(f.get("itemIdentifier")) for f in failures if isinstance(f, dict)}
    if any(not f or f not in ids for f in failed):
        return set(ids)  # an unknown or empty identifier fails the whole batch, as in Lambda
    return failed


def sqs_record(msg: dict[str, Any], arn: str, region: str) -> dict[str, Any]:
    attributes = {k: str(v) for k, v in (msg.get("Attributes") or {}).items()}
    message_attributes = {
        name: {
            "stringValue": value.get("StringValue"),
            "binaryValue": value.get("BinaryValue"),
            "stringListValues": [],
            "binaryListValues": [],
            "dataType": value.get("DataType"),
        }
        for name, value in (msg.get("MessageAttributes") or {}).items()
    }
    return {
        "messageId": msg["MessageId"],
        "receiptHandle": msg["ReceiptHandle"],
        "body": msg["Body"],
        "attributes": attributes,
        "messageAttributes": message_attributes,
        "md5OfBody": msg.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": arn,
        "awsRegion": region,
    }


def stream_record(record: dict[str, Any], stream_arn: str) -> dict[str, Any]:
    body = dict(record.get("dynamodb") or {})
    created = body.get("ApproximateCreationDateTime")
    if isinstance(created, dt.datetime):
        body["ApproximateCreationDateTime"] = int(created.timestamp())
    return {
        "eventID": record.get("eventID"),
        "eventName": record.get("eventName"),
        "eventVersion": record.get("eventVersion", "1.1"),
        "eventSource": "aws:dynamodb",
        "awsRegion": record.get("awsRegion"),
        "dynamodb": body,
        "eventSourceARN": stream_arn,
    }


def s3_record(
    *,
    bucket: str,
    key: str,
    region: str,
    size: int,
    etag: str,
    version: str | None,
    configuration: str,
    now: dt.datetime,
) -> dict[str, Any]:
    """One ``ObjectCreated:Put`` record; the key URL-encoded as S3 sends it."""
    return {
        "eventVersion": "2.1",
        "eventSource": "aws:s3",
        "awsRegion": region,
        "eventTime": now.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "eventName": "ObjectCreated:Put",
        "userIdentity": {"principalId": "AWS:SANDBOX"},
        "requestParameters": {"sourceIPAddress": "127.0.0.1"},
        "responseElements": {
            "x-amz-request-id": uuid.uuid4().hex[:16].upper(),
            "x-amz-id-2": uuid.uuid4().hex,
        },
        "s3": {
            "s3SchemaVersion": "1.0",
            "configurationId": configuration,
            "bucket": {
                "name": bucket,
                "ownerIdentity": {"principalId": "SANDBOX"},
                "arn": arns("").bucket(bucket),
            },
            "object": {
                "key": quote_plus(key, safe="/"),
                "size": size,
                "eTag": etag.strip('"'),
                "sequencer": f"{int(time.time() * 1000):016X}",
                **({"versionId": version} if version else {}),
            },
        },
    }


def stream_failure_record(
    *,
    function_arn: str,
    stream_arn: str,
    batch: list[dict[str, Any]],
    attempts: int,
    function_error: bool,
    now: dt.datetime,
) -> dict[str, Any]:
    """What a stream mapping sends its on-failure destination: the batch's description."""
    return {
        "requestContext": {
            "requestId": str(uuid.uuid4()),
            "functionArn": function_arn,
            "condition": "RetryAttemptsExhausted",
            "approximateInvokeCount": attempts,
        },
        "responseContext": {
            "statusCode": 200,
            "executedVersion": "$LATEST",
            "functionError": "Unhandled" if function_error else "",
        },
        "version": "1.0",
        "timestamp": now.isoformat(),
        "DDBStreamBatchInfo": {
            "shardId": "shardId-sandbox",
            "startSequenceNumber": batch[0]["dynamodb"]["SequenceNumber"],
            "endSequenceNumber": batch[-1]["dynamodb"]["SequenceNumber"],
            "batchSize": len(batch),
            "streamArn": stream_arn,
        },
    }


def async_failure_record(
    *, function_arn: str, event: Any, attempts: int, invocation: Invocation, now: dt.datetime
) -> dict[str, Any]:
    """What an asynchronous invocation's on-failure destination receives."""
    return {
        "version": "1.0",
        "timestamp": now.isoformat(),
        "requestContext": {
            "requestId": str(uuid.uuid4()),
            "functionArn": f"{function_arn}:$LATEST",
            "condition": "RetriesExhausted",
            "approximateInvokeCount": attempts,
        },
        "requestPayload": event,
        "responseContext": {
            "statusCode": 200,
            "executedVersion": "$LATEST",
            "functionError": "Unhandled",
        },
        "responsePayload": {"errorMessage": invocation.error, "errorType": invocation.error_type},
    }


def ses_record(
    *,
    message_id: str,
    sender: str,
    recipients: list[str],
    subject: str,
    function_arn: str,
    invocation_type: str,
    now: dt.datetime,
) -> dict[str, Any]:
    """The event an SES receipt rule's Lambda action sends ("Invoke Lambda function action",
    SES Developer Guide, https://docs.aws.amazon.com/ses/latest/dg/receiving-email-action-lambda-event.html):
    the mail's metadata and the verdicts, not its body."""
    stamp = now.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    verdict = {"status": "PASS"}
    return {
        "Records": [
            {
                "eventSource": "aws:ses",
                "eventVersion": "1.0",
                "ses": {
                    "mail": {
                        "timestamp": stamp,
                        "source": sender,
                        "messageId": message_id,
                        "destination": recipients,
                        "headersTruncated": False,
                        "headers": [],
                        "commonHeaders": {
                            "from": [sender],
                            "to": recipients,
                            "messageId": message_id,
                            "subject": subject,
                        },
                    },
                    "receipt": {
                        "timestamp": stamp,
                        "processingTimeMillis": 1,
                        "recipients": recipients,
                        "spamVerdict": verdict,
                        "virusVerdict": verdict,
                        "spfVerdict": verdict,
                        "dkimVerdict": verdict,
                        "dmarcVerdict": verdict,
                        "action": {
                            "type": "Lambda",
                            "functionArn": function_arn,
                            "invocationType": invocation_type,
                        },
                    },
                },
            }
        ]
    }
