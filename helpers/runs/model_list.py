"""The model loop of a run (:meth:`helpers.runs.run.Run.files_each`): each model of a list is
loaded, runs everything asked of it and is released before the next. It is the one place a
run loads and releases models."""
from __future__ import annotations

import gc
from typing import Callable

import torch

from .deferred import deferred_scorer
from ..settings.lists import parse_list
from ..settings import Settings


def each_model(models, work: Callable, *, scorer=None, settings: Settings | None = None) -> list:
    """``work(scorer)`` for every model of ``models`` (a name, a list or "a,b"), one at a time:
    each is loaded under ``settings`` when first asked to compute
    (:func:`helpers.runs.deferred.deferred_scorer`: not at all where its files are stored) and released
    before the next is loaded (``work`` must keep no reference to it); ``scorer``, an already
    loaded scorer, serves its own model and is kept. Returns what ``work`` returned, per model."""
    out = []
    for name in parse_list(models, what="model"):
        own = scorer is not None and scorer.serves(name)
        current = scorer if own else deferred_scorer(name, settings)
        out.append(work(current))
        if not own:
            del current
            gc.collect()
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
    return out
