"""The Hub copies of BLiMP-NL (Dutch), TurBLiMP (Turkish) and BHS (Basque, Hindi, Swahili), one
config per paradigm, read into the canonical table (their readers take the GitHub release first:
:mod:`release_or_hub`); and the handling of a release's own columns that all Hub readers share."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pandas as pd

from . import hub
from .hub_catalog import HubDataset, spec_of
from .hub_layout import read_table
from .schema import PAIR_COLUMNS, DataFormatError, finalize_pairs
from .sources import DataSource

RESERVED = {*PAIR_COLUMNS, "identical"}


def read_files(files: list[Path], required: tuple[str, ...], what: str) -> pd.DataFrame:
    """The rows of a config's files in order, with the ``required`` columns checked."""
    frames = []
    for path in files:
        df = read_table(path, f"{what}'s rows with the columns {', '.join(required)}")
        missing = [c for c in required if c not in df.columns]
        if missing:
            raise DataFormatError(f"{path}: missing columns {missing}; {what} needs {list(required)} "
                                  f"(the file has {list(df.columns)}). To fix: restore the file (download it "
                                  "again), or give your own file those columns")
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def release_columns(df: pd.DataFrame, used: set[str]) -> pd.DataFrame:
    """The release's other columns, kept: strings as ``string``, a name that would shadow a
    canonical column prefixed with ``release_``."""
    kept = df[[c for c in df.columns if c not in used]].copy()
    for col in kept.columns:
        values = kept[col]
        if values.dtype == object and values.map(lambda v: v is None or isinstance(v, str)).all():
            kept[col] = values.astype("string")
    return kept.rename(columns={c: f"release_{c}" for c in kept.columns if c in RESERVED})


def paradigm_table(spec: HubDataset, config: str, files: list[Path], language: str,
                   phenomenon: str) -> pd.DataFrame:
    """One config as canonical rows: ``pair_id`` the row's position in the config's files."""
    raw = read_files(files, (spec.good, spec.bad), spec.name)
    table = pd.DataFrame({"dataset": spec.name, "language": language, "paradigm": config, "phenomenon": phenomenon,
                          "field": "", "pair_id": range(len(raw)), "good": raw[spec.good], "bad": raw[spec.bad]})
    return pd.concat([table, release_columns(raw, {spec.good, spec.bad})], axis=1)


def load_paradigms(name: str, language: str, phenomenon_of: Callable[[str], str],
                   source: DataSource | None = None) -> pd.DataFrame:
    """Every config of Hub dataset ``name`` as one canonical table, in the manifest's order."""
    spec = spec_of(name)
    found = hub.find(name, None, source)
    frames = [paradigm_table(spec, config, found[config], language, phenomenon_of(config)) for config in spec.configs]
    where = str(found[spec.configs[0]][0].parent)
    return finalize_pairs(pd.concat(frames, ignore_index=True), where)


def blimp_nl_from_hub(source: DataSource | None = None) -> pd.DataFrame:
    """BLiMP-NL (Suijkerbuijk et al. 2025): 84 paradigms x 100 Dutch pairs (8,400); ``paradigm``
    is the Hub config (``wh_movement__stranding_1``), ``phenomenon`` its part before "__" (22);
    the release's other columns are kept."""
    return load_paradigms("blimp_nl", "nl", lambda config: config.split("__")[0], source)


def turblimp_from_hub(source: DataSource | None = None) -> pd.DataFrame:
    """TurBLiMP (Başar et al. 2025): 16 phenomena x 1,000 Turkish pairs (16,000); ``paradigm``
    and ``phenomenon`` are the Hub config (``binding``); the release's other columns are kept."""
    return load_paradigms("turblimp", "tr", lambda config: config, source)


BHS_LANGUAGES = {"basque": "eu", "hindi": "hi", "swahili": "sw"}


def bhs_phenomenon(config: str) -> str:
    """A BHS config's phenomenon: Basque's agreement target ("basque-DO"), else its language."""
    language, _, rest = config.partition("-")
    return f"{language}-{rest.split('-')[0]}" if language == "basque" else language


def bhs_table(config: str, raw: pd.DataFrame) -> pd.DataFrame:
    """One BHS config's rows (``context``, ``ending_good``, ``ending_bad`` and any other columns) as
    canonical pairs: each side the context and the ending joined with one space (evaluate.py's
    minicons separator; lm-evaluation-harness's target delimiter)."""
    context = raw["context"].astype(str).str.rstrip()
    table = pd.DataFrame({"dataset": "bhs", "language": BHS_LANGUAGES[config.split("-")[0]],
                          "paradigm": config, "phenomenon": bhs_phenomenon(config), "field": "",
                          "pair_id": range(len(raw)),
                          "good": context + " " + raw["ending_good"].astype(str).str.lstrip(),
                          "bad": context + " " + raw["ending_bad"].astype(str).str.lstrip()})
    return pd.concat([table, release_columns(raw.reset_index(drop=True), set())], axis=1)


def bhs_from_hub(source: DataSource | None = None) -> pd.DataFrame:
    """BHS (Kryvosheieva & Levy 2025) from a Hub copy: 22 configs of the test split, Basque
    auxiliary agreement (8), Hindi aspect with and without ergative "ne" (6), Swahili noun-class
    agreement (8), each row a ``context`` and two endings (:func:`bhs_table`). ``paradigm`` is the
    config, ``language`` eu/hi/sw, ``phenomenon`` :func:`bhs_phenomenon`."""
    spec = spec_of("bhs")
    found = hub.find("bhs", None, source)
    frames = [bhs_table(config, read_files(found[config], ("context", spec.good, spec.bad), spec.name))
              for config in spec.configs]
    return finalize_pairs(pd.concat(frames, ignore_index=True), str(found[spec.configs[0]][0].parent))
