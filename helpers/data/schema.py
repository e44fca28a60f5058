"""The canonical minimal-pair table every reader returns, and its validation."""
from __future__ import annotations

import pandas as pd

PAIR_COLUMNS = ["dataset", "language", "paradigm", "phenomenon", "field", "pair_id", "good", "bad"]
SENTENCE_COLUMNS = ["dataset", "language", "paradigm", "phenomenon", "field", "item_id", "sentence", "label"]


class DataFormatError(ValueError):
    """A data file that does not have the expected shape; names file and line."""


FIX = (" To fix: every pair needs a non-empty good and bad sentence and a pair id that is unique within its "
       "paradigm; restore the files from their origin (data/sources.yaml lists it), or correct your own file")


def finalize_pairs(df: pd.DataFrame, where: str, allow_identical: bool = True) -> pd.DataFrame:
    """Order and type the canonical columns, check them, and flag identical pairs."""
    if df.empty and not len(df.columns):
        raise DataFormatError(f"{where}: no pairs were read. To fix: check that the files hold pairs "
                              "(restore them from their origin, data/sources.yaml lists it)")
    missing = [c for c in PAIR_COLUMNS if c not in df.columns]
    if missing:
        raise DataFormatError(f"{where}: missing canonical columns {missing}.{FIX}")
    extra = [c for c in df.columns if c not in PAIR_COLUMNS]
    df = df[PAIR_COLUMNS + extra].copy()
    for c in PAIR_COLUMNS:
        if c != "pair_id":
            df[c] = df[c].astype("string")
    df["pair_id"] = df["pair_id"].astype("int64")
    empty = df[(df["good"].fillna("").str.len() == 0) | (df["bad"].fillna("").str.len() == 0)]
    if len(empty):
        row = empty.iloc[0]
        raise DataFormatError(f"{where}: empty sentence in paradigm {row['paradigm']} pair {row['pair_id']}.{FIX}")
    df["identical"] = (df["good"] == df["bad"]).astype(bool)
    if not allow_identical and df["identical"].any():
        row = df[df["identical"]].iloc[0]
        raise DataFormatError(f"{where}: identical good and bad sentence in {row['paradigm']} pair "
                              f"{row['pair_id']}.{FIX}")
    if df.duplicated(["paradigm", "pair_id"]).any():
        row = df[df.duplicated(["paradigm", "pair_id"])].iloc[0]
        raise DataFormatError(f"{where}: pair id {row['pair_id']} appears twice in paradigm {row['paradigm']}.{FIX}")
    return df.reset_index(drop=True)



def without_identical(df: pd.DataFrame, drop: bool) -> pd.DataFrame:
    """``df`` less its pairs whose two sentences are the same string when ``drop`` (the option
    ``drop_identical`` of every reader whose dataset has such pairs)."""
    return df[~df["identical"]].reset_index(drop=True) if drop else df
