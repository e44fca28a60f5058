"""RuBLiMP (Taktasheva et al. 2024): Russian minimal pairs, 45 paradigms x 1,000."""
from __future__ import annotations

import pandas as pd

from .schema import DataFormatError, finalize_pairs
from .sources import DataSource, resolve

FOLDER = "rublimp/datasets"
# RuBLiMP column -> canonical or kept column; `source_sentence` is the acceptable sentence
COLUMNS = {"id": "pair_id", "PID": "paradigm", "phenomenon": "phenomenon", "level": "field",
           "source_sentence": "good", "target_sentence": "bad", "source_word": "good_word",
           "target_word": "bad_word", "subtype": "subtype", "domain": "domain", "tree_depth": "tree_depth"}


def load(source: DataSource | None = None) -> pd.DataFrame:
    """RuBLiMP's 45,000 pairs: ``paradigm`` is the PID, ``phenomenon`` its phenomenon (12),
    ``field`` its level (morphology, syntax, semantics); kept: ``good_word``/``bad_word`` (the
    changed word), ``subtype``, ``domain`` (librusec, wikipedia, wikinews) and ``tree_depth``."""
    source = resolve(source)
    folder = source.path(FOLDER)
    frames = []
    for path in source.files(FOLDER, "*.csv"):
        df = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
        missing = sorted(set(COLUMNS) - set(df.columns))
        if missing:
            raise DataFormatError(f"{path}: missing columns {missing}; expected RuBLiMP's {list(COLUMNS)}")
        frames.append(df[list(COLUMNS)].rename(columns=COLUMNS))
    df = pd.concat(frames, ignore_index=True)
    for col in ("pair_id", "tree_depth"):
        numbers = pd.to_numeric(df[col], errors="coerce")
        if numbers.isna().any():
            row = df[numbers.isna()].iloc[0]
            raise DataFormatError(f"{folder}/{row['paradigm']}.csv: {col} {row[col]!r} is not a whole number")
        df[col] = numbers.astype("int64")
    df["field"] = df["field"].str.lower()
    df.insert(0, "dataset", "rublimp")
    df.insert(1, "language", "ru")
    for col in ("good_word", "bad_word", "subtype", "domain"):
        df[col] = df[col].astype("string")
    return finalize_pairs(df, str(folder))
