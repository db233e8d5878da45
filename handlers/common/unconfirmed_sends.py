"""Messages to customers claimed once and never confirmed sent: the bound and the owner's words.

rrs asks and upsr nudges are sent at most once: the guarded write that claims a message comes
before the send, so a sender that dies in between leaves a claim with no confirmation rather
than risking a second message. Each sender stamps its claim ``delivered_at`` when the provider
accepted the message; each system's scheduled sweep reports a claim older than
:data:`UNCONFIRMED_AFTER` without that stamp, once (stamping ``unconfirmed_at``), counts it as a
metric and lists it for the owner. Nothing here ever re-sends: a person decides.
"""

from __future__ import annotations

import datetime as dt

UNCONFIRMED_AFTER = dt.timedelta(minutes=30)
"""A live attempt is over long before this: rrs-sender's timeout plus every SQS redelivery of one
message fits inside it, and upsr-sender runs for at most two minutes."""

LOOKBACK = dt.timedelta(days=7)
"""How far back a sweep looks for unconfirmed claims (it runs at least hourly)."""

OWNER_ADVICE = (
    "It was claimed for sending but the provider never confirmed it (the sender stopped "
    "between the claim and the send, or the send's outcome was unknown). It will not be sent "
    "again automatically. Check the provider's send log for this recipient; if it did not go "
    "out, contact the customer yourself or leave it."
)
"""What the owner is told to do about one unconfirmed message (mail and roll-up)."""
