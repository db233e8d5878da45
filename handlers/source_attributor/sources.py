"""Source normalisation: the static table that maps every spelling of a channel to one key.

Three spellings of one channel is the most common reason an attribution report is quietly
wrong, so normalisation happens once, at capture, from this table; the raw referrer host is
stored beside the key so a mistake here can be corrected retrospectively. Edit the tables
below to teach the system a new channel or spelling (for example the business's own podcast).

Everything here is pure: no AWS, no clock, no randomness.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qs, urlsplit

Medium = Literal["organic", "cpc", "referral", "direct", "asked"]
HowDetected = Literal["utm", "referrer", "none"]

DIRECT = "direct"
"""The source key of an arrival with no tag and no referrer."""
OTHER = "other"
"""The source key of a 'how did you hear about us' answer that names no known channel."""

# --- The table ------------------------------------------------------------------------------
# Spellings are compared after `slug()`: lower case, every run of other characters one "_".
ALIASES: dict[str, str] = {
    **dict.fromkeys(("google", "google_com", "google_ads", "googleads", "adwords", "gads",
                     "google_search", "googled", "google_cpc"), "google"),
    **dict.fromkeys(("facebook", "facebook_com", "fb", "fb_com", "meta", "facebook_ads",
                     "fb_ads", "meta_ads"), "facebook"),
    **dict.fromkeys(("instagram", "instagram_com", "ig", "insta"), "instagram"),
    **dict.fromkeys(("linkedin", "linked_in", "linkedin_com", "li", "lnkd", "lnkd_in"),
                    "linkedin"),
    **dict.fromkeys(("bing", "bing_com", "bing_ads", "microsoft_ads", "msads"), "bing"),
    **dict.fromkeys(("duckduckgo", "ddg", "duck_duck_go"), "duckduckgo"),
    **dict.fromkeys(("twitter", "x", "x_com", "twitter_com", "t_co"), "twitter"),
    **dict.fromkeys(("youtube", "youtube_com", "yt", "youtu_be"), "youtube"),
    **dict.fromkeys(("newsletter", "news_letter", "mailchimp", "email_newsletter",
                     "the_newsletter"), "newsletter"),
    **dict.fromkeys(("podcast_x", "podcastx", "podcast_x_ad", "the_podcast", "podcast"),
                    "podcast_x"),
    **dict.fromkeys(("friend", "word_of_mouth", "recommendation", "recommended", "colleague",
                     "referral_from_a_friend"), "word_of_mouth"),
}
"""Spelling (as slugged) -> channel key."""

HOSTS: dict[str, str] = {
    "bing.com": "bing", "duckduckgo.com": "duckduckgo",
    "facebook.com": "facebook", "fb.com": "facebook", "fb.me": "facebook",
    "instagram.com": "instagram", "linkedin.com": "linkedin", "lnkd.in": "linkedin",
    "t.co": "twitter", "twitter.com": "twitter", "x.com": "twitter",
    "youtube.com": "youtube", "youtu.be": "youtube",
    "mail.google.com": "email", "outlook.live.com": "email", "mail.yahoo.com": "email",
}
"""Referrer domain (and its subdomains) -> channel key. Google's country domains
(google.co.uk, google.de...) are matched by pattern after this table."""

CHANNEL_MEDIUM: dict[str, Medium] = dict.fromkeys(
    ("google", "bing", "duckduckgo", "facebook", "instagram", "linkedin", "twitter",
     "youtube"), "organic"
)
"""A channel's medium when nothing says it was paid; any other channel is ``referral``."""

MEDIUMS: dict[str, Medium] = {
    **dict.fromkeys(("cpc", "ppc", "paid", "paidsearch", "paid_search", "paid_social",
                     "paidsocial", "cpm", "display", "ads", "ad", "sem"), "cpc"),
    **dict.fromkeys(("organic", "social", "organic_social", "seo", "search"), "organic"),
    **dict.fromkeys(("referral", "email", "newsletter", "affiliate", "partner", "podcast",
                     "audio", "link"), "referral"),
}
"""utm_medium spelling (slugged) -> medium; unknown spellings fall back to the channel's."""

CLICK_IDS: dict[str, tuple[str, Medium]] = {
    "gclid": ("google", "cpc"), "gbraid": ("google", "cpc"), "wbraid": ("google", "cpc"),
    "msclkid": ("bing", "cpc"), "li_fat_id": ("linkedin", "cpc"),
    "fbclid": ("facebook", "organic"),
}
"""Ad-platform click ids in the landing URL; fbclid marks organic posts too, so organic."""
# --------------------------------------------------------------------------------------------

MAX_KEY = 64
MAX_CAMPAIGN = 128
MAX_PATH = 512
_NON_WORD = re.compile(r"[^a-z0-9]+")
_GOOGLE_HOST = re.compile(r"(^|\.)google(\.[a-z]{2,3}){1,2}$")


def slug(text: str) -> str:
    """Lower case, every run of non-alphanumerics one underscore, trimmed: 'Google Ads' ->
    'google_ads'."""
    return _NON_WORD.sub("_", text.lower()).strip("_")[:MAX_KEY]


def source_key(spelling: str) -> str:
    """The channel key for a utm_source spelling; an unknown spelling keeps its slug."""
    key = slug(spelling)
    return ALIASES.get(key, key)


def host_channel(host: str) -> str | None:
    """The channel of a referrer host (``www.google.co.uk`` -> google), None if unknown."""
    host = host.lower().rstrip(".")
    for domain, channel in HOSTS.items():
        if "." in domain and (host == domain or host.endswith("." + domain)):
            return channel
    return "google" if _GOOGLE_HOST.search(host) else None


def medium_of(utm_medium: str | None, channel: str) -> Medium:
    """The medium a utm_medium spelling means, else the channel's usual one."""
    if utm_medium and (known := MEDIUMS.get(slug(utm_medium))):
        return known
    return CHANNEL_MEDIUM.get(channel, "referral")


@dataclass(frozen=True)
class Detected:
    """What one arrival is, before it is a stored touch.

    Attributes:
        source: Normalised channel key (google, facebook, podcast_x, direct...).
        medium: organic | cpc | referral | direct | asked.
        campaign: utm_campaign as given (trimmed), or "".
        referrer_host: The referrer's host verbatim, before normalisation, or "".
        landing: The landing page's path (never its query, which may hold personal data).
        how_detected: utm (a tag in the landing URL) | referrer | none.
    """

    source: str
    medium: Medium
    campaign: str
    referrer_host: str
    landing: str
    how_detected: HowDetected


def _host(url: str) -> str:
    """The host part of a URL exactly as written (no user info, no port), or ""."""
    try:
        netloc = urlsplit(url.strip()).netloc
    except ValueError:
        return ""
    return netloc.rpartition("@")[2].split(":")[0][:253]


def _first(params: dict[str, list[str]], name: str) -> str:
    values = params.get(name) or [""]
    return values[0].strip()


def landing_path(url: str) -> str:
    """The path of the landing URL, "/" when it has none."""
    try:
        path = urlsplit(url.strip()).path
    except ValueError:
        path = ""
    return (path or "/")[:MAX_PATH]


def classify(url: str, referrer: str, site_hosts: frozenset[str]) -> Detected | None:
    """Normalise one page load; None when it is not an arrival (internal navigation).

    Precedence: utm_source, then an ad click id (both ``utm``: a tag in the landing URL),
    then an external referrer (``referrer``), then nothing at all (``direct``, ``none``).
    """
    try:
        params = parse_qs(urlsplit(url.strip()).query, max_num_fields=100)
    except ValueError:
        params = {}
    referrer_host = _host(referrer)
    landing = landing_path(url)
    campaign = _first(params, "utm_campaign")[:MAX_CAMPAIGN]
    utm_source = _first(params, "utm_source")
    if utm_source and slug(utm_source):
        channel = source_key(utm_source)
        medium = medium_of(_first(params, "utm_medium"), channel)
        return Detected(channel, medium, campaign, referrer_host, landing, "utm")
    for click_id, (channel, medium) in CLICK_IDS.items():
        if _first(params, click_id):
            medium = MEDIUMS.get(slug(_first(params, "utm_medium")), medium)
            return Detected(channel, medium, campaign, referrer_host, landing, "utm")
    host = referrer_host.lower()
    if host and host not in site_hosts:
        bare = host.removeprefix("www.")
        channel = host_channel(host) or bare[:MAX_KEY]
        return Detected(channel, medium_of(None, channel), campaign, referrer_host, landing,
                        "referrer")
    if host:
        return None
    return Detected(DIRECT, "direct", campaign, "", landing, "none")


def classify_answer(answer: str) -> str:
    """The channel a free-text 'how did you hear about us' answer names, else ``other``.

    Tries the whole answer, then each word and each pair of adjacent words against the
    same table, in order, so 'Heard you on Podcast X!' is podcast_x. The raw answer is kept
    on the enquiry: this key only places the answer in the path.
    """
    whole = slug(answer)
    if whole in ALIASES:
        return ALIASES[whole]
    words = whole.split("_")
    for i, word in enumerate(words):
        pair = "_".join(words[i : i + 2])
        for candidate in (pair, pair.replace("_", ""), word):
            if candidate in ALIASES and candidate not in _TOO_SHORT:
                return ALIASES[candidate]
    return OTHER


_TOO_SHORT = frozenset({"x", "li", "ig", "yt"})
"""Aliases too short to trust inside free text ('x' in 'x-ray'); fine as a whole utm tag."""
