"""What a score file records besides its scores: the item columns its rows keep, the run's
configuration (the model's provenance, the start convention, the data, the methods' version,
the context, the few-shot draw and the run's own entries), how the engine ran (recorded beside
the configuration, not in it) and, for a run read from its shards, which shards have no file
yet. The runner asks for these and writes what the store gives back; nothing else builds them."""
from __future__ import annotations

import hashlib
from typing import Sequence

import pandas as pd

from .data.selection import DatasetSelection
from .data.shards import file_tag
from .methods.base import METHODS_VERSION, Method, Runtime
from .store import ScoreStore

INFO_COLUMNS = ["dataset", "paradigm", "phenomenon", "field", "pair_id", "item_id", "word_shuffle",
                "lexically_identical", "attractor", "human_agreement", "identical", "rating_good", "rating_bad",
                "rating_diff", "prefix", "continuation", "good_continuation", "bad_continuation", "category",
                "good_human_score", "bad_human_score", "label", "suite", "item", "circuit"]


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


def info_frame(selection: DatasetSelection, extra_columns: Sequence[str], contexts: Sequence[str] | None,
               context_column: str) -> pd.DataFrame:
    """The item columns every score row keeps (:data:`INFO_COLUMNS` the selection has, then
    ``extra_columns``), with the per-item ``contexts`` (None: one context for all) in ``context_column``."""
    missing = [c for c in extra_columns if c not in selection.frame.columns]
    if missing:
        raise KeyError(f"extra columns {missing} are not in the {selection.name} selection's frame")
    keep = [c for c in INFO_COLUMNS if c in selection.frame.columns] + \
        [c for c in extra_columns if c not in INFO_COLUMNS]
    info = selection.frame[keep].reset_index(drop=True)
    return info if contexts is None else info.assign(**{context_column: list(contexts)})


def run_configuration(scorer, selection: DatasetSelection, runtime: Runtime, context_config,
                      entries: dict) -> dict:
    """The configuration shared by a run's files (each adds its method and template): the model's
    provenance, its start convention, the data, the methods' version, the context, the few-shot draw,
    ``order_average`` (None; Hu & Levy's methods set theirs) and the run's own ``entries``."""
    record = scorer.record()
    return {**scorer.loaded.provenance(), "start_token": record["start_token"],
            "start_convention": record["start_convention"], **selection.config(), "methods_version": METHODS_VERSION,
            "context": context_config, **runtime.fewshot.config(), "order_average": None, **entries}


def engine_record(scorer, unknown) -> dict:
    """How the engine ran and the share of the data's characters its tokenizer made unknown:
    recorded beside the configuration, not in it (results agree across share modes and budgets)."""
    record = scorer.record()
    return {"share": record["share"], "token_budget": record["token_budget"],
            "unknown_tokens": unknown.meta() if unknown else None}


def unscored_shards(store: ScoreStore, selection: DatasetSelection, model: str, methods: list[Method], template,
                    configs: dict, tag: str | None) -> dict[str, list[int]]:
    """For each method's file stem, the shards of the run ``selection`` reads from its shards'
    files that have no finished file."""
    out = {}
    for m in methods:
        missing = [part.index for part in selection.shard.each() if not store.find(
            selection.name, model, m.name, template, configs[m.name], file_tag(tag, part))]
        if missing:
            out[store.stem(m.name, template, tag)] = missing
    return out
