"""XCOMPS (He et al., SIGTYP 2025): COMPS's conceptual minimal pairs (a concept has a property,
a negative concept does not) translated into 17 languages, read from the Hub dataset
fpadovani/xcomps-dataset, the copy BabyLM 2026's multilingual track reads: one split of the card's
``default`` config per language, ``comps_<ISO 639-1>`` (comps_de, comps_zh, ...), whose files the
card declares, or else the files name (``data/comps_de-00000-of-00001.parquet``, the Hub's
custom-split file names; :func:`hub_layout.named_split_globs`). A row holds ``acceptable_sent``
and ``unacceptable_sent`` and the negative concept's kind, ``negative_sample_type``: taxonomic,
overlap, co-occurrence or random (COMPS's four). BabyLM's task compares the two whole
sentences' log-probabilities (LP)."""
from __future__ import annotations

import pandas as pd

from . import hub
from .hub_catalog import XCOMPS_LANGUAGES, spec_of
from .hub_pairs import read_files, release_columns
from .schema import finalize_pairs
from .sources import DataSource

REQUIRED = ("acceptable_sent", "unacceptable_sent", "negative_sample_type")


def language_table(code: str, files) -> pd.DataFrame:
    """One language's pairs: ``pair_id`` the row's position in its split."""
    spec = spec_of("xcomps")
    raw = read_files(files, REQUIRED, "XCOMPS")
    kind = raw["negative_sample_type"].astype(str)
    table = pd.DataFrame({"dataset": spec.name, "language": code, "paradigm": code + "/" + kind,
                          "phenomenon": kind, "field": "", "pair_id": range(len(raw)),
                          "good": raw[spec.good], "bad": raw[spec.bad]})
    return pd.concat([table, release_columns(raw, {spec.good, spec.bad, "negative_sample_type"})], axis=1)


def load(source: DataSource | None = None) -> pd.DataFrame:
    """XCOMPS's pairs in its 17 languages: ``language`` the ISO 639-1 code, ``paradigm``
    "<language>/<negative_sample_type>" (``de/taxonomic``) so that scores group by language and
    kind of negative concept, ``phenomenon`` the kind; the release's other columns are kept."""
    spec = spec_of("xcomps")
    found = hub.find("xcomps", None, source)
    frames = [language_table(code, found[f"comps_{code}"]) for code in XCOMPS_LANGUAGES]
    return finalize_pairs(pd.concat(frames, ignore_index=True), f"{spec.repo_id} (17 languages)")
