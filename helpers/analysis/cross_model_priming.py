"""06 across models (Sinha et al. 2023 over a list of models): from the baselined-accuracy
rows of every model (:func:`helpers.analysis.priming_effects.figure2`, one row per model,
dataset, method, prefix type and length) each model's effect per prefix type at its longest
prefix (:func:`longest_effects`), the change of that effect per doubling of the prefix
(:func:`length_slopes`) and the log(length) terms of each model's mixed-effects regressions
(:func:`length_terms`), with :func:`side_by_side` putting one value of every model in columns.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .cross_model import models_of
from .priming_effects import GROUP, PREFIX_TYPES, TIE_COLUMNS

EFFECT = ["accuracy", "baseline", "delta", "ci_low", "ci_high", "items"]


def _check(table: pd.DataFrame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in table]
    if missing:
        raise ValueError(f"the table lacks columns {missing}: pass {what}")


def longest_effects(curves: pd.DataFrame) -> pd.DataFrame:
    """Per (model, dataset, method, prefix_type): the row at the model's longest prefix length
    (its accuracy, the no-prefix baseline of the same pairs, the baselined effect ``delta`` with
    its CI, the pairs, and where the curves have them, the ties' columns of both accuracies:
    :data:`helpers.analysis.priming_effects.TIE_COLUMNS`), prefix types in Sinha et al.'s order."""
    _check(curves, GROUP + ["prefix_type", "target_length"] + EFFECT, "priming_effects.figure2's rows")
    models_of(curves)
    longest = curves.groupby(GROUP, sort=False)["target_length"].transform("max")
    rows = curves[curves["target_length"] == longest]
    order = rows["prefix_type"].map({t: i for i, t in enumerate(PREFIX_TYPES)}).fillna(len(PREFIX_TYPES))
    rows = rows.assign(_o=order, _m=rows["model"].map({m: i for i, m in enumerate(models_of(rows))}))
    ties = [c for c in TIE_COLUMNS if c in curves]
    return (rows.sort_values(["_m", "dataset", "method", "_o"], kind="stable")
            .reset_index(drop=True)[GROUP + ["prefix_type", "target_length"] + EFFECT + ties])


def length_slopes(curves: pd.DataFrame) -> pd.DataFrame:
    """Per (model, dataset, method, prefix_type): the least-squares slope of the baselined
    accuracy (``delta``) against log2 of the prefix length, i.e. the change of the effect per
    doubling of the prefix (accuracy units: 0.1 is 10 points), over the ``lengths`` prefixed
    lengths; NaN with fewer than two lengths."""
    _check(curves, GROUP + ["prefix_type", "target_length", "delta"], "priming_effects.figure2's rows")
    rows = []
    for key, g in curves[curves["target_length"] > 0].groupby(GROUP + ["prefix_type"], sort=False):
        x, y = np.log2(g["target_length"].to_numpy(float)), g["delta"].to_numpy(float)
        slope = float(np.polyfit(x, y, 1)[0]) if len(np.unique(x)) >= 2 else float("nan")
        rows.append(dict(zip(GROUP + ["prefix_type"], key)) | {"slope_per_doubling": slope, "lengths": len(g),
                                                                "shortest": int(g["target_length"].min()),
                                                                "longest": int(g["target_length"].max())})
    return pd.DataFrame(rows)


def length_terms(fits: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`helpers.analysis.priming_effects.regressions` (every model's) whose term
    involves log(length): the main effect of length and its interactions with domain,
    acceptability and source, per model (in the table's order), method and regression."""
    _check(fits, GROUP + ["regression", "term", "estimate", "se", "z", "p_value"], "priming_effects.regressions' rows")
    rows = fits[fits["term"].str.split(":").str[0] == "log_length"]
    rows = rows.assign(_m=rows["model"].map({m: i for i, m in enumerate(models_of(fits))}))
    return (rows.sort_values("_m", kind="stable")  # model by model, each in the regressions' order
            .reset_index(drop=True)[GROUP + ["regression", "term", "estimate", "se", "z", "p_value"]])

