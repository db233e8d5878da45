"""Country names and codes to ISO 3166-1 alpha-2, without a country database.

Codes are checked against the regions phonenumbers knows (every ISO country that has a
telephone numbering plan); names cover the countries a small UK business hears from most, with
the usual aliases. A name not listed here is "ambiguous": the model may propose a code, and the
code must pass ``is_iso_code`` to be kept.
"""

from __future__ import annotations

import re

from handlers.common import cold_path

_NAMES: dict[str, str] = {
    "GB": "united kingdom|uk|great britain|britain|england|scotland|wales|northern ireland|gbr",
    "IE": "ireland|republic of ireland|eire|irl",
    "US": "united states|united states of america|usa|us|america|u s a|u s",
    "CA": "canada|can",
    "AU": "australia|aus",
    "NZ": "new zealand|nzl",
    "DE": "germany|deutschland|deu",
    "FR": "france|fra",
    "ES": "spain|espana|españa|esp",
    "PT": "portugal|prt",
    "IT": "italy|italia|ita",
    "NL": "netherlands|the netherlands|holland|nederland|nld",
    "BE": "belgium|belgie|belgique|bel",
    "LU": "luxembourg|lux",
    "CH": "switzerland|schweiz|suisse|che",
    "AT": "austria|osterreich|österreich|aut",
    "DK": "denmark|danmark|dnk",
    "SE": "sweden|sverige|swe",
    "NO": "norway|norge|nor",
    "FI": "finland|suomi|fin",
    "IS": "iceland|isl",
    "PL": "poland|polska|pol",
    "CZ": "czech republic|czechia|cze",
    "SK": "slovakia|svk",
    "HU": "hungary|hun",
    "RO": "romania|rou",
    "BG": "bulgaria|bgr",
    "GR": "greece|grc",
    "CY": "cyprus|cyp",
    "MT": "malta|mlt",
    "HR": "croatia|hrv",
    "SI": "slovenia|svn",
    "RS": "serbia|srb",
    "EE": "estonia|est",
    "LV": "latvia|lva",
    "LT": "lithuania|ltu",
    "UA": "ukraine|ukr",
    "TR": "turkey|turkiye|türkiye|tur",
    "IL": "israel|isr",
    "AE": "united arab emirates|uae|are",
    "SA": "saudi arabia|sau",
    "QA": "qatar|qat",
    "EG": "egypt|egy",
    "ZA": "south africa|zaf",
    "NG": "nigeria|nga",
    "KE": "kenya|ken",
    "GH": "ghana|gha",
    "MA": "morocco|mar",
    "IN": "india|ind",
    "PK": "pakistan|pak",
    "BD": "bangladesh|bgd",
    "LK": "sri lanka|lka",
    "CN": "china|peoples republic of china|chn",
    "HK": "hong kong|hkg",
    "TW": "taiwan|twn",
    "JP": "japan|jpn",
    "KR": "south korea|korea|republic of korea|kor",
    "SG": "singapore|sgp",
    "MY": "malaysia|mys",
    "TH": "thailand|tha",
    "VN": "vietnam|viet nam|vnm",
    "PH": "philippines|phl",
    "ID": "indonesia|idn",
    "MX": "mexico|méxico|mex",
    "BR": "brazil|brasil|bra",
    "AR": "argentina|arg",
    "CL": "chile|chl",
    "CO": "colombia|col",
    "PE": "peru|per",
    "JE": "jersey|jey",
    "GG": "guernsey|ggy",
    "IM": "isle of man|imn",
    "GI": "gibraltar|gib",
}
ALIASES: dict[str, str] = {
    alias: code for code, names in _NAMES.items() for alias in names.split("|")
}
# "UK" is not an ISO code but everyone writes it; ISO's GB is what the CRM should hold.
CODE_ALIASES = {"UK": "GB", "EL": "GR"}


def is_iso_code(code: str) -> bool:
    """A two-letter code of a real country or territory (the regions phonenumbers knows)."""
    regions = cold_path.load("phonenumbers").SUPPORTED_REGIONS
    return len(code) == 2 and code.isalpha() and code.upper() in regions


def country_code(text: str) -> str | None:
    """The ISO alpha-2 code for a code or a known name; None when it cannot be decided."""
    stripped = text.strip()
    if not stripped:
        return None
    upper = stripped.upper().replace(".", "")
    if upper in CODE_ALIASES:
        return CODE_ALIASES[upper]
    if len(upper) == 2 and is_iso_code(upper):
        return upper
    words = " ".join(re.sub(r"[^\w]+", " ", stripped.lower()).split())
    return ALIASES.get(words)
