"""JBLiMP (Someya & Oseki 2023): Japanese minimal pairs from theoretical-linguistics articles."""
from __future__ import annotations

import pandas as pd

from .blimp import read_jsonl
from .schema import DataFormatError, finalize_pairs
from .sources import DataSource, resolve

FILES = {"validated": "jblimp/data/validated/validated_minimal_pairs.jsonl",
         "raw": "jblimp/data/raw/raw_minimal_pairs.jsonl"}


def _read(source: DataSource, subset: str) -> list[dict]:
    path = source.path(FILES[subset])
    records = []
    for line_no, row in read_jsonl(path):
        try:
            phenomenon = row["phenomenon"]
            record = {"dataset": "jblimp", "language": "ja", "paradigm": row["paradigm"],
                      "phenomenon": phenomenon,
                      "field": "morphology" if phenomenon == "morphology" else "syntax",
                      "pair_id": int(row["ID"]), "good": row["good_sentence"], "bad": row["bad_sentence"],
                      "type": row["type"], "phenomenon_2": row["phenomenon-2"]}
            if subset == "raw":
                record.update(someya_val=bool(row["someya_val"]), possibly_invalid=bool(row["possibly_invalid"]))
        except (KeyError, ValueError, TypeError) as err:
            raise DataFormatError(f"{path}, line {line_no}: missing or bad field {err}") from None
        records.append(record)
    return records


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
