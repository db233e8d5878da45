"""ler-dedupe's fuzzy decisions on generated leads: how many fall on the other side of a cut.

Leads come from dm's seeded CRM generator (``testsupport.crm_generator``: typos,
nicknames, swapped names, other mailboxes, namesakes). Every pair of leads that share one of
ler's near keys (surname at company, or the canonical mailbox) is a pair ler-dedupe scores;
phones are left out, since a shared phone scores 1 whatever the names. Each pair's score
(``handlers.lead_enricher.matching.score``) is cut at the configured defaults: link at 0.9,
ask the model at 0.7, else new.

``--root`` imports the handlers from another checkout (e.g. an export of the previous commit),
``--json`` writes the decisions, ``--compare A B`` counts the pairs whose decision differs.

Usage: .venv/bin/python benchmarks/bench_ler_dedupe.py [--size 20000] [--seed 7]
       [--root DIR] [--json FILE] | --compare A.json B.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

from handlers.lead_enricher.lead import Contact
from handlers.lead_enricher.matching import lead_profile, near_keys, score
from testsupport import crm_generator as synthetic

REPO = Path(__file__).resolve().parents[1]
LINK, ASK = 0.9, 0.7


def decide(score: float) -> str:
    return "link" if score >= LINK else "ask" if score >= ASK else "new"


def decisions(size: int, seed: int) -> dict[str, dict[str, float | str]]:
    generated = synthetic.generate(size, seed=seed)
    profiles = {}
    by_key: dict[str, list[str]] = defaultdict(list)
    for contact_id, props in generated.contacts:
        email = (props.get("email") or "").strip().lower() or None
        contact = Contact(
            email=email,
            first_name=props.get("firstname") or None,
            last_name=props.get("lastname") or None,
            company=props.get("company") or None,
        )
        profiles[contact_id] = lead_profile(contact)
        for key in near_keys(contact):
            by_key[key].append(contact_id)
    pairs = {tuple(sorted(p)) for ids in by_key.values() for p in combinations(ids, 2)}
    out: dict[str, dict[str, float | str]] = {}
    for a, b in sorted(pairs):
        value = score(profiles[a], profiles[b])
        out[f"{a}|{b}"] = {"score": value, "decision": decide(value)}
    return out


def compare(before: Path, after: Path) -> int:
    old, new = json.loads(before.read_text()), json.loads(after.read_text())
    if old.keys() != new.keys():
        print("the two runs scored different pairs", file=sys.stderr)
        return 1
    moved = Counter(
        (old[k]["decision"], new[k]["decision"])
        for k in old
        if old[k]["decision"] != new[k]["decision"]
    )
    scores = sum(1 for k in old if abs(old[k]["score"] - new[k]["score"]) > 1e-9)
    print(f"{len(old):,} candidate pairs; score changed on {scores:,} ({scores / len(old):.1%})")
    print(f"decision changed on {sum(moved.values()):,} ({sum(moved.values()) / len(old):.2%}):")
    for (a, b), n in sorted(moved.items()):
        print(f"  {a:>4} -> {b:<4} {n:,}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--root", type=Path, default=REPO)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path)
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    sys.path.insert(0, str(args.root.resolve()))
    found = decisions(args.size, args.seed)
    counts = Counter(v["decision"] for v in found.values())
    print(
        f"{len(found):,} candidate pairs: "
        + ", ".join(f"{k} {counts[k]:,}" for k in ("link", "ask", "new"))
    )
    if args.json:
        args.json.write_text(json.dumps(found, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
