"""SyntaxGym (Hu et al. 2020): the 1,018-pair sentence corpus and the region-based test suites."""
from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd

from . import text_files
from .schema import DataFormatError, finalize_pairs
from .sources import DataSource, resolve
from .syntaxgym_formulas import FormulaError, condition_roles, parse

PAIR_CORPUS = "hu-levy-2023/datasets/exp3/syntaxgym/full_corpus.csv"
PAIR_COLUMNS = ("suite", "item_id", "syntaxgym_id", "good_sentence", "bad_sentence", "good_cond", "bad_cond")
EXPECTED_SUITE = ("a SyntaxGym test suite: JSON with meta (name, metric), region_meta, predictions (formula) and "
                  "items (item_number, conditions with condition_name and regions of region_number and content)")
SUITES = "syntaxgym/cpllab-syntactic-generalization/test_suites/json"
# Hu et al. (2020)'s circuits, used as the phenomenon of each suite.
CIRCUITS = {
    "Agreement": ("number_",),
    "Licensing": ("npi_", "reflexive_"),
    "Garden-Path Effects": ("mvrr", "npz_"),
    "Gross Syntactic State": ("subordination",),
    "Center Embedding": ("center_embed",),
    "Long-Distance Dependencies": ("cleft", "fgd", "nn-nv-rpl"),
}


# The 23 suites Sinha et al. (2023) score under prefixes: those whose predictions split the
# conditions into acceptable and unacceptable sentences. They are the 23 suites of Hu & Levy
# (2023)'s SyntaxGym pair corpus (the same lab; its hand-written condition orderings skip
# the 11 below, with the reasons given there), and the good/bad conditions that
# ``condition_roles`` reads off their formulas equal that corpus's (tested).
PREFIX_SUITES = (
    "center_embed", "center_embed_mod",  # plausible vs implausible verb order
    "cleft", "cleft_modifier",  # np/vp match vs mismatch
    "fgd-embed3", "fgd-embed4", "fgd_hierarchy", "fgd_object", "fgd_pp", "fgd_subject",  # filler-gap
    "number_orc", "number_prep", "number_src",  # subject-verb agreement
    "reflexive_orc_fem", "reflexive_orc_masc", "reflexive_prep_fem", "reflexive_prep_masc",
    "reflexive_src_fem", "reflexive_src_masc",  # reflexive agreement
    "subordination", "subordination_orc-orc", "subordination_pp-pp", "subordination_src-src",
)
_GARDEN_PATH = ("garden path: every condition is grammatical (ambiguous vs unambiguous, comma or not); the "
                "prediction is about processing difficulty, so there are no unacceptable sentences for an "
                "unacceptable prefix and no acceptability pair")
_NPI = ("NPI licensing: a three-way prediction whose third comparison (neg_pos < pos_neg) crosses both "
        "manipulations (licensor and distractor); left out as 'prediction too complicated' by the pair corpus")
NOT_UNDER_PREFIX = {
    "mvrr": _GARDEN_PATH, "mvrr_mod": _GARDEN_PATH, "npz_ambig": _GARDEN_PATH, "npz_ambig_mod": _GARDEN_PATH,
    "npz_obj": _GARDEN_PATH, "npz_obj_mod": _GARDEN_PATH,
    "nn-nv-rpl": ("noun/verb garden path with a single item: grammatical conditions only, and an in-domain "
                  "prefix cannot be drawn from the suite without the target item"),
    "npi_orc_any": _NPI, "npi_orc_ever": _NPI, "npi_src_any": _NPI, "npi_src_ever": _NPI,
}


def circuit(suite: str) -> str:
    for name, prefixes in CIRCUITS.items():
        if suite.startswith(prefixes):
            return name
    raise DataFormatError(f"suite {suite!r} belongs to no SyntaxGym circuit")


def read_pair_csv(relative: str, required: tuple[str, ...], build, source: DataSource | None = None) -> list[dict]:
    """``build(row)`` for every row of a CSV file of the mirror, which must have the ``required``
    columns and as many fields in every row as in its header."""
    path = resolve(source).path(relative)
    expected = f"a CSV file with the columns {', '.join(required)}"
    _, rows = text_files.csv_records(path, required, expected)
    return text_files.convert(path, rows, build, expected)


def load_pairs(source: DataSource | None = None) -> pd.DataFrame:
    """Hu & Levy (2023)'s SyntaxGym pair corpus: 1,018 pairs from the test suites."""
    records = read_pair_csv(PAIR_CORPUS, PAIR_COLUMNS, lambda r: {
        "dataset": "syntaxgym", "language": "en", "paradigm": r["suite"], "phenomenon": circuit(r["suite"]),
        "field": "syntax", "pair_id": int(r["item_id"]), "good": r["good_sentence"].strip(),
        "bad": r["bad_sentence"].strip(), "good_condition": r["good_cond"], "bad_condition": r["bad_cond"],
        "syntaxgym_item": int(r["syntaxgym_id"])}, source)
    return finalize_pairs(pd.DataFrame.from_records(records), PAIR_CORPUS)


@dataclass
class Suite:
    """One test suite: items with conditions made of numbered regions, and the predictions."""

    name: str
    metric: str
    region_names: dict[int, str]
    predictions: list[str]  # formulas over (region;%condition%) surprisals
    items: list[dict]  # {"item": n, "conditions": {name: [(region_number, content), ...]}}
    path: str = ""  # the file it was read from

    def sentence(self, item: int, condition: str) -> str:
        regions = next(i for i in self.items if i["item"] == item)["conditions"][condition]
        return " ".join(c for _, c in regions if c).replace(" ,", ",").replace(" .", ".")


def _suite(raw: dict) -> Suite:
    """A suite from its JSON document; a KeyError or TypeError names what is missing or wrong."""
    field = text_files.field
    items = [{"item": field(it, "item_number", int),
              "conditions": {field(c, "condition_name"): [(field(r, "region_number", int), field(r, "content").strip())
                                                          for r in c["regions"]] for c in it["conditions"]}}
             for it in raw["items"]]
    name = field(raw["meta"], "name")
    circuit(name)  # a suite of no known circuit is refused here, naming its file
    return Suite(name, field(raw["meta"], "metric") if "metric" in raw["meta"] else "sum",
                 {int(k): field(raw["region_meta"], k) for k in raw["region_meta"]},
                 [field(p, "formula") for p in raw["predictions"]], items)


def load_suites(source: DataSource | None = None) -> dict[str, Suite]:
    """The 34 test suites, by name."""
    out = {}
    for path in resolve(source).files(SUITES, "*.json"):
        suite = text_files.convert(path, [(0, text_files.json_document(path, EXPECTED_SUITE))], _suite,
                                   EXPECTED_SUITE)[0]
        suite.path = str(path)
        out[suite.name] = suite
    return out


def suites_table(suites: dict[str, Suite] | None = None, source: DataSource | None = None) -> pd.DataFrame:
    """One row per (suite, item, condition, region): the long form for region-wise scoring."""
    suites = suites or load_suites(source)
    rows = [{"suite": s.name, "circuit": circuit(s.name), "item": it["item"], "condition": cond,
             "region": num, "region_name": s.region_names.get(num, ""), "content": content}
            for s in suites.values() for it in s.items for cond, regions in it["conditions"].items()
            for num, content in regions]
    return pd.DataFrame(rows).astype({"suite": "string", "circuit": "string", "condition": "string",
                                      "region_name": "string", "content": "string"})


def join_regions(contents: list[str]) -> tuple[str, list[tuple[int, int] | None]]:
    """The sentence as SyntaxGym builds it (non-empty region contents, stripped, joined by one
    space: "shot , the woman") and each region's character span in it (None: empty)."""
    parts, spans, at = [], [], 0
    for content in contents:
        content = content.strip()
        if not content:
            spans.append(None)
            continue
        if parts:
            at += 1
        spans.append((at, at + len(content)))
        parts.append(content)
        at += len(content)
    return " ".join(parts), spans


def load_items(source: DataSource | None = None) -> pd.DataFrame:
    """One row per (suite, item): its conditions with their regions (JSON text: a list of
    {"condition", "regions": [[number, content], ...]}), the suite's formulas (JSON list),
    whether Sinha et al. (2023) scored the suite under prefixes, and for those suites each
    condition's role ("good"/"bad") read off the formulas (elsewhere None: a garden-path
    suite's "harder" condition is not unacceptable). Every formula is parsed (a malformed
    one is an error naming the suite)."""
    rows = []
    for suite in load_suites(source).values():
        try:
            predictions = [parse(f) for f in suite.predictions]
            roles = (condition_roles(suite.predictions) or {}) if suite.name in PREFIX_SUITES else {}
        except FormulaError as err:
            raise text_files.problem(suite.path, f"suite {suite.name}: {err}", EXPECTED_SUITE) from None
        for it in suite.items:
            conditions = [{"condition": c, "regions": [[n, content] for n, content in regions]}
                          for c, regions in it["conditions"].items()]
            have = {(c["condition"], n) for c in conditions for n, _ in c["regions"]}
            missing = [t for p in predictions for t in p.terms if (t.condition, t.region) not in have]
            if missing:
                raise text_files.problem(suite.path, f"suite {suite.name}, item {it['item']}: the formulas need "
                                         f"regions {missing} that the item does not have", EXPECTED_SUITE)
            rows.append({"dataset": "syntaxgym_items", "language": "en", "paradigm": suite.name,
                         "phenomenon": circuit(suite.name), "suite": suite.name, "circuit": circuit(suite.name),
                         "item": int(it["item"]), "metric": suite.metric, "n_conditions": len(conditions),
                         "conditions": json.dumps(conditions), "predictions": json.dumps(suite.predictions),
                         "roles": json.dumps({c["condition"]: roles.get(c["condition"]) for c in conditions}),
                         "prefix_suite": suite.name in PREFIX_SUITES})
    frame = pd.DataFrame(rows).sort_values(["suite", "item"], kind="stable").reset_index(drop=True)
    return frame.astype({c: "string" for c in ("dataset", "language", "paradigm", "phenomenon", "suite", "circuit",
                                                "metric", "conditions", "predictions", "roles")})
