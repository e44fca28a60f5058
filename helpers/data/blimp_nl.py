"""BLiMP-NL (Suijkerbuijk et al. 2025): 84 Dutch paradigms x 100 pairs, read from the release's
phenomenon files (``blimp-nl/datastore/BLiMP-NL/Phenomenon01.csv`` ... ``22``, a copy kept in
davebulaval/QFrBLiMP bd14729: one row per sentence, the Grammatical and Ungrammatical rows of an
item adjacent), else from the Hub copy (jmichaelov/blimp_nl, one config per paradigm).
``paradigm`` is the Hub's config, "<phenomenon>__<paradigm>" with every run of other characters
than a-z and 0-9 one "_" (``Binding (Principle A)`` / ``c-command`` -> ``binding_principle_a__c_command``),
``phenomenon`` its part before "__". 11 pairs hold one sentence twice: flagged ``identical``.

The release's damage, mended: 8 rows (4 items) write a sentence holding a comma as ``""...""``
without the enclosing quotes, so a CSV reader splits it at the comma (the release's own
blimp-nl.jsonl keeps the cut sentence); :func:`mend_quotes` quotes them once.
"""
from __future__ import annotations

import re

import pandas as pd

from . import hub_pairs, release_or_hub, text_files
from .hub_catalog import BLIMP_NL_PARADIGMS
from .schema import DataFormatError, finalize_pairs, without_identical
from .sources import DataSource

FOLDER = "blimp-nl/datastore/BLiMP-NL"
COLUMNS = ("Phenomenon", "Paradigm", "Item", "Grammaticality", "Sentence")
EXPECTED = "BLiMP-NL's release CSV (Phenomenon, Paradigm, Item, Grammaticality, Sentence, ...; two rows an item)"
CONFIGS = [f"{p}__{s}" for p, names in BLIMP_NL_PARADIGMS.items() for s in names.split()]
DOUBLED = re.compile(r',""([^"\n]*)"",')  # a field written ""text"" without its enclosing quotes


def mend_quotes(text: str) -> str:
    """Each ``,""text"",`` field quoted once: ``,"text",``."""
    return DOUBLED.sub(r',"\1",', text)


def name(text: str) -> str:
    """A release name as the Hub config spells it: lower case, runs of other characters one "_"."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def phenomenon_pairs(path) -> pd.DataFrame:
    """One phenomenon file's pairs: each item's Grammatical and Ungrammatical rows side by side."""
    raw = text_files.csv_frame(path, COLUMNS, EXPECTED, repair=mend_quotes)
    config = raw["Phenomenon"].map(name) + "__" + raw["Paradigm"].map(name)
    unknown = sorted(set(config) - set(CONFIGS))
    if unknown:
        raise DataFormatError(f"{path}: paradigms {unknown} are none of BLiMP-NL's 84 (helpers/data/hub_catalog.py). "
                              f"To fix: {text_files.RESTORE}")
    rows = raw.assign(config=config.to_numpy())
    good, bad = rows[rows["Grammaticality"] == "Grammatical"], rows[rows["Grammaticality"] == "Ungrammatical"]
    keys = ["config", "Item"]
    if len(good) + len(bad) != len(rows) or len(good) != len(bad) or good.duplicated(keys).any():
        raise DataFormatError(f"{path}: expected one Grammatical and one Ungrammatical row per item. To fix: "
                              f"{text_files.RESTORE}")
    pairs = good.merge(bad, on=keys, suffixes=("_good", "_bad"), validate="one_to_one")
    extra = {c: c.lower().replace("(s)", "s").replace(" ", "_") for c in ("Critical word(s)", "Cue word(s)")}
    return pd.DataFrame({
        "dataset": "blimp_nl", "language": "nl", "paradigm": pairs["config"],
        "phenomenon": pairs["config"].str.split("__").str[0], "field": "", "good": pairs["Sentence_good"],
        "bad": pairs["Sentence_bad"], "item": pairs["Item"].astype(int),
        **{f"{short}_{side}": pairs[f"{column}_{side}"] for column, short in extra.items() if f"{column}_good" in pairs
           for side in ("good", "bad")}})


def from_release(source: DataSource) -> pd.DataFrame:
    """Every paradigm in the manifest's order, its items in file order; ``pair_id`` the position in its paradigm."""
    frame = pd.concat([phenomenon_pairs(p) for p in source.files(FOLDER, "Phenomenon*.csv")],
                      ignore_index=True)
    frame["paradigm"] = pd.Categorical(frame["paradigm"], CONFIGS, ordered=True)
    frame = frame.sort_values("paradigm", kind="stable").reset_index(drop=True)
    frame["paradigm"] = frame["paradigm"].astype(str)
    frame.insert(5, "pair_id", frame.groupby("paradigm").cumcount())
    return finalize_pairs(frame, str(source.path(FOLDER)))


def load(drop_identical: bool = False, source: DataSource | None = None) -> pd.DataFrame:
    """Every BLiMP-NL pair (8,400), from the release or a Hub copy (:mod:`release_or_hub`);
    ``drop_identical`` removes the 11 pairs that hold one sentence twice (8,389)."""
    frame = release_or_hub.read("blimp_nl", FOLDER, from_release, hub_pairs.blimp_nl_from_hub, source)
    return without_identical(frame, drop_identical)
