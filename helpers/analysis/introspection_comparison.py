"""The paper's comparison (Song, Hu & Mahowald 2025, arXiv 2503.07513, §3.2.2 and Table 7; its
analysis.R fits ``lm(mean_prompt_corr ~ prob_corr + match_type)``): over every (Meta model A,
Direct model B) cell of :func:`helpers.analysis.introspection.matrix` (the mean over prompts), an
OLS regression of r(Meta_A, Direct_B) on the models' similarity r(Direct_A, Direct_B) and their
relation, "self" the reference level (statsmodels). A relation's coefficient is how far its
cells lie from the self cells at the same similarity: introspection puts the self cells above
the others, so its coefficients below 0; the paper finds no such difference.

Relations (the paper's match types): ``self``; ``seed variant`` (only when given: nothing in a
model's name tells it); ``base/instruct`` (registry names ``X`` and ``X-instruct``, or Hugging
Face ids that differ by an "-Instruct" suffix); ``same family`` (the same Hugging Face
organisation); ``other``. ``given`` ({(a, b): relation}) overrides them.

With fewer than 3 models the self cells (similarity 1) and the others cannot be told apart from
the similarity slope, so a measure needs at least 3 models.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import statsmodels.api as sm

from ..models.registry import ModelNotFoundError, resolve
from .introspection import MEAN

RELATIONS = ("self", "seed variant", "base/instruct", "same family", "other")
COLUMNS = ["measure", "stimuli", "term", "coef", "se", "ci_low", "ci_high", "p", "cells", "models", "reading"]


def _spec(name: str):
    try:
        return resolve(name)
    except (ModelNotFoundError, TypeError):
        return None


def _base(text: str) -> str:
    return re.sub(r"[-_]instruct$", "", str(text), flags=re.IGNORECASE).lower()


def relation(a: str, b: str, given: dict | None = None) -> str:
    """The relation of models ``a`` and ``b`` (one of :data:`RELATIONS`)."""
    if a == b:
        return "self"
    for key in ((a, b), (b, a)):
        if given and key in given:
            if given[key] not in RELATIONS[1:]:
                raise ValueError(f"unknown relation {given[key]!r} of {key}; choose from {', '.join(RELATIONS[1:])}")
            return given[key]
    sa, sb = _spec(a), _spec(b)
    names = [(a, b)] + ([(sa.hf_id, sb.hf_id)] if sa and sb else [])
    if any(_base(x) == _base(y) and str(x).lower() != str(y).lower() for x, y in names):
        return "base/instruct"
    if sa and sb and not (sa.local or sb.local) and "/" in sa.hf_id and "/" in sb.hf_id:
        if sa.hf_id.split("/")[0].lower() == sb.hf_id.split("/")[0].lower():
            return "same family"
    return "other"


def with_relations(table: pd.DataFrame, given: dict | None = None) -> pd.DataFrame:
    """``table`` (:func:`~helpers.analysis.introspection.matrix`) with the ``relation`` of each cell's models."""
    return table.assign(relation=[relation(a, b, given) for a, b in zip(table["meta_model"], table["direct_model"])])


def _reading(term: str, low: float, high: float) -> str:
    if not term.startswith("relation: "):
        return ""
    if high < 0:
        return "self above (introspection)"
    if low > 0:
        return "self below"
    return "no difference from self"


def comparison(table: pd.DataFrame, given: dict | None = None, level: float = 0.95) -> pd.DataFrame:
    """Per (measure, stimuli) with at least 3 models: the coefficients of r(Meta_A, Direct_B) ~
    r(Direct_A, Direct_B) + relation (self the reference) with standard error, ``level`` CI and
    p-value, the cells and models fitted, and for each relation the ``reading``: "self above
    (introspection)" when its CI lies below 0, "self below" above 0, else "no difference from
    self". Empty when no measure has 3 models."""
    rows = []
    cells = with_relations(table[table["prompt"] == MEAN], given).dropna(subset=["r", "r_direct"])
    for (measure, stimuli), g in cells.groupby(["measure", "stimuli"], sort=False):
        n_models = g["meta_model"].nunique()
        if n_models < 3:
            continue
        types = [t for t in RELATIONS[1:] if t in set(g["relation"])]
        x = np.column_stack([np.ones(len(g)), g["r_direct"].to_numpy(float)]
                            + [(g["relation"] == t).to_numpy(float) for t in types])
        if np.linalg.matrix_rank(x) < x.shape[1] or len(g) <= x.shape[1]:
            raise ValueError(f"{measure} on {stimuli}: the similarities r(Direct_A, Direct_B) of the {n_models} models "
                             "cannot be told apart from their relations; add models")
        fit = sm.OLS(g["r"].to_numpy(float), x).fit()
        ci = np.asarray(fit.conf_int(1 - level))
        for i, term in enumerate(["intercept", "r_direct", *[f"relation: {t}" for t in types]]):
            rows.append({"measure": measure, "stimuli": stimuli, "term": term, "coef": float(fit.params[i]),
                         "se": float(fit.bse[i]), "ci_low": float(ci[i, 0]), "ci_high": float(ci[i, 1]),
                         "p": float(fit.pvalues[i]), "cells": len(g), "models": n_models,
                         "reading": _reading(term, ci[i, 0], ci[i, 1])})
    return pd.DataFrame(rows, columns=COLUMNS)
