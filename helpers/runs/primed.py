"""Every judgment method under priming prefixes (Sinha et al. 2023): the input a run scores.

A prefix table (:mod:`helpers.data.priming`: one row per target pair, prefix type, target length
and draw, with the prefix text) is joined to the dataset selection; each row is scored with
its prefix as the context of every method's input. All rows of a run go to the engine at
once, so a prefix shared by the two sentences of a pair, by a method's templates or options,
and by longer prefixes that extend it runs once. Score files are tagged "primed"; each row
keeps its prefix text (column ``prefix``) and the prefix's type, lengths, draw and seed.
"""
from __future__ import annotations

from dataclasses import replace

import pandas as pd

from ..data.selection import DatasetSelection
from ..data.shards import derived
from ..runner import RunSetup

TAG = "primed"
# the columns each kind of prefix table (helpers.data.priming) carries besides paradigm, pair_id and prefix
KINDS = {"grid": ["prefix_type", "domain", "acceptability", "target_length", "actual_length", "n_sentences",
                  "draw", "seed", "capped"],
         "single": ["target_phenomenon", "source_phenomenon", "acceptability", "n_sentences", "actual_length",
                    "draw", "seed", "capped"]}
PRIMING_COLUMNS = KINDS["grid"]


def kind_of(prefixes: pd.DataFrame) -> str:
    """"grid" (build_prefixes) or "single" (single_phenomenon_prefixes)."""
    for kind, columns in KINDS.items():
        if set(columns + ["paradigm", "pair_id", "prefix"]) <= set(prefixes.columns):
            return kind
    raise ValueError("the prefix table lacks the columns of helpers.data.priming.build_prefixes or "
                     "single_phenomenon_prefixes: build it with helpers.data.priming")


def primed_selection(selection: DatasetSelection, prefixes: pd.DataFrame) -> DatasetSelection:
    """One row per (target pair, prefix row): the pair's fields beside its prefix. For a part of a
    sharded run of the targets (``selection.shard``), the prefix table is the whole run's, and the
    result is that part of the whole run's primed rows (:func:`helpers.data.shards.derived`)."""
    if selection.shard is not None:
        unsharded = selection if selection.shard.whole is None else replace(selection, frame=selection.shard.whole)
        whole = primed_selection(replace(unsharded, shard=None), prefixes)
        return derived(whole, selection, ["paradigm", "pair_id"], "prefix table")
    columns = KINDS[kind_of(prefixes)]
    targets = selection.frame.drop(columns=[c for c in ["prefix", *columns] if c in selection.frame])
    frame = prefixes.merge(targets, on=["paradigm", "pair_id"], how="inner", validate="many_to_one")
    if len(frame) != len(prefixes):
        raise ValueError(f"{len(prefixes) - len(frame)} prefix rows name pairs that are not in the {selection.name} "
                         "selection: build the prefixes from the same selection")
    return DatasetSelection(selection.name, frame.reset_index(drop=True), selection.options, None,
                            table_sha256=selection.table_sha256)


def priming_configuration(selection: DatasetSelection, prefixes: pd.DataFrame) -> dict:
    """What the score files record about the prefixes (each row keeps its own values too)."""
    kind = kind_of(prefixes)
    groups = ("prefix_type", "target_length") if kind == "grid" else ("source_phenomenon", "n_sentences")
    return {"limit": selection.limit, "priming": {
        "kind": kind, **{g: sorted(prefixes[g].unique().tolist()) for g in groups},
        "draws": int(prefixes["draw"].nunique()), "seed": sorted(int(x) for x in prefixes["seed"].unique()),
        "pairs": int(prefixes[["paradigm", "pair_id"]].drop_duplicates().shape[0])}}


def primed_input(selection: DatasetSelection, prefixes: pd.DataFrame) -> tuple[DatasetSelection, RunSetup]:
    """What :meth:`helpers.runs.run.Run.files` scores to put ``selection``'s pairs under every
    prefix of ``prefixes``: the primed rows and their setup (each row's prefix the context of every
    method's input; files tagged "primed_<kind>"). A shard of the targets
    (``selection.for_shards(k, n)``) with the whole run's prefix table scores its pairs' rows bit
    for bit as the unsharded run does; ``selection.for_shards(None, n)`` reads the run from its
    shards' files."""
    primed, kind = primed_selection(selection, prefixes), kind_of(prefixes)
    planned = primed.shard.whole if primed.shard else None
    whole = None if planned is None else list(planned["prefix"])  # a shard plans the whole run
    return primed, RunSetup(context=list(primed.frame["prefix"]), context_column="prefix", extra_columns=KINDS[kind],
                            configuration=priming_configuration(selection, prefixes), tag=f"{TAG}_{kind}",
                            whole_context=whole)
