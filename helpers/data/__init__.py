"""Dataset readers: every benchmark as one canonical table (see ``schema.PAIR_COLUMNS``).

    from helpers import data
    pairs = data.load("blimp")                 # read from the mirror (validated)
    pairs = data.load_processed("blimp")       # data/processed/blimp.parquet (built if missing)
    pairs = data.load_processed("blimp_hu2025", prepared_only=True)  # a variant notebook 01 must have written
    pairs = data.load("blimp", source=data.DataSource(Path("/my/mirror")))  # another mirror (checked)
    pairs = data.load("blimp", source=data.DataSource(Path("/my/edit"), manifest_file=None))  # your own files

Every reader takes ``source`` (a :class:`DataSource`); None means ``DataSource.default()``,
the mirror that ``MINIMAL_PAIRS_DATA`` names when the reader runs. Every file read is checked
against data/sources.yaml; one it does not list is an ``UnlistedFileError``.

BLiMP-NL, TurBLiMP, BHS and QFrBLiMP are read from their GitHub releases in the mirror, or from a
Hugging Face Hub copy (:mod:`release_or_hub`); MultiBLiMP from the Hub, four of its languages from
the mirror; XCOMPS from the Hub only (``hub.py``: downloaded once, locked, checked at every read;
``python -m helpers.data --download NAME``).

A *variant* (``Dataset.base`` set) is a fixed selection from another dataset under its own
name, so its processed file and score folder never mix with the base's: ``blimp_hu2025``
is BLiMP as Hu et al. (2025) count it (66,993), ``blimp`` the full 67,000 of Ide et al.
"""
from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

import pandas as pd

from .. import paths
from ..files import atomic_path
from ..settings.lists import parse_list
from . import (bhs, blimp, blimp_nl, chinese, climp, english, hu_levy, jblimp, multiblimp, multiblimp_word_order,
               qfrblimp, rublimp, syntaxgym, table_version, teaching, turblimp, xcomps)
from .hub_catalog import HUB
from .multiblimp_languages import canonical as canonical_languages
from .schema import PAIR_COLUMNS, SENTENCE_COLUMNS, DataFormatError
from .sources import ChecksumError, DataNotFoundError, DataSource, UnlistedFileError


@dataclass(frozen=True)
class Dataset:
    name: str
    language: str
    kind: str  # "pairs", "sentences", "regions", "words", "text"
    loader: Callable[..., pd.DataFrame]
    description: str
    base: str | None = None  # a variant: the dataset its loader (a partial with fixed options) reads
    canonical: Callable[[dict], dict] | None = None  # one spelling of equivalent options (recorded_options)


def _languages_option(options: dict) -> dict:
    return {**options, "languages": canonical_languages(options["languages"])} if "languages" in options else options


DATASETS: dict[str, Dataset] = {d.name: d for d in [
    Dataset("blimp", "en", "pairs", blimp.load, "BLiMP, 67 paradigms x 1,000 (options: drop_identical)"),
    Dataset("blimp_hu2025", "en", "pairs", partial(blimp.load, drop_identical=True),
            "BLiMP without its 7 identical pairs, 66,993 (Hu et al. 2025)", base="blimp"),
    Dataset("climp", "zh", "pairs", climp.load, "CLiMP, 16 paradigms x 1,000 (options: add_period)"),
    Dataset("syntaxgym", "en", "pairs", syntaxgym.load_pairs, "SyntaxGym pair corpus of Hu & Levy, 1,018 pairs"),
    Dataset("syntaxgym_suites", "en", "regions", syntaxgym.suites_table, "SyntaxGym test suites by region, 34 suites"),
    Dataset("syntaxgym_items", "en", "suite_items", syntaxgym.load_items, "SyntaxGym suite items with conditions, regions and formulas, 842"),
    Dataset("zhoblimp", "zh", "pairs", chinese.load_zhoblimp, "ZhoBLiMP, 118 paradigms x 300"),
    Dataset("sling", "zh", "pairs", chinese.load_sling,
            "SLING, 40 main paradigms x 1,000 (options: include_small, drop_identical)"),
    Dataset("sling_hu2025", "zh", "pairs", partial(chinese.load_sling, drop_identical=True),
            "SLING main set without its 24 identical pairs, 39,976 (Hu et al. 2025)", base="sling"),
    Dataset("rublimp", "ru", "pairs", rublimp.load, "RuBLiMP (Russian), 45 paradigms x 1,000"),
    Dataset("jblimp", "ja", "pairs", jblimp.load,
            "JBLiMP (Japanese), 331 human-validated pairs (options: subset='raw' for the 367 before validation)"),
    Dataset("multiblimp", "mul", "pairs", multiblimp.load,
            "MultiBLiMP 1.0, agreement pairs in 101 languages, 121,305 (Hub; the mirror holds eng, ell, nld, tur: "
            "5,939) (options: languages, default 'all'; ISO 639-3 codes such as 'rus,pol')",
            canonical=_languages_option),
    Dataset("multiblimp_word_order", "mul", "pairs", multiblimp_word_order.load,
            "MultiBLiMP's word-order pairs (mirror): a subject, object or indirect object moved across its head, "
            "46,148 pairs in 159 languages, 694 identical (options: drop_identical)"),
    Dataset("blimp_nl", "nl", "pairs", blimp_nl.load,
            "BLiMP-NL (Dutch; release or Hub), 84 paradigms x 100, 11 identical (options: drop_identical)"),
    Dataset("turblimp", "tr", "pairs", turblimp.load,
            "TurBLiMP (Turkish; release or Hub), 16 phenomena x 1,000, 20 identical (options: drop_identical)"),
    Dataset("bhs", "mul", "pairs", bhs.load,
            "BHS (release or Hub): Basque agreement, Hindi aspect and Swahili noun-class agreement, 22 x 1,000 "
            "items of a context and two endings"),
    Dataset("qfrblimp", "fr", "pairs", qfrblimp.load,
            "QFrBLiMP (Quebec French; release or Hub), 20 phenomena, 1,761 pairs with the annotators' agreement, "
            "18 identical (options: drop_identical)"),
    Dataset("xcomps", "mul", "pairs", xcomps.load,
            "XCOMPS (Hub): conceptual minimal pairs (COMPS) in 17 languages"),
    Dataset("scamp_plausible", "en", "pairs", partial(english.load_scamp, "plausible"), "SCaMP plausible, 67 x 1,000"),
    Dataset("scamp_implausible", "en", "pairs", partial(english.load_scamp, "implausible"), "SCaMP implausible, 67 x 1,000"),
    Dataset("li", "en", "pairs", english.load_li,
            "LI pairs with z-scored human ratings, 2,379 (options: max_word_difference)"),
    Dataset("li_hu2025", "en", "pairs", partial(english.load_li, max_word_difference=1),
            "LI pairs at most one word apart in length, 1,883 (Hu et al. 2025)", base="li"),
    Dataset("cola", "en", "sentences", english.load_cola, "CoLA in-domain train, 8,551 labelled sentences (options: split)"),
    Dataset("cola_dev", "en", "sentences", partial(english.load_cola, split="in_domain_dev"),
            "CoLA in-domain dev, 527 labelled sentences", base="cola"),
    Dataset("hl_p18", "en", "words", partial(hu_levy.load_word_prediction, "p18"), "Hu & Levy exp1 word prediction, P18"),
    Dataset("hl_news", "en", "words", partial(hu_levy.load_word_prediction, "news"), "Hu & Levy exp1 word prediction, News"),
    Dataset("hl_news_zh", "zh", "words", partial(hu_levy.load_word_prediction, "news_zh"),
            "Hu & Levy exp1 word prediction in Mandarin (Appendix D), News-zh, 90"),
    Dataset("hl_simple_zh", "zh", "words", partial(hu_levy.load_word_prediction, "simple_zh"),
            "Hu & Levy exp1 word prediction in Mandarin (Appendix D), simple sentences, 3"),
    Dataset("hl_dtfit", "en", "words", hu_levy.load_word_comparison, "Hu & Levy exp2 word comparison, DTFit"),
    Dataset("hl_blimp", "en", "pairs", partial(hu_levy.load_sentence_pairs, "blimp"), "Hu & Levy exp3 BLiMP subset, 390"),
    Dataset("hl_syntaxgym", "en", "pairs", partial(hu_levy.load_sentence_pairs, "syntaxgym"), "Hu & Levy exp3 SyntaxGym subset, 345"),
    Dataset("hl_mandarin", "zh", "pairs", partial(hu_levy.load_sentence_pairs, "mandarin"), "Hu & Levy Mandarin set, 535"),
    Dataset("moon_teaching", "en", "sentences", teaching.load,
            "Hu et al. (2025) Figure 1b: 8 strings {The, A} {moon, moons} {emerge, emerges}, 3 grammatical "
            "(written in the project; 07's teaching panel)"),
    Dataset("wikitext", "en", "text", english.wikitext_sentences, "WikiText-103 test split as sentences"),
]}


def _lookup(name: str) -> Dataset:
    if name not in DATASETS:
        raise KeyError(f"unknown dataset {name!r}; choose from: {', '.join(DATASETS)}")
    return DATASETS[name]


def dataset_names(selection) -> list[str]:
    """Dataset names from "all", "blimp,climp" or a list; unknown names are an error."""
    return parse_list(selection, list(DATASETS), what="dataset")


class DataNotPreparedError(FileNotFoundError):
    """A dataset asked for from data/processed that notebook 01 has not written."""


def recorded_options(name: str, options: dict) -> dict:
    """``options`` less those equal to the loader's defaults: what identifies the table read.
    Unknown options, and options that undo a variant's fixed ones, are errors."""
    ds = _lookup(name)
    options = ds.canonical(options) if ds.canonical else options
    params = {k: v for k, v in inspect.signature(ds.loader).parameters.items() if k != "source"}
    unknown = sorted(set(options) - set(params))
    if unknown:
        raise TypeError(f"dataset {name!r} has no option {', '.join(unknown)} "
                        f"(its options: {', '.join(params) or 'none'})")
    fixed = getattr(ds.loader, "keywords", {}) if ds.base else {}
    undone = {k: v for k, v in options.items() if k in fixed and v != fixed[k]}
    if undone:
        raise ValueError(f"dataset {name!r} is {ds.base!r} with {fixed}; {undone} would make it another table: "
                         f"select {ds.base!r} with those options instead")
    return {k: v for k, v in options.items() if params[k].default != v}


def variant_for(name: str, options: dict) -> str | None:
    """The registered variant that reading ``name`` with ``options`` reproduces, if any."""
    wanted = recorded_options(name, options)
    for ds in DATASETS.values():
        if ds.base == name and wanted and recorded_options(name, getattr(ds.loader, "keywords", {})) == wanted:
            return ds.name
    return None


def load(name: str, source: DataSource | None = None, **options) -> pd.DataFrame:
    """Read a dataset from ``source`` (default: the mirror) into its canonical table; a
    variant's rows carry the variant's name in ``dataset``."""
    ds = _lookup(name)
    df = ds.loader(source=source, **options)
    if ds.base is not None:
        df["dataset"] = pd.Series(name, index=df.index, dtype="string")
    return df


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


def prepare(name: str, source: DataSource | None = None, **options) -> pd.DataFrame:
    """Read dataset ``name`` with ``options`` and write data/processed/<name>.parquet; the file
    records the options that differ from the defaults (``attrs["dataset_options"]``), the sha256
    of its rows and its reader's version (:mod:`.table_version`).
    Options that reproduce a registered variant are refused: that table has its own name."""
    variant = variant_for(name, options)
    if variant:
        raise ValueError(f"{name} with {options} is the dataset {variant!r}: prepare and select that name, "
                         f"so that its processed file and scores stay apart from those of {name!r}")
    recorded = recorded_options(name, options)
    df = load(name, source=source, **options)
    df.attrs = {"dataset_options": recorded, **table_version.stamp(_lookup(name).loader, df)}
    save_processed(name, df)
    return df


def load_processed(name: str, source: DataSource | None = None, *, prepared_only: bool = False,
                   **options) -> pd.DataFrame:
    """data/processed/<name>.parquet as notebook 01 prepared it (its options in
    ``attrs["dataset_options"]``), checked to hold ``options`` when some are given. A missing
    file is built from ``source`` (see :func:`prepare`), or with ``prepared_only`` is a
    DataNotPreparedError that names the dataset and how to prepare it; so is a file an older
    reader wrote (its ``reader_version``; a file without one counts as version "1"), which is
    otherwise prepared again."""
    path = processed_path(name)
    wanted = recorded_options(name, options)
    if not path.is_file():
        if prepared_only:
            raise DataNotPreparedError(
                f"dataset {name!r} ({DATASETS[name].description}) is not prepared: {path} does not exist. "
                f"Prepare it with notebook 01: python -m helpers sweep --notebooks 01 --datasets {name} "
                f"(or run notebooks/01_data_prep.ipynb with datasets=\"{name}\")")
        return prepare(name, source, **options)
    df = pd.read_parquet(path)
    if (old := str(df.attrs.get("reader_version", "1"))) != (now := table_version.reader_version(_lookup(name).loader)):
        if prepared_only:
            raise DataNotPreparedError(f"{path} was written by version {old} of the {name} reader, now {now}: prepare "
                                       f"it again with notebook 01 (python -m helpers sweep --notebooks 01 --datasets {name})")
        warnings.warn(f"{path} was written by version {old} of the {name} reader, now {now}: prepared again")
        return prepare(name, source, **(options or df.attrs.get("dataset_options", {})))
    if "rows_sha256" not in df.attrs:  # written before tables recorded it
        df.attrs["rows_sha256"] = table_version.rows_sha256(df)
    have = df.attrs.get("dataset_options", {})
    if options and have != wanted:
        raise ValueError(f"{path} holds {name} read with options {have}, not {wanted}: prepare it again with "
                         f"notebook 01, or select {name!r} with those options to read them from the mirror")
    return df


def summary(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per dataset: language, paradigms, phenomena, items, identical pairs (one sentence twice)."""
    rows = []
    for name, df in tables.items():
        ds = _lookup(name)
        paradigm_col = "paradigm" if "paradigm" in df else ("suite" if "suite" in df else None)
        rows.append({"dataset": name, "language": ds.language, "kind": ds.kind,
                     "paradigms": df[paradigm_col].nunique() if paradigm_col else None,
                     "phenomena": df["phenomenon"].nunique() if "phenomenon" in df else
                     (df["circuit"].nunique() if "circuit" in df else None),
                     "items": len(df),
                     "identical": int(df["identical"].sum()) if "identical" in df else None})
    return pd.DataFrame(rows)


__all__ = ["DATASETS", "HUB", "ChecksumError", "Dataset", "DataFormatError", "DataNotFoundError", "DataNotPreparedError",
           "DataSource", "PAIR_COLUMNS", "SENTENCE_COLUMNS", "load", "load_processed", "prepare", "recorded_options",
           "UnlistedFileError", "save_processed", "summary", "variant_for"]
