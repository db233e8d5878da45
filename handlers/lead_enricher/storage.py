"""S3 through one small adapter: JSON objects in, bytes and listings out.

The buckets are private and encrypted by default (PrivateBucket), so nothing here sets ACLs
or encryption headers; keys are chosen by the callers so that a redelivered input overwrites
its own object instead of adding another.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from handlers.common.aws_clients import client


@dataclass(frozen=True)
class StoredObject:
    """An object's bytes and what identifies this version of it."""

    body: bytes
    etag: str
    version_id: str | None


class ObjectStore:
    """get / put / list on S3, with the client created on first use."""

    def __init__(self, client: Any = None) -> None:
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = client("s3")
        return self._client

    def put_json(self, bucket: str, key: str, value: Any) -> str | None:
        """Write ``value`` as JSON; return the new version id (None if unversioned)."""
        body = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
        return self.put_bytes(bucket, key, body.encode("utf-8"), "application/json")

    def put_bytes(self, bucket: str, key: str, body: bytes, content_type: str) -> str | None:
        answer = self.client.put_object(Bucket=bucket, Key=key, Body=body, ContentType=content_type)
        version = answer.get("VersionId")
        return None if version in (None, "null") else str(version)

    def put_json_if(self, bucket: str, key: str, value: Any, *, etag: str | None) -> str | None:
        """Write ``value`` only if the object is still the version read (``etag``; None: only
        if there is no object yet); the new ETag, or None when another writer got there first.

        S3 conditional writes (``If-Match`` / ``If-None-Match: *``, answered 412 when the
        condition fails): "How to prevent object overwrites with conditional writes",
        https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html.
        """
        body = json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
        condition = {"IfMatch": etag} if etag else {"IfNoneMatch": "*"}
        try:
            answer = self.client.put_object(
                Bucket=bucket, Key=key, Body=body.encode("utf-8"), ContentType="application/json",
                **condition,
            )
        except ClientError as err:
            code = str(err.response.get("Error", {}).get("Code", ""))
            if code in ("PreconditionFailed", "412", "ConditionalRequestConflict"):
                return None
            raise
        return str(answer.get("ETag", "")).strip('"')

    def get(self, bucket: str, key: str) -> StoredObject:
        answer = self.client.get_object(Bucket=bucket, Key=key)
        version = answer.get("VersionId")
        return StoredObject(
            body=answer["Body"].read(),
            etag=str(answer.get("ETag", "")).strip('"'),
            version_id=None if version in (None, "null") else str(version),
        )

    def get_json(self, bucket: str, key: str) -> Any:
        return json.loads(self.get(bucket, key).body)

    def keys(self, bucket: str, prefix: str) -> Iterator[str]:
        """Every key under ``prefix``, page by page."""
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
            for item in page.get("Contents", []):
                yield str(item["Key"])
