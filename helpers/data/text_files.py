"""One way to read a data file's text, lines, CSV rows and JSON records, with one kind of error:
every problem (an empty file, another encoding than UTF-8, a malformed CSV or JSON line, a
missing column, a value of the wrong kind) is a :class:`DataFormatError` that names the file,
the line where there is one, what the reader expected and how to fix it, never a traceback from
inside csv, json or pandas. A UTF-8 byte-order mark (as spreadsheet programs write) is read as
UTF-8; UTF-16 and UTF-32 files are refused with the way to convert them.

The readers pass ``expected``, a few words on the format (e.g. "JSON lines with UID, pairID,
sentence_good and sentence_bad"), which the fix repeats.
"""
from __future__ import annotations

import codecs
import csv
import io
import json
import re
from pathlib import Path
from typing import Callable, Iterable, TypeVar

import pandas as pd

from .schema import DataFormatError

T, R = TypeVar("T"), TypeVar("R")
_WIDE = [(codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
         (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16")]


RESTORE = "restore the file from its origin (data/sources.yaml lists it), or save your own file in that form"


def problem(path: Path | str, what: str, expected: str, line: int | None = None,
            fix: str = RESTORE) -> DataFormatError:
    """The error for ``what`` is wrong in ``path`` (at ``line``), with the fix."""
    where = f"{path}, line {line}" if line else f"{path}"
    what = re.sub(r"\s*\n\s*", " ", what)  # one line, whatever the library's message
    return DataFormatError(f"{where}: {what}. To fix: the reader expects {expected}; {fix}")


def text(path: Path, expected: str, fix: str = RESTORE) -> str:
    """The file's text, strictly UTF-8 (a UTF-8 byte-order mark is dropped); ``fix`` ends every error."""
    raw = Path(path).read_bytes()
    for bom, name in _WIDE:
        if raw.startswith(bom):
            raise problem(path, f"the file is {name} (it starts with a {name} byte-order mark), not UTF-8",
                          f"{expected}, encoded as UTF-8 (e.g. iconv -f {name} -t UTF-8)", fix=fix)
    raw = raw.removeprefix(codecs.BOM_UTF8)
    if not raw.strip():
        raise problem(path, "the file is empty", expected, fix=fix)
    if b"\x00" in raw:
        line = raw[:raw.index(b"\x00")].count(b"\n") + 1
        raise problem(path, "the file holds NUL bytes (a binary file, or UTF-16 without a byte-order mark)",
                      f"{expected}, encoded as UTF-8", line, fix)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        raise problem(path, f"not UTF-8: byte 0x{raw[err.start]:02x} cannot be decoded (Latin-1 or "
                            "Windows-1252 text?)", f"{expected}, encoded as UTF-8", line, fix) from None


def lines(path: Path, expected: str) -> list[tuple[int, str]]:
    """(line number, line without its line break) of every line, blank ones included."""
    parts = text(path, expected).split("\n")
    if parts[-1] == "":
        parts.pop()  # the final line break ends the last line
    return [(k, line.removesuffix("\r")) for k, line in enumerate(parts, 1)]


def jsonl(path: Path, expected: str) -> list[tuple[int, dict]]:
    """(line number, object) of every non-blank line: each must be one JSON object."""
    rows = []
    for line_no, line in lines(path, expected):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise problem(path, f"not valid JSON ({err.msg})", expected, line_no) from None
        if not isinstance(row, dict):
            raise problem(path, f"expected one JSON object per line, got {type(row).__name__}", expected, line_no)
        rows.append((line_no, row))
    return rows


def json_document(path: Path, expected: str):
    """The file's one JSON document."""
    body = text(path, expected)
    try:
        return json.loads(body)
    except json.JSONDecodeError as err:
        raise problem(path, f"not valid JSON ({err.msg}, column {err.colno})", expected, err.lineno) from None


def csv_rows(path: Path, expected: str, delimiter: str = ",",
             repair: Callable[[str], str] | None = None) -> list[tuple[int, list[str]]]:
    """(line number, fields) of every non-empty CSV row (a quoted field may span lines); ``repair``
    mends a release's known damage in the text before it is parsed (the reader documents it)."""
    body = text(path, expected)
    reader = csv.reader(io.StringIO(repair(body) if repair else body, newline=""), delimiter=delimiter)
    rows = []
    try:
        for row in reader:
            if row:
                rows.append((reader.line_num, row))
    except csv.Error as err:
        raise problem(path, f"not valid CSV ({err})", expected, reader.line_num + 1) from None
    return rows


def csv_records(path: Path, required: Iterable[str], expected: str, delimiter: str = ",",
                repair: Callable[[str], str] | None = None) -> tuple[list[str], list[tuple[int, dict]]]:
    """The header and (line number, {column: value}) of every row: the ``required`` columns must be
    in the header, and every row must have as many fields as the header."""
    rows = csv_rows(path, expected, delimiter, repair)
    header = rows[0][1] if rows else []
    missing = [c for c in required if c not in header]
    if missing:
        raise problem(path, f"missing columns {missing} (the header has {header})", expected, 1)
    if len(rows) == 1:
        raise problem(path, "the file has a header but no rows", expected)
    records = []
    for line_no, row in rows[1:]:
        if len(row) != len(header):
            raise problem(path, f"expected {len(header)} fields as in the header, got {len(row)}", expected, line_no)
        records.append((line_no, dict(zip(header, row))))
    return header, records


def csv_frame(path: Path, required: Iterable[str], expected: str, delimiter: str = ",",
              repair: Callable[[str], str] | None = None) -> pd.DataFrame:
    """A CSV file as a frame of strings indexed by line number, checked as :func:`csv_records` checks it."""
    header, records = csv_records(path, required, expected, delimiter, repair)
    if len(set(header)) != len(header):
        twice = sorted({c for c in header if header.count(c) > 1})
        raise problem(path, f"the header names the columns {twice} more than once", expected, 1)
    return pd.DataFrame([row for _, row in records], columns=header, index=[n for n, _ in records], dtype=object)


def convert(path: Path, rows: Iterable[tuple[int, T]], build: Callable[[T], R], expected: str) -> list[R]:
    """``build(row)`` for every (line number, row); a missing field or a value of the wrong kind
    is an error naming the line (``line`` 0: the file as a whole)."""
    out = []
    for line_no, row in rows:
        try:
            out.append(build(row))
        except DataFormatError as err:
            raise problem(path, str(err), expected, line_no) from None
        except KeyError as err:
            raise problem(path, f"no field {err}", expected, line_no) from None
        except (ValueError, TypeError, AttributeError) as err:
            raise problem(path, f"a value of the wrong kind ({type(err).__name__}: {err})", expected,
                          line_no) from None
    return out


def field(row: dict, name: str, kind: type | tuple[type, ...] = str):
    """``row[name]``, which must be a ``kind`` (a TypeError that :func:`convert` reports)."""
    value = row[name]
    if not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise TypeError(f"{name} is {value!r}, not {names}")
    return value
