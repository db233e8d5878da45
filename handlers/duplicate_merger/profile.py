"""The contact model the matcher reads: one CRM contact, normalised field by field.

A ``Profile`` is what blocking and scoring see. It is built from the CRM's property names
(HubSpot's: ``firstname``, ``lastname``, ``email``, ``phone``, ``company``, ``address``,
``city``, ``zip``, ``state``, ``date_of_birth``...), so the same code reads the live CRM, the
in-memory fake, and the benchmark's data sets mapped into that model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from handlers.common.strings import nysiis
from handlers.duplicate_merger import normalize

_PROPERTIES = (
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
"""The CRM properties a profile is normalised from (HubSpot's names)."""


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
        (first, lastname, mail, phone, mobile, company, website, address, city, zip_code,
         state, dob) = [
            v if type(v) is str else ("" if v in (None, "") else str(v))
            for v in map(props.get, _PROPERTIES)
        ]
        email = normalize.email(mail)
        house, street = normalize.street(address)
        last, generation = normalize.surname_and_generation(lastname)
        return cls(
            id=str(contact_id),
            first=normalize.given_name(first),
            last=last,
            email=email,
            phone=normalize.phone(phone, default_region),
            mobile=normalize.phone(mobile, default_region),
            company=normalize.company(company),
            domain=normalize.website_domain(website) or normalize.email_domain(email),
            house=house,
            street=street,
            city=normalize.place(city),
            postcode=normalize.postcode(zip_code),
            state=normalize.place(state),
            dob=normalize.birth_date(dob),
            generation=generation,
        )

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
