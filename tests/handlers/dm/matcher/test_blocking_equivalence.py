"""dm-block's fast paths against the plain code they replaced (issue #15, "Scale").

Each reference below is the implementation dm-block ran before it was made fast (kept here
verbatim in substance): per-contact Python loops, Counters by value, one ``json.dumps`` of a
message built row by row. The fast code must give the same profiles, keys, counts, blocks,
sure-pair count and message bodies, byte for byte, on generated CRM data and on edge cases
(empty and non-text properties, accents, odd whitespace, capped blocks, split messages).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from handlers.duplicate_merger.matcher import (
    FIELDS,
    Profile,
    ProfileBuilder,
    count_contexts,
    count_sure_pairs,
    counts_to_wire,
    normalize,
)
from handlers.duplicate_merger.matcher.blocking import (
    KEY_FUNCTIONS,
    KEY_NAMES,
    KEYS_PER_CONTACT,
    REGISTER_KEYS,
    Block,
    BlockingReport,
    Rarity,
    blocks_of,
    form_blocks,
    keys_of,
)
from handlers.duplicate_merger.pipeline import (
    MESSAGE_VERSION,
    BlockingRun,
    encode_messages,
    profiles_from,
    run_blocking,
)
from testsupport.crm_generator import generate

EDGE_CONTACTS: list[tuple[str, dict[str, Any]]] = [
    ("e1", {}),
    ("e2", {"firstname": None, "lastname": "", "email": None, "zip": 19162, "phone": 4155550132}),
    ("e3", {"firstname": "  José\u00a0María ", "lastname": "Núñez-García Jr.", "city": "São\tPaulo"}),
    ("e4", {"firstname": "A.", "lastname": "O'Neil\x1cSmith", "email": " <John.Smith+crm@GoogleMail.com> "}),
    ("e5", {"firstname": "Bill", "lastname": "Smith, III", "state": "new\x0bYORK", "city": "new york"}),
    ("e6", {"firstname": "bill", "lastname": "smith", "mobilephone": "555-555-5555", "phone": "+44 20 7946 0958"}),
    ("e7", {"company": "ACME, Inc.", "website": "https://www.acme.io/about", "email": "info@acme.io"}),
    ("e8", {"company": "Acme", "email": "jo@gmail.com", "address": "12b Main St.", "zip": " 19 162 "}),
    ("e9", {"address": "Main Street", "date_of_birth": "1980-02-30", "firstname": "\uff21\uff4e\uff4e"}),
    ("e10", {"firstname": "ﬁona", "lastname": "e\u0301clair", "city": "Zürich", "state": "ZH"}),
    ("e11", {"firstname": True, "lastname": 0, "email": "x@y", "phone": "(0) 20 7946 0958"}),
    ("e12", {"firstname": "Iv", "lastname": "Iv", "address": "12b  main   st", "zip": "19162"}),
]


# References: the implementations before the speed-up ------------------------------------


_SPACES = re.compile(r"\s+")


def ref_fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACES.sub(" ", plain.lower()).strip()


def ref_profile(contact_id: str, props: dict[str, Any], region: str = "US") -> Profile:
    def text(*names: str) -> str:
        for key in names:
            value = props.get(key)
            if value not in (None, ""):
                return str(value)
        return ""

    address = normalize.email(text("email"))
    house, street = normalize.street(text("address"))
    last, generation = normalize.surname_and_generation(text("lastname"))
    return Profile(
        id=str(contact_id),
        first=normalize.given_name(text("firstname")),
        last=last,
        email=address,
        phone=normalize.phone(text("phone"), region),
        mobile=normalize.phone(text("mobilephone"), region),
        company=normalize.company(text("company")),
        domain=normalize.website_domain(text("website")) or normalize.email_domain(address),
        house=house,
        street=street,
        city=normalize.place(text("city")),
        postcode=normalize.postcode(text("zip")),
        state=normalize.state(text("state")),
        dob=normalize.birth_date(text("date_of_birth")),
        generation=generation,
    )


def ref_keys_of(profile: Profile) -> tuple[str, ...]:
    values: list[str] = []
    taken = 0
    most = KEYS_PER_CONTACT if (profile.email or profile.phone or profile.mobile) else REGISTER_KEYS
    for name in KEY_NAMES:
        if name in ("names", "employer"):  # every contact's, beside the others
            values.append(KEY_FUNCTIONS[name](profile))
            continue
        # A birth date is never left out, and counts as one of the four.
        value = KEY_FUNCTIONS[name](profile) if taken < most or name == "dob" else ""
        taken += bool(value)
        values.append(value)
    return tuple(values)


def ref_counted(p: Profile) -> tuple[str, ...]:
    values = list(p.values())
    if p.house:
        values[FIELDS.index("house")] = f"{p.house} {p.street}"
    return tuple(values)


class RefRarity:
    def __init__(self, profiles: Sequence[Profile]) -> None:
        self.counts: dict[str, Counter[str]] = {name: Counter() for name in FIELDS}
        columns = [self.counts[name] for name in FIELDS]
        for p in profiles:
            for column, value in zip(columns, ref_counted(p), strict=True):
                if value:
                    column[value] += 1
        self.total = len(profiles)

    def of(self, profile: Profile) -> list[int]:
        return [
            self.counts[name][value] if value else 0
            for name, value in zip(FIELDS, ref_counted(profile), strict=True)
        ]


def ref_form_blocks(
    profiles: Sequence[Profile], keys: Sequence[tuple[str, ...]], cap: int
) -> tuple[list[Block], BlockingReport]:
    report = BlockingReport(contacts=len(profiles))
    blocks: list[Block] = []
    for k, key in enumerate(KEY_NAMES):
        groups: dict[str, list[int]] = defaultdict(list)
        for index, values in enumerate(keys):
            if values[k]:
                groups[values[k]].append(index)
        report.keyed[key] = sum(len(m) for m in groups.values())
        for value in sorted(groups):
            members = groups[value]
            if len(members) >= 2:
                blocks.extend(blocks_of(key, value, sorted(members), profiles, cap, report))
    report.blocks = len(blocks)
    report.comparisons = sum(b.pair_count for b in blocks)
    return blocks, report


def ref_sure_rules() -> list[Callable[[Profile], str]]:
    def named(extra: Callable[[Profile], str]) -> Callable[[Profile], str]:
        def key(p: Profile) -> str:
            value = extra(p)
            return f"{p.first}|{p.last}|{value}" if p.first and p.last and value else ""

        return key

    return [
        lambda p: "" if normalize.is_role_mailbox(p.email) else p.email,
        named(lambda p: p.mobile),
        named(lambda p: p.dob),
        named(lambda p: f"{p.house} {p.street}" if p.street else ""),
    ]


def ref_count_sure_pairs(profiles: Sequence[Profile], cap: int) -> int:
    found: set[tuple[int, int]] = set()
    for rule in ref_sure_rules():
        values = [rule(p) for p in profiles]
        counts = Counter(v for v in values if v)
        groups: dict[str, list[int]] = defaultdict(list)
        for index, value in enumerate(values):
            if value and 2 <= counts[value] <= cap:
                groups[value].append(index)
        for members in groups.values():
            for x, i in enumerate(members):
                for j in members[x + 1 :]:
                    found.add((i, j))
    return len(found)


def ref_encode(run: BlockingRun, max_bytes: int) -> Iterator[str]:
    rarity = RefRarity(run.profiles)
    capped = {(c.key, c.value) for c in run.report.capped}

    def estimate(block: Block) -> int:
        total = 0
        for i in block.members:
            p = run.profiles[i]
            chars = len(p.id) + sum(map(len, p.values())) + sum(map(len, run.keys[i]))
            total += chars * 2 + 160
        return total + 64

    def body(blocks: list[Block]) -> str:
        local: dict[int, int] = {}
        for block in blocks:
            for i in block.members:
                local.setdefault(i, len(local))
        order = sorted(local, key=local.__getitem__)
        touched = sorted(
            {
                (key, run.keys[i][k])
                for i in order
                for k, key in enumerate(KEY_NAMES)
                if run.keys[i][k] and (key, run.keys[i][k]) in capped
            }
        ) if capped else []
        message = {
            "v": MESSAGE_VERSION,
            "run": run.run_id,
            "total": rarity.total,
            "baseline": round(run.baseline, 6),
            "contexts": counts_to_wire(run.contexts),
            "dependence": run.dependence.to_wire(),
            "profiles": [run.profiles[i].to_wire() for i in order],
            "counts": [rarity.of(run.profiles[i]) for i in order],
            "keys": [list(run.keys[i]) for i in order],
            "capped": [list(c) for c in touched],
            "blocks": [
                {
                    "k": b.key,
                    "v": b.value,
                    "m": [local[i] for i in b.members],
                    **({"w": list(b.window)} if b.window else {}),
                }
                for b in blocks
            ],
        }
        return json.dumps(message, ensure_ascii=False, separators=(",", ":"))

    def emit(blocks: list[Block]) -> Iterator[str]:
        text = body(blocks)
        if len(text.encode("utf-8")) <= max_bytes:
            yield text
            return
        assert len(blocks) > 1
        half = len(blocks) // 2
        yield from emit(blocks[:half])
        yield from emit(blocks[half:])

    pending: list[Block] = []
    size = 0
    for block in run.blocks:
        guess = estimate(block)
        if pending and size + guess > max_bytes:
            yield from emit(pending)
            pending, size = [], 0
        pending.append(block)
        size += guess
    if pending:
        yield from emit(pending)


# Data -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def contacts() -> list[tuple[str, dict[str, Any]]]:
    return generate(3_000, seed=11).contacts + EDGE_CONTACTS


@pytest.fixture(scope="module")
def profiles(contacts: list[tuple[str, dict[str, Any]]]) -> list[Profile]:
    return profiles_from(contacts)


# Tests ------------------------------------------------------------------------------------


def test_the_ascii_fold_is_the_unicode_fold() -> None:
    samples = [f"  A{chr(c)}b  C{chr(c)}{chr(c)}d " for c in range(128)]
    samples += ["", " ", "\x1c\x1d\x1e\x1f", "Mc Donald\t\n\r\x0b\x0c", "O'NEIL-smith"]
    samples += ["José", "\u00a0x\u2003y\u3000", "ﬁ", "\uff21\uff4e\uff4e", "e\u0301", "\u0085a\u2028b"]
    for text in samples:
        assert normalize.fold(text) == ref_fold(text), repr(text)


def test_one_builder_for_a_run_gives_each_contact_its_own_profile(
    contacts: list[tuple[str, dict[str, Any]]],
) -> None:
    builder = ProfileBuilder()  # its memos are hit by every repeated text
    for cid, props in contacts:
        expected = ref_profile(cid, props)
        assert builder.build(cid, props) == expected
        assert Profile.from_properties(cid, props) == expected


def test_the_builder_reads_national_numbers_in_its_own_region() -> None:
    number = {"phone": "020 7946 0958", "mobilephone": "020 7946 0958"}
    gb = ProfileBuilder("GB")
    assert gb.build("1", number) == ref_profile("1", number, "GB")
    assert gb.build("1", number).phone == "+442079460958"
    assert ProfileBuilder("US").build("1", number) == ref_profile("1", number, "US")


def test_profiles_from_equals_the_reference(
    contacts: list[tuple[str, dict[str, Any]]], profiles: list[Profile]
) -> None:
    assert profiles == sorted((ref_profile(c, p) for c, p in contacts), key=lambda p: p.id)


def test_keys_are_the_key_functions_in_priority_order(profiles: list[Profile]) -> None:
    extra = [
        Profile("x1", first="ann", last="lee", email="a@b.io", phone="+14155550132",
                house="1", street="main street", dob="19800101", postcode="19162"),
        Profile("x2", first="ann", postcode="19162"),
        Profile("x3", last="lee", city="boston"),
        Profile("x4", first="bill", last="zz", state="ny", dob="19800101"),
        Profile("x5", first="a", last="b"),
    ]
    for p in [*profiles, *extra]:
        assert keys_of(p) == ref_keys_of(p), p


def test_counts_per_contact_are_the_counts_per_value(profiles: list[Profile]) -> None:
    rarity, reference = Rarity(profiles), RefRarity(profiles)
    assert rarity.total == reference.total
    for i, p in enumerate(profiles):
        assert rarity.at(i) == reference.of(p)
    assert list(rarity.column("city")) == [reference.of(p)[FIELDS.index("city")] for p in profiles]


@pytest.mark.parametrize("cap", [2, 5, 50])
def test_blocks_and_sure_pairs_equal_the_reference(profiles: list[Profile], cap: int) -> None:
    keys = [keys_of(p) for p in profiles]
    blocks, report = form_blocks(profiles, cap=cap, keys=keys)
    ref_blocks, ref_report = ref_form_blocks(profiles, keys, cap)
    assert blocks == ref_blocks
    assert report == ref_report
    assert count_sure_pairs(profiles, cap=cap) == ref_count_sure_pairs(profiles, cap)
    if cap == 5:
        assert report.capped  # the windows were exercised


def test_contexts_are_counted_over_the_contacts_with_a_shared_mobile(
    profiles: list[Profile],
) -> None:
    run = run_blocking("2026-W05", profiles, cap=50)
    assert run.contexts == count_contexts(profiles, cap=50)
    assert all(any(c.pairs for c in fields.values()) for fields in run.contexts.values())


@pytest.mark.parametrize(("cap", "max_bytes"), [(50, 240_000), (5, 240_000), (12, 9_000)])
def test_message_bodies_equal_the_reference_byte_for_byte(
    profiles: list[Profile], cap: int, max_bytes: int
) -> None:
    run = run_blocking("2026-W05", profiles, cap=cap)
    bodies = list(encode_messages(run, max_bytes=max_bytes))
    assert bodies == list(ref_encode(run, max_bytes))
    assert len(bodies) > 1
    if cap < 50:
        assert any(json.loads(b)["capped"] for b in bodies)
