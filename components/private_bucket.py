"""PrivateBucket: an S3 bucket nobody outside the account reaches, over TLS only.

All public access blocked, objects owned by the bucket owner, server-side encryption, a policy
that denies non-TLS requests, optional versioning and expiry, and grants per key prefix.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from components.deployment import Deployment
from components.grants import Grant
from components.personal_data import Holding, component_inputs, tags


@dataclass(frozen=True)
class ServiceWriter:
    """An AWS service allowed to put objects under one prefix, for this account only.

    Attributes:
        service: Service principal, e.g. ``ses.amazonaws.com``.
        prefix: Key prefix it may write under (ends with ``/``).
        source_arn: The one source it acts for (e.g. the SES receipt rule ARN).
    """

    service: str
    prefix: str
    source_arn: str


@dataclass(frozen=True)
class PrivateBucketArgs:
    """Arguments of :class:`PrivateBucket`.

    Attributes:
        deployment: Where the bucket lives.
        name: The document's bucket name; physical ``<prefix>-<name>-<account id>`` because
            bucket names are global and another account may hold ``<prefix>-<name>``.
        versioned: Keep every version (the raw originals, the undo bundles).
        expire_days: Expire current objects after this many days; None keeps them.
        service_writers: Services that may write, each under one prefix for one source.
        noncurrent_days: In a versioned bucket, delete a version this many days after it
            stopped being current (and the delete markers left with no version behind them),
            so an overwritten or deleted object does not live on as an old version.
        personal_data: What the objects hold about people (components/personal_data.py).
    """

    deployment: Deployment
    name: str
    versioned: bool = False
    expire_days: int | None = None
    service_writers: Sequence[ServiceWriter] = field(default_factory=tuple)
    noncurrent_days: int | None = None
    personal_data: Holding = field(kw_only=True)

    def __post_init__(self) -> None:
        if self.noncurrent_days is not None and not self.versioned:
            raise ValueError(f"bucket {self.name}: noncurrent_days is for a versioned bucket")


class PrivateBucket(pulumi.ComponentResource):
    """A private, encrypted, TLS-only bucket handing out prefix-scoped grants."""

    bucket: aws.s3.Bucket
    bucket_name: pulumi.Output[str]

    def __init__(
        self,
        resource_name: str,
        args: PrivateBucketArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(
            "crm:index:PrivateBucket", resource_name, component_inputs(args.personal_data), opts
        )
        d = args.deployment
        self.args = args
        self.physical_name = f"{d.name(args.name)}-{d.account_id}"
        self.arn = d.arns.bucket(self.physical_name)
        child = pulumi.ResourceOptions(parent=self)

        self.bucket = aws.s3.Bucket(
            resource_name,
            bucket=self.physical_name,
            force_destroy=not d.protect_data,
            tags=d.resource_tags(**{"crm:bucket": args.name}, **tags(args.personal_data)),
            opts=pulumi.ResourceOptions(parent=self, protect=d.protect_data),
        )
        after = pulumi.ResourceOptions(parent=self, depends_on=[self.bucket])
        aws.s3.BucketPublicAccessBlock(
            f"{resource_name}-public-access",
            bucket=self.physical_name,
            block_public_acls=True,
            block_public_policy=True,
            ignore_public_acls=True,
            restrict_public_buckets=True,
            opts=after,
        )
        aws.s3.BucketOwnershipControls(
            f"{resource_name}-ownership",
            bucket=self.physical_name,
            rule=aws.s3.BucketOwnershipControlsRuleArgs(object_ownership="BucketOwnerEnforced"),
            opts=after,
        )
        aws.s3.BucketServerSideEncryptionConfiguration(
            f"{resource_name}-sse",
            bucket=self.physical_name,
            rules=[
                aws.s3.BucketServerSideEncryptionConfigurationRuleArgs(
                    apply_server_side_encryption_by_default=aws.s3.BucketServerSideEncryptionConfigurationRuleApplyServerSideEncryptionByDefaultArgs(
                        sse_algorithm="AES256"
                    ),
                    bucket_key_enabled=True,
                )
            ],
            opts=after,
        )
        if args.versioned:
            aws.s3.BucketVersioning(
                f"{resource_name}-versioning",
                bucket=self.physical_name,
                versioning_configuration=aws.s3.BucketVersioningVersioningConfigurationArgs(
                    status="Enabled"
                ),
                opts=after,
            )
        if args.expire_days is not None or args.noncurrent_days is not None:
            # One rule: an expired current version becomes noncurrent behind a delete marker,
            # the noncurrent expiry deletes it, and S3 then removes the lone delete marker
            # (S3 User Guide, "Expiring objects":
            # https://docs.aws.amazon.com/AmazonS3/latest/userguide/lifecycle-expire-general-considerations.html).
            aws.s3.BucketLifecycleConfiguration(
                f"{resource_name}-lifecycle",
                bucket=self.physical_name,
                rules=[
                    aws.s3.BucketLifecycleConfigurationRuleArgs(
                        id="expire",
                        status="Enabled",
                        filter=aws.s3.BucketLifecycleConfigurationRuleFilterArgs(prefix=""),
                        expiration=aws.s3.BucketLifecycleConfigurationRuleExpirationArgs(
                            days=args.expire_days
                        )
                        if args.expire_days is not None
                        else None,
                        noncurrent_version_expiration=aws.s3.BucketLifecycleConfigurationRuleNoncurrentVersionExpirationArgs(
                            noncurrent_days=args.noncurrent_days
                        )
                        if args.noncurrent_days is not None
                        else None,
                    )
                ],
                opts=after,
            )
        self.policy = aws.s3.BucketPolicy(
            f"{resource_name}-policy",
            bucket=self.physical_name,
            policy=self._policy(),
            opts=after,
        )
        _ = child
        self.bucket_name = self.bucket.bucket
        self.register_outputs({"bucket_name": self.bucket_name})

    def _policy(self) -> str:
        d = self.args.deployment
        statements: list[dict[str, Any]] = [
            {
                "Sid": "DenyInsecureTransport",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "s3:*",
                "Resource": [self.arn, d.arns.objects(self.physical_name)],
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            }
        ]
        for i, writer in enumerate(self.args.service_writers):
            statements.append(
                {
                    "Sid": f"AllowServiceWrite{i}",
                    "Effect": "Allow",
                    "Principal": {"Service": writer.service},
                    "Action": "s3:PutObject",
                    "Resource": d.arns.objects(self.physical_name, writer.prefix),
                    "Condition": {
                        "StringEquals": {"aws:SourceAccount": d.account_id},
                        "ArnLike": {"aws:SourceArn": writer.source_arn},
                    },
                }
            )
        return json.dumps({"Version": "2012-10-17", "Statement": statements}, sort_keys=True)

    # Grants -------------------------------------------------------------------------------

    def objects_arn(self, prefix: str = "") -> str:
        if prefix and not prefix.endswith("/"):
            raise ValueError(f"bucket {self.args.name}: prefix {prefix!r} must end with '/'")
        return self.args.deployment.arns.objects(self.physical_name, prefix)

    def grant(
        self, *actions: str, prefixes: Sequence[str] = ("",), sid: str | None = None
    ) -> Grant:
        """Named object actions (``s3:GetObject``, ``s3:PutObject``...) under the prefixes."""
        for action in actions:
            if not action.startswith("s3:"):
                raise ValueError(f"bucket {self.args.name}: {action!r} is not an S3 action")
        return Grant(
            sid or self._sid(actions),
            tuple(actions),
            tuple(self.objects_arn(p) for p in prefixes),
        )

    def grant_list(self, *, prefix: str | None = None, sid: str | None = None) -> Grant:
        """ListBucket on the bucket itself (needed to tell a missing key from a forbidden one);
        with ``prefix``, only listings under it (the ``s3:prefix`` condition key: "Allowing
        each IAM user access to a folder in a bucket",
        https://docs.aws.amazon.com/AmazonS3/latest/userguide/example-policies-s3.html)."""
        if prefix is None:
            return Grant(sid or f"{self._name_part()}List", ("s3:ListBucket",), (self.arn,))
        self.objects_arn(prefix)  # the same rule as an object grant's prefix: ends with "/"
        return Grant(
            sid or f"{self._name_part()}List",
            ("s3:ListBucket",),
            (self.arn,),
            {"StringLike": {"s3:prefix": [f"{prefix}*"]}},
        )

    def _name_part(self) -> str:
        return "".join(p.capitalize() for p in self.args.name.split("-"))

    def _sid(self, actions: Sequence[str]) -> str:
        return self._name_part() + "".join(a.split(":")[-1] for a in actions)
