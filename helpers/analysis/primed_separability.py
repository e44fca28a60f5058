"""Separability under priming (Sinha et al. 2023 x Hu et al. 2025): does a prefix make
grammatical and ungrammatical sentences separable pooled, or only within their pairs?

Per (model, dataset, method, template, prefix type, prefix length) of 06's primed score frame:
the pooled AUC of the good vs the bad sentences' scores, unpaired (as
:func:`helpers.analysis.separability.auc_table`, with its bootstrap interval), and the Pearson
correlation of good and bad scores across pairs (as
:func:`helpers.analysis.pair_correlation.correlation`, pairs resampled together), beside the
pair accuracy. A pair's scores are its means over draws; the no-prefix rows (prefix type
"none", length 0) are the baseline, a row of their own. ``scores_alone`` tells whether the
method scores each sentence by itself (LP, in-template LP, Yes/No): for comparative methods
(comparative LP, A/B) both scores come from one input holding the two sentences.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from .pair_correlation import correlation
from .priming_effects import ITEM, NO_PREFIX, PREFIX_TYPES, check_frame
from .. import methods as registry
from .separability import SENTENCE_FAMILIES
from .significance import auc_ci

CELL = ["model", "dataset", "method", "template", "prefix_type", "target_length"]
COLUMNS = CELL + ["scores_alone", "pairs", "accuracy", "auc", "auc_ci_low", "auc_ci_high", "r", "r_p", "r_ci_low",
                  "r_ci_high"]
MIN_PAIRS = 3  # a correlation needs three pairs; a smaller cell gets NaN


def scores_alone(method: str) -> bool:
    """Whether ``method`` scores each sentence by itself (its family reads one sentence)."""
    return method in registry.METHODS and registry.get(method).family.name in SENTENCE_FAMILIES


def _pairs(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (cell, pair): scores and correctness averaged over draws; pairs in key order,
    so that the bootstrap draws do not depend on the frame's row order."""
    rows = frame.assign(template=frame["template"].astype(str) if "template" in frame else "none",
                        score_good=frame["score_good"].astype(float), score_bad=frame["score_bad"].astype(float),
                        correct=frame["correct"].astype(float))
    return rows.groupby(CELL + ITEM)[["score_good", "score_bad", "correct"]].mean().reset_index()


def _cell(good: np.ndarray, bad: np.ndarray, n_resamples: int, level: float, seed: int) -> dict:
    y = np.r_[np.ones(good.size, int), np.zeros(bad.size, int)]
    low, high = auc_ci(good, bad, n_resamples, level, seed)
    out = {"auc": float(roc_auc_score(y, np.r_[good, bad])), "auc_ci_low": low, "auc_ci_high": high,
           "r": np.nan, "r_p": np.nan, "r_ci_low": np.nan, "r_ci_high": np.nan}
    if good.size >= MIN_PAIRS and np.ptp(good) > 0 and np.ptp(bad) > 0:
        r = correlation(good, bad, n_resamples, level, seed)
        out |= {"r": r["r"], "r_p": r["p"], "r_ci_low": r["ci_low"], "r_ci_high": r["ci_high"]}
    return out


def primed_separability(frame: pd.DataFrame, *, n_resamples: int = 1000, level: float = 0.95,
                        seed: int = 0) -> pd.DataFrame:
    """Pooled AUC and within-pair correlation per (model, dataset, method, template, prefix_type,
    target_length) of 06's per-item frame (columns of
    :data:`helpers.analysis.priming_effects.COLUMNS`), the baseline first, then the prefix types
    in Sinha et al.'s order by length, methods in the frame's order. ``r`` is NaN where a cell has
    fewer than 3 pairs or one side's scores are all equal (no correlation is defined)."""
    check_frame(frame, ["model", "dataset", "method", *ITEM, "prefix_type", "target_length", "correct",
                        "score_good", "score_bad"])
    if frame.empty:
        raise ValueError("no primed scores: run 06's scoring (helpers.runs.primed.primed_input, through a Run) first")
    for side in ("score_good", "score_bad"):
        if frame[side].isna().any():
            raise ValueError(f"{int(frame[side].isna().sum())} rows have no {side}: load the score files of a "
                             "pair method (every side scored)")
    rows = []
    for key, g in _pairs(frame).groupby(CELL, sort=False):
        cell = dict(zip(CELL, key))
        rows.append(cell | {"scores_alone": scores_alone(cell["method"]), "pairs": len(g),
                            "accuracy": float(g["correct"].mean())}
                    | _cell(g["score_good"].to_numpy(), g["score_bad"].to_numpy(), n_resamples, level, seed))
    table = pd.DataFrame(rows)
    order = {t: i for i, t in enumerate((NO_PREFIX, *PREFIX_TYPES))}
    methods = {m: i for i, m in enumerate(dict.fromkeys(frame["method"]))}
    table = table.assign(_m=table["method"].map(methods), _o=table["prefix_type"].map(order).fillna(len(order)))
    keys = ["model", "dataset", "_m", "template", "_o", "target_length"]
    return table.sort_values(keys, kind="stable").reset_index(drop=True)[COLUMNS]
