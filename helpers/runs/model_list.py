"""Runs of the runner for each model of a list (03's Part 1, few-shot and Direct runs when
``model`` is a list): each model is loaded, runs everything asked of it and is released before
the next; score files already in the store (same configuration) are found, not recomputed."""
from __future__ import annotations

import gc
from pathlib import Path
from typing import Callable, Mapping, Sequence

import pandas as pd
import torch

from ..data.selection import DatasetSelection
from ..engine.kinds import scorer_for
from ..methods import applicable
from ..methods.applicability import NOT_APPLICABLE_COLUMNS
from ..runner import run_methods
from ..selection_parser import parse_selection
from ..settings import Settings


def _serves(scorer, name) -> bool:
    """Whether the loaded ``scorer`` is model ``name`` (its registry name, Hugging Face id or folder)."""
    if scorer is None:
        return False
    spec = scorer.loaded.spec
    if name in (scorer.loaded.name, spec.hf_id):
        return True
    return spec.local and Path(str(name)).expanduser().resolve() == Path(spec.hf_id).expanduser().resolve()


def each_model(models, work: Callable, *, scorer=None, settings: Settings | None = None) -> list:
    """``work(scorer)`` for every model of ``models`` (a name, a list or "a,b"), one at a time:
    each is loaded under ``settings`` (:func:`helpers.engine.kinds.scorer_for`) and released
    before the next is loaded (``work`` must keep no reference to it); ``scorer``, an already
    loaded scorer, serves its own model and is kept. Returns what ``work`` returned, per model."""
    out = []
    for name in parse_selection(models, what="model"):
        own = _serves(scorer, name)
        current = scorer if own else scorer_for(name, settings)
        out.append(work(current))
        if not own:
            del current
            gc.collect()
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
    return out


def run_each(models, selection: DatasetSelection, runs: Sequence[tuple[Sequence[str], Mapping]], *, scorer=None,
             settings: Settings | None = None) -> list[tuple[list[Path], pd.DataFrame]]:
    """For every model of ``models`` (a name, a list or "a,b"), every run of ``runs``
    ((methods, options): :func:`helpers.runner.run_methods`' arguments) on ``selection``.
    Returns, per run, the score files of all models (model by model) and the methods a model's
    kind cannot run (model, method, not_applicable: the reason), which are left out. ``scorer``,
    an already loaded scorer, serves its own model; the others are loaded under ``settings``
    (see :func:`helpers.engine.kinds.scorer_for`)."""
    out = [([], []) for _ in runs]

    def work(current) -> None:
        for (files, refused), (methods, options) in zip(out, runs):
            if not methods:
                continue
            runnable, left_out = applicable(methods, current)
            if len(left_out):
                refused.append(left_out)
            if runnable:
                files += run_methods(current, selection, runnable, options)

    each_model(models, work, scorer=scorer, settings=settings)
    return [(files, pd.concat(refused, ignore_index=True) if refused else pd.DataFrame(columns=NOT_APPLICABLE_COLUMNS))
            for files, refused in out]
