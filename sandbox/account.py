"""The sandbox's one account: every ARN it builds comes from ``arns(region)``."""

from __future__ import annotations

from components.arns import Arns
from components.offline.engine import ACCOUNT_ID

PARTITION = "aws"


def arns(region: str, account: str = ACCOUNT_ID) -> Arns:
    """ARN builder for the sandbox account (or another ``account``) in ``region``; global
    ARNs (IAM, S3) ignore the region, so ``arns("")`` builds them."""
    return Arns(PARTITION, region, account)
