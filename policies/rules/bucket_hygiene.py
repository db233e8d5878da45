"""bucket-hygiene: every S3 bucket blocks public access and refuses plaintext transport.

What: each S3 bucket, matched by its explicit ``bucket`` name, has
- a BucketPublicAccessBlock for that bucket with ``blockPublicAcls``, ``blockPublicPolicy``,
  ``ignorePublicAcls`` and ``restrictPublicBuckets`` all true;
- a bucket policy (BucketPolicy for that bucket, or the bucket's own ``policy``) with a Deny of
  ``s3:*`` to everyone when ``aws:SecureTransport`` is false, covering the bucket's objects.

Why: the buckets hold raw leads, mail and undo bundles (001, 000): personal data that must never
become public by a later ACL or policy edit, nor travel unencrypted.

Fix: use ``PrivateBucket``; it declares the public access block and the TLS-only policy.
"""

from __future__ import annotations

import re
from typing import Final

from pulumi_policy import ReportViolation, StackValidationArgs

from policies.common.documents import Document, documents_in, is_tls_deny
from policies.common.graph import Stack
from policies.common.iamdata import glob_regex
from policies.common.props import as_str
from policies.common.rule import stack_policy

NAME: Final = "bucket-hygiene"
BUCKETS: Final = ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2")
ACCESS_BLOCK: Final = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
BUCKET_POLICY: Final = "aws:s3/bucketPolicy:BucketPolicy"
BLOCK_FLAGS: Final = (
    "blockPublicAcls",
    "blockPublicPolicy",
    "ignorePublicAcls",
    "restrictPublicBuckets",
)
_PARTITION: Final = re.compile(r"^arn:([^:]+):")


def _covers_objects(resource: str, bucket: str) -> bool:
    if resource.strip() == "*":
        return True
    match = _PARTITION.match(resource)
    if not match:
        return False
    sample = f"arn:{match.group(1)}:s3:::{bucket}/any/key"
    return bool(glob_regex(resource).match(sample))


def _tls_buckets(docs: list[Document]) -> set[str]:
    found: set[str] = set()
    for doc in docs:
        if doc.resource_type == BUCKET_POLICY or doc.resource_type in BUCKETS:
            bucket = as_str(doc.props.get("bucket"))
            if not bucket:
                continue
            for st in doc.statements:
                if is_tls_deny(st, "s3") and any(
                    _covers_objects(r, bucket) for r in st.all_resources
                ):
                    found.add(bucket)
    return found


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    stack = Stack(args.resources)
    blocks: dict[str, set[str]] = {}  # bucket -> flags left off
    for node in stack.of_type(ACCESS_BLOCK):
        bucket = as_str(node.props.get("bucket"))
        if bucket:
            blocks.setdefault(bucket, set()).update(
                flag for flag in BLOCK_FLAGS if node.props.get(flag) is not True
            )
    tls = _tls_buckets(documents_in(args.resources))
    for node in stack.of_type(*BUCKETS):
        bucket = as_str(node.props.get("bucket"))
        if bucket is None:
            report(f"S3 bucket {node.name} has no explicit bucket name (a known string)", node.urn)
            continue
        if bucket not in blocks:
            report(f"S3 bucket {bucket} has no BucketPublicAccessBlock", node.urn)
        else:
            off = sorted(blocks[bucket])
            if off:
                report(
                    f"S3 bucket {bucket}: public access block leaves {', '.join(off)} off", node.urn
                )
        if bucket not in tls:
            report(
                f"S3 bucket {bucket} has no bucket policy denying s3:* on its objects when "
                "aws:SecureTransport is false",
                node.urn,
            )


POLICY: Final = stack_policy(
    NAME,
    "Every S3 bucket has all four public access blocks on and a TLS-only bucket policy.",
    _validate,
    remediation="Build buckets with PrivateBucket (public access block and TLS-only policy).",
)
