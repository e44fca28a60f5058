"""When a score file is stale: computed under another numerics key (engine numerics version,
torch's and transformers' major.minor) than this process's, or from items of its dataset that
have changed since (:func:`changed_data`; :mod:`helpers.data.table_version`). A stale file of the asked
configuration is recomputed unless reuse is asked (``HELPERS_REUSE_STALE=1``); an analysis reads
it with a warning naming the reason."""
from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pyarrow as pa

from .data import DATASETS, processed_path
from .data.table_version import recorded
from .parquet_io import read_parquet, read_schema
from .provenance import REUSE_STALE_ENV, describe_numerics, numerics

META_KEY = b"helpers"
DAMAGED_FIX = "rerun the notebook that wrote it: the run moves it to set_aside/ and recomputes it"


def read_metadata(path: str | Path, verify: bool = False) -> dict:
    """A score file's configuration; ``verify`` reads the whole file, its page checksums verified."""
    meta = (read_parquet(path, DAMAGED_FIX).schema if verify else read_schema(path, DAMAGED_FIX)).metadata or {}
    if META_KEY not in meta:
        raise ValueError(f"{path} is not a score file of this project (no '{META_KEY.decode()}' metadata)")
    return json.loads(meta[META_KEY])


def changed_data(meta: dict) -> str | None:
    """Why a score file's items are not its dataset's processed table's any more (its
    ``data_sha256`` differs from the table's rows hash), naming the dataset; None when they are,
    or either is unknown."""
    scored, dataset = meta.get("data_sha256"), meta.get("dataset")
    if not scored or dataset not in DATASETS or not (path := processed_path(dataset)).is_file():
        return None
    now = recorded(path).get("rows_sha256")
    if now is None or now == scored:
        return None
    return (f"the items of {dataset} changed since they were scored ({path} rows sha256 {now[:12]}, the file's "
            f"{scored[:12]}): rerun notebook 01's preparation and the scoring notebooks")


def is_stale(meta: dict) -> bool:
    """Whether a score file was written under another numerics key than this process's, or its
    dataset's items changed since (:func:`changed_data`)."""
    return meta.get("numerics") != numerics() or changed_data(meta) is not None


def stale_reason(meta: dict) -> str:
    return changed_data(meta) or \
        f"computed under {describe_numerics(meta.get('numerics'))}; now {describe_numerics(numerics())}"


def reuse_stale_default() -> bool:
    return os.environ.get(REUSE_STALE_ENV, "").strip().lower() in ("1", "true", "yes")


def file_states(paths, config_hash: str, reuse_stale: bool) -> list[tuple[Path, dict | None, str, str]]:
    """Each existing file of ``paths`` as (path, metadata, state, why), read whole with its checksums
    verified: "usable" (this configuration, fresh, or stale with reuse asked: a warning says so),
    "stale" (this configuration, not reused), "other" (another configuration) or "unreadable"
    (truncated, damaged, not a score file: ``why`` says how, metadata None)."""
    out = []
    for path in (Path(p) for p in paths):
        if not path.is_file():
            continue
        try:
            meta = read_metadata(path, verify=True)
        except (ValueError, OSError, pa.ArrowInvalid) as err:
            err = err.__cause__ or err  # the reader's own error, not the DamagedFileError that names the file
            out.append((path, None, "unreadable", f"{type(err).__name__}: {err}"))
            continue
        if meta.get("config_hash") != config_hash:
            out.append((path, meta, "other", ""))
        elif not is_stale(meta):
            out.append((path, meta, "usable", ""))
        elif reuse_stale:
            warnings.warn(f"{path} is stale ({stale_reason(meta)}): reused as asked ({REUSE_STALE_ENV}=1 or "
                          "reuse_stale=True); unset it to recompute")
            out.append((path, meta, "usable", stale_reason(meta)))
        else:
            out.append((path, meta, "stale", stale_reason(meta)))
    return out
