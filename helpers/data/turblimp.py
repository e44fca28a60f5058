"""TurBLiMP (Başar, Padovani, Jumelet & Bisazza 2025): 16 Turkish phenomena x 1,000 pairs, read
from its GitHub release (ezgibasar/TurBLiMP 297de13, ``data/base/augmented_<phenomenon>.csv``:
``;``-separated, good_sentence;bad_sentence;good_cue;bad_cue;critical_region;phenomenon, plus
subtype in the two argument_structure files), else from the Hub copy (juletxara/turblimp, one
config per phenomenon). ``paradigm`` and ``phenomenon`` are the Hub's config names; the release
names one file otherwise (``subject_verb_agreement``, Hub: ``subject_agreement``). 20 pairs hold
one sentence twice (anaphor_agreement 10, quantifiers 10): flagged ``identical``.
"""
from __future__ import annotations

import pandas as pd

from . import hub_pairs, release_or_hub, text_files
from .hub_catalog import TURBLIMP_PHENOMENA
from .schema import finalize_pairs, without_identical
from .sources import DataSource

FOLDER = "turblimp/data/base"
FILE_NAMES = {"subject_agreement": "subject_verb_agreement"}  # Hub config -> the release's file name
EXPECTED = "a ';'-separated file with the columns good_sentence and bad_sentence (TurBLiMP's release)"


def release_file(config: str) -> str:
    """The release's file of a Hub config."""
    return f"{FOLDER}/augmented_{FILE_NAMES.get(config, config)}.csv"


def phenomenon_table(config: str, source: DataSource) -> pd.DataFrame:
    """One phenomenon's release file as canonical rows; kept: the cues, the critical region, the
    release's phenomenon (``release_phenomenon``, trailing spaces stripped) and subtype."""
    raw = text_files.csv_frame(source.path(release_file(config)), ("good_sentence", "bad_sentence"), EXPECTED, ";")
    table = pd.DataFrame({"dataset": "turblimp", "language": "tr", "paradigm": config, "phenomenon": config,
                          "field": "", "pair_id": range(len(raw)), "good": raw["good_sentence"].to_numpy(),
                          "bad": raw["bad_sentence"].to_numpy()})
    kept = raw.drop(columns=["good_sentence", "bad_sentence"]).reset_index(drop=True)
    kept = kept.apply(lambda column: column.str.strip()).astype("string")
    return pd.concat([table, kept.rename(columns={"phenomenon": "release_phenomenon"})], axis=1)


def from_release(source: DataSource) -> pd.DataFrame:
    frame = pd.concat([phenomenon_table(config, source) for config in TURBLIMP_PHENOMENA], ignore_index=True)
    return finalize_pairs(frame, str(source.path(FOLDER)))


def load(drop_identical: bool = False, source: DataSource | None = None) -> pd.DataFrame:
    """Every TurBLiMP pair (16,000), from the release or a Hub copy (:mod:`release_or_hub`);
    ``drop_identical`` removes the 20 pairs that hold one sentence twice (15,980)."""
    frame = release_or_hub.read("turblimp", FOLDER, from_release, hub_pairs.turblimp_from_hub, source)
    return without_identical(frame, drop_identical)
