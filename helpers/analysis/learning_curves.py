"""Learning curves: each method's accuracy per phenomenon against the training step of a model's
checkpoints, as the BabyLM evaluation pipeline draws them.

A checkpoint is a Hub revision of one model, scored as the model ``<model>@<revision>``
(:func:`helpers.models.registry.with_revision`); its step is read from the revision's name
(:func:`revision_step`: Pythia's ``step1000``, OLMo's ``step1000-tokens4B``, a Trainer folder's
``checkpoint-1000``, a plain number) or given by the user. The accuracy of a method at a step is
the mean over its templates of the share of pairs judged right (a tie is an error, as in every
table of the project), per phenomenon and over all pairs (:data:`ALL`).
"""
from __future__ import annotations

import re
from typing import Mapping

import numpy as np
import pandas as pd

from ..models.registry import REVISION_MARK
from .accuracy import EXPECTED, TIE_SHARE_COLUMN, TIES_RIGHT, summarise, with_tie_range

ALL = "all phenomena"  # the rows over every pair of the dataset
_TOKEN_UNITS = {"": 1, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
STEP_NAMES = (  # a revision's name -> its training step (and, for OLMo, the tokens seen)
    re.compile(r"step(?P<step>\d+)(?:-tokens(?P<tokens>\d+(?:\.\d+)?)(?P<unit>[KMBT]?))?"),  # Pythia, OLMo
    re.compile(r"(?:checkpoint|ckpt)[-_]?(?P<step>\d+)"),  # transformers' Trainer folders
    re.compile(r"(?P<step>\d+)"),
)


def revision_step(revision: str, steps: Mapping | None = None) -> int:
    """The training step of ``revision``: its entry in ``steps`` (revision -> step) when given,
    else read from its name; a one-line error for a name that holds none."""
    if steps and str(revision) in steps:
        step = steps[str(revision)]
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 0:
            raise ValueError(f"steps[{revision!r}] = {step!r} is not a training step: give a whole number >= 0")
        return int(step)
    for pattern in STEP_NAMES:
        match = pattern.fullmatch(str(revision))
        if match:
            return int(match["step"])
    raise ValueError(f"revision {revision!r} names no training step (Pythia's 'step1000', OLMo's "
                     f"'step1000-tokens4B', 'checkpoint-1000' or a whole number): give it in steps, "
                     f"e.g. steps={{{str(revision)!r}: 143000}}")


def revision_tokens(revision: str) -> float | None:
    """The training tokens an OLMo revision names (``step1000-tokens4B``: 4e9), else None."""
    match = STEP_NAMES[0].fullmatch(str(revision))
    if not match or match["tokens"] is None:
        return None
    return float(match["tokens"]) * _TOKEN_UNITS[match["unit"]]


def checkpoints(model: str, revisions, steps: Mapping | None = None) -> pd.DataFrame:
    """One row per revision of ``model``: the name it is stored under (``<model>@<revision>``),
    the revision, its step and tokens, in step order; an error when two revisions share a step."""
    rows = [{"model": f"{model}{REVISION_MARK}{r}", "revision": str(r), "step": revision_step(r, steps),
             "tokens": revision_tokens(r)} for r in revisions]
    table = pd.DataFrame(rows, columns=["model", "revision", "step", "tokens"])
    same = table[table.duplicated("step", keep=False)]
    if len(same):
        raise ValueError(f"revisions {', '.join(same.revision)} are all step {same.step.iloc[0]}: give each "
                         "checkpoint once (or their steps in steps)")
    return table.sort_values("step", kind="stable").reset_index(drop=True)


def _over_templates(per_template: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    grouped = per_template.groupby(keys, sort=False)
    return with_tie_range(grouped.agg(accuracy=("accuracy", "mean"), sd=("accuracy", "std"),
                                      templates=("accuracy", "size"), pairs=("pairs", "max"),
                                      **{TIE_SHARE_COLUMN: (TIE_SHARE_COLUMN, "mean")}).reset_index())


def learning_curves(scores: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per (method, phenomenon, step) from the stored ``scores`` of the checkpoints in
    ``points`` (:func:`checkpoints`): the mean over templates of each template's accuracy, its sd
    over templates, the number of templates and of pairs, and the ties' share (mean over
    templates; a tie counts wrong); phenomenon :data:`ALL` over every pair."""
    missing = sorted(set(points["model"]) - set(scores["model"]))
    if missing:
        raise ValueError(f"no stored scores of {', '.join(missing)}: score those revisions first (notebooks 02 "
                         "and 03, or a sweep with --revisions)")
    rows = scores[scores["model"].isin(points["model"])].copy()
    rows["phenomenon"] = rows["phenomenon"].fillna("(none)").astype(str)
    rows["correct"] = rows["correct"].astype(float)
    keys = ["model", "method", "template"]
    by_phenomenon = summarise(rows, keys + ["phenomenon"])
    overall = summarise(rows, keys).assign(phenomenon=ALL)
    per_template = pd.concat([by_phenomenon, overall], ignore_index=True)
    table = _over_templates(per_template, ["model", "method", "phenomenon"]).merge(points, on="model")
    phenomena = [ALL] + sorted(set(table["phenomenon"]) - {ALL})
    table["phenomenon"] = pd.Categorical(table["phenomenon"], phenomena, ordered=True)
    table = table.sort_values(["method", "phenomenon", "step"], kind="stable").reset_index(drop=True)
    table["phenomenon"] = table["phenomenon"].astype(str)
    return table[["method", "phenomenon", "step", "revision", "model", "tokens", "accuracy", "sd", "templates",
                  "pairs", TIE_SHARE_COLUMN, EXPECTED, TIES_RIGHT]]


def spans_orders(steps, orders: float = 2.0) -> bool:
    """Whether the positive steps span ``orders`` orders of magnitude or more (draw them on log x)."""
    positive = np.asarray([s for s in steps if s > 0], dtype=float)
    return len(positive) > 1 and np.log10(positive.max() / positive.min()) >= orders


def wide(table: pd.DataFrame) -> pd.DataFrame:
    """The curves as one row per (phenomenon, step), one column of accuracy per method."""
    out = table.pivot_table(index=["phenomenon", "step"], columns="method", values="accuracy", sort=False)
    return out.reset_index().rename_axis(columns=None)
