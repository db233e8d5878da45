"""The contact model the matcher reads: one CRM contact, normalised field by field.

A ``Profile`` is what blocking and scoring see. It is built from the CRM's property names
(HubSpot's: ``firstname``, ``lastname``, ``email``, ``phone``, ``company``, ``address``,
``city``, ``zip``, ``state``, ``date_of_birth``...), so the same code reads the live CRM, the
in-memory fake, and the benchmark's data sets mapped into that model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import handlers.duplicate_merger.matcher.normalize as normalize
from handlers.common.strings import nysiis

PROFILE_PROPERTIES = (
    "firstname",
    "lastname",
    "email",
    "phone",
    "mobilephone",
    "company",
    "website",
    "address",
    "city",
    "zip",
    "state",
    "date_of_birth",
)
"""The contact properties a matching profile is normalised from (``ProfileBuilder``): the CRM
reader asks for them (``crm.READ_PROPERTIES``)."""

FIELDS = (
    "first",
    "last",
    "email",
    "phone",
    "mobile",
    "company",
    "domain",
    "house",
    "street",
    "city",
    "postcode",
    "state",
    "dob",
    "generation",
)
"""Compared fields, in wire order (a block message carries each profile as a list)."""

(
    FIRST, LAST, EMAIL, PHONE, MOBILE, COMPANY, DOMAIN, HOUSE, STREET, CITY, POSTCODE, STATE, DOB,
    GENERATION,
) = range(len(FIELDS))
"""Each field's position in ``FIELDS`` (and in ``Profile.values()``), as the scorer indexes it."""


@dataclass(frozen=True, slots=True)
class Profile:
    """One contact's normalised fields ("" where the CRM has nothing usable).

    Attributes:
        id: The CRM's contact id.
        first: Given name, first word, as typed (an initial "A." is "a").
        last: Surname, letters and spaces.
        email: The mailbox (lower case, ``+tag`` and Gmail dots dropped).
        phone: E.164 of the ``phone`` property: at work often the company's main line.
        mobile: E.164 of ``mobilephone``: a person's own.
        company: Organisation name without legal form.
        domain: The organisation's web domain (from the website, else a non-free-mail address).
        house: House number.
        street: Street name with standard suffixes spelled out.
        city: City or suburb.
        postcode: Postcode without spaces.
        state: State or region.
        dob: Date of birth ``YYYYMMDD``.
        generation: Generational suffix typed with the surname (``jr``, ``sr``, ``iii``).
    """

    id: str
    first: str = ""
    last: str = ""
    email: str = ""
    phone: str = ""
    mobile: str = ""
    company: str = ""
    domain: str = ""
    house: str = ""
    street: str = ""
    city: str = ""
    postcode: str = ""
    state: str = ""
    dob: str = ""
    generation: str = ""

    @classmethod
    def from_properties(
        cls, contact_id: str, props: Mapping[str, Any], *, default_region: str = "US"
    ) -> Profile:
        """Normalise a CRM contact's properties (missing or null properties are empty)."""
        return ProfileBuilder(default_region).build(contact_id, props)

    def values(self) -> tuple[str, ...]:
        """The compared fields in ``FIELDS`` order."""
        return (
            self.first,
            self.last,
            self.email,
            self.phone,
            self.mobile,
            self.company,
            self.domain,
            self.house,
            self.street,
            self.city,
            self.postcode,
            self.state,
            self.dob,
            self.generation,
        )

    def to_wire(self) -> list[str]:
        """``[id, *values]``: the compact form a block message carries."""
        return [self.id, *self.values()]

    @classmethod
    def from_wire(cls, row: Sequence[str]) -> Profile:
        """Inverse of ``to_wire``; refuses rows of the wrong length."""
        if len(row) != len(FIELDS) + 1 or not all(isinstance(v, str) for v in row):
            raise ValueError("a profile row is [id, *fields] of strings")
        return cls(*row)

    # Derived values used by blocking keys and comparisons ---------------------------------

    @property
    def last_code(self) -> str:
        """NYSIIS of the surname's first word."""
        return nysiis(self.last.split(" ", 1)[0]) if self.last else ""

    @property
    def first_code(self) -> str:
        """NYSIIS of the canonical given name."""
        return nysiis(self.first) if self.first else ""


_T = TypeVar("_T")


class _Memo(dict[str, _T]):
    """A normaliser's results by text: a text seen before costs one dict lookup."""

    def __init__(self, normalise: Callable[[str], _T]) -> None:
        super().__init__()
        self._normalise = normalise

    def __missing__(self, text: str) -> _T:
        value = self[text] = self._normalise(text)
        return value


class ProfileBuilder:
    """Builds a run's profiles (``Profile.from_properties`` builds one).

    A CRM repeats its given names, surnames, companies, websites, addresses, postcodes,
    cities, states, main lines and mail domains (coworkers, households, re-entered people),
    so each distinct text of those is normalised once per builder, and equal values share
    one string. Mailboxes, mobiles and birth dates are nearly all distinct: they are
    normalised each time. A builder lives as long as one run's build, so nothing it keeps
    outlives the run.
    """

    def __init__(self, default_region: str = "US") -> None:
        self.default_region = default_region
        self._given = _Memo(normalize.given_name)
        self._surname = _Memo(normalize.surname_and_generation)
        self._company = _Memo(normalize.company)
        self._website = _Memo(normalize.website_domain)
        self._domain = _Memo(normalize.organisation_domain)
        self._street = _Memo(normalize.street)
        self._postcode = _Memo(normalize.postcode)
        self._place = _Memo(normalize.place)
        self._state = _Memo(normalize.state)
        self._phone = _Memo(lambda text: normalize.phone(text, default_region))

    def build(self, contact_id: str, props: Mapping[str, Any]) -> Profile:
        """Normalise a CRM contact's properties (missing or null properties are empty)."""
        (first, lastname, mail, phone, mobile, company, website, address, city, zip_code,
         state, dob) = [
            v if type(v) is str else ("" if v in (None, "") else str(v))
            for v in map(props.get, PROFILE_PROPERTIES)
        ]
        email = normalize.email(mail)
        house, street = self._street[address]
        last, generation = self._surname[lastname]
        return Profile(
            id=str(contact_id),
            first=self._given[first],
            last=last,
            email=email,
            phone=self._phone[phone],
            mobile=normalize.phone(mobile, self.default_region),
            company=self._company[company],
            # normalize.email_domain, with the domain's verdict kept
            domain=self._website[website] or self._domain[email.rpartition("@")[2]],
            house=house,
            street=street,
            city=self._place[city],
            postcode=self._postcode[zip_code],
            state=self._state[state],
            dob=normalize.birth_date(dob),
            generation=generation,
        )
