"""CLiMP (Xiang et al. 2021): 16 paradigms x 1,000 Chinese minimal pairs, 9 phenomena."""
from __future__ import annotations

import pandas as pd

from . import text_files
from .schema import finalize_pairs
from .sources import DataSource, resolve

FOLDER = "climp/CLiMP_corpus"
HEADERLESS = "ba_construction_1000.csv"
EXPECTED = ("a CSV file with the header ',0,1,2,3' and rows of index, phenomenon, paradigm, sentence and label "
            "(1 acceptable, 0 not), a good row then a bad row of each pair")
EXPECTED_BARE = "one sentence per line, a good then a bad sentence of each pair"


def _rows(path) -> list[tuple[int, str, str, str, int]]:
    """(line, phenomenon, paradigm, sentence, label) of one file."""
    if path.name == HEADERLESS:
        # no header and no label columns: bare sentences, good and bad alternating
        sentences = [(n, line.strip()) for n, line in text_files.lines(path, EXPECTED_BARE) if line.strip()]
        return [(n, "ba_construction", "ba_construction", s, 1 - k % 2) for k, (n, s) in enumerate(sentences)]
    rows = text_files.csv_rows(path, EXPECTED)
    header = rows[0][1]
    if len(header) != 5:
        raise text_files.problem(path, f"expected the header ',0,1,2,3', got {header}", EXPECTED, 1)
    if len(rows) == 1:
        raise text_files.problem(path, "the file has a header but no rows", EXPECTED)
    out = []
    for line_no, row in rows[1:]:
        if len(row) != 5:
            raise text_files.problem(path, f"expected 5 columns, got {len(row)}: {row}", EXPECTED, line_no)
        if row[4] not in ("0", "1"):
            raise text_files.problem(path, f"label {row[4]!r} is not 0 or 1", EXPECTED, line_no)
        out.append((line_no, row[1], row[2], row[3].strip(), int(row[4])))
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
            raise text_files.problem(path, f"odd number of sentences ({len(rows)}); pairs need two rows each", EXPECTED)
        for k in range(0, len(rows), 2):
            (line_g, phen, par, good, label_g), (line_b, _, par_b, bad, label_b) = rows[k], rows[k + 1]
            if (label_g, label_b) != (1, 0) or par != par_b:
                raise text_files.problem(path, f"expected a good (1) then a bad (0) row of one paradigm, got labels "
                                              f"{label_g}, {label_b} on lines {line_g}-{line_b}", EXPECTED, line_g)
            records.append({"dataset": "climp", "language": "zh", "paradigm": par, "phenomenon": phen,
                            "field": "syntax", "pair_id": k // 2, "good": good, "bad": bad})
    df = pd.DataFrame.from_records(records)
    if add_period:
        for col in ("good", "bad"):
            df[col] = [s if s.endswith("。") else s + "。" for s in df[col]]
    return finalize_pairs(df, str(folder))
