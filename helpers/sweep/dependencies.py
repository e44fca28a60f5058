"""Which jobs of a sweep wait for which: an analysis notebook (04, 05) reads the scores that the
scoring notebooks (02, 03) stored for its model and dataset, so it runs after their jobs; the job
of a sharded notebook that reads its shards' files as one run (03, 06, 07: ``GATHERED``) runs after
every shard job of its notebook, model and dataset.

``ANALYSES`` (:mod:`.jobs`) names, per analysis notebook, the parameters that list the methods
it reads (the job's value, else the notebook's default);
:func:`helpers.reporting.outputs.producer` names the notebook that scores each method. An
analysis job waits on the jobs of the same sweep that run those notebooks on its model and
dataset, every shard of a sharded run. One whose scoring is not in
the sweep waits on nothing: its scores may be stored already, and if they are not, it stops
with an error naming what to run (:class:`helpers.reporting.outputs.MissingScoresError`).
"""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path
from typing import Callable

import papermill as pm

from ..reporting.outputs import PROMPTING, producer
from ..settings.lists import parse_list
from .jobs import ANALYSES, Job
from .model_kernel import group_key
from .revisions import analysed_models

EVERY_PRODUCER = frozenset(producer(m) for m in ("lp", *PROMPTING))  # "all" methods: every scoring notebook


@lru_cache(maxsize=64)
def _defaults(notebook: str, modified: int) -> dict:
    out = {}
    for name, info in pm.inspect_notebook(notebook).items():
        try:
            out[name] = ast.literal_eval(info["default"])
        except (ValueError, SyntaxError):
            pass  # an expression, not a literal: the job must give it
    return out


def notebook_defaults(notebook: Path) -> dict:
    """The values of the notebook's parameters cell that are Python literals."""
    return _defaults(str(notebook), notebook.stat().st_mtime_ns)


def producers(job: Job) -> frozenset[str]:
    """The scoring notebooks (file stems) whose stored scores ``job`` reads; none for a job that
    runs no analysis notebook."""
    names = ANALYSES.get(job.notebook.stem)
    if names is None:
        return frozenset()
    defaults = notebook_defaults(job.notebook)
    found = set()
    for name in names:
        value = job.parameters.get(name, defaults.get(name, "all"))
        if isinstance(value, str) and value.strip().lower() == "all":
            return EVERY_PRODUCER
        found |= {producer(m) for m in parse_list(value, what="method", none=("none",))}
    return frozenset(found)


def _models(job: Job) -> set[str]:
    return analysed_models(job.model, job.parameters)


def waits_on(jobs: list[Job]) -> dict[Path, list[Job]]:
    """For each job (by its executed notebook's path), the jobs of ``jobs`` whose scores it
    reads, in the sweep's order: the scoring jobs of its producers on the same dataset and a
    model it analyses, every shard; for a job reading a sharded run as one (``Job.gathers``),
    the shard jobs of its notebook, model and dataset. Empty for a job that reads nothing."""
    out = {}
    for job in jobs:
        if job.gathers > 1:
            out[job.output] = [s for s in jobs if s.notebook == job.notebook and s.model == job.model
                               and s.dataset == job.dataset and s.shards == job.gathers]
            continue
        reads = producers(job)
        out[job.output] = [s for s in jobs if s is not job and s.notebook.stem in reads and s.gathers == 1
                           and s.dataset == job.dataset and _models(s) & _models(job)] if reads else []
    return out


def by_model(jobs: list[Job]) -> list[Job]:
    """``jobs`` with those that share a model's kernel (:func:`.model_kernel.group_key`) one after
    another, each group where its first job was, otherwise in their order."""
    keys = [group_key(j) for j in jobs]
    first = {k: i for i, k in reversed(list(enumerate(keys)))}
    return [j for _, _, j in sorted(((first[k] if k is not None else i, i, j) for i, (j, k) in enumerate(zip(jobs, keys))),
                                    key=lambda t: t[:2])]


def in_order(jobs: list[Job], waits: dict[Path, list[Job]]) -> list[Job]:
    """``jobs`` with each one after the jobs of the list it waits on, otherwise in their order, the
    jobs of one model's kernel together (:func:`by_model`)."""
    placed, order, left = set(), [], list(jobs)
    outputs = {j.output for j in jobs}
    while left:
        ready = [j for j in left if all(d.output in placed or d.output not in outputs for d in waits.get(j.output, []))]
        if not ready:
            raise ValueError(f"jobs that wait on each other: {', '.join(j.label for j in left)}")
        order += by_model(ready)
        placed |= {j.output for j in ready}
        left = [j for j in left if j.output not in placed]
    return order


def submit_in_waves(todo: list[Job], waits: dict[Path, list[Job]], queued: dict[Path, str],
                    submit: Callable[[list[Job], dict[str, Job]], list[str]]) -> dict[Path, str]:
    """Submit ``todo`` through ``submit(jobs, after)``, which returns their job ids: first the jobs
    that wait on nothing still to come, then every job once the jobs it waits on have ids, one
    call per distinct set of those (``after``: job id -> the job it is). A job it waits on that
    is neither in ``todo`` nor in ``queued`` (job ids of those already queued or running) is
    finished: it is not waited on. Returns each submitted job's id."""
    ids, left = dict(queued), list(todo)
    outputs = {j.output for j in todo}
    while left:
        ready = [j for j in left if all(d.output in ids or d.output not in outputs for d in waits.get(j.output, []))]
        if not ready:
            raise ValueError(f"jobs that wait on each other: {', '.join(j.label for j in left)}")
        groups: dict[tuple, tuple[dict, list[Job]]] = {}
        for job in ready:
            after = {ids[d.output]: d for d in waits.get(job.output, []) if d.output in ids}
            # one call per set of (task, job read): jobs that read other jobs of one task record their own
            groups.setdefault(tuple((i, d.output) for i, d in after.items()), (after, []))[1].append(job)
        for after, group in groups.values():
            ids.update(zip([j.output for j in group], submit(group, after)))
        done = {j.output for j in ready}
        left = [j for j in left if j.output not in done]
    return {j.output: ids[j.output] for j in todo}
