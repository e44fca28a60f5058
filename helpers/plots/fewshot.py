"""Figure of 03's few-shot section: accuracy against the number of examples k, one line per
method (mean over templates, bars of one sd), one panel per model. The table comes from
:func:`helpers.analysis.fewshot.accuracy_by_k`."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .style import CHANCE, model_panels, sns


def accuracy_vs_k(table: pd.DataFrame, title: str):
    """Accuracy (mean ± sd over templates) against k; k is evenly spaced (0, 1, 2, 4, 8...)."""
    missing = [c for c in ("model", "method", "k", "accuracy_mean", "accuracy_sd") if c not in table]
    if missing:
        raise ValueError(f"the table lacks columns {missing}: pass helpers.analysis.fewshot.accuracy_by_k's table")
    ks = sorted(table["k"].unique())
    at = {k: i for i, k in enumerate(ks)}
    methods = list(dict.fromkeys(table["method"]))
    colors = dict(zip(methods, sns.color_palette("colorblind", len(methods))))
    fig, panels = model_panels(table, title, 5, 4)
    for ax, model, rows in panels:
        for method in methods:
            g = rows[rows["method"] == method].sort_values("k")
            if g.empty:
                continue
            ax.errorbar([at[k] for k in g["k"]], g["accuracy_mean"], yerr=np.nan_to_num(g["accuracy_sd"]),
                        marker="o", capsize=3, color=colors[method], label=method)
        ax.set_xticks(range(len(ks)), [str(k) for k in ks])
        ax.set(xlabel="few-shot examples k", ylabel="accuracy (mean ± sd over templates)", title=model)
        ax.axhline(0.5, **CHANCE)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
