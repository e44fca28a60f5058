"""06's figure across models: the priming curves of every model, one panel per (method,
prefix type), one line per model (tables from
:mod:`helpers.analysis.priming_effects` and :mod:`helpers.analysis.cross_model_priming`)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from ..analysis.accuracy import EXPECTED, TIES_RIGHT
from .style import CHANCE
from .priming import ORDER


def priming_curves(curves: pd.DataFrame, title: str):
    """Accuracy (%) against prefix length, one panel per (method, prefix type), one line per
    model starting at length 0 from its no-prefix accuracy on the same pairs (its baseline),
    with the 95% band of the baselined effect around it; chance is the grey dashed line. The
    accuracy counts a tie wrong; where the curves have the ties' columns
    (:func:`helpers.analysis.priming_effects.baselined_accuracy`), a bar at each point runs up to
    the accuracy with every tie right, a cross marks the expected accuracy (ties half)."""
    missing = [c for c in ("model", "method", "prefix_type", "target_length", "accuracy", "baseline", "delta",
                           "ci_low", "ci_high") if c not in curves]
    if missing:
        raise ValueError(f"the table lacks columns {missing}: pass priming_effects.figure2's rows of every model")
    ranged = {EXPECTED, TIES_RIGHT, EXPECTED + "_baseline", TIES_RIGHT + "_baseline"} <= set(curves)
    methods = list(dict.fromkeys(curves["method"]))
    types = sorted(curves["prefix_type"].unique(), key=lambda v: ORDER.index(v) if v in ORDER else len(ORDER))
    models = list(dict.fromkeys(curves["model"]))
    colors = dict(zip(models, sns.color_palette("colorblind", len(models))))
    fig, axes = plt.subplots(len(methods), len(types), figsize=(3.6 * len(types), 3.4 * len(methods)),
                             squeeze=False, sharex=True, sharey=True)
    fig.suptitle(title)
    for i, method in enumerate(methods):
        for j, kind in enumerate(types):
            ax = axes[i][j]
            for model in models:
                g = curves[(curves["method"] == method) & (curves["prefix_type"] == kind)
                           & (curves["model"] == model)].sort_values("target_length")
                if g.empty:
                    continue
                base = float(g["baseline"].iloc[0])
                x = [0, *g["target_length"]]
                ax.plot(x, [100 * base, *(100 * g["accuracy"])], marker="o", color=colors[model], label=model)
                ax.fill_between(g["target_length"], 100 * (g["baseline"] + g["ci_low"]),
                                100 * (g["baseline"] + g["ci_high"]), color=colors[model], alpha=0.15, linewidth=0)
                if ranged:
                    low = [base, *g["accuracy"]]
                    high = [float(g[TIES_RIGHT + "_baseline"].iloc[0]), *g[TIES_RIGHT]]
                    half = [float(g[EXPECTED + "_baseline"].iloc[0]), *g[EXPECTED]]
                    ax.vlines(x, [100 * v for v in low], [100 * v for v in high], color=colors[model], linewidth=1)
                    ax.scatter(x, [100 * v for v in half], marker="x", s=14, color=colors[model])
            ax.axhline(50, **CHANCE)
            ax.set_title(kind if len(methods) == 1 else f"{method} · {kind}", fontsize=10)
            ax.set_xlabel("prefix length (tokens)")
            if j == 0:
                ax.set_ylabel("accuracy (%, ties wrong; bar: to ties right, x: ties half)" if ranged
                              else "accuracy (%)")
    axes[0][0].legend(fontsize=8, title="model")
    fig.tight_layout()
    return fig
