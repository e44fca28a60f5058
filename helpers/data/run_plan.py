"""What a run of methods takes from its selection, worked out once before anything is scored:
the items and their contexts, what the requests are planned over (a shard's whole run, so that
its scores are bit for bit the unsharded run's), the item columns every score row keeps, and
what the score files record about the data and the context. The runner reads a
:class:`RunPlan` and nothing else of the selection."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from .shards import Shard, planned_items

# the item columns every score row keeps (those the selection has)
INFO_COLUMNS = ["dataset", "language", "paradigm", "phenomenon", "field", "pair_id", "item_id", "word_shuffle",
                "lexically_identical", "attractor", "human_agreement", "identical", "rating_good", "rating_bad",
                "rating_diff", "prefix", "continuation", "good_continuation", "bad_continuation", "category",
                "good_human_score", "bad_human_score", "label", "suite", "item", "circuit"]


def sides_of(frame: pd.DataFrame) -> tuple[str, ...]:
    """The sentences an item holds: a pair (good, bad), or one sentence."""
    if {"good", "bad"} <= set(frame.columns):
        return ("good", "bad")
    if "sentence" in frame.columns:
        return ("sentence",)
    return ("item",)


def contexts_for(context: str | Sequence[str], n: int) -> tuple[list[str], object]:
    """One context per item, and how the configuration records it (the text, or a hash of
    the per-item texts, which the score rows keep in their ``context`` column)."""
    if isinstance(context, str):
        return [context] * n, context
    contexts = [str(c) for c in context]
    if len(contexts) != n:
        raise ValueError(f"{len(contexts)} contexts for {n} items: give one context, or one per item")
    digest = hashlib.sha256("\x00".join(contexts).encode()).hexdigest()[:16]
    return contexts, {"per_item": True, "sha256": digest}


@dataclass(frozen=True)
class RunPlan:
    """A run's items as the runner scores and stores them. ``planned_items`` and
    ``planned_contexts`` are what the requests are planned over: the whole run's for a shard
    planned over it (then ``positions`` are its items among them), else the items themselves
    (``positions`` None). A run that reads its shards' files (``scores`` False) scores nothing."""

    name: str  # the dataset
    language: str
    sides: tuple[str, ...]
    shard: Shard | None
    planned_items: list[dict]
    planned_contexts: list[str]
    positions: np.ndarray | None
    info: pd.DataFrame  # the item columns every score row keeps, with per-item contexts
    config: dict  # what a score file records about the data and the context

    @property
    def scores(self) -> bool:
        """Whether this run scores its items (else it reads every shard's files)."""
        return self.shard is None or self.shard.scored


def plan_run(selection, context: str | Sequence[str] = "", context_column: str = "context",
             extra_columns: Sequence[str] = (), whole_context: Sequence[str] | None = None,
             whole_run_for: str | None = None) -> RunPlan:
    """The :class:`RunPlan` of ``selection`` (a :class:`~helpers.data.selection.DatasetSelection`)
    with ``context`` before every item (one text, or one per item, kept in ``context_column``),
    ``extra_columns`` of its frame kept in the score rows and, for a shard with per-item
    contexts, ``whole_context``: the whole run's. ``whole_run_for`` names what is drawn from the
    whole run's items (few-shot examples): a shard that cannot be planned over it is an error."""
    frame, items = selection.frame, selection.items()
    contexts, context_config = contexts_for(context, len(items))
    plan_items, plan_contexts, positions = planned_items(selection, context, items, contexts, whole_context)
    if positions is not None and not isinstance(context, str):  # the whole run's contexts: its config hash
        context_config = contexts_for(plan_contexts, len(plan_contexts))[1]
    shard = selection.shard
    if whole_run_for and shard is not None and shard.scored and positions is None:
        raise ValueError(f"{whole_run_for} are drawn from the whole run's pairs, but shard {shard.tag} with one "
                         "context per item is planned alone; run them unsharded here")
    missing = [c for c in extra_columns if c not in frame.columns]
    if missing:
        raise KeyError(f"extra columns {missing} are not in the {selection.name} selection's frame")
    keep = [c for c in INFO_COLUMNS if c in frame.columns] + [c for c in extra_columns if c not in INFO_COLUMNS]
    info = frame[keep].reset_index(drop=True)
    if not isinstance(context, str):
        info = info.assign(**{context_column: contexts})
    return RunPlan(selection.name, selection.language, sides_of(frame), shard, plan_items, plan_contexts, positions,
                   info, {**selection.config(), "context": context_config})
