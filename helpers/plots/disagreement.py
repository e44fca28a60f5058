"""Figures of where methods disagree (04_ensembles): the pairwise agreement of predictors as
heat maps (share of items decided alike, Cohen's kappa), and the split-half reliability of each
method's accuracy per paradigm with the central 95% of its splits
(:mod:`helpers.analysis.disagreement`, :mod:`helpers.analysis.split_half`)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.disagreement import square
from .style import model_panels, plt, sns

ANNOTATE_UP_TO = 20  # predictors; a larger matrix is drawn without the numbers in its cells


def agreement_heatmaps(pairs: pd.DataFrame, title: str):
    """Two heat maps of :func:`helpers.analysis.disagreement.agreement`'s pairs: the share of
    items two predictors decided alike (0 to 1) and Cohen's kappa (-1 to 1, 0 chance)."""
    for c in ("a", "b", "agreement", "kappa"):
        if c not in pairs:
            raise ValueError(f"the table lacks {c!r}: pass helpers.analysis.disagreement.agreement's pairs")
    share, kappa = square(pairs, "agreement"), square(pairs, "kappa")
    n = len(share)
    side = max(4.0, 0.42 * n + 2.5)
    fig, axes = plt.subplots(1, 2, figsize=(2 * side + 1, side), squeeze=False)
    fig.suptitle(title)
    style = dict(annot=n <= ANNOTATE_UP_TO, fmt=".2f", annot_kws={"size": 7}, square=True, linewidths=0.5)
    sns.heatmap(share, ax=axes[0][0], cmap="viridis", vmin=0, vmax=1, cbar_kws={"label": "share decided alike"},
                **style)
    sns.heatmap(kappa, ax=axes[0][1], cmap="RdBu_r", center=0, vmin=-1, vmax=1, cbar_kws={"label": "Cohen's kappa"},
                **style)
    axes[0][0].set_title("share of items decided alike")
    axes[0][1].set_title("Cohen's kappa (0: chance agreement)")
    for ax in axes[0]:
        ax.tick_params(axis="both", labelsize=8)
    fig.tight_layout()
    return fig


def reliability_dots(table: pd.DataFrame, title: str):
    """One panel per model: each method's split-half reliability (templates pooled) with the
    central 95% of its splits as a bar, each template's as a small grey dot, and "undefined"
    (with nothing drawn) where it could not be computed (the table's ``reason`` says why)."""
    if "level" not in table or "reliability" not in table:
        raise ValueError("pass helpers.analysis.split_half.split_half's table (level 'method', and 'template')")
    many = "precision" in table and table["precision"].nunique() > 1  # then each precision is a line of its own
    table = table.assign(line=[f"{m} ({p})" if many else m
                               for m, p in zip(table["method"], table.get("precision", table["method"]))])
    lines = list(dict.fromkeys(table["line"]))
    fig, panels = model_panels(table, title, 6, 0.45 * len(lines) + 1.8)
    for ax, model, rows in panels:
        y = {line: i for i, line in enumerate(lines)}
        methods = rows[rows["level"] == "method"]
        for r in methods.itertuples():
            if np.isnan(r.reliability):
                ax.text(0, y[r.line], "undefined", va="center", ha="center", color="grey", fontsize=8,
                        bbox={"facecolor": "white", "edgecolor": "none"})
                continue
            ax.errorbar(r.reliability, y[r.line], xerr=[[r.reliability - r.low], [r.high - r.reliability]], fmt="o",
                        color="C0", capsize=3, label="method (templates pooled), 95% of splits")
        templates = rows[(rows["level"] == "template") & rows["reliability"].notna()]
        if len(templates):
            ax.scatter(templates["reliability"], templates["line"].map(y), s=14, color="grey", alpha=0.7, zorder=3,
                       label="one template")
        ax.axvline(0, color="grey", linewidth=0.8)
        ax.set_xlim(min(-1.05, float(np.nanmin(table["low"], initial=0)) - 0.05), 1.05)  # r < 0 steps up below -1
        ax.set_yticks(range(len(lines)), lines)
        ax.set_ylim(len(lines) - 0.5, -0.5)
        ax.set_xlabel("split-half reliability (Spearman-Brown) of the accuracy per paradigm")
        ax.set_title(model)
        handles, names = ax.get_legend_handles_labels()
        unique = dict(zip(names, handles))
        if unique:
            ax.legend(unique.values(), unique.keys(), fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig
