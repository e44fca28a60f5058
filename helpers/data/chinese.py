"""Chinese minimal-pair sets besides CLiMP: ZhoBLiMP (Liu et al. 2024) and SLING (Song et al. 2022)."""
from __future__ import annotations

import pandas as pd

from .blimp import read_jsonl
from .schema import DataFormatError, finalize_pairs
from .sources import DataSource, resolve

ZHOBLIMP = "zhoblimp/data/ZhoBLiMP"
SLING = "sling/SLING_Data"
SLING_MAIN_SIZE = 1000


def load_zhoblimp(source: DataSource | None = None) -> pd.DataFrame:
    """ZhoBLiMP: 118 paradigms x 300 pairs."""
    source = resolve(source)
    folder = source.path(ZHOBLIMP)
    records = []
    for path in source.files(ZHOBLIMP, "*.jsonl"):
        for line_no, row in read_jsonl(path):
            try:
                records.append({"dataset": "zhoblimp", "language": "zh", "paradigm": row["UID"],
                                "phenomenon": row["phenomenon"], "field": "syntax", "pair_id": int(row["pairID"]),
                                "good": row["sentence_good"], "bad": row["sentence_bad"]})
            except (KeyError, ValueError, TypeError) as err:
                raise DataFormatError(f"{path}, line {line_no}: missing or bad field {err}") from None
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
        rows = read_jsonl(path)
        main = len(rows) == SLING_MAIN_SIZE
        if not main and not include_small:
            continue
        subset = path.parent.relative_to(folder).as_posix()
        for line_no, row in rows:
            try:
                records.append({"dataset": "sling", "language": "zh", "paradigm": f"{subset}/{path.stem}",
                                # the 14 small files spell the key "Phenomenon"
                                "phenomenon": row.get("phenomenon") or row["Phenomenon"],
                                "field": row.get("field", "syntax"),
                                "pair_id": int(row["pair_ID"]), "good": row["sentence_good"],
                                "bad": row["sentence_bad"], "main_set": main})
            except (KeyError, ValueError, TypeError) as err:
                raise DataFormatError(f"{path}, line {line_no}: missing or bad field {err}") from None
    df = finalize_pairs(pd.DataFrame.from_records(records), str(folder))
    return df[~df["identical"]].reset_index(drop=True) if drop_identical else df
