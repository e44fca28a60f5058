"""The jobs of grammar prompting as a study (Scheinberg et al., Findings of ACL 2025): the same
methods on the same pairs plain, after each paradigm's explanation and, given a control file, after
an irrelevant explanation; A/B prompting in the paper's three orders (forward, reversed, seeded:
``ab_orders="three"``), the other methods as they are. One pass over the model scores them all
(:meth:`helpers.runs.run.Run.files_each`); :mod:`helpers.analysis.grammar_prompting` compares them."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..data.selection import DatasetSelection
from ..methods.prompting import AB_SIDE_SCORES
from .explanations import CONTROL_TAG, explained_input
from .run import Job

STUDY_METHODS = ("ab", "yesno", "intemplate_lp")  # the paper's A/B readout, with Yes/No and in-template LP
STUDY_ORDERS = {"ab_orders": "three"}


def study_jobs(selection: DatasetSelection, explanations: str | Path, control: str | Path | None = None,
               methods: Sequence[str] = STUDY_METHODS) -> dict[str, list[Job]]:
    """condition ("plain", "explained", "control") -> its jobs on ``selection``: the A/B methods
    among ``methods`` in the three orders, the others unchanged (their plain files are the ones
    02 and 03 write, found in the store)."""
    setups = {"plain": None, "explained": explained_input(selection, explanations)[1]}
    if control:
        setups["control"] = explained_input(selection, control, tag=CONTROL_TAG)[1]
    ab = [m for m in methods if m in AB_SIDE_SCORES]
    rest = [m for m in methods if m not in AB_SIDE_SCORES]
    return {condition: [job for job in (Job(ab, selection, setup, STUDY_ORDERS) if ab else None,
                                        Job(rest, selection, setup) if rest else None) if job is not None]
            for condition, setup in setups.items()}


def files_by_condition(study: dict[str, list[Job]], done: Sequence[Sequence[Path]]) -> dict[str, list[Path]]:
    """Each condition's score files, from what :meth:`Run.files_each` gave ``study``'s jobs (in order)."""
    answers = iter(done)
    return {condition: [f for _ in jobs for f in next(answers)] for condition, jobs in study.items()}


__all__ = ["STUDY_METHODS", "STUDY_ORDERS", "files_by_condition", "study_jobs"]
