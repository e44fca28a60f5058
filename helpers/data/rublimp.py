"""RuBLiMP (Taktasheva et al. 2024): Russian minimal pairs, 45 paradigms x 1,000."""
from __future__ import annotations

import pandas as pd

from . import text_files
from .schema import DataFormatError, finalize_pairs
from .sources import DataSource, resolve

FOLDER = "rublimp/datasets"
# RuBLiMP column -> canonical or kept column; `source_sentence` is the acceptable sentence
COLUMNS = {"id": "pair_id", "PID": "paradigm", "phenomenon": "phenomenon", "level": "field",
           "source_sentence": "good", "target_sentence": "bad", "source_word": "good_word",
           "target_word": "bad_word", "subtype": "subtype", "domain": "domain", "tree_depth": "tree_depth"}
EXPECTED = f"a CSV file with RuBLiMP's columns {', '.join(COLUMNS)} (id and tree_depth whole numbers)"


def _read(path) -> pd.DataFrame:
    """One paradigm's file, its id and tree_depth whole numbers."""
    df = text_files.csv_frame(path, COLUMNS, EXPECTED)[list(COLUMNS)].rename(columns=COLUMNS)  # index: line
    for col in ("pair_id", "tree_depth"):
        numbers = pd.to_numeric(df[col], errors="coerce")
        wrong = numbers.isna() | (numbers % 1 != 0)
        if wrong.any():
            at = int(wrong.to_numpy().argmax())
            raise text_files.problem(path, f"{col} {df[col].iloc[at]!r} is not a whole number", EXPECTED,
                                     int(df.index[at]))
        df[col] = numbers.astype("int64")
    return df


def load(source: DataSource | None = None) -> pd.DataFrame:
    """RuBLiMP's 45,000 pairs: ``paradigm`` is the PID, ``phenomenon`` its phenomenon (12),
    ``field`` its level (morphology, syntax, semantics); kept: ``good_word``/``bad_word`` (the
    changed word), ``subtype``, ``domain`` (librusec, wikipedia, wikinews) and ``tree_depth``."""
    source = resolve(source)
    folder = source.path(FOLDER)
    frames = [_read(path) for path in source.files(FOLDER, "*.csv")]
    if not frames:
        raise DataFormatError(f"{folder}: no RuBLiMP .csv files. To fix: restore the folder from its origin "
                              "(data/sources.yaml lists it)")
    df = pd.concat(frames, ignore_index=True)
    df["field"] = df["field"].str.lower()
    df.insert(0, "dataset", "rublimp")
    df.insert(1, "language", "ru")
    for col in ("good_word", "bad_word", "subtype", "domain"):
        df[col] = df[col].astype("string")
    return finalize_pairs(df, str(folder))
