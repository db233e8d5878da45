"""The rows of the three tables as typed records, and the time format they share.

Timestamps are UTC ISO-8601 with microseconds and a ``Z`` (``2026-08-11T09:14:02.123456Z``):
one fixed width, so string order is time order and DynamoDB sort-key conditions
(``at <= :enquiry_at``) mean what they say.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from handlers.source_attributor.contract import TOUCH_TTL as TTL_ATTRIBUTE
from handlers.source_attributor.sources import HowDetected, Medium

LinkedBy = Literal["cookie", "email", "token"]

VISITOR_ID = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
"""A first-party visitor id: URL-safe, 16 to 64 characters (minted ones are 24)."""
EMAIL_HASH = re.compile(r"^[0-9a-f]{64}$")
"""A keyed email hash: HMAC-SHA256 in lower-case hex."""


def iso(moment: dt.datetime) -> str:
    """``moment`` in the one timestamp format of this system."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def month_of(at: str) -> str:
    """The enquiries partition of a timestamp: ``2026-08``."""
    return at[:7]


def _text(item: Mapping[str, Any], name: str) -> str:
    value = item.get(name, "")
    return value if isinstance(value, str) else str(value)


@dataclass(frozen=True)
class Touch:
    """One arrival (or one 'how did you hear about us' answer) of one visitor.

    Attributes:
        visitor_id: First-party id of the device (partition key).
        at: When (sort key).
        source: Normalised channel key.
        medium: organic | cpc | referral | direct | asked.
        campaign: utm_campaign, or "".
        referrer_host: Raw referrer host, verbatim, or "".
        landing: Landing path.
        how_detected: utm | referrer | none.
        ttl: Epoch seconds after which DynamoDB may delete the touch (+18 months).
        linked_visitor_id: Another id this browser presented with this touch (its script's
            first-party id when the cookie named another one), which stitching follows.
    """

    visitor_id: str
    at: str
    source: str
    medium: Medium
    campaign: str
    referrer_host: str
    landing: str
    how_detected: HowDetected
    ttl: int
    linked_visitor_id: str = ""

    def item(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            "visitor_id": self.visitor_id,
            "at": self.at,
            "source": self.source,
            "medium": self.medium,
            "campaign": self.campaign,
            "referrer_host": self.referrer_host,
            "landing": self.landing,
            "how_detected": self.how_detected,
            TTL_ATTRIBUTE: self.ttl,
        }
        if self.linked_visitor_id:
            item["linked_visitor_id"] = self.linked_visitor_id
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Touch:
        return cls(
            visitor_id=_text(item, "visitor_id"),
            at=_text(item, "at"),
            source=_text(item, "source"),
            medium=_text(item, "medium"),  # type: ignore[arg-type]
            campaign=_text(item, "campaign"),
            referrer_host=_text(item, "referrer_host"),
            landing=_text(item, "landing"),
            how_detected=_text(item, "how_detected"),  # type: ignore[arg-type]
            ttl=int(item.get(TTL_ATTRIBUTE, 0)),
            linked_visitor_id=_text(item, "linked_visitor_id"),
        )


@dataclass(frozen=True)
class Enquiry:
    """One enquiry. It holds no source: attribution is computed, never written back.

    Attributes:
        month: Partition key, ``YYYY-MM`` of ``at``: a report's date range is a few Queries.
        enquiry_id: Sort key, stable for one form submission, so a resubmission is a no-op.
        at: When the enquiry arrived.
        visitor_id: The device it came from.
        email_hash: Keyed hash of the normalised email (never the email itself).
        heard_about: The free-text 'how did you hear about us' answer, raw.
        landing: Path of the page the form was on.
        ttl: Epoch seconds after which DynamoDB may delete it (as a touch); 0 for none (an
            enquiry stored before enquiries expired).
    """

    month: str
    enquiry_id: str
    at: str
    visitor_id: str
    email_hash: str
    heard_about: str
    landing: str
    ttl: int = 0

    def item(self) -> dict[str, Any]:
        item: dict[str, Any] = {
            "month": self.month,
            "enquiry_id": self.enquiry_id,
            "at": self.at,
            "visitor_id": self.visitor_id,
            "email_hash": self.email_hash,
            "heard_about": self.heard_about,
            "landing": self.landing,
        }
        if self.ttl:
            item[TTL_ATTRIBUTE] = self.ttl
        return item

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> Enquiry:
        texts = {name: _text(item, name) for name in cls.__dataclass_fields__ if name != "ttl"}
        return cls(**texts, ttl=int(item.get(TTL_ATTRIBUTE, 0)))


@dataclass(frozen=True)
class IdentityRow:
    """One visitor id linked to one identity (an email hash). Stitching never deletes a row;
    DynamoDB's TTL does, once the latest enquiry that linked it has expired.

    Attributes:
        identity_key: The email hash (partition key).
        visitor_id: A linked device (sort key).
        linked_by: How the link was first made: ``email`` (this device submitted the email),
            ``cookie`` (this browser presented the id beside a linked one).
        linked_at: When the earliest link was made (the linking enquiry's time).
        linked_via: The enquiry that made the earliest link.
        enquiry_id: Set on a row whose device enquired: its earliest enquiry.
        enquiry_at: When that enquiry arrived.
        ttl: Epoch seconds after which DynamoDB may delete it: the latest expiry of the
            enquiries that linked it (0: none yet).
    """

    identity_key: str
    visitor_id: str
    linked_by: str = ""
    linked_at: str = ""
    linked_via: str = ""
    enquiry_id: str = ""
    enquiry_at: str = ""
    ttl: int = 0

    def item(self) -> dict[str, Any]:
        return {name: value for name, value in self.__dict__.items() if value}

    @classmethod
    def from_item(cls, item: Mapping[str, Any]) -> IdentityRow:
        texts = {name: _text(item, name) for name in cls.__dataclass_fields__ if name != "ttl"}
        return cls(**texts, ttl=int(item.get(TTL_ATTRIBUTE, 0)))

    def linked_no_later_than(self, at: str, via: str) -> bool:
        """Whether this row already records a link at least as early as (at, via)."""
        return bool(self.linked_at) and (self.linked_at, self.linked_via) <= (at, via)

    def enquired_no_later_than(self, at: str, enquiry_id: str) -> bool:
        """Whether this row already records an enquiry at least as early as this one."""
        return bool(self.enquiry_at) and (self.enquiry_at, self.enquiry_id) <= (at, enquiry_id)
