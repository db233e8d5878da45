"""The peers dm is measured against, each given the input and configuration its docs give.

* **Splink on DuckDB**, on the raw FEBRL columns (``given_name``, ``surname``,
  ``street_number``, ``address_1``, ``suburb``, ``postcode``, ``state``, ``date_of_birth``) as
  recordlinkage's loader reads them (``skipinitialspace``, every column a string: the same light
  cleaning the examples' SQL does with ``trim(cast(... as varchar))``). Two documented models,
  both run on every FEBRL set:

  - ``splink_febrl3``: Splink's "Deduplicating the febrl3 dataset" example,
    ``docs/demos/examples/duckdb/febrl3.nb.py`` in moj-analytical-services/splink
    (https://moj-analytical-services.github.io/splink/demos/examples/duckdb/febrl3.html);
  - ``splink_febrl4``: the final ("Further refinements", ``extended_model_settings``) model of
    "Linking the febrl4 datasets", ``docs/demos/examples/duckdb/febrl4.nb.py``
    (https://moj-analytical-services.github.io/splink/demos/examples/duckdb/febrl4.html), with
    ``link_type="dedupe_only"`` since the bench deduplicates the 10,000-record union.

  ``soc_sec_id`` is left out of both (comparison, blocking rule and deterministic rule), as it is
  for dm: a CRM contact has no such identifier. With it (measured, best cut) the febrl3 model
  scores FEBRL1 1.000 and FEBRL3 0.9957, the febrl4 model FEBRL4 0.9996: the figures issue #15
  reports as "soc_sec_id left out".
  The one other change: u is sampled with ``seed=2`` in both (the febrl3 page's seed), so a run
  repeats.
* **Splink on the CRM set** (dm's normalised fields: the phone-format, ``+tag`` and Gmail-dot
  cleaning the docs leave to the user, see "Feature Engineering",
  https://moj-analytical-services.github.io/splink/topic_guides/data_preparation/feature_engineering.html):
  ``splink_crm`` follows the tutorial "Specifying and estimating a linkage model"
  (``docs/demos/tutorials/04_Estimating_model_parameters.nb.py``, the fake_1000 set, whose
  columns are a contact's): names with Jaro-Winkler levels and term frequencies, city exact
  with term frequencies, ``EmailComparison``, the deterministic rules and recall 0.7, u from 2e6
  sampled pairs, m by EM blocked on first + last name. The CRM has no birth date, so the
  tutorial's dob comparison and rules give way to the issue's configuration: exact and fuzzy
  email and phone comparisons with term frequencies, blocking on email, phone, mobile,
  surname + postcode and first + last name (within ``COMPARISON_BUDGET``), EM's second pass
  blocked on email.
* **recordlinkage's ECM** (``run_ecm``): a multi-pass index of ``Index.add(Block(...))``
  passes (the "Examples" of the Indexing reference, https://recordlinkage.readthedocs.io/en/latest/ref-index.html,
  block on given name and on surname; the bench adds date of birth and postcode, the other two
  single-column blocks of Splink's febrl3 page), the comparison features of "Data
  deduplication" (https://recordlinkage.readthedocs.io/en/latest/guides/data_deduplication.html:
  Jaro-Winkler >= 0.85 on names, exact on birth date, suburb and state, a string threshold on
  the address) extended to street number and postcode, and ``ECMClassifier(binarize=0.8)`` from
  "Classification algorithms" (https://recordlinkage.readthedocs.io/en/latest/guides/classifiers.html).
* **Plain rules** (``run_rules``), cheap enough to run at every size.
"""

from __future__ import annotations

import itertools
import logging
import tempfile
import time
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from typing import Any

from handlers.duplicate_merger.matcher import FIELDS, Profile

Pair = tuple[str, str]

SPLINK_MEMORY = "12GB"
"""DuckDB's memory limit for Splink, so that it spills to disk or fails before the machine does.
It is not a bound on the process: on the CRM set at 1M, before ``COMPARISON_BUDGET``, the
phone rule alone made about 143M pairs and the process grew past 22 GB within 16 minutes, with
10 GB spilled, and was stopped."""


COMPARISON_BUDGET = 20_000_000
"""Most candidate pairs a peer's blocking may make. Splink's tutorial "Choosing blocking rules to
optimise runtime" (``docs/demos/tutorials/03_Blocking.nb.py``,
https://moj-analytical-services.github.io/splink/demos/tutorials/03_Blocking.html): "For linkages
in DuckDB on a standard laptop, we suggest using blocking rules that create no more than about
20 million comparisons", counted with ``count_comparisons_from_blocking_rule``; its topic guide
"Blocking Rule Performance" says to start from strict rules and loosen them while the count
allows. On the CRM set the issue's ``phone`` rule makes 2.9M pairs at 100k and 143M at 1M (a
large employer's main line is held by thousands of coworkers): at 1M it is the stricter
``phone`` + ``last``, for Splink and for recordlinkage's index alike (``within_budget``)."""

Rule = tuple[str, ...]


def comparisons(profiles: list[Profile], rule: Rule) -> int:
    """Pairs an equi-join on ``rule``'s columns makes among ``profiles``: a block of n records
    makes n(n-1)/2, a record missing any of the columns joins none (what Splink's
    ``count_comparisons_from_blocking_rule`` counts for such a rule, and recordlinkage's
    ``Block`` pairs)."""
    at = [FIELDS.index(column) for column in rule]
    blocks: Counter[tuple[str, ...]] = Counter()
    for p in profiles:
        values = p.values()
        key = tuple(values[i] for i in at)
        if all(key):
            blocks[key] += 1
    return sum(n * (n - 1) // 2 for n in blocks.values())


def within_budget(
    profiles: list[Profile], rules: list[Rule], *, stricter: str = "last",
    budget: int = COMPARISON_BUDGET,
) -> tuple[list[Rule], str]:
    """``rules`` as given, or, while their pairs together pass ``budget``, with the rule making
    the most made stricter by ``stricter`` (``COMPARISON_BUDGET``); and a note naming each
    change. The rules' counts are summed, an upper bound on their union."""
    counts = {rule: comparisons(profiles, rule) for rule in rules}
    chosen, notes = list(rules), []
    while sum(counts[rule] for rule in chosen) > budget:
        loose = [rule for rule in chosen if stricter not in rule]
        if not loose:
            break
        worst = max(loose, key=counts.__getitem__)
        strict = (*worst, stricter)
        counts[strict] = comparisons(profiles, strict)
        chosen[chosen.index(worst)] = strict
        notes.append(f"{'+'.join(worst)} ({counts[worst]:,} pairs) -> {'+'.join(strict)}")
    return chosen, "; ".join(notes)


def ordered(a: str, b: str) -> Pair:
    return (a, b) if a < b else (b, a)


@dataclass
class Row:
    """One method's output on one data set."""

    method: str
    predicted: set[Pair]
    seconds: float
    note: str = ""
    scores: dict[Pair, float] | None = None
    """Every candidate's score, for the best-F1 cut (None for a rule with no score)."""

    def best_cut(self, truth: set[Pair]) -> tuple[float, float, float, float]:
        """(cut, precision, recall, F1) at the score cut with the highest F1 on ``truth``.

        Recall is over every true pair, so a pair the method never scored counts as missed (as
        Splink's ``accuracy_analysis_from_labels_column`` counts it by default)."""
        if not self.scores:
            return (float("nan"), *self.metrics(truth))
        ranked = sorted(self.scores.items(), key=lambda kv: -kv[1])
        best = (float("nan"), 0.0, 0.0, 0.0)
        tp = 0
        for n, (pair, score) in enumerate(ranked, start=1):
            tp += pair in truth
            if n < len(ranked) and ranked[n][1] == score:
                continue
            p, r = tp / n, tp / len(truth) if truth else 0.0
            f = 2 * p * r / (p + r) if p + r else 0.0
            if f > best[3]:
                best = (score, p, r, f)
        return best

    def metrics(self, truth: set[Pair]) -> tuple[float, float, float]:
        tp = len(self.predicted & truth)
        precision = tp / len(self.predicted) if self.predicted else 0.0
        recall = tp / len(truth) if truth else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return precision, recall, f1


def profile_frame(profiles: list[Profile]) -> Any:
    """dm's normalised fields, one column each (the CRM set's peer input)."""
    # pandas loads slowly: only on this path
    import pandas as pd

    rows = [{"unique_id": p.id, **dict(zip(FIELDS, p.values(), strict=True))} for p in profiles]
    return pd.DataFrame(rows).replace("", None)


# Splink ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SplinkModel:
    label: str
    id_column: str
    comparisons: list[Any]
    blocking: list[Any]
    deterministic: list[Any]
    recall: float
    u_pairs: float
    em_rules: list[Any]
    em_without_tf: bool = False
    note: str = ""
    """What ``within_budget`` changed, shown beside the result."""


def splink_febrl3() -> SplinkModel:
    """febrl3.nb.py, without ``soc_sec_id``."""
    # Splink loads slowly: only on this path
    import splink.comparison_library as cl
    from splink import block_on

    return SplinkModel(
        label="Splink (febrl3 docs model)",
        id_column="rec_id",
        comparisons=[
            cl.NameComparison("given_name"),
            cl.NameComparison("surname"),
            cl.DateOfBirthComparison("date_of_birth", input_is_string=True,
                                     datetime_format="%Y%m%d"),
            cl.ExactMatch("street_number").configure(term_frequency_adjustments=True),
            cl.ExactMatch("postcode").configure(term_frequency_adjustments=True),
        ],
        blocking=[block_on("given_name"), block_on("surname"), block_on("date_of_birth"),
                  block_on("postcode")],
        deterministic=[
            block_on("given_name", "surname", "date_of_birth"),
            "l.given_name = r.surname and l.surname = r.given_name "
            "and l.date_of_birth = r.date_of_birth",
        ],
        recall=0.9,
        u_pairs=1e6,
        em_rules=[block_on("date_of_birth"), block_on("postcode")],
    )


def splink_febrl4() -> SplinkModel:
    """febrl4.nb.py's ``extended_model_settings``, without ``soc_sec_id``, as a dedupe."""
    # Splink loads slowly: only on this path
    import splink.comparison_level_library as cll
    import splink.comparison_library as cl
    from splink import block_on

    swapped = ("jaro_winkler_similarity(given_name_l, surname_r) + "
               "jaro_winkler_similarity(surname_l, given_name_r)")
    full_name = {
        "output_column_name": "Full name",
        "comparison_levels": [
            {"sql_condition": "(given_name_l IS NULL OR given_name_r IS NULL) and "
                              "(surname_l IS NULL OR surname_r IS NULL)",
             "label_for_charts": "Null", "is_null_level": True},
            cll.ExactMatchLevel("full_name", term_frequency_adjustments=True),
            cll.JaroWinklerLevel("full_name", 0.9),
            cll.JaroWinklerLevel("full_name", 0.7),
            cll.ColumnsReversedLevel("given_name", "surname"),
            {"sql_condition": f"{swapped} >= 1.8",
             "label_for_charts": "switched + jaro_winkler_similarity >= 1.8"},
            {"sql_condition": f"{swapped} >= 1.4",
             "label_for_charts": "switched + jaro_winkler_similarity >= 1.4"},
            cll.ExactMatchLevel("given_name", term_frequency_adjustments=True),
            cll.ExactMatchLevel("surname", term_frequency_adjustments=True),
            {"sql_condition": "given_name_l = surname_r OR surname_l = given_name_r",
             "label_for_charts": "single name cross-matches"},
            cll.JaroWinklerLevel("given_name", 0.9),
            cll.JaroWinklerLevel("surname", 0.9),
            cll.ElseLevel(),
        ],
    }
    return SplinkModel(
        label="Splink (febrl4 docs model)",
        id_column="rec_id",
        comparisons=[
            full_name,
            cl.DateOfBirthComparison("date_of_birth", input_is_string=True,
                                     datetime_format="%Y%m%d", invalid_dates_as_null=True),
            {"output_column_name": "Street number", "comparison_levels": [
                cll.NullLevel("street_number"),
                cll.ExactMatchLevel("street_number", term_frequency_adjustments=True),
                cll.DamerauLevenshteinLevel("street_number", 1),
                cll.ElseLevel(),
            ]},
            {"output_column_name": "Postcode", "comparison_levels": [
                cll.NullLevel("postcode"),
                cll.ExactMatchLevel("postcode", term_frequency_adjustments=True),
                cll.DamerauLevenshteinLevel("postcode", 1),
                cll.DamerauLevenshteinLevel("postcode", 2),
                cll.ElseLevel(),
            ]},
        ],
        blocking=[
            block_on("given_name", "surname"),
            "l.given_name = r.surname and l.surname = r.given_name",
            block_on("date_of_birth"),
            block_on("state", "address_1"),
            block_on("street_number", "address_1"),
            block_on("postcode"),
        ],
        deterministic=[block_on("given_name", "surname", "date_of_birth")],
        recall=0.8,
        u_pairs=1e7,
        em_rules=["l.date_of_birth = r.date_of_birth", "l.postcode = r.postcode"],
        em_without_tf=True,
    )


def without_address(model: SplinkModel) -> SplinkModel:
    """A FEBRL docs model on a register with names and birth dates only (RLdata10000): its
    name and birth-date comparisons and blocking rules (both models list them first), and
    EM's postcode pass blocked on the surname instead (a pass on an all-null column trains
    nothing, and Splink refuses it)."""
    # Splink loads slowly: only on this path
    from splink import block_on

    names = {"Splink (febrl3 docs model)": (3, 3), "Splink (febrl4 docs model)": (2, 3)}
    comparisons, blocking = names[model.label]
    return replace(
        model,
        label=model.label.replace("docs model", "docs model, names and birth date"),
        comparisons=model.comparisons[:comparisons],
        blocking=model.blocking[:blocking],
        em_rules=[model.em_rules[0], block_on("surname")],  # the first is on birth date
    )


CRM_BLOCKS: list[Rule] = [("email",), ("phone",), ("mobile",), ("last", "postcode"),
                          ("first", "last")]
"""The issue's blocking rules for Splink on the CRM set."""


def splink_crm(profiles: list[Profile]) -> SplinkModel:
    """Tutorial 04's model on a contact's fields, with the issue's email/phone configuration;
    its blocking rules within ``COMPARISON_BUDGET`` on ``profiles``."""
    # Splink loads slowly: only on this path
    import splink.comparison_library as cl
    from splink import block_on

    blocking, note = within_budget(profiles, CRM_BLOCKS)

    def exact(column: str) -> Any:
        return cl.ExactMatch(column).configure(term_frequency_adjustments=True)

    def phone(column: str) -> Any:  # a typed digit or two swapped, with term frequencies
        return cl.DamerauLevenshteinAtThresholds(column, [1]).configure(
            term_frequency_adjustments=True)

    return SplinkModel(
        label="Splink (tutorial + issue's CRM model)",
        id_column="unique_id",
        comparisons=[
            cl.NameComparison("first"),
            cl.NameComparison("last"),
            exact("city"),
            cl.EmailComparison("email").configure(term_frequency_adjustments=True),
            phone("phone"),
            phone("mobile"),
            exact("company"),
            exact("postcode"),
        ],
        blocking=[block_on(*rule) for rule in blocking],
        deterministic=["l.first = r.first and levenshtein(r.last, l.last) <= 2",
                       block_on("email")],
        recall=0.7,
        u_pairs=2e6,
        em_rules=[block_on("first", "last"), block_on("email")],
        note=note,
    )


def splink_fake1000() -> SplinkModel:
    """Tutorial 04's model as the tutorial gives it, for Splink's own ``fake_1000`` set
    (``docs/demos/tutorials/04_Estimating_model_parameters.nb.py``): names, birth date one
    edit off, city with term frequencies, email; blocked on first name + city and on surname;
    prior from its three deterministic rules at recall 0.7, u from 2e6 pairs, m by EM blocked
    on first name + surname, then on birth date."""
    # Splink loads slowly: only on this path
    import splink.comparison_library as cl
    from splink import ColumnExpression, block_on

    # as the tutorial writes it; Splink's annotation says str, its code takes either
    dob: Any = ColumnExpression("dob").cast_to_string()
    return SplinkModel(
        label="Splink (tutorial 04 model)",
        id_column="unique_id",
        comparisons=[
            cl.NameComparison("first_name"),
            cl.NameComparison("surname"),
            cl.LevenshteinAtThresholds(dob, 1),
            cl.ExactMatch("city").configure(term_frequency_adjustments=True),
            cl.EmailComparison("email"),
        ],
        blocking=[block_on("first_name", "city"), block_on("surname")],
        deterministic=[block_on("first_name", "dob"),
                       "l.first_name = r.first_name and levenshtein(r.surname, l.surname) <= 2",
                       block_on("email")],
        recall=0.7,
        u_pairs=2e6,
        em_rules=[block_on("first_name", "surname"), block_on("dob")],
    )


def run_splink(model: SplinkModel, frame: Any) -> Row:
    """Train as the docs do (prior from deterministic rules, u by sampling, m by EM), predict
    down to p = 0.01 for the best-F1 cut; the default cut is p >= 0.5 (match weight 0)."""
    # DuckDB loads slowly: only on this path
    import duckdb

    # Splink loads slowly: only on this path
    from splink import DuckDBAPI, Linker, SettingsCreator

    logging.getLogger("splink").setLevel(logging.ERROR)
    start = time.perf_counter()
    settings = SettingsCreator(
        unique_id_column_name=model.id_column,
        link_type="dedupe_only",
        comparisons=model.comparisons,
        blocking_rules_to_generate_predictions=model.blocking,
        retain_intermediate_calculation_columns=False,
    )
    with tempfile.TemporaryDirectory() as spill:
        con = duckdb.connect(config={"memory_limit": SPLINK_MEMORY, "temp_directory": spill})
        try:
            db_api = DuckDBAPI(connection=con)
            linker = Linker(db_api.register(frame), settings, log_level=logging.ERROR)
            train = linker.training
            train.estimate_probability_two_random_records_match(model.deterministic,
                                                                recall=model.recall)
            train.estimate_u_using_random_sampling(max_pairs=model.u_pairs, seed=2)
            for rule in model.em_rules:
                train.estimate_parameters_using_expectation_maximisation(
                    rule, estimate_without_term_frequencies=model.em_without_tf)
            result: Any = linker.inference.predict(threshold_match_probability=0.01)
            # three columns, not the whole prediction table: at 1M it would not fit
            left, right = f"{model.id_column}_l", f"{model.id_column}_r"
            predictions = con.sql(
                f"select {left}, {right}, match_weight from {result.physical_name}"
            ).fetchall()
        finally:
            con.close()
    # Ranked by match weight, not probability: past about 53 bits every probability is 1.0
    # in a double, and on the CRM set thousands of pairs, true and false, are.
    scores = {ordered(str(a), str(b)): float(w) for a, b, w in predictions}
    predicted = {pair for pair, w in scores.items() if w >= 0.0}
    note = "p >= 0.5 (weight >= 0); cut in match weight"
    return Row(model.label, predicted, time.perf_counter() - start,
               f"{note}; {model.note}" if model.note else note, scores)


# Plain rules --------------------------------------------------------------------------------


def run_rules(profiles: list[Profile]) -> Row:
    """The deterministic baseline: the same mailbox and first initial, or the same full name
    plus one of phone (or mobile), street address, postcode, company or birth date."""
    start = time.perf_counter()
    groups: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for p in profiles:
        if p.email and p.first:
            groups[("email", p.email, p.first[:1])].append(p.id)
        if p.first and p.last:
            for label, value in (("phone", p.phone), ("phone", p.mobile),
                                 ("street", f"{p.house} {p.street}" if p.street else ""),
                                 ("postcode", p.postcode), ("company", p.company),
                                 ("dob", p.dob)):
                if value:
                    groups[(label, p.first, p.last, value)].append(p.id)
    predicted: set[Pair] = set()
    for ids in groups.values():
        if len(ids) <= 50:  # a value 50 contacts share is no rule
            predicted.update(ordered(a, b) for a, b in itertools.combinations(ids, 2))
    return Row("plain rules", predicted, time.perf_counter() - start, "deterministic")


# recordlinkage ECM ------------------------------------------------------------------------


@dataclass(frozen=True)
class EcmModel:
    passes: list[Rule]
    """One ``Block`` per pass; the index is their union."""
    strings: list[str]
    """Jaro-Winkler >= 0.85, binarised."""
    exact: list[str]
    note: str = ""
    """What ``within_budget`` changed, shown beside the result."""


ECM_FEBRL = EcmModel(
    passes=[("given_name",), ("surname",), ("date_of_birth",), ("postcode",)],
    strings=["given_name", "surname", "address_1"],
    exact=["date_of_birth", "suburb", "state", "street_number", "postcode"],
)
ECM_CRM = EcmModel(  # a first-name block alone is too large on a CRM; names come in pairs
    passes=[("first", "last"), ("last", "postcode"), ("first", "postcode"), ("email",),
            ("mobile",), ("phone",)],
    strings=["first", "last", "street", "company"],
    exact=["city", "state", "house", "postcode", "email", "phone", "mobile"],
)


def ecm_crm(profiles: list[Profile]) -> EcmModel:
    """``ECM_CRM`` with its passes within ``COMPARISON_BUDGET`` on ``profiles``."""
    passes, note = within_budget(profiles, ECM_CRM.passes)
    return replace(ECM_CRM, passes=passes, note=note)


def run_ecm(model: EcmModel, frame: Any, id_column: str, candidates: set[Pair] | None) -> Row:
    """recordlinkage's ECM over ``model``'s multi-pass index, or over ``candidates`` (dm's)."""
    # pandas loads slowly: only on this path
    import pandas as pd

    # recordlinkage loads slowly: only on this path
    import recordlinkage
    from recordlinkage.index import Block

    frame = frame.set_index(id_column)
    start = time.perf_counter()
    if candidates is None:
        indexer = recordlinkage.Index()
        for columns in model.passes:
            indexer.add(Block(list(columns)))
        index = indexer.index(frame)
        label, note = "recordlinkage ECM", "multi-pass index, JW features; cut in log odds"
        note = f"{note}; {model.note}" if model.note else note
    else:
        index = pd.MultiIndex.from_tuples(sorted(candidates))
        label, note = "recordlinkage ECM on dm's pairs", "same candidates as dm; log odds"
    compare = recordlinkage.Compare()
    for column in model.strings:
        compare.string(column, column, method="jarowinkler", threshold=0.85, label=column)
    for column in model.exact:
        compare.exact(column, column, label=column)
    features = compare.compute(index, frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ecm = recordlinkage.ECMClassifier(binarize=0.8)
        matches = ecm.fit_predict(features)
        # Ranked by log odds, not ``ecm.prob``: that is 1.0 for tens of thousands of CRM pairs.
        log_p = ecm.kernel.predict_log_proba(features.to_numpy())
        match = list(ecm.kernel.classes_).index(1)
        log_odds = log_p[:, match] - log_p[:, 1 - match]
    predicted = {ordered(str(a), str(b)) for a, b in matches}
    scores = {ordered(str(a), str(b)): float(v)
              for (a, b), v in zip(features.index, log_odds, strict=True)}
    return Row(label, predicted, time.perf_counter() - start, note, scores)

