"""English sets besides BLiMP and SyntaxGym: SCaMP, LI (with human ratings), CoLA, WikiText-103 test."""
from __future__ import annotations

import re

import pandas as pd

from . import text_files
from .corpora import detokenize
from .schema import SENTENCE_COLUMNS, DataFormatError, finalize_pairs
from .sources import DataSource, resolve

SCAMP = "scamp/scamp/scamp_{variant}"
LI = "li/LI_Large_pairs.csv"
COLA = "cola/cola_public/raw/{split}.tsv"
WIKITEXT = "wikitext103-test/wikitext-raw_test.raw"
EXPECTED_SCAMP = "one pair per line: the good sentence, a tab, the bad sentence"
LI_COLUMNS = ("paradigm", "phenomenon", "pair_ID", "source", "sentence_grammatical", "sentence_ungrammatical",
              "LS_grammatical", "LS_ungrammatical", "LS_diff")
EXPECTED_LI = f"a CSV file with the columns {', '.join(LI_COLUMNS)} (the ratings numbers or empty)"
EXPECTED_COLA = "one sentence per line: source, label (0 or 1), original mark and sentence, separated by tabs"
EXPECTED_WIKITEXT = "WikiText's raw text: articles under '= Title =' headings, a paragraph per line"


# SCaMP has its own 67 paradigms; this project groups them by name into phenomena
# (BLiMP's names where a paradigm tests a BLiMP phenomenon). First matching prefix wins.
SCAMP_PHENOMENA = [
    (("adjunct_island", "complex_np_island", "coordinate_structure", "left_branch_island", "wh_island"), "island_effects"),
    (("anaphor_",), "anaphor_agreement"), (("principle_A",), "binding"),
    (("determiner_noun",), "determiner_noun_agreement"), (("ellipsis",), "ellipsis"),
    (("matrix_question_npi", "npi_present", "only_npi", "sentential_negation_npi"), "npi_licensing"),
    (("subj_aux", "subj_verb"), "subject_verb_agreement"), (("wh_questions", "wh_vs_that"), "filler_gap_dependency"),
    (("center_embedding",), "center_embedding"), (("recursion_",), "recursion"),
    (("transitive", "intransitive", "swapped_ditransitive"), "argument_structure"),
    (("adv_order", "pp_order", "svo_vos"), "word_order"), (("green_ideas",), "semantic_anomaly"),
]


def scamp_phenomenon(paradigm: str) -> str:
    for prefixes, name in SCAMP_PHENOMENA:
        if paradigm.startswith(prefixes):
            return name
    raise DataFormatError(f"SCaMP paradigm {paradigm!r} has no phenomenon in SCAMP_PHENOMENA")


def load_scamp(variant: str = "plausible", source: DataSource | None = None) -> pd.DataFrame:
    """SCaMP (BLiMP paradigms regenerated with plausible or implausible words): 67 x 1,000."""
    if variant not in ("plausible", "implausible"):
        raise ValueError(f"variant must be 'plausible' or 'implausible', got {variant!r}")
    source = resolve(source)
    folder = source.path(SCAMP.format(variant=variant))
    files = source.files(SCAMP.format(variant=variant), "*.tsv")
    records = []
    for path in files:
        paradigm = path.stem.removesuffix("_implausible").removesuffix("_plausible")
        for line_no, line in text_files.lines(path, EXPECTED_SCAMP):
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 2:
                raise text_files.problem(path, f"expected good<TAB>bad, got {len(parts)} fields", EXPECTED_SCAMP,
                                         line_no)
            records.append({"dataset": f"scamp_{variant}", "language": "en", "paradigm": paradigm,
                            "phenomenon": scamp_phenomenon(paradigm), "field": "",
                            "pair_id": line_no - 1, "good": parts[0], "bad": parts[1]})
    return finalize_pairs(pd.DataFrame.from_records(records), str(folder))


def word_difference(good: pd.Series, bad: pd.Series) -> pd.Series:
    """|words(good) - words(bad)|, words split on whitespace (punctuation stays on its word)."""
    return (good.str.split().str.len() - bad.str.split().str.len()).abs().astype("int64")


def load_li(max_word_difference: int | None = None, source: DataSource | None = None) -> pd.DataFrame:
    """LI pairs (Sprouse et al. 2013: 1,200; Mahowald et al. 2016: 1,179) with human ratings.

    ``max_word_difference`` keeps the pairs whose sentences differ in length by at most that
    many whitespace-separated words. Hu et al. (2025) report 1,883 LI pairs; their selection
    is not published (no code), and of the rules tried on this file only "at most 1 word
    apart" gives exactly 1,883 (1,009 Sprouse + 874 Mahowald; 1,152 of them the same length).
    Rules that do not: pairs with both ratings (2,275), rated and rating_diff > 0 (2,145),
    without duplicated pairs (2,373), the ungrammatical sentence starred (2,116).

    Ratings: ``rating_good``/``rating_bad`` are the file's LS_grammatical/LS_ungrammatical,
    per-item means of Likert ratings z-scored within participant (as Hu et al. describe);
    ``rating_diff`` is their difference. The mirror holds only these per-item means, no
    per-participant responses: the z-scoring and the averaging are read, not recomputed,
    and cannot be checked beyond the per-source means being ~0 (Sprouse -0.02, Mahowald
    0.01). A sentence rated in two pairs keeps each pair's own value (34 sentences differ).
    rating_good is missing for 104 pairs (13 Sprouse phenomena), rating_bad for 64, so
    rating_diff for 104 (84 of the 1,883). One Sprouse pair (id 648) has good == bad.

    The file has the LS_diff column twice; both copies are read and checked to agree.
    """
    if max_word_difference is not None and (isinstance(max_word_difference, bool) or
                                            not isinstance(max_word_difference, int) or max_word_difference < 0):
        raise ValueError(f"max_word_difference must be a number of words >= 0 or None, got {max_word_difference!r}")
    path = resolve(source).path(LI)
    rows = text_files.csv_rows(path, EXPECTED_LI)
    header = rows[0][1]
    diff_at = [i for i, h in enumerate(header) if h == "LS_diff"]
    names = list(header)
    for k, i in enumerate(diff_at[1:], 2):
        names[i] = f"LS_diff_{k}"
    missing = [c for c in LI_COLUMNS if c not in names]
    if missing or len(rows) == 1:
        raise text_files.problem(path, f"missing columns {missing}" if missing else "the file has a header but no rows",
                                 EXPECTED_LI, 1)
    for line_no, row in rows[1:]:
        if len(row) != len(names):
            raise text_files.problem(path, f"expected {len(names)} columns, got {len(row)}", EXPECTED_LI, line_no)
    df = pd.DataFrame([row for _, row in rows[1:]], columns=names)
    for c in ("LS_grammatical", "LS_ungrammatical", "LS_diff") + tuple(n for n in names if n.startswith("LS_diff_")):
        numbers = pd.to_numeric(df[c], errors="coerce")
        bad = numbers.isna() & (df[c].str.strip() != "")
        if bad.any():
            raise text_files.problem(path, f"{c} {df[c][bad].iloc[0]!r} is not a number", EXPECTED_LI,
                                     rows[1 + int(bad.to_numpy().argmax())][0])
        df[c] = numbers
    for extra in [n for n in names if n.startswith("LS_diff_")]:
        if not (df[extra] - df["LS_diff"]).abs().max() < 1e-9:
            raise text_files.problem(path, "the two LS_diff columns disagree", EXPECTED_LI)
        df = df.drop(columns=extra)
    pair_ids = pd.to_numeric(df["pair_ID"], errors="coerce")
    if pair_ids.isna().any() or (pair_ids % 1 != 0).any():
        at = int((pair_ids.isna() | (pair_ids % 1 != 0)).to_numpy().argmax())
        raise text_files.problem(path, f"pair_ID {df['pair_ID'].iloc[at]!r} is not a whole number", EXPECTED_LI,
                                 rows[1 + at][0])
    df["pair_ID"] = pair_ids
    out = pd.DataFrame({"dataset": "li", "language": "en", "paradigm": df["paradigm"], "phenomenon": df["phenomenon"],
                        "field": "syntax", "pair_id": df["pair_ID"].astype(int), "good": df["sentence_grammatical"],
                        "bad": df["sentence_ungrammatical"], "source": df["source"],
                        "rating_good": df["LS_grammatical"], "rating_bad": df["LS_ungrammatical"],
                        "rating_diff": df["LS_diff"]})
    out["word_difference"] = word_difference(out["good"], out["bad"])
    if max_word_difference is not None:
        out = out[out["word_difference"] <= max_word_difference]
    return finalize_pairs(out, str(path))


def load_cola(split: str = "in_domain_train", source: DataSource | None = None) -> pd.DataFrame:
    """CoLA single sentences with acceptability labels (1 acceptable, 0 not)."""
    if split not in ("in_domain_train", "in_domain_dev", "out_of_domain_dev"):
        raise ValueError(f"unknown CoLA split {split!r}")
    path = resolve(source).path(COLA.format(split=split))
    records = []
    for line_no, line in text_files.lines(path, EXPECTED_COLA):
        parts = line.split("\t")
        if len(parts) != 4 or parts[1] not in ("0", "1"):
            raise text_files.problem(path, "expected source, label (0/1), mark, sentence", EXPECTED_COLA, line_no)
        records.append({"dataset": "cola", "language": "en", "paradigm": parts[0], "phenomenon": split,
                        "field": "", "item_id": len(records), "sentence": parts[3], "label": int(parts[1]),
                        "original_mark": parts[2]})
    df = pd.DataFrame.from_records(records)
    return df[SENTENCE_COLUMNS + ["original_mark"]].astype({c: "string" for c in SENTENCE_COLUMNS[:5] + ["sentence"]})


_WIKI_MARKUP = [(" @-@ ", "-"), (" @,@ ", ","), (" @.@ ", ".")]
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")


def wikitext_sentences(min_words: int = 3, source: DataSource | None = None) -> pd.DataFrame:
    """WikiText-103 test split as sentences (headings dropped), for unrelated priming contexts."""
    path = resolve(source).path(WIKITEXT)
    rows, article = [], ""
    for _, line in text_files.lines(path, EXPECTED_WIKITEXT):
        text = line.strip()
        if not text:
            continue
        if re.fullmatch(r"=( =)* .* =( =)*", text):
            if text.startswith("= ") and not text.startswith("= ="):
                article = text.strip("= ").strip()
            continue
        for a, b in _WIKI_MARKUP:
            text = text.replace(a, b)
        for sentence in _SENTENCE.split(detokenize(text)):
            if len(sentence.split()) >= min_words:
                rows.append({"article": article, "sentence": sentence})
    return pd.DataFrame(rows, columns=["article", "sentence"]).astype("string")
