"""Chinese minimal-pair sets besides CLiMP: ZhoBLiMP (Liu et al. 2024) and SLING (Song et al. 2022)."""
from __future__ import annotations

import pandas as pd

from . import text_files
from .blimp import read_jsonl
from .schema import finalize_pairs
from .sources import DataSource, resolve

ZHOBLIMP = "zhoblimp/data/ZhoBLiMP"
SLING = "sling/SLING_Data"
SLING_MAIN_SIZE = 1000
EXPECTED_ZHOBLIMP = "JSON lines, one pair per line, with UID, phenomenon, pairID, sentence_good and sentence_bad"
EXPECTED_SLING = ("JSON lines, one pair per line, with phenomenon (or Phenomenon), pair_ID, sentence_good, "
                  "sentence_bad and optionally field")


def load_zhoblimp(source: DataSource | None = None) -> pd.DataFrame:
    """ZhoBLiMP: 118 paradigms x 300 pairs."""
    source = resolve(source)
    folder = source.path(ZHOBLIMP)
    text = text_files.field

    def record(row: dict) -> dict:
        return {"dataset": "zhoblimp", "language": "zh", "paradigm": text(row, "UID"),
                "phenomenon": text(row, "phenomenon"), "field": "syntax", "pair_id": int(row["pairID"]),
                "good": text(row, "sentence_good"), "bad": text(row, "sentence_bad")}

    records = [r for path in source.files(ZHOBLIMP, "*.jsonl")
               for r in text_files.convert(path, read_jsonl(path, EXPECTED_ZHOBLIMP), record, EXPECTED_ZHOBLIMP)]
    return finalize_pairs(pd.DataFrame.from_records(records), str(folder))


def load_sling(include_small: bool = False, drop_identical: bool = False,
               source: DataSource | None = None) -> pd.DataFrame:
    """SLING: the 40 main paradigms of 1,000 pairs; ``include_small`` adds the 14 of 40
    (Anaphor/reflexive_auto and reflexive_natural, from Yang 2025).

    ``drop_identical`` removes the pairs whose two sentences are the same string: 24 in the
    main set (16 in Aspect/zai_le, 4 each in Classifier-Noun/cl_adj_simple_noun and
    cl_simple_noun; ignoring whitespace and punctuation finds the same 24), none in the small
    files. Main set without them = 39,976, Hu et al. (2025)'s SLING count; with the small
    files it would be 40,536, and dropping duplicated pairs instead would give 39,994.
    """
    source = resolve(source)
    folder = source.path(SLING)
    records = []
    for path in source.files(SLING, "**/*.jsonl"):
        rows = read_jsonl(path, EXPECTED_SLING)
        main = len(rows) == SLING_MAIN_SIZE
        if not main and not include_small:
            continue
        subset = path.parent.relative_to(folder).as_posix()
        records += text_files.convert(path, rows, lambda row: {
            "dataset": "sling", "language": "zh", "paradigm": f"{subset}/{path.stem}",
            # the 14 small files spell the key "Phenomenon"
            "phenomenon": text_files.field(row, "phenomenon" if row.get("phenomenon") else "Phenomenon"),
            "field": text_files.field(row, "field") if "field" in row else "syntax",
            "pair_id": int(row["pair_ID"]), "good": text_files.field(row, "sentence_good"),
            "bad": text_files.field(row, "sentence_bad"), "main_set": main}, EXPECTED_SLING)
    df = finalize_pairs(pd.DataFrame.from_records(records), str(folder))
    return df[~df["identical"]].reset_index(drop=True) if drop_identical else df
