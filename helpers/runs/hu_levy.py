"""Hu & Levy (2023)'s tasks as jobs of a run (:class:`helpers.runs.run.Job`), for 03's model and its
cross-model tables (:meth:`helpers.runs.run.Run.files_each` loads each model in turn and finds the
files already stored, so a model scored before costs nothing)."""
from __future__ import annotations

from typing import Sequence

from ..data.selection import select
from ..methods.hu_levy import TASKS
from .run import Job


def hu_levy_jobs(sets: Sequence[str], prompts: Sequence[str], limit: int | None = None, shard: int | None = None,
                 shards: int = 1) -> list[Job]:
    """One job per stimulus set of ``sets``: its tasks with the prompt types ``prompts`` on its
    first ``limit`` items per paradigm, ``shard`` of ``shards`` (``shard`` None with ``shards`` > 1:
    each set's run read from its shards' files; :meth:`DatasetSelection.for_shards`). A task a
    model's kind cannot run (every one on a masked LM: their prompts are continued left to right)
    is left out by the run, with the reason."""
    unknown = [s for s in sets if s not in TASKS]
    if unknown:
        raise ValueError(f"unknown Hu & Levy stimulus sets {unknown}; choose from: {', '.join(TASKS)}")
    return [Job(TASKS[stimuli], select(stimuli, limit).for_shards(shard, shards), changes={"templates": list(prompts)})
            for stimuli in sets]
