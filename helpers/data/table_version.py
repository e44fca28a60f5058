"""What a processed table is: the sha256 of its rows and the version of the reader that made it.

``data/processed/<name>.parquet`` records both (in its pandas attrs, beside the options it was
read with). A reader fix bumps its module's ``READER_VERSION`` (default "1"): a table made by an
older reader is prepared again. Score files record the table's hash in their configuration
(``data_sha256``, :meth:`helpers.data.selection.DatasetSelection.config`), so scores of items that
have changed since are stale, named by their dataset, as scores of an older engine are
(:mod:`helpers.score_files`).
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq


def reader_version(loader) -> str:
    """The version of a dataset's reader: ``READER_VERSION`` of its ``loader``'s module ("1" if unset)."""
    module = sys.modules[getattr(loader, "func", loader).__module__]
    return str(getattr(module, "READER_VERSION", "1"))


def rows_sha256(frame: pd.DataFrame) -> str:
    """The sha256 of a table's columns, their types and every row's values, in order."""
    digest = hashlib.sha256(json.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()]).encode())
    try:
        rows = pd.util.hash_pandas_object(frame, index=False)
    except TypeError:  # cells holding lists or dicts (regions): hashed as their text
        rows = pd.util.hash_pandas_object(frame.map(repr), index=False)
    digest.update(rows.to_numpy().tobytes())
    return digest.hexdigest()


def stamp(loader, frame: pd.DataFrame) -> dict:
    """What a processed table read by ``loader`` records about its content."""
    return {"rows_sha256": rows_sha256(frame), "reader_version": reader_version(loader)}


def recorded(path: Path) -> dict:
    """The pandas attrs a processed table's file records (its options and stamp), read from its
    metadata only ({} for a file without them)."""
    meta = pq.read_schema(path).metadata or {}
    try:  # pandas keeps a frame's attrs under PANDAS_ATTRS (older versions: in the pandas entry)
        if b"PANDAS_ATTRS" in meta:
            return json.loads(meta[b"PANDAS_ATTRS"]) or {}
        return json.loads(meta.get(b"pandas", b"{}")).get("attrs", {}) or {}
    except ValueError:
        return {}
