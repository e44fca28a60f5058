"""BLiMP (Warstadt et al. 2020): 67 paradigms x 1,000 English minimal pairs."""
from __future__ import annotations

import csv
import json
import re

import pandas as pd

from .schema import DataFormatError, finalize_pairs
from .sources import DataSource, resolve

FOLDER = "blimp/data"
HUMAN_SUMMARY = "blimp/raw_results/summary/human_validation_summary.csv"
FLAGS = ["simple_LM_method", "one_prefix_method", "two_prefix_method", "lexically_identical"]
# Subject-verb agreement paradigms and the attractor between subject and verb (Ide et al. Fig. 4).
ATTRACTORS = {
    "distractor_agreement_relational_noun": "relational noun",
    "distractor_agreement_relative_clause": "relative clause",
    "regular_plural_subject_verb_agreement_1": "none",
    "regular_plural_subject_verb_agreement_2": "none",
    "irregular_plural_subject_verb_agreement_1": "none",
    "irregular_plural_subject_verb_agreement_2": "none",
}
# The data files tag the two animate_subject paradigms "s-selection"; the BLiMP paper
# counts them under argument structure (9 paradigms), which gives its 12 phenomena.
PHENOMENON_FOLD = {"s-selection": "argument_structure"}
_WORD = re.compile(r"[\w']+")


def bag_of_words(sentence: str) -> tuple[str, ...]:
    """The sentence's words, lower-cased and sorted (punctuation ignored)."""
    return tuple(sorted(_WORD.findall(sentence.lower())))


def same_bag_of_words(good: str, bad: str) -> bool:
    """Ide et al.'s word-shuffling criterion: both sentences have the same bag of words."""
    return bag_of_words(good) == bag_of_words(bad)


def human_agreement(source: DataSource | None = None) -> dict[str, float]:
    """Per-paradigm human agreement (total_mean) of the BLiMP validation."""
    path = resolve(source).path(HUMAN_SUMMARY)
    with open(path, newline="") as f:
        return {row["Condition"]: float(row["total_mean"]) for row in csv.DictReader(f)}


def read_jsonl(path) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataFormatError(f"{path}, line {line_no}: not valid JSON ({err.msg})") from None
            rows.append((line_no, row))
    return rows


def load(drop_identical: bool = False, source: DataSource | None = None) -> pd.DataFrame:
    """The canonical BLiMP table with its flags, word_shuffle, attractor and human agreement.

    ``phenomenon`` is the file's ``linguistics_term`` (kept as a column) with the two
    "s-selection" paradigms counted under argument_structure, as the BLiMP paper does.

    ``drop_identical`` removes the 7 pairs whose two sentences are the same (Hu et al.
    2025 evaluate the remaining 66,993).
    """
    source = resolve(source)
    folder = source.path(FOLDER)
    files = source.files(FOLDER, "*.jsonl")
    if not files:
        raise DataFormatError(f"{folder}: no BLiMP .jsonl files")
    records = []
    for path in files:
        for line_no, row in read_jsonl(path):
            try:
                records.append({
                    "dataset": "blimp", "language": "en", "paradigm": row["UID"],
                    "phenomenon": PHENOMENON_FOLD.get(row["linguistics_term"], row["linguistics_term"]),
                    "field": row["field"], "pair_id": int(row["pairID"]),
                    "good": row["sentence_good"], "bad": row["sentence_bad"],
                    "linguistics_term": row["linguistics_term"],
                    **{flag: bool(row[flag]) for flag in FLAGS},
                })
            except (KeyError, ValueError, TypeError) as err:
                raise DataFormatError(f"{path}, line {line_no}: missing or bad field {err}") from None
    df = pd.DataFrame.from_records(records)
    df["word_shuffle"] = [same_bag_of_words(g, b) for g, b in zip(df["good"], df["bad"])]
    df["attractor"] = df["paradigm"].map(ATTRACTORS).astype("string")
    df["human_agreement"] = df["paradigm"].map(human_agreement(source)).astype("float64")
    df = finalize_pairs(df, str(folder))
    if drop_identical:
        df = df[~df["identical"]].reset_index(drop=True)
    return df


def word_shuffle_report(df: pd.DataFrame) -> pd.DataFrame:
    """Per paradigm: share of pairs with the same bag of words vs BLiMP's lexically_identical."""
    out = df.groupby("paradigm").agg(word_shuffle=("word_shuffle", "mean"),
                                     lexically_identical=("lexically_identical", "mean")).reset_index()
    out["word_shuffle_paradigm"] = out["word_shuffle"] == 1.0
    out["agrees"] = out["word_shuffle_paradigm"] == (out["lexically_identical"] == 1.0)
    return out
