"""JBLiMP (Someya & Oseki 2023): Japanese minimal pairs from theoretical-linguistics articles."""
from __future__ import annotations

import pandas as pd

from . import text_files
from .blimp import read_jsonl
from .schema import finalize_pairs
from .sources import DataSource, resolve

FILES = {"validated": "jblimp/data/validated/validated_minimal_pairs.jsonl",
         "raw": "jblimp/data/raw/raw_minimal_pairs.jsonl"}
EXPECTED = ("JSON lines, one pair per line, with ID, paradigm, phenomenon, phenomenon-2, type, good_sentence and "
            "bad_sentence (the raw file also someya_val and possibly_invalid)")


OPTIONAL = (str, type(None))  # a text field that may be null


def _read(source: DataSource, subset: str) -> list[dict]:
    path = source.path(FILES[subset])
    text = text_files.field

    def record(row: dict) -> dict:
        phenomenon = text(row, "phenomenon")
        out = {"dataset": "jblimp", "language": "ja", "paradigm": text(row, "paradigm"), "phenomenon": phenomenon,
               "field": "morphology" if phenomenon == "morphology" else "syntax", "pair_id": int(row["ID"]),
               "good": text(row, "good_sentence"), "bad": text(row, "bad_sentence"), "type": text(row, "type", OPTIONAL),
               "phenomenon_2": text(row, "phenomenon-2", OPTIONAL)}
        if subset == "raw":
            out.update(someya_val=bool(row["someya_val"]), possibly_invalid=bool(row["possibly_invalid"]))
        return out

    return text_files.convert(path, read_jsonl(path, EXPECTED), record, EXPECTED)


def load(subset: str = "validated", source: DataSource | None = None) -> pd.DataFrame:
    """JBLiMP: ``subset="validated"`` is the paper's benchmark (331 pairs, 37 paradigms, 11
    phenomena), ``"raw"`` the 367 pairs before human validation, with ``validated`` marking the
    331 kept and the release's ``someya_val`` and ``possibly_invalid`` flags. ``paradigm`` and
    ``phenomenon`` are JBLiMP's; ``field`` is "morphology" for the morphology phenomenon and
    "syntax" otherwise; kept: ``type`` (acceptability, interpretation, coreference, lexical)
    and ``phenomenon_2`` (the release's phenomenon-2, mostly empty)."""
    if subset not in FILES:
        raise ValueError(f"JBLiMP subset must be 'validated' (the paper's 331 pairs) or 'raw' "
                         f"(the 367 before validation), got {subset!r}")
    source = resolve(source)
    df = pd.DataFrame.from_records(_read(source, subset))
    if subset == "raw":
        kept = {r["pair_id"] for r in _read(source, "validated")}
        df["validated"] = df["pair_id"].isin(kept)
    for col in ("type", "phenomenon_2"):
        df[col] = df[col].astype("string")
    return finalize_pairs(df, str(source.path(FILES[subset])))
