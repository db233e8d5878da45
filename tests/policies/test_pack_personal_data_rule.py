"""personal-data-retained: a store tagged as holding personal data has an end."""

from __future__ import annotations

from typing import Any

import pytest

from policies.testing import Spec
from tests.policies.pack_builders import (
    ACCOUNT,
    BUCKET,
    LOG_GROUP,
    PREFIX,
    QUEUE,
    bucket,
    compliant_stack,
    messages,
    run,
    table,
)

RULE = "personal-data-retained"
LIFECYCLE = "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration"
VERSIONING = "aws:s3/bucketVersioning:BucketVersioning"
RAW = f"{PREFIX}-ler-raw-{ACCOUNT}"


def held(mark: str = "held") -> dict[str, Any]:
    return {"tags": {"crm:system": "ler", "crm:personal-data": mark}}


def marked_bucket(*, versioned: bool, expire: bool = True, noncurrent: bool = True) -> list[Spec]:
    specs = [
        (t, n, {**p, **held()}) if t == BUCKET else (t, n, p) for t, n, p in bucket("ler-raw")
    ]
    rule: dict[str, Any] = {"id": "expire", "status": "Enabled", "filter": {"prefix": ""}}
    if expire:
        rule["expiration"] = {"days": 30}
    if noncurrent:
        rule["noncurrentVersionExpiration"] = {"noncurrentDays": 7}
    specs.append((LIFECYCLE, "ler-raw-lifecycle", {"bucket": RAW, "rules": [rule]}))
    if versioned:
        specs.append(
            (VERSIONING, "ler-raw-versioning", {"bucket": RAW, "versioningConfiguration": {"status": "Enabled"}})
        )
    return specs


def compliant_stores() -> list[Spec]:
    return [
        table("rrs-audit", ttl={"enabled": True, "attributeName": "expires_at"}, **held()),
        table("rrs-optout", **held("suppression")),
        table("upsr-catalogue", **held("none")),
        *marked_bucket(versioned=True),
        (QUEUE, "upsr-jobs", {"name": f"{PREFIX}-upsr-jobs", "messageRetentionSeconds": 345600, **held()}),
        (LOG_GROUP, "rrs-sync-logs", {"name": f"/aws/lambda/{PREFIX}-rrs-sync", "retentionInDays": 7, **held()}),
    ]


def test_stores_with_an_end_pass() -> None:
    assert run(compliant_stack(), RULE) == []
    assert run(compliant_stores(), RULE) == []


@pytest.mark.parametrize(
    ("specs", "expected"),
    [
        (
            [table("rrs-audit", **held())],
            "Table dev-rrs-audit holds personal data with no TTL",
        ),
        (
            [table("rrs-audit", ttl={"enabled": False, "attributeName": "expires_at"}, **held())],
            "Table dev-rrs-audit holds personal data with no TTL",
        ),
        (
            [(QUEUE, "upsr-jobs", {"name": f"{PREFIX}-upsr-jobs", **held()})],
            "Queue dev-upsr-jobs holds personal data with no message retention",
        ),
        (
            [(LOG_GROUP, "rrs-sync-logs", {"name": f"/aws/lambda/{PREFIX}-rrs-sync", **held()})],
            "LogGroup /aws/lambda/dev-rrs-sync holds personal data with no log retention",
        ),
        (
            marked_bucket(versioned=False, expire=False, noncurrent=False),
            f"Bucket {RAW} holds personal data with no lifecycle rule expiring its objects",
        ),
        (
            marked_bucket(versioned=True, noncurrent=False),
            f"Bucket {RAW} holds personal data with versioned, with no lifecycle rule expiring "
            "noncurrent versions",
        ),
        (
            [table("rrs-audit", **held("maybe"))],
            "Table dev-rrs-audit: crm:personal-data is 'maybe', not one of held, suppression, none",
        ),
    ],
    ids=["table-no-ttl", "table-ttl-off", "queue", "log-group", "bucket", "versioned-bucket", "unknown-mark"],
)
def test_a_personal_store_without_an_end_is_refused(specs: list[Spec], expected: str) -> None:
    found = messages(run(specs, RULE))
    assert len(found) == 1 and found[0].startswith(expected), found


def test_an_unmarked_or_suppression_store_is_not_judged() -> None:
    assert run([table("rrs-optout", **held("suppression")), table("rrs-jobs")], RULE) == []
