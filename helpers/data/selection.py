"""A dataset selection: which dataset, with which options, how many items, and the frame
itself, travelling together so that score files record what was really scored."""
from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from . import DATASETS, load, load_processed


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
        if "language" in self.frame:
            return str(self.frame["language"].iloc[0])
        return DATASETS[self.name].language

    @property
    def kind(self) -> str:
        return DATASETS[self.name].kind

    def items(self) -> list[dict]:
        return self.frame.to_dict("records")

    def config(self) -> dict:
        """What a score file records about the data."""
        return {"dataset": self.name, "dataset_options": dict(self.options), "limit": self.limit,
                "n_pairs": len(self.frame)}

    def __len__(self) -> int:
        return len(self.frame)


def select(name: str, limit: int | None = None, **options) -> DatasetSelection:
    """Dataset ``name`` (data/processed, or read from the mirror when ``options`` differ from
    the defaults), its first ``limit`` items per paradigm."""
    frame = load(name, **options) if options else load_processed(name)
    return DatasetSelection(name, first_per_paradigm(frame, limit), options, limit)
