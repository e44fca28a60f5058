"""BLiMP (Warstadt et al. 2020): 67 paradigms x 1,000 English minimal pairs."""
from __future__ import annotations

import re

import pandas as pd

from . import text_files
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
EXPECTED = ("JSON lines, one pair per line, with UID, linguistics_term, field, pairID, sentence_good, sentence_bad "
            f"and {', '.join(FLAGS)}")
EXPECTED_HUMAN = "a CSV file with the columns Condition (the paradigm) and total_mean (a number)"


def bag_of_words(sentence: str) -> tuple[str, ...]:
    """The sentence's words, lower-cased and sorted (punctuation ignored)."""
    return tuple(sorted(_WORD.findall(sentence.lower())))


def same_bag_of_words(good: str, bad: str) -> bool:
    """Ide et al.'s word-shuffling criterion: both sentences have the same bag of words."""
    return bag_of_words(good) == bag_of_words(bad)


def human_agreement(source: DataSource | None = None) -> dict[str, float]:
    """Per-paradigm human agreement (total_mean) of the BLiMP validation."""
    path = resolve(source).path(HUMAN_SUMMARY)
    _, rows = text_files.csv_records(path, ("Condition", "total_mean"), EXPECTED_HUMAN)
    return dict(text_files.convert(path, rows, lambda row: (row["Condition"], float(row["total_mean"])),
                                   EXPECTED_HUMAN))


def read_jsonl(path, expected: str = EXPECTED) -> list[tuple[int, dict]]:
    """(line number, object) of a JSON-lines file (:func:`text_files.jsonl`)."""
    return text_files.jsonl(path, expected)


def _record(row: dict) -> dict:
    text, term = (lambda name: text_files.field(row, name)), text_files.field(row, "linguistics_term")
    return {"dataset": "blimp", "language": "en", "paradigm": text("UID"),
            "phenomenon": PHENOMENON_FOLD.get(term, term), "field": text("field"), "pair_id": int(row["pairID"]),
            "good": text("sentence_good"), "bad": text("sentence_bad"), "linguistics_term": term,
            **{flag: bool(row[flag]) for flag in FLAGS}}


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
    records = [r for path in files for r in text_files.convert(path, read_jsonl(path), _record, EXPECTED)]
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
