"""A shard of a dataset run: one value that slices a selection, names its score files, and
puts shard files back together as one run. Nothing outside this module knows how.

A run's items are ordered by paradigm (in order of first appearance), then by position, and
cut into ``count`` contiguous parts of near-equal size (sizes differ by at most one), so a
paradigm stays in one shard unless it is cut at a boundary. A shard job plans the whole run
(:attr:`Shard.whole`, :func:`planned_items`) and asks the engine for its own requests only
(:meth:`helpers.engine.interface.Scorer.score`'s ``only``), so its scores are bit for bit the
unsharded run's. Shard ``index`` (1 to ``count``) keeps its items in the run's own order. A
shard's score files carry the run's configuration (the same config hash as the unsharded run)
and, in their metadata, which positions of the run they hold; :func:`merge` puts the rows of a
complete set back into the run's order. A :class:`Shard` with ``index`` None is the whole run
read from its ``count`` shards' files (an analysis: nothing is scored).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np
import pandas as pd

SHARD_SUFFIX = re.compile(r"__shard\d+of\d+")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` of a run of ``total`` items: the items at ``ranges``
    ([start, stop) positions of the run's frame), planned over ``whole`` (the run's items).
    ``index`` None: the whole run, read from its ``count`` shards' score files."""

    index: int | None
    count: int
    total: int
    ranges: tuple[tuple[int, int], ...]
    whole: pd.DataFrame | None = field(default=None, compare=False, repr=False)

    @property
    def scored(self) -> bool:
        """Whether this run scores a shard (else it reads every shard's files)."""
        return self.index is not None

    @property
    def tag(self) -> str | None:
        """The part of a file name that says which shard it holds (``shard2of3``); None for the
        whole run read from its shards."""
        return f"shard{self.index}of{self.count}" if self.scored else None

    def each(self) -> list["Shard"]:
        """The ``count`` shards of this run, for naming their files."""
        return [Shard(i, self.count, self.total, ()) for i in range(1, self.count + 1)]

    def positions(self) -> np.ndarray:
        return np.concatenate([np.arange(a, b) for a, b in self.ranges]) if self.ranges else np.array([], int)

    def meta(self) -> dict:
        return {"index": self.index, "count": self.count, "total": self.total,
                "ranges": [list(r) for r in self.ranges]}

    @classmethod
    def from_meta(cls, meta: dict) -> "Shard":
        return cls(int(meta["index"]), int(meta["count"]), int(meta["total"]),
                   tuple((int(a), int(b)) for a, b in meta["ranges"]))


def check(index, count) -> tuple[int | None, int]:
    """``(index, count)`` as ints, or a clear error: count >= 1, and index None or 1..count."""
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"shards must be a whole number >= 1, got {count!r}")
    if count == 1:
        if index not in (None, 1):
            raise ValueError(f"shard {index!r} of 1: with shards = 1 leave shard as None")
        return None, 1
    if index is None:
        return None, int(count)
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 1 <= index <= count:
        raise ValueError(f"shard must be a number from 1 to {count} (which of the {count} shards to run), "
                         f"or None (read all {count} shards' files as one run), got {index!r}")
    return int(index), int(count)


def split(frame: pd.DataFrame, count: int) -> list[np.ndarray]:
    """The positions of each of ``count`` shards of ``frame`` (each sorted): by paradigm in order
    of first appearance, then by position, cut into contiguous near-equal parts."""
    n = len(frame)
    if count > n:
        raise ValueError(f"{count} shards of {n} items: ask for at most {n} shards")
    if "paradigm" in frame:
        first = pd.factorize(frame["paradigm"].astype(str))[0]
        order = np.lexsort((np.arange(n), first))  # by paradigm, then by position
    else:
        order = np.arange(n)
    return [np.sort(part) for part in np.array_split(order, count)]


def ranges(positions: np.ndarray) -> tuple[tuple[int, int], ...]:
    """Sorted positions as [start, stop) runs (a contiguous shard is one range)."""
    out: list[list[int]] = []
    for p in map(int, positions):
        if out and out[-1][1] == p:
            out[-1][1] = p + 1
        else:
            out.append([p, p + 1])
    return tuple((a, b) for a, b in out)


def shard_selection(selection, index, count):
    """What a notebook's ``shard`` and ``shards`` ask of a
    :class:`~helpers.data.selection.DatasetSelection`: itself when ``count`` is 1; shard ``index``
    of ``count`` to score (its score files carry the whole run's configuration); or, with
    ``index`` None, the whole run read from its ``count`` shards' files (nothing is scored)."""
    index, count = check(index, count)
    if count == 1:
        return selection
    if selection.shard is not None:
        raise ValueError(f"the selection is already {_named(selection.shard)}: shard the whole run")
    parts = split(selection.frame, count)  # a clear error for more shards than items
    n = len(selection.frame)
    if index is None:
        return replace(selection, shard=Shard(None, count, n, ((0, n),)))
    positions = parts[index - 1]
    shard = Shard(index, count, n, ranges(positions), whole=selection.frame)
    return replace(selection, frame=selection.frame.iloc[positions].reset_index(drop=True), shard=shard)


def derived(whole, items, keys: Sequence[str], what: str = "table"):
    """The part of ``whole`` (a selection built from the unsharded run of ``items``, one row or
    more per item, e.g. a pair under each priming prefix) that ``items``' shard asks for: the
    rows whose ``keys`` are ``items``' own, as a shard of ``whole``, or ``whole`` read from its
    shards' files. ``what`` names the table that made ``whole`` in the error for one that does
    not cover the whole run."""
    shard = items.shard
    n = len(whole.frame)
    if not shard.scored:
        return replace(whole, shard=Shard(None, shard.count, n, ((0, n),)))
    covered = len(whole.frame[list(keys)].drop_duplicates())
    if covered != len(shard.whole):
        raise ValueError(f"the {what} covers {covered} of the {len(shard.whole)} items of the whole run: a shard is "
                         f"scored under the whole run's {what} (build it from the unsharded selection)")
    mine = pd.MultiIndex.from_frame(items.frame[list(keys)].astype(str))
    positions = np.flatnonzero(pd.MultiIndex.from_frame(whole.frame[list(keys)].astype(str)).isin(mine))
    part = Shard(shard.index, shard.count, n, ranges(positions), whole=whole.frame)
    return replace(whole, frame=whole.frame.iloc[positions].reset_index(drop=True), shard=part)


def _named(shard: Shard) -> str:
    return f"shard {shard.index} of {shard.count}" if shard.scored else f"the run read from {shard.count} shards"


class MissingShardsError(LookupError):
    """A run read from its shards' files (the analysis of a sharded run) finds shards not scored yet."""


def missing_message(dataset: str, model: str, count: int, missing: dict[str, list[int]]) -> str:
    """The error of a run read from ``count`` shards when some are missing (file stem -> shard numbers)."""
    indices = sorted({i for found in missing.values() for i in found})
    files = "; ".join(f"{stem}: shards {', '.join(map(str, found))}" for stem, found in missing.items())
    return (f"{dataset} x {model} is read from its {count} shards' score files, but shard(s) "
            f"{', '.join(map(str, indices))} of {count} are not scored yet ({files}): run the notebook with "
            f"shard={indices[0]} (and each other missing one), shards={count} first; a sweep with --shards {count} "
            "runs every shard before this analysis")


def file_tag(tag: str | None, shard: Shard | None) -> str | None:
    """A file's (or a notebook's tables') tag with the shard's part added (none for a run read
    from its shards)."""
    parts = [t for t in (tag, shard.tag if shard else None) if t]
    return "__".join(parts) or None


def run_key(path, meta: dict) -> tuple:
    """What the shard files of one run share: folder, file stem without the shard part, config
    hash and shard count."""
    stem = SHARD_SUFFIX.sub("", path.name.removesuffix(".parquet"))
    return str(path.parent), stem, meta["config_hash"], int(meta["shard"]["count"])


def complete(shards: list[Shard]) -> bool:
    """Whether the shards are exactly 1..count of one run, covering every position once."""
    if not shards:
        return False
    count, total = shards[0].count, shards[0].total
    if sorted(s.index for s in shards) != list(range(1, count + 1)):
        return False
    positions = np.sort(np.concatenate([s.positions() for s in shards]))
    return len(positions) == total and np.array_equal(positions, np.arange(total))


def merge(parts: list[tuple[pd.DataFrame, Shard]]) -> pd.DataFrame:
    """The rows of shard frames in the run's order (a complete set gives the unsharded frame)."""
    frame = pd.concat([df for df, _ in parts], ignore_index=True)
    positions = np.concatenate([s.positions() for _, s in parts])
    if len(positions) != len(frame):
        raise ValueError(f"shard files hold {len(frame)} rows but their metadata names {len(positions)} positions")
    return frame.iloc[np.argsort(positions, kind="stable")].reset_index(drop=True)


def group_runs(metas: list[tuple]) -> tuple[list[tuple], list[str]]:
    """Score files as runs: ``[(paths, meta)]`` where a file of no shard is a run of one path and
    the files of a complete set of shards are one run (its meta counting the whole run's
    pairs); and a note for each incomplete set, which is left out."""
    runs, sets = [], {}
    for path, meta in metas:
        if meta.get("shard"):
            sets.setdefault(run_key(path, meta), []).append((path, meta))
        else:
            runs.append(((path,), meta))
    notes = []
    for (folder, stem, _, count), members in sets.items():
        shards = [Shard.from_meta(m["shard"]) for _, m in members]
        if complete(shards):
            meta = {**members[0][1], "n_pairs": shards[0].total}
            runs.append((tuple(p for p, _ in sorted(members, key=lambda pm: pm[1]["shard"]["index"])), meta))
        else:
            have = sorted(s.index for s in shards)
            notes.append(f"left out {stem} in {folder}: shards {have} of {count} are there; run the others "
                         f"(python -m helpers sweep ... --shards {count}) to read them as one run")
    return runs, notes


def planned_items(selection, context, items: list[dict], contexts: list[str],
                  whole_context: Sequence[str] | None = None) -> tuple[list[dict], list[str], np.ndarray | None]:
    """The items a run's requests are planned over, their contexts, and where ``items`` (of the
    :class:`~helpers.data.selection.DatasetSelection` ``selection``) are among them: a shard's
    whole run (its one context for all, or ``whole_context``, the whole run's per-item contexts),
    so that its batches, and so its scores bit for bit, are those of the unsharded run; else
    ``items`` (a shard with per-item contexts and no ``whole_context``)."""
    shard = selection.shard
    if shard is None or shard.whole is None:
        return items, contexts, None
    whole, positions = shard.whole.to_dict("records"), shard.positions()
    if isinstance(context, str):
        return whole, [context] * len(whole), positions
    if whole_context is None:
        return items, contexts, None
    planned = [str(c) for c in whole_context]
    if len(planned) != len(whole) or [planned[p] for p in positions] != contexts:
        raise ValueError(f"whole_context holds {len(planned)} contexts for the {len(whole)} items of the whole run, "
                         f"and must hold the shard's own contexts at its positions: give the whole run's contexts")
    return whole, planned, positions
