"""Parquet files that a reader can trust: written with a CRC32 checksum on every data page and
atomically (:mod:`helpers.files`: in full or not at all; a full disk's message gives the file's
exact size), read whole with the checksums verified, so that a truncated or bit-flipped file is a
one-line :class:`helpers.files.DamagedFileError` instead of wrong numbers."""
from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .files import atomic_path, damaged


def write_parquet(table: pa.Table, target: str | os.PathLike) -> Path:
    """Write ``table`` to ``target`` atomically, each data page with its checksum."""
    with atomic_path(target, needs=lambda: file_size(table)) as tmp:
        pq.write_table(table, tmp, write_page_checksum=True)
    return Path(target)


def file_size(table: pa.Table) -> int:
    """The bytes :func:`write_parquet` writes for ``table`` (written to memory to count them)."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, write_page_checksum=True)
    return sink.getvalue().size


def read_parquet(path: str | os.PathLike, fix: str) -> pa.Table:
    """The whole table of ``path``, every page checksum verified (files written without checksums
    are read unchecked); a damaged file is a DamagedFileError that ends with ``fix``."""
    try:
        return pq.read_table(path, page_checksum_verification=True)
    except (OSError, pa.ArrowInvalid) as err:
        raise damaged(path, err, fix) from err


def read_schema(path: str | os.PathLike, fix: str) -> pa.Schema:
    """The schema (and metadata) of ``path``; an unreadable footer is a DamagedFileError."""
    try:
        return pq.read_schema(path)
    except (OSError, pa.ArrowInvalid) as err:
        raise damaged(path, err, fix) from err
