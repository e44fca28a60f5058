"""A dataset selection: which dataset, with which options, how many items, and the frame
itself, travelling together so that score files record what was really scored."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from . import DATASETS, load, load_processed, recorded_options, variant_for
from .table_version import rows_sha256

if TYPE_CHECKING:
    from .shards import Shard

# Hu et al. (2025) Table 1: each row's registered dataset (a variant where the paper's count
# differs from the full set) and the count it must have. See the readers for each rule.
HU2025 = {
    "BLiMP": ("blimp_hu2025", 66_993), "SCaMP-P": ("scamp_plausible", 67_000),
    "SCaMP-I": ("scamp_implausible", 67_000), "SyntaxGym": ("syntaxgym", 1_018), "ZhoBLiMP": ("zhoblimp", 35_400),
    "SLING": ("sling_hu2025", 39_976), "CoLA": ("cola", 8_551), "LI": ("li_hu2025", 1_883),
}


def first_per_paradigm(frame: pd.DataFrame, limit: int | None) -> pd.DataFrame:
    """The first ``limit`` items of every paradigm (of the whole table without paradigms)."""
    if limit is None:
        return frame.reset_index(drop=True)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive number of items per paradigm or None, got {limit!r}")
    if "paradigm" not in frame:
        return frame.head(limit).reset_index(drop=True)
    return frame.groupby("paradigm", sort=False, group_keys=False).head(limit).reset_index(drop=True)


@dataclass(frozen=True, eq=False)
class DatasetSelection:
    """``frame`` holds the first ``limit`` items per paradigm of dataset ``name`` read with ``options``."""

    name: str
    frame: pd.DataFrame
    options: dict = field(default_factory=dict)
    limit: int | None = None
    shard: Shard | None = None  # the part of a sharded run the frame holds (helpers.data.shards); None: unsharded
    paradigms: tuple[str, ...] | None = None  # the paradigms kept by :meth:`pick_paradigms` (None: all)
    table_sha256: str | None = None  # the rows hash of the table the items come from (helpers.data.table_version)
    kept_languages: tuple[str, ...] | None = None  # the languages kept by helpers.data.picking (None: all)
    draw_seed: int | None = None  # the seed that drew a number of languages or paradigms (helpers.data.picking)

    def __post_init__(self):
        if self.name not in DATASETS:
            raise KeyError(f"unknown dataset {self.name!r}; choose from: {', '.join(DATASETS)}")
        if len(self.frame) == 0:
            raise ValueError(f"the selection of {self.name} holds no items")
        names = set(self.frame["dataset"].astype(str)) if "dataset" in self.frame else {self.name}
        if names != {self.name}:
            raise ValueError(f"the frame holds dataset(s) {sorted(names)}, not {self.name!r}: "
                             "build selections with helpers.data.selection.select")
        if self.limit is not None:
            sizes = self.frame.groupby("paradigm").size() if "paradigm" in self.frame else pd.Series([len(self.frame)])
            if int(sizes.max()) > self.limit:
                raise ValueError(f"limit {self.limit} but the frame has {int(sizes.max())} items in one paradigm")

    @property
    def language(self) -> str:
        """The one language of the items, or the dataset's ("mul" for MultiBLiMP) when they hold several."""
        found = self.languages
        return found[0] if len(found) == 1 else DATASETS[self.name].language

    @property
    def languages(self) -> tuple[str, ...]:
        """Every language of the items (the ``language`` column), sorted."""
        if "language" in self.frame:
            return tuple(sorted(self.frame["language"].astype(str).unique()))
        return (DATASETS[self.name].language,)

    @property
    def kind(self) -> str:
        return DATASETS[self.name].kind

    def items(self) -> list[dict]:
        return self.frame.to_dict("records")

    def config(self) -> dict:
        """What a score file records about the data (with the table's rows hash where known: a
        changed item makes them stale, :func:`helpers.score_files.changed_data`)."""
        return {"dataset": self.name, "dataset_options": dict(self.options), "limit": self.limit,
                "n_pairs": self.shard.total if self.shard else len(self.frame),
                **({"paradigms": list(self.paradigms)} if self.paradigms is not None else {}),
                **({"languages": list(self.kept_languages)} if self.kept_languages is not None else {}),
                **({"draw_seed": self.draw_seed} if self.draw_seed is not None else {}),
                **({"data_sha256": self.table_sha256} if self.table_sha256 else {})}

    def pick_paradigms(self, paradigms: int | str | list[str] | None, seed: int = 0) -> "DatasetSelection":
        """These items of some paradigms only: None keeps all; a number n keeps n paradigms drawn
        with ``seed`` (a sorted draw from the sorted names, the same on every machine); a name or a
        list of names keeps those. The kept names are recorded in the score files' configuration."""
        if paradigms is None:
            return self
        if "paradigm" not in self.frame:
            raise ValueError(f"{self.name} has no paradigms to pick from: pass paradigms=None")
        names = sorted(self.frame["paradigm"].astype(str).unique())
        if isinstance(paradigms, (int, np.integer)) and not isinstance(paradigms, bool):
            if not 1 <= paradigms <= len(names):
                raise ValueError(f"paradigms={paradigms}: {self.name} has {len(names)} paradigms here; "
                                 f"pass a number from 1 to {len(names)}, a list of names, or None for all")
            kept = sorted(np.random.default_rng(seed).choice(names, int(paradigms), replace=False).tolist())
        else:
            kept = [paradigms] if isinstance(paradigms, str) else list(paradigms)
            unknown = [p for p in kept if p not in names]
            if unknown or not kept:
                raise ValueError(f"paradigms {unknown or kept} are not paradigms of {self.name}; "
                                 f"choose from: {', '.join(names)}")
            kept = sorted(set(kept))
        frame = self.frame[self.frame["paradigm"].astype(str).isin(kept)].reset_index(drop=True)
        return replace(self, frame=frame, paradigms=tuple(kept))

    def for_shards(self, shard: int | None, shards: int = 1) -> "DatasetSelection":
        """What a notebook's ``shard`` and ``shards`` ask of this run: itself when ``shards`` is 1;
        shard ``shard`` (1 to ``shards``, by paradigm then position) to score, its score files
        holding the whole run's configuration; or, with ``shard`` None, the whole run read from its
        shards' score files (nothing is scored; :func:`helpers.runner.run_methods` names any shard
        not scored yet). :mod:`helpers.data.shards` decides all of it."""
        from .shards import shard_selection

        return shard_selection(self, shard, shards)

    def __len__(self) -> int:
        return len(self.frame)


def select(name: str, limit: int | None = None, *, prepared_only: bool = False, **options) -> DatasetSelection:
    """Dataset ``name``, its first ``limit`` items per paradigm: from data/processed (built
    there if missing, unless ``prepared_only``: then a DataNotPreparedError says how to
    prepare it), or read from the mirror when ``options`` are given. Options that make a
    registered variant are refused (select the variant's name: its own scores folder)."""
    variant = variant_for(name, options)
    if variant:
        raise ValueError(f"{name} with {options} is the dataset {variant!r}: select {variant!r}, "
                         f"so that its scores stay apart from those of {name!r}")
    if options:
        frame, recorded = load(name, **options), recorded_options(name, options)
    else:
        frame = load_processed(name, prepared_only=prepared_only)
        recorded = dict(frame.attrs.get("dataset_options", {}))
    digest = frame.attrs.get("rows_sha256") or rows_sha256(frame)
    return DatasetSelection(name, first_per_paradigm(frame, limit), recorded, limit, table_sha256=digest)
