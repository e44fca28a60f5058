"""07's figure across models: each model's pooled AUC per method (Hu et al. 2025's prediction
3) beside its within-pair correlation (prediction 1), from
:mod:`helpers.analysis.separability` and :mod:`helpers.analysis.cross_model_separability`."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from .style import CHANCE


def _dots(ax, rows: pd.DataFrame, x: str, y: str, models: list[str], colors: dict) -> None:
    """One dot per (x, model), dodged, with its [ci_low, ci_high] bar."""
    xs = list(dict.fromkeys(rows[x]))
    step = 0.6 / max(1, len(models))
    for k, model in enumerate(models):
        g = rows[rows["model"] == model].set_index(x).reindex(xs)
        pos = np.arange(len(xs)) - 0.3 + step * (k + 0.5)
        ax.errorbar(pos, g[y], yerr=np.vstack([g[y] - g["ci_low"], g["ci_high"] - g[y]]), fmt="o",
                    color=colors[model], capsize=2, label=model)
    ax.set_xticks(np.arange(len(xs)), xs, rotation=30, ha="right")
    ax.set_xlim(-0.6, len(xs) - 0.4)


def auc_across_models(auc: pd.DataFrame, correlations: pd.DataFrame | None, title: str):
    """Top: one panel per dataset (and "pooled"), the AUC of each method, one dot per model with
    its bootstrap 95% interval, chance at 0.5. Bottom (when ``correlations`` has rows): Pearson r
    of the good and bad sentences' LP per dataset, one dot per model."""
    missing = [c for c in ("model", "dataset", "method", "auc", "ci_low", "ci_high") if c not in auc]
    if missing:
        raise ValueError(f"the table lacks columns {missing}: pass separability.auc_table's rows of every model")
    models = list(dict.fromkeys(auc["model"]))
    colors = dict(zip(models, sns.color_palette("colorblind", len(models))))
    datasets = list(dict.fromkeys(auc["dataset"]))
    bottom = correlations is not None and len(correlations) > 0
    fig, axes = plt.subplots(1 + bottom, len(datasets), figsize=(max(4.0, 0.5 * auc["method"].nunique() + 1.5)
                                                                  * len(datasets), 3.8 * (1 + bottom)),
                             squeeze=False)
    fig.suptitle(title)
    for j, dataset in enumerate(datasets):
        ax = axes[0][j]
        _dots(ax, auc[auc["dataset"] == dataset], "method", "auc", models, colors)
        ax.axhline(0.5, **CHANCE)
        ax.set_ylim(0, 1)
        ax.set_title(dataset)
        if j == 0:
            ax.set_ylabel("AUC, grammatical vs ungrammatical")
    axes[0][0].legend(fontsize=8, title="model")
    if bottom:
        for ax in axes[1][1:]:
            ax.set_visible(False)
        ax = axes[1][0]
        _dots(ax, correlations.rename(columns={"r": "value"}), "dataset", "value", models, colors)
        ax.axhline(0, **CHANCE)
        ax.set_ylabel("Pearson r, LP(good) and LP(bad)")
        ax.set_title("within-pair correlation")
    fig.tight_layout()
    return fig
