"""CLiMP (Xiang et al. 2021): 16 paradigms x 1,000 Chinese minimal pairs, 9 phenomena."""
from __future__ import annotations

import csv

import pandas as pd

from .schema import DataFormatError, finalize_pairs
from .sources import DataSource, resolve

FOLDER = "climp/CLiMP_corpus"
HEADERLESS = "ba_construction_1000.csv"


def _rows(path) -> list[tuple[int, str, str, str, int]]:
    """(line, phenomenon, paradigm, sentence, label) of one file."""
    out = []
    with open(path, encoding="utf-8", newline="") as f:
        if path.name == HEADERLESS:
            # no header and no label columns: bare sentences, good and bad alternating
            for line_no, line in enumerate(f, 1):
                if line.strip():
                    out.append((line_no, "ba_construction", "ba_construction", line.strip(), 1 - len(out) % 2))
            return out
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or len(header) != 5:
            raise DataFormatError(f"{path}, line 1: expected the header ',0,1,2,3', got {header}")
        for line_no, row in enumerate(reader, 2):
            if len(row) != 5:
                raise DataFormatError(f"{path}, line {line_no}: expected 5 columns, got {len(row)}: {row}")
            try:
                out.append((line_no, row[1], row[2], row[3].strip(), int(row[4])))
            except ValueError:
                raise DataFormatError(f"{path}, line {line_no}: label {row[4]!r} is not 0 or 1") from None
    return out


def load(add_period: bool = True, source: DataSource | None = None) -> pd.DataFrame:
    """The canonical CLiMP table; pairs are consecutive rows (good, then bad).

    ``add_period`` (default, as Ide et al. 2024) appends "。" to every sentence; the files
    have no final punctuation.
    """
    source = resolve(source)
    folder = source.path(FOLDER)
    records = []
    for path in source.files(FOLDER, "*_1000.csv"):
        rows = _rows(path)
        if len(rows) % 2:
            raise DataFormatError(f"{path}: odd number of sentences ({len(rows)}); pairs need two rows each")
        for k in range(0, len(rows), 2):
            (line_g, phen, par, good, label_g), (line_b, _, par_b, bad, label_b) = rows[k], rows[k + 1]
            if (label_g, label_b) != (1, 0) or par != par_b:
                raise DataFormatError(f"{path}, lines {line_g}-{line_b}: expected a good (1) then a bad (0) row "
                                      f"of one paradigm, got labels {label_g}, {label_b}")
            records.append({"dataset": "climp", "language": "zh", "paradigm": par, "phenomenon": phen,
                            "field": "syntax", "pair_id": k // 2, "good": good, "bad": bad})
    df = pd.DataFrame.from_records(records)
    if add_period:
        for col in ("good", "bad"):
            df[col] = [s if s.endswith("。") else s + "。" for s in df[col]]
    return finalize_pairs(df, str(folder))
