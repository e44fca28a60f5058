"""The score files of a store folder: when one is stale, and which are finished.

A file is *stale* when it was computed under another numerics key (engine numerics version,
torch's and transformers' major.minor) than this process's, or from items of its dataset that
have changed since (:func:`changed_data`; :mod:`helpers.data.table_version`). A stale file of the
asked configuration is recomputed unless reuse is asked (``HELPERS_REUSE_STALE=1``); an analysis
reads it with a warning naming the reason.

Which files of a configuration are finished: the one file of a configuration, a complete set of a
run's shard files, the shards not scored yet, and where a new file goes (a file that cannot be used
moved aside first). :class:`helpers.store.ScoreStore` names the folder, the file stem and the
configuration's hash; each function here names the candidate files, reads them once
(:func:`file_states`) and decides."""
from __future__ import annotations

import json
import os
import time
import warnings
from functools import lru_cache
from pathlib import Path

import pyarrow as pa

from .data import DATASETS, processed_path
from .data.shards import Shard, group_runs
from .data.table_version import recorded
from .parquet_io import read_parquet, read_schema
from .provenance import REUSE_STALE_ENV, describe_numerics, numerics
from .store_format import upgraded

META_KEY = b"helpers"
DAMAGED_FIX = "rerun the notebook that wrote it: the run moves it to set_aside/ and recomputes it"


def read_metadata(path: str | Path, verify: bool = False) -> dict:
    """A score file's configuration, as today's code reads a file of any earlier store format
    (:func:`helpers.store_format.upgraded`); ``verify`` reads the whole file, its page checksums verified."""
    meta = (read_parquet(path, DAMAGED_FIX).schema if verify else read_schema(path, DAMAGED_FIX)).metadata or {}
    if META_KEY not in meta:
        raise ValueError(f"{path} is not a score file of this project (no '{META_KEY.decode()}' metadata)")
    return as_today(json.loads(meta[META_KEY]))


def as_today(meta: dict) -> dict:
    """A score file's metadata as today's code reads it (:func:`helpers.store_format.upgraded`), given
    its dataset's processed table's rows hash now."""
    return upgraded(meta, rows_now(meta.get("dataset")))


def rows_now(dataset) -> str | None:
    """The rows hash the processed table of ``dataset`` records now (None: unknown)."""
    if dataset not in DATASETS or not (path := processed_path(dataset)).is_file():
        return None
    return _recorded_rows(str(path), path.stat().st_mtime_ns)


@lru_cache(maxsize=64)
def _recorded_rows(path: str, modified: int) -> str | None:
    return recorded(Path(path)).get("rows_sha256")


def changed_data(meta: dict) -> str | None:
    """Why a score file's items are not its dataset's processed table's any more (its
    ``data_sha256`` differs from the table's rows hash), naming the dataset; None when they are,
    or either is unknown."""
    scored, dataset = meta.get("data_sha256"), meta.get("dataset")
    now = rows_now(dataset) if scored else None
    if now is None or now == scored:
        return None
    path = processed_path(dataset)
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

SET_ASIDE = "set_aside"  # a folder's files that could not be used: kept, never read


def _candidates(folder: Path, stem: str, config_hash: str) -> list[Path]:
    """A configuration's own file names: the plain one, then the one written beside a taken name."""
    return [folder / f"{stem}.parquet", folder / f"{stem}__{config_hash}.parquet"]


def finished_file(folder: Path, stem: str, config_hash: str, reuse_stale: bool) -> Path | None:
    """The finished file ``stem`` (or ``stem__<hash>``) of exactly this configuration, if any."""
    usable = [path for path, _, state, _ in file_states(_candidates(folder, stem, config_hash), config_hash,
                                                          reuse_stale) if state == "usable"]
    return usable[0] if usable else None


def finished_run(folder: Path, stem: str, config_hash: str, shard: Shard | None, reuse_stale: bool
                 ) -> tuple[list[Path], list[int]]:
    """The finished files of exactly this configuration, and the shards not scored yet: the file
    of ``shard`` when it is one to score; else the run's own file or, failing that, a complete
    set of its shard files (in shard order); a run read from its shards' files (``shard`` with
    index None) that has neither names the shards with no finished file."""
    if shard is not None and shard.scored:
        own = _candidates(folder, f"{stem}__{shard.tag}", config_hash)
        parts = []
    else:
        own, parts = _candidates(folder, stem, config_hash), sorted(folder.glob(f"{stem}__shard*.parquet"))
    usable = [(path, meta) for path, meta, state, _ in file_states(own + parts, config_hash, reuse_stale)
              if state == "usable"]
    plain = [path for path, _ in usable if path in own]
    if plain:
        return plain[:1], []
    metas = [(path, meta) for path, meta in usable if meta.get("shard")]
    runs, _ = group_runs(metas)
    if runs:
        return list(runs[0][0]), []
    if shard is None or shard.scored:
        return [], []
    have = {meta["shard"]["index"] for _, meta in metas if meta["shard"]["count"] == shard.count}
    return [], [index for index in range(1, shard.count + 1) if index not in have]


def writable_path(folder: Path, stem: str, config_hash: str, reuse_stale: bool) -> Path:
    """Where this configuration's file goes: the plain name when free or holding this
    configuration, else the one beside it; a file there that cannot be read, or holds this
    configuration stale, is moved to the folder's set_aside/ first (kept, never read)."""
    plain, alongside = _candidates(folder, stem, config_hash)
    if not plain.exists():
        return plain
    states = {path: (state, why) for path, _, state, why in file_states([plain, alongside], config_hash, reuse_stale)}
    for candidate in (plain, alongside):
        if states.get(candidate, ("",))[0] == "usable":
            return candidate
    for candidate in (plain, alongside):
        state, why = states.get(candidate, ("", ""))
        if state in ("unreadable", "stale"):
            reason = (f"is not a readable score file ({why}); truncated or damaged" if state == "unreadable"
                      else f"is stale ({why})")
            dest = candidate.parent / SET_ASIDE / f"{candidate.stem}__{state}-{time.time_ns()}{candidate.suffix}"
            dest.parent.mkdir(exist_ok=True)
            os.replace(candidate, dest)
            warnings.warn(f"{candidate} {reason}: moved to {dest} (kept, never read) and recomputed")
            return candidate
    warnings.warn(f"{plain} holds scores of a different configuration; writing {alongside.name} alongside")
    return alongside
