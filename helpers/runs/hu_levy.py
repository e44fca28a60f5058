"""Hu & Levy (2023)'s tasks over several models, for the cross-model tables of 03: each model
is loaded in turn and released before the next; score files already in the store (same
configuration) are found and skipped, so a model scored before costs nothing."""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Sequence

from ..data.selection import select
from ..methods import applicable
from ..methods.hu_levy import TASKS
from ..runner import run_methods
from ..settings import Settings
from .model_list import each_model


def score_models(models, sets: Sequence[str], prompts: Sequence[str], limit: int | None = None, *, scorer=None,
                 shard: int | None = None, shards: int = 1, settings: Settings | None = None) -> list[Path]:
    """The score files of every task of every stimulus set in ``sets`` for every model of
    ``models`` (a name, a list or "a,b"), with the prompt types ``prompts``, under each scorer's
    settings (e.g. ``order_average``). ``scorer``, an already loaded scorer, serves its own
    model; others are loaded under ``settings`` (see :func:`helpers.engine.kinds.scorer_for`).
    A task the model's kind cannot run (every Hu & Levy task on a masked LM: their prompts are
    continued left to right) is left out with a warning that gives the reason. ``shard`` of
    ``shards`` scores that shard of each stimulus set (``shard`` None with ``shards`` > 1: reads
    each set's run from its shards' files; :meth:`DatasetSelection.for_shards`)."""
    unknown = [s for s in sets if s not in TASKS]
    if unknown:
        raise ValueError(f"unknown Hu & Levy stimulus sets {unknown}; choose from: {', '.join(TASKS)}")
    def score_sets(current) -> list[Path]:
        files: list[Path] = []
        for stimuli in sets:
            tasks, refused = applicable(TASKS[stimuli], current)
            if len(refused):
                warnings.warn(f"{current.loaded.name}: Hu & Levy's {', '.join(refused.method)} on {stimuli} left out: "
                              f"{refused.not_applicable.iloc[0]}", stacklevel=3)
            if tasks:
                files += run_methods(current, select(stimuli, limit).for_shards(shard, shards), tasks,
                                     {"templates": list(prompts)})
        return files

    return [f for files in each_model(models, score_sets, scorer=scorer, settings=settings) for f in files]
