"""07 across models (Hu et al. 2025 over a list of models): the pooled AUC of every model
and method in one models x methods table per dataset (:func:`auc_matrix`), the within-pair
correlation of the good and bad sentences' scores per model and dataset
(:func:`pair_correlations`), and the long per-sentence frame of a model's scores that both
the AUC and these tables start from (:func:`sentences_long`, as 07 builds it for its model).
"""
from __future__ import annotations

import pandas as pd

from . import separability as sep
from .cross_model import models_of
from .pair_correlation import correlation


def sentences_long(scores: pd.DataFrame, metrics, extras, datasets) -> pd.DataFrame:
    """One row per (model, dataset, method, template, sentence) of ``datasets``: the ``metrics``
    (from the sentence-readout files) and the stored ``extras`` (single-sentence methods such as
    in-template LP and Yes/No; a model without one, e.g. a kind that cannot run it, just lacks it)."""
    rows = scores[scores["dataset"].isin(list(datasets))]
    long = sep.metrics_long(sep.metrics_table(rows[rows["method"].isin(list(sep.METRICS))], metrics))
    present = [m for m in extras if m in set(rows["method"])]
    return pd.concat([long, sep.sentence_scores(rows, present)], ignore_index=True) if present else long


def auc_matrix(auc: pd.DataFrame) -> pd.DataFrame:
    """Rows (dataset, model), columns the methods (in the table's order): the AUC of
    :func:`helpers.analysis.separability.auc_table` (one template per method: the table's only one)."""
    missing = [c for c in sep.GROUP + ["auc"] if c not in auc]
    if missing:
        raise ValueError(f"the table lacks columns {missing}: pass separability.auc_table's rows")
    if auc.duplicated(["model", "dataset", "method"]).any():
        raise ValueError("a method has several templates in the AUC table: keep one template per method")
    models = {m: i for i, m in enumerate(models_of(auc))}
    datasets = {d: i for i, d in enumerate(dict.fromkeys(auc["dataset"]))}
    wide = auc.pivot(index=["dataset", "model"], columns="method", values="auc")[list(dict.fromkeys(auc["method"]))]
    order = sorted(wide.index, key=lambda k: (datasets[k[0]], models[k[1]]))
    return wide.reindex(order).rename_axis(columns=None)


def pair_correlations(pairs: pd.DataFrame, x: str = "lp_good", y: str = "lp_bad", n_resamples: int = 1000,
                      level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Per (model, dataset) of :func:`helpers.analysis.separability.pairs_wide`'s rows: Pearson r
    of ``x`` and ``y`` over the pairs (prediction 1 without the distance bins), its p-value and
    percentile bootstrap interval (pairs resampled together), and the pairs."""
    missing = [c for c in ("model", "dataset", x, y) if c not in pairs]
    if missing:
        raise ValueError(f"the pairs lack columns {missing}: pass separability.pairs_wide's rows")
    rows = []
    for (model, dataset), g in pairs.groupby(["model", "dataset"], sort=False):
        r = correlation(g[x], g[y], n_resamples, level, seed)
        rows.append({"model": model, "dataset": dataset, "r": r["r"], "p": r["p"], "ci_low": r["ci_low"],
                     "ci_high": r["ci_high"], "pairs": r["n"]})
    return pd.DataFrame(rows)
