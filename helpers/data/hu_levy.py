"""Stimuli of Hu & Levy (2023): word prediction, word comparison, sentence judgment/comparison."""
from __future__ import annotations

import pandas as pd

from .schema import finalize_pairs
from .sources import DataSource
from .syntaxgym import circuit, read_pair_csv

BASE = "hu-levy-2023/datasets"
WORD_PREDICTION = {"p18": f"{BASE}/exp1/p18/corpus.csv", "news": f"{BASE}/exp1/news/corpus.csv",
                   # Appendix D (Mandarin, branch `chinese`): news of August 2023 and three simple sentences
                   "news_zh": f"{BASE}/exp1/news_zh/corpus.csv", "simple_zh": f"{BASE}/exp1/simple_zh/corpus.csv"}
DTFIT = f"{BASE}/exp2/dtfit/corpus.csv"
PAIRS = {"blimp": f"{BASE}/exp3/blimp/corpus.csv", "syntaxgym": f"{BASE}/exp3/syntaxgym/corpus.csv",
         "mandarin": f"{BASE}/exp3/mandarin/corpus.csv"}


def load_word_prediction(name: str = "p18", source: DataSource | None = None) -> pd.DataFrame:
    """Experiment 1: prefix and the true final word (P18: 384 items; News: 222; the Mandarin sets of
    Appendix D: News-zh 90, Simple-zh 3)."""
    if name not in WORD_PREDICTION:
        raise ValueError(f"word prediction sets: {sorted(WORD_PREDICTION)}; got {name!r}")
    rows = read_pair_csv(WORD_PREDICTION[name], ("item_id", "prefix", "continuation"), lambda r: {
        "dataset": f"hl_{name}", "item_id": int(r["item_id"]), "prefix": r["prefix"],
        "continuation": r["continuation"]}, source)
    return pd.DataFrame(rows).astype({"dataset": "string", "prefix": "string", "continuation": "string"})


def load_word_comparison(source: DataSource | None = None) -> pd.DataFrame:
    """Experiment 2 (DTFit): a prefix with a plausible and an implausible final word, and human scores."""
    columns = ("item_id", "prefix", "good_continuation", "bad_continuation", "category", "good_human_score",
               "bad_human_score")
    rows = read_pair_csv(DTFIT, columns, lambda r: {
        "dataset": "hl_dtfit", "item_id": int(r["item_id"]), "prefix": r["prefix"],
        "good_continuation": r["good_continuation"], "bad_continuation": r["bad_continuation"],
        "category": r["category"], "good_human_score": float(r["good_human_score"]),
        "bad_human_score": float(r["bad_human_score"])}, source)
    return pd.DataFrame(rows).astype({c: "string" for c in ("dataset", "prefix", "good_continuation",
                                                            "bad_continuation", "category")})


def load_sentence_pairs(name: str = "blimp", join_chinese_words: bool = True,
                        source: DataSource | None = None) -> pd.DataFrame:
    """Experiment 3 pairs: the BLiMP subset (390), the SyntaxGym subset (345) or the Mandarin set (535).

    The Mandarin sentences are word-segmented with spaces in the file; ``join_chinese_words``
    removes those spaces, as Chinese is written.
    """
    if name not in PAIRS:
        raise ValueError(f"sentence pair sets: {sorted(PAIRS)}; got {name!r}")
    def record(r: dict) -> dict:
        good, bad = r["good_sentence"].strip(), r["bad_sentence"].strip()
        if name == "blimp":
            paradigm, phenomenon, field = r["blimp_UID"], r["category_fine"], r["category"]
        elif name == "syntaxgym":
            paradigm, phenomenon, field = r["suite"], circuit(r["suite"]), "syntax"
        else:
            paradigm, phenomenon, field = r["suite"], r["suite_broad"], "syntax"
            if join_chinese_words:
                good, bad = good.replace(" ", ""), bad.replace(" ", "")
        return {"dataset": f"hl_{name}", "language": "zh" if name == "mandarin" else "en", "paradigm": paradigm,
                "phenomenon": phenomenon, "field": field, "pair_id": int(r["item_id"]), "good": good, "bad": bad}

    columns = {"blimp": ("blimp_UID", "category_fine", "category"), "syntaxgym": ("suite",),
               "mandarin": ("suite", "suite_broad")}[name]
    records = read_pair_csv(PAIRS[name], ("item_id", "good_sentence", "bad_sentence", *columns), record, source)
    return finalize_pairs(pd.DataFrame.from_records(records), PAIRS[name])
