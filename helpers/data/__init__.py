"""Dataset readers: every benchmark as one canonical table (see ``schema.PAIR_COLUMNS``).

    from helpers import data
    pairs = data.load("blimp")                 # read from the mirror (validated)
    pairs = data.load_processed("blimp")       # data/processed/blimp.parquet (built if missing)
    pairs = data.load("blimp", source=data.DataSource(Path("/my/mirror")))  # another mirror

Every reader takes ``source`` (a :class:`DataSource`); None means ``DataSource.default()``,
the mirror that ``MINIMAL_PAIRS_DATA`` names when the reader runs.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

import pandas as pd

from .. import paths
from ..files import atomic_path
from ..selection import parse_selection
from . import blimp, chinese, climp, english, hu_levy, syntaxgym
from .schema import PAIR_COLUMNS, SENTENCE_COLUMNS, DataFormatError
from .sources import ChecksumError, DataNotFoundError, DataSource


@dataclass(frozen=True)
class Dataset:
    name: str
    language: str
    kind: str  # "pairs", "sentences", "regions", "words", "text"
    loader: Callable[..., pd.DataFrame]
    description: str


DATASETS: dict[str, Dataset] = {d.name: d for d in [
    Dataset("blimp", "en", "pairs", blimp.load, "BLiMP, 67 paradigms x 1,000 (options: drop_identical)"),
    Dataset("climp", "zh", "pairs", climp.load, "CLiMP, 16 paradigms x 1,000 (options: add_period)"),
    Dataset("syntaxgym", "en", "pairs", syntaxgym.load_pairs, "SyntaxGym pair corpus of Hu & Levy, 1,018 pairs"),
    Dataset("syntaxgym_suites", "en", "regions", syntaxgym.suites_table, "SyntaxGym test suites by region, 34 suites"),
    Dataset("zhoblimp", "zh", "pairs", chinese.load_zhoblimp, "ZhoBLiMP, 118 paradigms x 300"),
    Dataset("sling", "zh", "pairs", chinese.load_sling, "SLING, 40 main paradigms x 1,000 (options: include_small)"),
    Dataset("scamp_plausible", "en", "pairs", partial(english.load_scamp, "plausible"), "SCaMP plausible, 67 x 1,000"),
    Dataset("scamp_implausible", "en", "pairs", partial(english.load_scamp, "implausible"), "SCaMP implausible, 67 x 1,000"),
    Dataset("li", "en", "pairs", english.load_li, "LI pairs with z-scored human ratings, 2,379"),
    Dataset("cola", "en", "sentences", english.load_cola, "CoLA in-domain train, 8,551 labelled sentences (options: split)"),
    Dataset("hl_p18", "en", "words", partial(hu_levy.load_word_prediction, "p18"), "Hu & Levy exp1 word prediction, P18"),
    Dataset("hl_news", "en", "words", partial(hu_levy.load_word_prediction, "news"), "Hu & Levy exp1 word prediction, News"),
    Dataset("hl_dtfit", "en", "words", hu_levy.load_word_comparison, "Hu & Levy exp2 word comparison, DTFit"),
    Dataset("hl_blimp", "en", "pairs", partial(hu_levy.load_sentence_pairs, "blimp"), "Hu & Levy exp3 BLiMP subset, 390"),
    Dataset("hl_syntaxgym", "en", "pairs", partial(hu_levy.load_sentence_pairs, "syntaxgym"), "Hu & Levy exp3 SyntaxGym subset, 345"),
    Dataset("hl_mandarin", "zh", "pairs", partial(hu_levy.load_sentence_pairs, "mandarin"), "Hu & Levy Mandarin set, 535"),
    Dataset("wikitext", "en", "text", english.wikitext_sentences, "WikiText-103 test split as sentences"),
]}


def _lookup(name: str) -> Dataset:
    if name not in DATASETS:
        raise KeyError(f"unknown dataset {name!r}; choose from: {', '.join(DATASETS)}")
    return DATASETS[name]


def dataset_names(selection) -> list[str]:
    """Dataset names from "all", "blimp,climp" or a list; unknown names are an error."""
    return parse_selection(selection, list(DATASETS), what="dataset")


def load(name: str, source: DataSource | None = None, **options) -> pd.DataFrame:
    """Read a dataset from ``source`` (default: the mirror) into its canonical table."""
    return _lookup(name).loader(source=source, **options)


def processed_path(name: str) -> Path:
    """<processed folder>/<name>.parquet (data/processed unless HELPERS_PROCESSED_DIR is set)."""
    _lookup(name)
    return paths.processed() / f"{name}.parquet"


def save_processed(name: str, df: pd.DataFrame) -> Path:
    """Write data/processed/<name>.parquet atomically."""
    path = processed_path(name)
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False)
    return path


def load_processed(name: str, source: DataSource | None = None, **options) -> pd.DataFrame:
    """data/processed/<name>.parquet; built from ``source`` (with ``options``) if missing."""
    path = processed_path(name)
    if path.is_file():
        return pd.read_parquet(path)
    df = load(name, source=source, **options)
    save_processed(name, df)
    return df


def summary(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per dataset: language, paradigms, phenomena, items."""
    rows = []
    for name, df in tables.items():
        ds = _lookup(name)
        paradigm_col = "paradigm" if "paradigm" in df else ("suite" if "suite" in df else None)
        rows.append({"dataset": name, "language": ds.language, "kind": ds.kind,
                     "paradigms": df[paradigm_col].nunique() if paradigm_col else None,
                     "phenomena": df["phenomenon"].nunique() if "phenomenon" in df else
                     (df["circuit"].nunique() if "circuit" in df else None),
                     "items": len(df)})
    return pd.DataFrame(rows)


__all__ = ["DATASETS", "ChecksumError", "Dataset", "DataFormatError", "DataNotFoundError", "DataSource", "PAIR_COLUMNS",
           "SENTENCE_COLUMNS", "load", "load_processed", "save_processed", "summary"]
