"""Where the split weekly run keeps its partitions: objects under one run's prefix.

The split run (``split.py``) is a shuffle: each stage writes, per target partition, one object
that the next stage's worker for that partition reads. An object is zlib-compressed JSON; its
key is ``<run>/<stage>/<partition>/<writer>``, so a partition's inputs are one listing and a
retried writer overwrites its own object (a stage is idempotent). In AWS the store is the
private ``dm-shards`` bucket (``S3Shards``); tests, the sandbox and the benchmark use
``MemoryShards``. Partitions are chosen by CRC-32, not ``hash()``: Python salts string hashes
per process, and every invocation must route a value to the same partition.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from typing import Any, Protocol


def partition_of(text: str, parts: int) -> int:
    """The partition (0..parts-1) a value, id or group is routed to, the same in every process."""
    return zlib.crc32(text.encode("utf-8")) % parts


def encode(value: Any) -> bytes:
    return zlib.compress(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(), 6)


def decode(data: bytes) -> Any:
    return json.loads(zlib.decompress(data))


class Shards(Protocol):
    """Objects of the split run, by key."""

    def put(self, key: str, data: bytes) -> None: ...

    def get(self, key: str) -> bytes: ...

    def keys(self, prefix: str) -> list[str]:
        """Every key under ``prefix``, sorted."""
        ...

    def delete(self, key: str) -> None: ...


def put(shards: Shards, key: str, value: Any) -> None:
    shards.put(key, encode(value))


def get(shards: Shards, key: str) -> Any:
    return decode(shards.get(key))


def read_all(shards: Shards, prefix: str) -> Iterator[Any]:
    """Every object under ``prefix``, decoded, in key order."""
    for key in shards.keys(prefix):
        yield get(shards, key)


class MemoryShards:
    """Shards in a dict: tests, the sandbox and the benchmark."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    def put(self, key: str, data: bytes) -> None:
        self.objects[key] = data

    def get(self, key: str) -> bytes:
        return self.objects[key]

    def keys(self, prefix: str) -> list[str]:
        return sorted(k for k in self.objects if k.startswith(prefix))

    def delete(self, key: str) -> None:
        self.objects.pop(key, None)


class S3Shards:
    """Shards as objects of the private bucket; ``list_objects_v2`` pages 1,000 keys at a time
    ("ListObjectsV2", https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html)."""

    def __init__(self, client: Any, bucket: str, root: str = "shards/") -> None:
        self.client = client
        self.bucket = bucket
        self.root = root

    def put(self, key: str, data: bytes) -> None:
        self.client.put_object(Bucket=self.bucket, Key=self.root + key, Body=data)

    def get(self, key: str) -> bytes:
        body = self.client.get_object(Bucket=self.bucket, Key=self.root + key)["Body"]
        return bytes(body.read())

    def keys(self, prefix: str) -> list[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.root + prefix
        )
        start = len(self.root)
        return sorted(o["Key"][start:] for page in pages for o in page.get("Contents", ()))

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self.root + key)
