"""07's scoring as jobs of a run (:class:`helpers.runs.run.Job`), for its model and every model of
a list (:meth:`helpers.runs.run.Run.files_each` loads each in turn): the five sentence metrics
(one engine pass) and the extra single-sentence methods on every dataset, in-template methods on
English datasets only. (06's models each score under their own prefixes: a job whose input is a
function of the scorer, :func:`helpers.runs.primed.primed_input`.)
"""
from __future__ import annotations

from typing import Mapping, Sequence

from ..analysis.separability import METRICS
from ..data.selection import DatasetSelection
from .run import Job

SENTENCE_METRICS = list(METRICS)  # 07's metrics: one sentence-readout pass gives them all


def sentence_jobs(selections: Mapping[str, DatasetSelection], extras: Sequence[str]) -> list[Job]:
    """07's jobs: on every selection the sentence metrics and ``extras`` (in-template methods on
    English selections only); a method a model's kind cannot run is left out by the run."""
    return [Job(SENTENCE_METRICS + [m for m in extras if selection.language == "en" or not m.startswith("intemplate")],
                selection) for selection in selections.values()]
