"""Sweeps over a model's revisions: training checkpoints published as Hub revisions (Pythia's
``step1000``, OLMo's ``step1000-tokens4B``). Each revision is scored as a model of its own,
``<model>@<revision>`` (:func:`helpers.models.registry.with_revision`): its own jobs, executed
notebooks and score files, locally and on Slurm alike. A notebook that takes a ``revisions``
parameter (08_learning_curves) reads them all: one job per model, given the list, which waits on
the scoring jobs of every revision.
"""
from __future__ import annotations

from pathlib import Path

from ..models.registry import REGISTRY, REVISION_MARK
from ..settings.lists import parse_list

REVISIONS = "revisions"  # the parameter of a notebook that reads a model's revisions together


def parse_revisions(value) -> list[str]:
    """The revisions of a sweep: a list or "step1000,step2000"; each once, none empty or "auto"."""
    revisions = [str(r).strip() for r in parse_list(value, what="revision")]
    bad = [r for r in revisions if not r or r.lower() == "auto" or REVISION_MARK in r]
    if bad:
        raise ValueError(f"revisions {value!r}: {', '.join(map(repr, bad))} is not a revision; give commits, "
                         "branches or tags of the model's Hub repository, e.g. step1000,step2000")
    if len(set(revisions)) != len(revisions):
        raise ValueError(f"revisions {value!r} names a revision twice: give each once")
    return revisions


def check_hub_model(model: str) -> None:
    """A one-line error, before anything runs, for a model that has no Hub revisions."""
    spec = REGISTRY.get(model)
    if (spec is not None and spec.local) or Path(model).expanduser().is_dir() or REVISION_MARK in model:
        what = "names a revision already" if REVISION_MARK in model else "is a local model without revisions"
        raise ValueError(f"--revisions: {model!r} {what}; sweep revisions of a Hugging Face model "
                         "(a registry name or org/name, e.g. EleutherAI/pythia-160m)")


def revision_models(models: list[str], revisions: list[str]) -> list[str]:
    """Each model at each revision, ``<model>@<revision>``, model by model."""
    for model in models:
        check_hub_model(model)
    return [f"{model}{REVISION_MARK}{revision}" for model in models for revision in revisions]


def models_for(declared: set[str], models: list[str], revisions: list[str] | None) -> tuple[list[str], dict]:
    """The models of one notebook's jobs and the parameters they add: without revisions the
    models; for a notebook that reads a model's revisions together (it declares ``revisions``)
    the models, each given the list; for any other, every model at every revision."""
    if not revisions or "model" not in declared:  # 01_data_prep takes no model
        return list(models), {}
    if REVISIONS in declared:
        for model in models:
            check_hub_model(model)
        return list(models), {REVISIONS: list(revisions)}
    return revision_models(models, revisions), {}


def analysed_models(model: str, parameters: dict) -> set[str]:
    """The models whose stored scores a job reads: its model (or list), each at every revision of
    its ``revisions`` parameter where it has one."""
    models = set(parse_list(model, what="model"))
    revisions = parameters.get(REVISIONS)
    if not revisions:
        return models
    return {f"{m}{REVISION_MARK}{r}" for m in models for r in parse_revisions(revisions)}
