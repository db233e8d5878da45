"""The one reader of an HTTP ``Retry-After`` header, for every outside API the systems call.

RFC 9110 section 10.2.3 (https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3) gives two
forms: delta-seconds (``120``) or an HTTP-date (``Fri, 31 Dec 1999 23:59:59 GMT``). HubSpot
and Shopify send seconds on a 429; PDL's older answers carry it too; a proxy or CDN in front of
any of them may send a date. Anything else is no instruction (None): the caller then falls back
to its own backoff.
"""

from __future__ import annotations

import datetime as dt
import email.utils


def retry_after_seconds(value: str | None, now_epoch: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` value read at ``now_epoch`` (never negative);
    None when absent or in neither form."""
    text = (value or "").strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        # float() also reads "nan" and "inf", which no server means.
        return max(0.0, seconds) if seconds == seconds and seconds != float("inf") else None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT; a zoneless one is read as such
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, when.timestamp() - now_epoch)
