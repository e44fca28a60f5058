"""06's and 07's scoring for every model of a list (their cross-model sections): each model is
loaded in turn (:func:`helpers.runs.model_list.each_model`), runs what its kind can run and is
released; score files already in the store (same configuration) are found, not recomputed.

06: every model under its own prefixes (``prefixes_for(scorer)``), since a prefix's length is
counted in the model's tokens and capped at its positions (Sinha et al. grow each model's
prefixes with its own tokenizer). 07: the five sentence metrics (one engine pass) and the extra
single-sentence methods on every dataset, in-template methods on English datasets only, as the
notebook scores its model.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping, Sequence

import pandas as pd

from ..analysis.separability import METRICS
from ..data.selection import DatasetSelection
from ..methods import applicable
from ..methods.applicability import NOT_APPLICABLE_COLUMNS
from ..runner import run_methods
from ..settings import Settings
from .model_list import each_model
from .primed import score_primed

SENTENCE_METRICS = list(METRICS)  # 07's metrics: one sentence-readout pass gives them all


def _refused(frames: list[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=NOT_APPLICABLE_COLUMNS)


def score_primed_each(models, selection: DatasetSelection, prefixes_for: Callable, methods: Sequence[str],
                      options: Settings | Mapping, *, scorer=None, settings: Settings | None = None
                      ) -> tuple[list[Path], pd.DataFrame]:
    """Every model of ``models`` scored on ``selection`` under the prefix table
    ``prefixes_for(scorer)`` builds for it (:func:`helpers.runs.primed.score_primed`). Returns the
    score files of all models and the methods a model's kind cannot run (model, method,
    not_applicable), which are left out. ``scorer``, already loaded, serves its own model."""
    files, refused = [], []

    def work(current) -> None:
        runnable, left_out = applicable(list(methods), current)
        refused.append(left_out)
        if runnable:
            files.extend(score_primed(current, selection, prefixes_for(current), runnable, options))

    each_model(models, work, scorer=scorer, settings=settings)
    return files, _refused(refused)


def score_sentences(scorer, selections: Mapping[str, DatasetSelection], extras: Sequence[str],
                    options: Settings | Mapping) -> list[Path]:
    """07's scoring of one model: on every selection the sentence metrics and ``extras``
    (in-template methods on English selections only)."""
    files = []
    for selection in selections.values():
        language_extras = [m for m in extras if selection.language == "en" or not m.startswith("intemplate")]
        files += run_methods(scorer, selection, SENTENCE_METRICS + language_extras, options)
    return files


def score_sentences_each(models, selections: Mapping[str, DatasetSelection], extras: Sequence[str],
                         options: Settings | Mapping, *, scorer=None, settings: Settings | None = None
                      ) -> tuple[list[Path], pd.DataFrame]:
    """:func:`score_sentences` for every model of ``models``, each with the ``extras`` its kind
    can run; the score files of all models and the refused methods (model, method, not_applicable)."""
    files, refused = [], []

    def work(current) -> None:
        runnable, left_out = applicable(list(extras), current) if extras else ([], pd.DataFrame())
        refused.append(left_out)
        files.extend(score_sentences(current, selections, runnable, options))

    each_model(models, work, scorer=scorer, settings=settings)
    return files, _refused(refused)
