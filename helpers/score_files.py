"""Which score files of a configuration are finished, in a store folder: the one file of a
configuration, a complete set of a run's shard files, the shards not scored yet, and where a new
file goes (a file that cannot be used moved aside first). :class:`helpers.store.ScoreStore`
names the folder, the file stem and the configuration's hash; each function here names the
candidate files, reads them once (:func:`helpers.staleness.file_states`) and decides."""
from __future__ import annotations

import os
import time
import warnings
from pathlib import Path

from .data.shards import Shard, group_runs
from .staleness import file_states

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
