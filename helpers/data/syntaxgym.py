"""SyntaxGym (Hu et al. 2020): the 1,018-pair sentence corpus and the region-based test suites."""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass

import pandas as pd

from .schema import DataFormatError, finalize_pairs
from .sources import DataSource, resolve

PAIR_CORPUS = "hu-levy-2023/datasets/exp3/syntaxgym/full_corpus.csv"
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


def circuit(suite: str) -> str:
    for name, prefixes in CIRCUITS.items():
        if suite.startswith(prefixes):
            return name
    raise DataFormatError(f"suite {suite!r} belongs to no SyntaxGym circuit")


def read_pair_csv(relative: str, source: DataSource | None = None) -> list[tuple[int, dict]]:
    """(line number, row) of a CSV file of the mirror, each row checked to have every column."""
    path = resolve(source).path(relative)
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        rows = []
        for line_no, row in enumerate(reader, 2):
            if None in row or any(v is None for v in row.values()):
                raise DataFormatError(f"{path}, line {line_no}: expected {len(reader.fieldnames)} columns")
            rows.append((line_no, row))
    return rows


def load_pairs(source: DataSource | None = None) -> pd.DataFrame:
    """Hu & Levy (2023)'s SyntaxGym pair corpus: 1,018 pairs from the test suites."""
    records = [{"dataset": "syntaxgym", "language": "en", "paradigm": r["suite"], "phenomenon": circuit(r["suite"]),
                "field": "syntax", "pair_id": int(r["item_id"]), "good": r["good_sentence"].strip(),
                "bad": r["bad_sentence"].strip(), "good_condition": r["good_cond"], "bad_condition": r["bad_cond"],
                "syntaxgym_item": int(r["syntaxgym_id"])}
               for _, r in read_pair_csv(PAIR_CORPUS, source)]
    return finalize_pairs(pd.DataFrame.from_records(records), PAIR_CORPUS)


@dataclass
class Suite:
    """One test suite: items with conditions made of numbered regions, and the predictions."""

    name: str
    metric: str
    region_names: dict[int, str]
    predictions: list[str]  # formulas over (region;%condition%) surprisals
    items: list[dict]  # {"item": n, "conditions": {name: [(region_number, content), ...]}}

    def sentence(self, item: int, condition: str) -> str:
        regions = next(i for i in self.items if i["item"] == item)["conditions"][condition]
        return " ".join(c for _, c in regions if c).replace(" ,", ",").replace(" .", ".")


def load_suites(source: DataSource | None = None) -> dict[str, Suite]:
    """The 34 test suites, by name."""
    out = {}
    for path in resolve(source).files(SUITES, "*.json"):
        try:
            raw = json.loads(path.read_text())
            items = [{"item": it["item_number"],
                      "conditions": {c["condition_name"]: [(r["region_number"], r["content"].strip()) for r in c["regions"]]
                                     for c in it["conditions"]}} for it in raw["items"]]
            suite = Suite(raw["meta"]["name"], raw["meta"].get("metric", "sum"),
                          {int(k): v for k, v in raw["region_meta"].items()},
                          [p["formula"] for p in raw["predictions"]], items)
        except (json.JSONDecodeError, KeyError, TypeError) as err:
            raise DataFormatError(f"{path}: not a SyntaxGym suite ({err})") from None
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
